// Filter plugins: one table per plugin, asserting kube-scheduler's code and
// exact reason text, then plugin order and the nominated-pod reservation.
#include "placement/filters.h"

#include <gtest/gtest.h>

#include "placement/testing/builders.h"

namespace berth::placement {
namespace {

using scheduling::NodeSelectorRequirement;
using scheduling::TaintEffect;
using scheduling::Toleration;
using testing::NodeBuilder;
using testing::PodBuilder;
constexpr auto kOk = FilterCode::kSuccess;
constexpr auto kUnsched = FilterCode::kUnschedulable;
constexpr auto kUnresolvable = FilterCode::kUnschedulableAndUnresolvable;

struct FilterCase {
  const char* name;
  Node node;
  Pod pod;
  FilterCode code;
  std::vector<std::string> reasons;
};

// Runs every filter through RunFiltersWithNominatedPods on a one-node snapshot
// holding `bound` pods.
NodeStatus Filter(const Node& node, const Pod& pod, const std::vector<Pod>& bound = {}) {
  Snapshot s;
  s.UpsertNode(node);
  for (const auto& b : bound) EXPECT_TRUE(s.AddPod(b).ok());
  const NodeInfo& info = s.nodes()[0];
  return RunFiltersWithNominatedPods(pod, s.Compile(pod), info, info.usage(), s.resource_names());
}

void RunTable(const std::vector<FilterCase>& cases) {
  for (const auto& c : cases) {
    NodeStatus st = Filter(c.node, c.pod);
    EXPECT_EQ(st.code, c.code) << c.name;
    EXPECT_EQ(st.reasons, c.reasons) << c.name;
  }
}

TEST(FiltersTest, NodeUnschedulable) {
  Node cordoned = NodeBuilder("n").Cpu("4").Unschedulable().Build();
  RunTable({
      {"cordoned", cordoned, PodBuilder("p").Build(), kUnresolvable, {"node(s) were unschedulable"}},
      {"tolerates the unschedulable taint", cordoned,
       PodBuilder("p").Tolerate({"node.kubernetes.io/unschedulable", Toleration::Operator::kExists, "",
                                 TaintEffect::kNoSchedule}).Build(),
       kOk, {}},
      {"tolerate-everything toleration", cordoned,
       PodBuilder("p").Tolerate({"", Toleration::Operator::kExists, "", std::nullopt}).Build(), kOk, {}},
      {"schedulable", NodeBuilder("n").Cpu("4").Build(), PodBuilder("p").Build(), kOk, {}},
  });
}

TEST(FiltersTest, NodeName) {
  Node n = NodeBuilder("n1").Cpu("4").Build();
  RunTable({
      {"other node", n, PodBuilder("p").NodeName("n2").Build(), kUnresolvable,
       {"node(s) didn't match the requested node name"}},
      {"same node", n, PodBuilder("p").NodeName("n1").Build(), kOk, {}},
  });
}

TEST(FiltersTest, TaintToleration) {
  using Op = Toleration::Operator;
  Node gpu = NodeBuilder("n").Cpu("4").Taint("node-role", "gpu").Build();
  RunTable({
      {"untolerated", gpu, PodBuilder("p").Build(), kUnresolvable,
       {"node(s) had untolerated taint {node-role: gpu}"}},
      {"tolerated by Equal", gpu,
       PodBuilder("p").Tolerate({"node-role", Op::kEqual, "gpu", TaintEffect::kNoSchedule}).Build(),
       kOk, {}},
      {"Equal with the wrong value", gpu,
       PodBuilder("p").Tolerate({"node-role", Op::kEqual, "cpu", std::nullopt}).Build(), kUnresolvable,
       {"node(s) had untolerated taint {node-role: gpu}"}},
      {"empty value prints as {key: }",
       NodeBuilder("n").Cpu("4").Taint("node-role.kubernetes.io/control-plane", "").Build(),
       PodBuilder("p").Build(), kUnresolvable,
       {"node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"}},
      {"NoExecute counts", NodeBuilder("n").Cpu("4").Taint("k", "v", TaintEffect::kNoExecute).Build(),
       PodBuilder("p").Build(), kUnresolvable, {"node(s) had untolerated taint {k: v}"}},
      {"PreferNoSchedule never filters",
       NodeBuilder("n").Cpu("4").Taint("k", "v", TaintEffect::kPreferNoSchedule).Build(),
       PodBuilder("p").Build(), kOk, {}},
      {"the first untolerated taint is reported",
       NodeBuilder("n").Cpu("4").Taint("a", "1").Taint("b", "2").Build(),
       PodBuilder("p").Tolerate({"a", Op::kExists, "", std::nullopt}).Build(), kUnresolvable,
       {"node(s) had untolerated taint {b: 2}"}},
      {"not ready node gets the not-ready taint", NodeBuilder("n").Cpu("4").NotReady().Build(),
       PodBuilder("p").Build(), kUnresolvable,
       {"node(s) had untolerated taint {node.kubernetes.io/not-ready: }"}},
      {"not ready but tolerated", NodeBuilder("n").Cpu("4").NotReady().Build(),
       PodBuilder("p").Tolerate({"node.kubernetes.io/not-ready", Op::kExists, "", std::nullopt}).Build(),
       kOk, {}},
      {"disk pressure gets the disk-pressure taint", NodeBuilder("n").Cpu("4").DiskPressure().Build(),
       PodBuilder("p").Build(), kUnresolvable,
       {"node(s) had untolerated taint {node.kubernetes.io/disk-pressure: }"}},
      {"disk pressure tolerated",
       NodeBuilder("n").Cpu("4").DiskPressure().Taint("node.kubernetes.io/disk-pressure", "").Build(),
       PodBuilder("p").Tolerate({"node.kubernetes.io/disk-pressure", Op::kExists, "", std::nullopt}).Build(),
       kOk, {}},
      {"unreachable taint is not doubled",
       NodeBuilder("n").Cpu("4").NotReady().Taint("node.kubernetes.io/unreachable", "",
                                                  TaintEffect::kNoExecute).Build(),
       PodBuilder("p").Build(), kUnresolvable,
       {"node(s) had untolerated taint {node.kubernetes.io/unreachable: }"}},
  });
}

TEST(FiltersTest, NodeAffinityAndSelector) {
  using Op = NodeSelectorRequirement::Operator;
  Node n = NodeBuilder("n").Cpu("4").Label("accelerator", "a100").Label("zone", "z1").Build();
  const std::string miss = "node(s) didn't match Pod's node affinity/selector";
  RunTable({
      {"selector match", n, PodBuilder("p").NodeSelector("accelerator", "a100").Build(), kOk, {}},
      {"selector value mismatch", n, PodBuilder("p").NodeSelector("accelerator", "h100").Build(),
       kUnresolvable, {miss}},
      {"selector absent label", n, PodBuilder("p").NodeSelector("rack", "1").Build(), kUnresolvable,
       {miss}},
      {"required affinity match", n,
       PodBuilder("p").RequiredAffinity({{{{"zone", Op::kIn, {"z1", "z2"}}}, {}}}).Build(), kOk, {}},
      {"required affinity miss", n,
       PodBuilder("p").RequiredAffinity({{{{"zone", Op::kNotIn, {"z1"}}}, {}}}).Build(),
       kUnresolvable, {miss}},
      {"matchFields metadata.name", n,
       PodBuilder("p").RequiredAffinity({{{}, {{"metadata.name", Op::kIn, {"other"}}}}}).Build(),
       kUnresolvable, {miss}},
      {"selector and affinity both needed", n,
       PodBuilder("p").NodeSelector("accelerator", "a100")
           .RequiredAffinity({{{{"zone", Op::kIn, {"z2"}}}, {}}}).Build(),
       kUnresolvable, {miss}},
  });
}

TEST(FiltersTest, NodeResourcesFit) {
  RunTable({
      // Done-when (a): allocatable cpu 5, a 6-cpu pod.
      {"insufficient cpu", NodeBuilder("n").Cpu("5").Memory("16Gi").Build(),
       PodBuilder("p").Cpu("6").Build(), kUnsched, {"Insufficient cpu"}},
      {"exactly fits", NodeBuilder("n").Cpu("5").Build(), PodBuilder("p").Cpu("5").Build(), kOk, {}},
      {"all reasons kept, fixed order then scalars by name",
       NodeBuilder("n").Cpu("1").Memory("1Gi").Resource("nvidia.com/gpu", "1").Build(),
       PodBuilder("p").Cpu("2").Memory("2Gi").Resource("nvidia.com/gpu", "2")
           .Resource("example.com/fpga", "1").Build(),
       kUnsched,
       {"Insufficient cpu", "Insufficient memory", "Insufficient example.com/fpga",
        "Insufficient nvidia.com/gpu"}},
      {"extended resource fits", NodeBuilder("n").Cpu("8").Resource("nvidia.com/gpu", "8").Build(),
       PodBuilder("p").Resource("nvidia.com/gpu", "8").Build(), kOk, {}},
      {"a name without a domain is ignored as upstream", NodeBuilder("n").Cpu("8").Build(),
       PodBuilder("p").Resource("gpu", "1").Build(), kOk, {}},
      {"no pods allocatable", NodeBuilder("n").Cpu("8").Pods(0).Build(), PodBuilder("p").Build(),
       kUnsched, {"Too many pods"}},
  });
}

TEST(FiltersTest, BoundAndTerminatingPodsHoldTheirRequests) {
  Node n = NodeBuilder("n").Cpu("4").Pods(2).Build();
  Pod running = PodBuilder("a").Cpu("2").BoundTo("n").Build();
  Pod leaving = PodBuilder("b").Cpu("1").BoundTo("n").Terminating().Build();
  NodeStatus st = Filter(n, PodBuilder("p").Cpu("2").Build(), {running, leaving});
  EXPECT_EQ(st.code, kUnsched);
  EXPECT_EQ(st.reasons, (std::vector<std::string>{"Too many pods", "Insufficient cpu"}));
  EXPECT_TRUE(Filter(n, PodBuilder("p").Cpu("1").Build(), {running}).ok());
}

TEST(FiltersTest, FirstFailingPluginWins) {
  // Cordoned, tainted, mismatched and full: NodeUnschedulable is first.
  Node n = NodeBuilder("n").Cpu("1").Unschedulable().Taint("k", "v").Build();
  EXPECT_EQ(Filter(n, PodBuilder("p").Cpu("2").NodeName("x").Build()).reasons,
            (std::vector<std::string>{"node(s) were unschedulable"}));
  // Then NodeName, then TaintToleration, then NodeAffinity, then fit.
  Node m = NodeBuilder("m").Cpu("1").Taint("k", "v").Build();
  EXPECT_EQ(Filter(m, PodBuilder("p").Cpu("2").NodeName("x").Build()).reasons,
            (std::vector<std::string>{"node(s) didn't match the requested node name"}));
  EXPECT_EQ(Filter(m, PodBuilder("p").Cpu("2").NodeSelector("a", "b").Build()).reasons,
            (std::vector<std::string>{"node(s) had untolerated taint {k: v}"}));
  Node o = NodeBuilder("o").Cpu("1").Build();
  EXPECT_EQ(Filter(o, PodBuilder("p").Cpu("2").NodeSelector("a", "b").Build()).reasons,
            (std::vector<std::string>{"node(s) didn't match Pod's node affinity/selector"}));
}

TEST(FiltersTest, HostImagesAfterNodeAffinityAndBeforeFit) {
  const std::string nginx = "node(s) cannot run image \"nginx\" on the host";
  Node any = NodeBuilder("any").Cpu("1").Build();
  Node declared = NodeBuilder("d").Cpu("1").HostImages({"busybox", "pytorch/*"}).Build();
  RunTable({
      {"undeclared node runs any image", any, PodBuilder("p").Image("nginx").Build(), kOk, {}},
      {"declared image", declared, PodBuilder("p").Image("busybox").Image("pytorch/pytorch:2").Build(), kOk, {}},
      {"first undeclared image named", declared,
       PodBuilder("p").Image("busybox").Image("nginx").Image("redis").Build(), kUnresolvable, {nginx}},
      {"an empty declaration runs nothing", NodeBuilder("e").Cpu("1").HostImages({}).Build(),
       PodBuilder("p").Image("busybox").Build(), kUnresolvable,
       {"node(s) cannot run image \"busybox\" on the host"}},
  });
  // NodeAffinity is reported before HostImages, HostImages before fit.
  Node labelled = NodeBuilder("l").Cpu("1").HostImages({"busybox"}).Build();
  EXPECT_EQ(Filter(labelled, PodBuilder("p").Image("nginx").NodeSelector("a", "b").Cpu("2").Build()).reasons,
            (std::vector<std::string>{"node(s) didn't match Pod's node affinity/selector"}));
  EXPECT_EQ(Filter(labelled, PodBuilder("p").Image("nginx").Cpu("2").Build()).reasons,
            (std::vector<std::string>{nginx}));
}

TEST(FiltersTest, NominatedPodsReserveForLowerOrEqualPriorityOnly) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("n").Cpu("4").Build());
  ASSERT_TRUE(s.AddNominatedPod(PodBuilder("nominee").Cpu("3").Priority(100).Nominated("n").Build()).ok());
  const NodeInfo& info = s.nodes()[0];
  auto run = [&](const Pod& p) {
    return RunFiltersWithNominatedPods(p, s.Compile(p), info, info.usage(), s.resource_names());
  };
  EXPECT_FALSE(run(PodBuilder("lower").Cpu("2").Priority(50).Build()).ok());
  EXPECT_FALSE(run(PodBuilder("equal").Cpu("2").Priority(100).Build()).ok());
  EXPECT_TRUE(run(PodBuilder("higher").Cpu("2").Priority(101).Build()).ok());
  // The nominee itself is not counted twice.
  EXPECT_TRUE(run(PodBuilder("nominee").Cpu("3").Priority(100).Nominated("n").Build()).ok());
}

}  // namespace
}  // namespace berth::placement
