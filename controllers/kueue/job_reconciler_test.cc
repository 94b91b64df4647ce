// The generic job reconciler when a job no longer matches its Workload (Kueue's
// ensureOneWorkload), over a job kind of the test's own ("example.com/v1 Trainer": one
// podSet "main" of spec.replicas pods, spec.suspend, status.active) whose template the
// test may change at any time, as a kind without Kubernetes' Job immutability can: the
// reconciler stops the job, waits for its pods, deletes the Workload and creates one
// that queues again with the new requests.
#include "controllers/kueue/job_reconciler.h"

#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <vector>

#include "api/conditions.h"
#include "api/unstructured.h"
#include "controllers/kueue/decoder.h"
#include "controllers/kueue/testing/kueue_test_env.h"
#include "client/event_recorder.h"

namespace berth::controllers::kueue {
namespace {

const client::GroupVersionResource kTrainers{"example.com", "v1", "trainers"};
const client::GroupVersionResource kEvents{"", "v1", "events"};

class Trainer final : public GenericJob {
 public:
  explicit Trainer(api::Object job) : job_(std::move(job)) {}
  const api::Object& object() const override { return job_; }
  std::vector<PodSet> PodSets() const override {
    const api::Object& spec = api::ObjectAt(job_, "spec");
    return {PodSet{"main", static_cast<int32_t>(api::IntAt(spec, "replicas", 1)), api::Field(spec, "template")}};
  }
  bool IsSuspended() const override { return api::BoolAt(api::ObjectAt(job_, "spec"), "suspend", false); }
  void Suspend() override { job_["spec"]["suspend"] = true; }
  Status RunWithPodSetsInfo(const std::vector<PodSetInfo>& infos) override {
    BERTH_RETURN_IF_ERROR(InjectPodSetsInfo(infos, 1, PodSpec()));
    job_["spec"]["suspend"] = false;
    return Status::Ok();
  }
  bool RestorePodSetsInfo(const std::vector<PodSetInfo>& infos) override {
    return kueue::RestorePodSetsInfo(infos, 1, PodSpec());
  }
  std::optional<JobFinishedState> Finished() const override { return std::nullopt; }
  bool PodsReady() const override { return false; }
  bool IsActive() const override { return api::IntAt(api::ObjectAt(job_, "status"), "active", 0) > 0; }
  bool ResetStartTime() override {
    auto status = job_.find("status");
    return status != job_.end() && status->is_object() && status->erase("startTime") > 0;
  }

 private:
  PodSpecAt PodSpec() {
    return [this](size_t) { return &job_["spec"]["template"]["spec"]; };
  }
  api::Object job_;
};

class TrainerIntegration final : public JobIntegration {
 public:
  TrainerIntegration() : JobIntegration("example.com/trainer", kTrainers, {"example.com", "v1", "Trainer"}) {}
  std::unique_ptr<GenericJob> Wrap(api::Object job) const override { return std::make_unique<Trainer>(std::move(job)); }
};

class JobReconcilerTest : public testing::KueueTestEnv {
 protected:
  JobReconcilerTest() {
    kueue_.AddJobIntegration(std::make_unique<TrainerIntegration>());
    StartInformers();
    Create(kResourceFlavors, "",
           {{"apiVersion", kKueueApiVersion}, {"kind", "ResourceFlavor"}, {"metadata", {{"name", "default"}}}});
    Create(kClusterQueues, "", api::Object::parse(R"({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
             "metadata": {"name": "cq"},
             "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
               {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "2"}]}]}]}})"));
    Create(kLocalQueues, "ns",
           {{"apiVersion", kKueueApiVersion},
            {"kind", "LocalQueue"},
            {"metadata", {{"name", "lq"}, {"namespace", "ns"}}},
            {"spec", {{"clusterQueue", "cq"}}}});
  }

  void Settle() { KueueTestEnv::Settle(30); }

  static api::Object Job(const std::string& cpu, bool suspend) {
    return {{"apiVersion", "example.com/v1"},
            {"kind", "Trainer"},
            {"metadata", {{"name", "t"}, {"namespace", "ns"}, {"labels", {{kQueueNameLabel, "lq"}}}}},
            {"spec",
             {{"replicas", 1},
              {"suspend", suspend},
              {"template",
               {{"spec",
                 {{"containers",
                   api::Object::array(
                       {{{"name", "c"}, {"image", "busybox"}, {"resources", {{"requests", {{"cpu", cpu}}}}}}})}}}}}}}};
  }

  // Edits the stored job's container requests (an update the kind allows).
  void SetRequests(const std::string& cpu) {
    api::Object job = Get(kTrainers, "ns", "t");
    job["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu;
    ASSERT_TRUE(client_.Update(kTrainers.Namespace("ns"), job).ok());
  }
  // What the kind's own controller would report about its pods.
  void SetActive(int active) {
    api::Object job = Get(kTrainers, "ns", "t");
    job["status"]["active"] = active;
    if (active > 0) job["status"]["startTime"] = "2026-01-01T00:00:00Z";
    ASSERT_TRUE(client_.UpdateStatus(kTrainers.Namespace("ns"), job).ok());
  }

  std::vector<api::Object> Workloads() {
    auto list = client_.List(kWorkloads.Namespace("ns"));
    EXPECT_TRUE(list.ok());
    return list.ok() ? list.value().items : std::vector<api::Object>{};
  }
  std::vector<std::string> EventMessages(const std::string& reason) {
    std::vector<std::string> out;
    berth::client::EventRecorder::FlushAll();
    auto list = client_.List(kEvents.Namespace("ns"));
    for (const api::Object& e : list.value().items) {
      if (e.value("reason", "") == reason) out.push_back(e.value("message", ""));
    }
    return out;
  }
  static std::string Cpu(const api::Object& wl) {
    return wl["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"].value("cpu", "");
  }
};

