// The default PriorityClass is resolved once (api::DefaultPriorityClass) and every reader
// agrees on it: kube-apiserver's Priority admission (a pod that names no class), Kueue's job
// reconciler (a Workload's priority and priorityClassRef, as Kueue's pkg/util/priority
// getDefaultPriority) and `berth explain`/`lint` (ClusterView::ResolvePriorityClass).
// Several classes marked globalDefault (possible in a race the validation cannot see) are
// the case where readers could disagree: the lowest value wins, an equal value by name.
#include <gtest/gtest.h>

#include "api/admission_pipeline.h"
#include "api/priority_admission.h"
#include "api/registry.h"
#include "cli/diagnostics/cluster_view.h"
#include "client/testing/fake_client.h"
#include "client/testing/informer_sync.h"
#include "controllers/jobs/batchjob/batchjob_integration.h"
#include "controllers/kueue/decoder.h"
#include "controllers/kueue/kueue_controller.h"

namespace berth {
namespace {

const client::GroupVersionResource kJobs{"batch", "v1", "jobs"};

api::Object PriorityClass(const std::string& name, int64_t value, bool global_default) {
  return {{"apiVersion", "scheduling.k8s.io/v1"},
          {"kind", "PriorityClass"},
          {"metadata", {{"name", name}}},
          {"value", value},
          {"globalDefault", global_default},
          {"preemptionPolicy", "PreemptLowerPriority"}};
}

// Class sets and the default each must resolve to.
struct Case {
  std::string name;
  std::vector<api::Object> classes;
  std::string want;  // "" = no default
  int64_t want_value = 0;
};

std::vector<Case> Cases() {
  return {
      {"one default", {PriorityClass("low", 10, true), PriorityClass("high", 1000, false)}, "low", 10},
      {"lowest of several defaults",
       {PriorityClass("b-high", 1000, true), PriorityClass("a-low", 5, true), PriorityClass("none", 1, false)},
       "a-low",
       5},
      {"equal values broken by name", {PriorityClass("zz", 7, true), PriorityClass("aa", 7, true)}, "aa", 7},
      {"no default", {PriorityClass("x", 3, false)}, "", 0},
  };
}

class DefaultPriorityClassTest : public ::testing::TestWithParam<Case> {
 protected:
  DefaultPriorityClassTest() : client_(clock_), factory_(client_, clock_, client::testing::FastInformerOptions()) {}

  FakeClock clock_;
  client::testing::FakeClient client_;
  client::SharedInformerFactory factory_;
};

TEST_P(DefaultPriorityClassTest, AdmissionKueueAndExplainAgree) {
  const Case& c = GetParam();
  api::StaticObjectLookup lookup;
  std::vector<api::Object> classes = c.classes;
  for (const api::Object& pc : classes) {
    lookup.Add(api::kPriorityClassesResource, pc);
    ASSERT_TRUE(client_.Create(controllers::kueue::kPriorityClasses, pc).ok());
  }

  // The lookup itself.
  const api::Object* def = api::DefaultPriorityClass(classes);
  ASSERT_EQ(def == nullptr, c.want.empty());
  if (def != nullptr) EXPECT_EQ(api::Name(*def), c.want);

  // kube-apiserver's Priority admission on a pod that names no class.
  api::AdmissionPipeline pipeline{api::Registry::Default(), api::StrategyRegistry::Default()};
  api::WriteRequest wr;
  wr.operation = api::Operation::kCreate;
  wr.object = {{"apiVersion", "v1"},
               {"kind", "Pod"},
               {"metadata", {{"name", "p"}, {"namespace", "default"}}},
               {"spec", {{"containers", {{{"name", "c"}, {"image", "i"}}}}}}};
  wr.lookup = &lookup;
  auto pod = pipeline.Admit(std::move(wr));
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->object["spec"]["priority"], c.want_value);
  EXPECT_EQ(pod->object["spec"].value("priorityClassName", ""), c.want);

  // Kueue: the Workload of a queued Job that names no class.
  controllers::kueue::KueueController kueue(client_, factory_, clock_, {});
  kueue.AddJobIntegration(std::make_unique<controllers::jobs::batchjob::BatchJobIntegration>());
  for (client::Informer* inf : kueue.informers()) inf->Start();
  factory_.Start();
  ASSERT_TRUE(factory_.WaitForCacheSync(std::chrono::seconds(10)));
  api::Object job = api::Object::parse(R"({"apiVersion": "batch/v1", "kind": "Job",
      "metadata": {"name": "j", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
      "spec": {"suspend": true, "template": {"spec": {"restartPolicy": "Never",
               "containers": [{"name": "c", "image": "i"}]}}}})");
  ASSERT_TRUE(client_.Create(kJobs.Namespace("team-a"), job).ok());
  ASSERT_TRUE(client::testing::WaitForCachesToMatch(client_, kueue.informers()));
  kueue.EnqueueAll();
  kueue.ProcessQueued();
  auto workloads = client_.List(controllers::kueue::kWorkloads.Namespace("team-a"));
  ASSERT_TRUE(workloads.ok());
  ASSERT_EQ(workloads->items.size(), 1u);
  const api::Object& spec = workloads->items[0]["spec"];
  EXPECT_EQ(spec["priority"], c.want_value);
  if (c.want.empty()) {
    EXPECT_FALSE(spec.contains("priorityClassRef")) << spec.dump();
  } else {
    EXPECT_EQ(spec["priorityClassRef"],
              api::Object({{"group", "scheduling.k8s.io"}, {"kind", "PriorityClass"}, {"name", c.want}}));
  }
  kueue.Stop();
  factory_.Shutdown();

  // berth explain / lint.
  auto view = cli::diagnostics::ClusterView::Fetch(client_);
  ASSERT_TRUE(view.ok()) << view.status();
  const api::Object* resolved = view->ResolvePriorityClass("");
  ASSERT_EQ(resolved == nullptr, c.want.empty());
  if (resolved != nullptr) EXPECT_EQ(api::Name(*resolved), c.want);
}

INSTANTIATE_TEST_SUITE_P(Classes, DefaultPriorityClassTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace berth
