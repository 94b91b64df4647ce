// Issue 16's quota attack through the whole control plane (control_plane_fixture.h): a
// Kueue-managed Job with parallelism 1 on a one-GPU ClusterQueue, admitted and running,
// patched to parallelism 8. Upstream Kueue's job reconciler stops such a job and re-creates
// its Workload; berth also suspends it in the write that changes its pod count
// (api/job_strategy.h), so at no moment does more than the admitted pod exist. A poller
// watches the pods and the ClusterQueue's usage all the way through.
#include <atomic>
#include <chrono>
#include <gtest/gtest.h>
#include <mutex>
#include <string>
#include <thread>

#include "tests/integration/control_plane_fixture.h"

namespace berth::integration {
namespace {

const client::GroupVersionResource kClusterQueues{"kueue.x-k8s.io", "v1beta2", "clusterqueues"};

constexpr char kGpuQueue[] = R"(
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: gpu-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: gpu-queue}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: gpu-flavor
      resources:
      - {name: cpu, nominalQuota: 2}
      - {name: memory, nominalQuota: 4Gi}
      - {name: nvidia.com/gpu, nominalQuota: 1}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: user-queue, namespace: team-a}
spec: {clusterQueue: gpu-queue}
)";

// Eight completions, one at a time, each holding one GPU until terminated.
constexpr char kTrainJob[] = R"(
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: team-a
  labels: {kueue.x-k8s.io/queue-name: user-queue}
spec:
  parallelism: 1
  completions: 8
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 2
      containers:
      - name: main
        image: busybox
        command: [/bin/sh, -c, 'trap "exit 143" TERM; while true; do sleep 0.1; done']
        resources:
          requests: {cpu: 100m, nvidia.com/gpu: 1}
          limits: {nvidia.com/gpu: 1}
)";

// nvidia.com/gpu in a ClusterQueue's status.flavorsUsage (0 when absent).
int64_t GpuUsage(const api::Object& cq) {
  for (const api::Object& flavor :
       cq.value("status", api::Object::object()).value("flavorsUsage", api::Object::array())) {
    for (const api::Object& r : flavor.value("resources", api::Object::array())) {
      if (r.value("name", "") == "nvidia.com/gpu") return std::stoll(r.value("total", "0"));
    }
  }
  return 0;
}

class QuotaBypassTest : public ControlPlaneTest {
 protected:
  QuotaBypassTest() { SetNodeCapacity("cpu=2,memory=4Gi,nvidia.com/gpu=8"); }

  // Pods of the Job that are not terminal (running, pending, or terminating: each holds a GPU).
  int LivePods() {
    int live = 0;
    for (const api::Object& p : List(kPods, "team-a", "job-name=train")) {
      const std::string phase = p.value("status", api::Object::object()).value("phase", "");
      if (phase != "Succeeded" && phase != "Failed") ++live;
    }
    return live;
  }
};

TEST_F(QuotaBypassTest, AdmittedJobPatchedToMoreParallelismIsStoppedAndQueuedAgain) {
  Apply(kGpuQueue);
  Apply(kTrainJob);
  ASSERT_TRUE(WaitFor([&] {
    for (const api::Object& p : List(kPods, "team-a", "job-name=train")) {
      if (p["status"].value("phase", "") == "Running") return true;
    }
    return false;
  })) << Get(kJobs, "team-a", "train").dump(2);
  std::vector<api::Object> wls = WorkloadsOf("team-a", "train");
  ASSERT_EQ(wls.size(), 1u);
  ASSERT_TRUE(HasCondition(wls[0], "Admitted"));
  const std::string old_uid = api::Uid(wls[0]);
  ASSERT_TRUE(WaitFor([&] { return GpuUsage(Get(kClusterQueues, "", "gpu-queue")) == 1; }));

  // From here to the end: the most pods alive at once and the most GPUs the queue counted.
  std::atomic<bool> stop{false};
  std::atomic<int> max_live{0};
  std::atomic<int64_t> max_usage{0};
  std::atomic<int> polls{0};
  std::thread poller([&] {
    while (!stop.load()) {
      max_live = std::max(max_live.load(), LivePods());
      max_usage = std::max(max_usage.load(), GpuUsage(Get(kClusterQueues, "", "gpu-queue")));
      ++polls;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });

  auto patched =
      client_->Patch(kJobs.Namespace("team-a"), "train", client::PatchType::kMerge, R"({"spec":{"parallelism":8}})");
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  EXPECT_EQ(patched.value()["spec"]["parallelism"], 8);
  EXPECT_EQ(patched.value()["spec"]["suspend"], true);  // in the same write

  // The old Workload is replaced by one of 8 pods, which does not fit and stays pending.
  ASSERT_TRUE(WaitFor([&] {
    const std::vector<api::Object> now = WorkloadsOf("team-a", "train");
    return now.size() == 1 && api::Uid(now[0]) != old_uid;
  })) << WorkloadsOf("team-a", "train").size();
  ASSERT_TRUE(WaitFor([&] { return HasCondition(WorkloadsOf("team-a", "train").at(0), "QuotaReserved", "False"); }))
      << WorkloadsOf("team-a", "train").at(0).dump(2);
  wls = WorkloadsOf("team-a", "train");
  EXPECT_EQ(wls[0]["spec"]["podSets"][0]["count"], 8);
  EXPECT_EQ(LivePods(), 0);
  EXPECT_TRUE(WaitFor([&] { return GpuUsage(Get(kClusterQueues, "", "gpu-queue")) == 0; }));

  // It stays so: a few hundred more polls see no admission and no pod.
  const int seen = polls.load();
  ASSERT_TRUE(WaitFor([&] { return polls.load() >= seen + 200; }));
  stop = true;
  poller.join();
  wls = WorkloadsOf("team-a", "train");
  ASSERT_EQ(wls.size(), 1u);
  EXPECT_FALSE(HasCondition(wls[0], "QuotaReserved"));
  const api::Object job = Get(kJobs, "team-a", "train");
  EXPECT_EQ(job["spec"]["suspend"], true);
  EXPECT_EQ(job["spec"]["parallelism"], 8);
  EXPECT_EQ(LivePods(), 0);

  EXPECT_LE(max_live.load(), 1);
  EXPECT_LE(max_usage.load(), 1);
}

}  // namespace
}  // namespace berth::integration