TEST_F(JobReconcilerTest, RunningJobWhoseRequestsChangeIsStoppedAndQueuesAgain) {
  Create(kTrainers, "ns", Job("1", /*suspend=*/true));
  Settle();
  std::vector<api::Object> wls = Workloads();
  ASSERT_EQ(wls.size(), 1u);
  const std::string old_uid = api::Uid(wls[0]);
  ASSERT_TRUE(api::IsConditionTrue(wls[0], "Admitted"));
  ASSERT_EQ(Get(kTrainers, "ns", "t")["spec"]["suspend"], false);
  SetActive(1);

  // 1 → 3 cpu while running (the quota is 2).
  SetRequests("3");
  Settle();
  api::Object job = Get(kTrainers, "ns", "t");
  EXPECT_EQ(job["spec"]["suspend"], true);
  EXPECT_FALSE(api::ObjectAt(job, "status").contains("startTime"));
  EXPECT_EQ(EventMessages("Stopped"),
            std::vector<std::string>{"No matching Workload; restoring pod templates according to existent Workload"});
  // Its pod is still there: the old Workload keeps its quota.
  wls = Workloads();
  ASSERT_EQ(wls.size(), 1u);
  EXPECT_EQ(api::Uid(wls[0]), old_uid);
  EXPECT_TRUE(api::IsConditionTrue(wls[0], "QuotaReserved"));

  // The pod is gone: the Workload is replaced by one with the new requests, which does not fit.
  SetActive(0);
  Settle();
  wls = Workloads();
  ASSERT_EQ(wls.size(), 1u);
  EXPECT_NE(api::Uid(wls[0]), old_uid);
  EXPECT_EQ(Cpu(wls[0]), "3");
  EXPECT_FALSE(api::IsConditionTrue(wls[0], "QuotaReserved"));
  EXPECT_EQ(Get(kTrainers, "ns", "t")["spec"]["suspend"], true);
  ASSERT_EQ(EventMessages("DeletedWorkload").size(), 1u);
  EXPECT_EQ(EventMessages("DeletedWorkload")[0], "Deleted not matching Workload: ns/" + api::Name(wls[0]));

  // Back to 2 cpu while suspended: replaced again, admitted, started.
  SetRequests("2");
  Settle();
  wls = Workloads();
  ASSERT_EQ(wls.size(), 1u);
  EXPECT_EQ(Cpu(wls[0]), "2");
  EXPECT_TRUE(api::IsConditionTrue(wls[0], "Admitted"));
  EXPECT_EQ(Get(kTrainers, "ns", "t")["spec"]["suspend"], false);
}

TEST_F(JobReconcilerTest, PendingJobWhoseRequestsChangeGetsANewWorkload) {
  Create(kTrainers, "ns", Job("3", /*suspend=*/true));
  Settle();
  std::vector<api::Object> wls = Workloads();
  ASSERT_EQ(wls.size(), 1u);
  EXPECT_FALSE(api::IsConditionTrue(wls[0], "QuotaReserved"));

  SetRequests("1");
  Settle();
  wls = Workloads();
  ASSERT_EQ(wls.size(), 1u);
  EXPECT_EQ(Cpu(wls[0]), "1");
  EXPECT_TRUE(api::IsConditionTrue(wls[0], "Admitted"));
  EXPECT_EQ(Get(kTrainers, "ns", "t")["spec"]["suspend"], false);
  EXPECT_TRUE(EventMessages("Stopped").empty());  // it was never running
}

TEST_F(JobReconcilerTest, MatchingJobKeepsItsWorkload) {
  Create(kTrainers, "ns", Job("1", true));
  Settle();
  const std::string uid = api::Uid(Workloads().at(0));
  SetActive(1);
  // A change outside the podSets (a label) is not a mismatch.
  api::Object job = Get(kTrainers, "ns", "t");
  job["metadata"]["labels"]["team"] = "a";
  ASSERT_TRUE(client_.Update(kTrainers.Namespace("ns"), job).ok());
  Settle();
  EXPECT_EQ(api::Uid(Workloads().at(0)), uid);
  EXPECT_EQ(Get(kTrainers, "ns", "t")["spec"]["suspend"], false);
  EXPECT_TRUE(EventMessages("Stopped").empty());
}

}  // namespace
}  // namespace berth::controllers::kueue
