// TtlAfterFinishedController through FakeClient + FakeClock: the Jobs informer
// is fed by the FakeClient's watch; reconciles are driven synchronously.
#include "controllers/jobs/batchjob/ttl_after_finished.h"

#include <gtest/gtest.h>

#include "client/testing/fake_client.h"
#include "client/testing/informer_sync.h"
#include "controllers/jobs/common/resources.h"

namespace berth::controllers::jobs::batchjob {
namespace {

using namespace std::chrono_literals;

class TtlAfterFinishedTest : public ::testing::Test {
 protected:
  TtlAfterFinishedTest()
      : client_(clock_),
        factory_(client_, clock_, client::testing::FastInformerOptions()),
        jobs_(factory_.ForResource(kJobsResource)),
        ctl_(client_, jobs_, clock_) {
    factory_.Start();
    EXPECT_TRUE(factory_.WaitForCacheSync(10s));
  }
  ~TtlAfterFinishedTest() override { factory_.Shutdown(); }

  // A Job that finished (`condition` True) `ago` before now, with `ttl` when set.
  void CreateJob(const std::string& name, std::optional<int64_t> ttl, const std::string& condition, Duration ago) {
    api::Object job = api::Object::parse(R"({"apiVersion": "batch/v1", "kind": "Job",
      "metadata": {"namespace": "team-a"},
      "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}})");
    job["metadata"]["name"] = name;
    if (ttl) job["spec"]["ttlSecondsAfterFinished"] = *ttl;
    auto created = client_.Create(kJobsResource.Namespace("team-a"), job);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    if (condition.empty()) return;
    api::Object finished = *created;
    finished["status"]["conditions"] = {
        {{"type", condition}, {"status", "True"}, {"lastTransitionTime", FormatRfc3339(clock_.Now() - ago)}}};
    ASSERT_TRUE(client_.UpdateStatus(kJobsResource.Namespace("team-a"), finished).ok());
  }
  StatusOr<Duration> Reconcile(const std::string& name) {
    EXPECT_TRUE(client::testing::WaitForCachesToMatch(client_, {&jobs_}));
    return ctl_.Reconcile("team-a/" + name);
  }
  bool Exists(const std::string& name) { return client_.Get(kJobsResource.Namespace("team-a"), name).ok(); }

  FakeClock clock_;
  client::testing::FakeClient client_;
  client::SharedInformerFactory factory_;
  client::Informer& jobs_;
  TtlAfterFinishedController ctl_;
};

TEST_F(TtlAfterFinishedTest, AFinishedJobIsDeletedWhenItsTtlPasses) {
  CreateJob("done", 100, "Complete", 40s);
  auto wait = Reconcile("done");
  ASSERT_TRUE(wait.ok()) << wait.status().ToString();
  EXPECT_EQ(*wait, 60s);
  EXPECT_TRUE(Exists("done"));
  clock_.Advance(59s);
  EXPECT_EQ(Reconcile("done").value(), 1s);
  EXPECT_TRUE(Exists("done"));
  clock_.Advance(1s);
  EXPECT_EQ(Reconcile("done").value(), Duration::zero());
  EXPECT_FALSE(Exists("done"));
}

TEST_F(TtlAfterFinishedTest, FailedJobsExpireLikeCompleteOnesAndZeroMeansAtOnce) {
  CreateJob("failed", 0, "Failed", 0s);
  EXPECT_EQ(Reconcile("failed").value(), Duration::zero());
  EXPECT_FALSE(Exists("failed"));
}

TEST_F(TtlAfterFinishedTest, RunningJobsAndJobsWithoutTtlStay) {
  CreateJob("running", 0, "", 0s);
  CreateJob("no-ttl", std::nullopt, "Complete", 24h);
  CreateJob("suspended", 0, "Suspended", 1h);
  for (const char* name : {"running", "no-ttl", "suspended"}) {
    EXPECT_EQ(Reconcile(name).value(), Duration::zero()) << name;
    EXPECT_TRUE(Exists(name)) << name;
  }
}

TEST_F(TtlAfterFinishedTest, TheTtlIsReadAgainFromTheServerBeforeDeleting) {
  CreateJob("extended", 10, "Complete", 20s);
  ASSERT_TRUE(client::testing::WaitForCachesToMatch(client_, {&jobs_}));
  // The informer has not seen the change yet when the reconcile runs: stop it first.
  factory_.Shutdown();
  api::Object job = client_.Get(kJobsResource.Namespace("team-a"), "extended").value();
  job["spec"]["ttlSecondsAfterFinished"] = 3600;
  ASSERT_TRUE(client_.Update(kJobsResource.Namespace("team-a"), job).ok());
  auto wait = ctl_.Reconcile("team-a/extended");
  ASSERT_TRUE(wait.ok());
  EXPECT_EQ(*wait, 3580s);
  EXPECT_TRUE(Exists("extended"));
}

TEST_F(TtlAfterFinishedTest, AFinishedConditionWithoutATimeIsAnError) {
  CreateJob("no-time", 0, "", 0s);
  api::Object job = client_.Get(kJobsResource.Namespace("team-a"), "no-time").value();
  job["status"]["conditions"] = {{{"type", "Complete"}, {"status", "True"}}};
  ASSERT_TRUE(client_.UpdateStatus(kJobsResource.Namespace("team-a"), job).ok());
  auto wait = Reconcile("no-time");
  ASSERT_FALSE(wait.ok());
  EXPECT_EQ(wait.status().message(), "unable to find the time when the Job team-a/no-time finished");
  EXPECT_TRUE(Exists("no-time"));
}

// The loop is fed only Jobs a reconcile can act on (upstream's needsCleanup in
// its handlers): a Job without a TTL, or not finished, or being deleted, is
// never enqueued, however many of its updates arrive.
TEST(TtlAfterFinishedKeysTest, OnlyAFinishedJobWithATtlNotBeingDeletedIsEnqueued) {
  const KeyFunc keys = TtlAfterFinishedController::Keys();
  auto job = [](std::optional<int64_t> ttl, const std::string& condition, const std::string& status, bool deleting,
                bool with_time = true) {
    api::Object j = {{"metadata", {{"namespace", "team-a"}, {"name", "j"}}}, {"spec", api::Object::object()}};
    if (ttl) j["spec"]["ttlSecondsAfterFinished"] = *ttl;
    if (deleting) j["metadata"]["deletionTimestamp"] = "2026-12-07T00:00:00Z";
    if (!condition.empty()) {
      api::Object c = {{"type", condition}, {"status", status}};
      if (with_time) c["lastTransitionTime"] = "2026-12-07T00:00:00Z";
      j["status"]["conditions"] = api::Object::array({c});
    }
    return j;
  };
  const std::vector<std::string> none, own = {"team-a/j"};
  struct Case {
    const char* what;
    api::Object job;
    std::vector<std::string> want;
  } cases[] = {
      {"complete, ttl 100", job(100, "Complete", "True", false), own},
      {"failed, ttl 0", job(0, "Failed", "True", false), own},
      {"complete without a time (the reconcile reports it)", job(5, "Complete", "True", false, false), own},
      {"complete, no ttl", job(std::nullopt, "Complete", "True", false), none},
      {"running, ttl", job(100, "", "", false), none},
      {"suspended, ttl", job(100, "Suspended", "True", false), none},
      {"complete False, ttl", job(100, "Complete", "False", false), none},
      {"complete, ttl, being deleted", job(100, "Complete", "True", true), none},
      {"ttl not an integer", [&] {
         api::Object j = job(100, "Complete", "True", false);
         j["spec"]["ttlSecondsAfterFinished"] = "100";
         return j;
       }(), none},
      {"not an object", api::Object::array(), none},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(keys(c.job), c.want) << c.what;
    EXPECT_EQ(TtlAfterFinishedController::NeedsCleanup(c.job), !c.want.empty()) << c.what;
  }
}

}  // namespace
}  // namespace berth::controllers::jobs::batchjob
