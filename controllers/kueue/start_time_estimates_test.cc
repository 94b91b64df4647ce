// Run-time sources and their order, the learned history (mean, spread,
// bounds), and the EstimatedStart condition's words.
#include "controllers/kueue/start_time_estimates.h"

#include <gtest/gtest.h>


namespace berth::controllers::kueue {
namespace {

using admission::RunTimeSource;
using std::chrono::minutes;
using std::chrono::seconds;

api::Object WorkloadJson(api::Object spec_extra = api::Object::object()) {
  api::Object spec = {{"queueName", "lq"}, {"podSets", api::Object::array({{{"name", "main"}, {"count", 1},
                                                                            {"template", {{"spec", api::Object::object()}}}}})}};
  for (auto it = spec_extra.begin(); it != spec_extra.end(); ++it) spec[it.key()] = it.value();
  return {{"metadata", {{"name", "w"}, {"namespace", "team-a"}}}, {"spec", spec}};
}

// A Workload whose one container requests `cpu`.
api::Object Shaped(const std::string& cpu = "1") {
  api::Object w = WorkloadJson();
  w["spec"]["podSets"][0]["template"]["spec"]["containers"] =
      api::Object::array({{{"name", "c"}, {"resources", {{"requests", {{"cpu", cpu}}}}}}});
  return w;
}

TEST(RunTimeHistoryTest, MeanAndSpreadOfTheLastSamplesPerQueueAndShape) {
  RunTimeHistory h;
  const uint64_t shape = RunShape(Shaped());
  EXPECT_FALSE(h.Lookup("team-a/lq", shape));
  h.Record("team-a/lq", shape, minutes(10));
  auto one = h.Lookup("team-a/lq", shape);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->duration, minutes(10));
  EXPECT_EQ(one->spread, minutes(5)) << "half the run time with one sample";
  EXPECT_EQ(one->source, RunTimeSource::kHistory);
  h.Record("team-a/lq", shape, minutes(20));
  auto two = h.Lookup("team-a/lq", shape);
  EXPECT_EQ(two->duration, minutes(15));
  EXPECT_NEAR(std::chrono::duration<double>(two->spread).count(), 424.26, 0.01) << "sample standard deviation";
  // Another queue, another shape: nothing learned there.
  EXPECT_FALSE(h.Lookup("team-b/lq", shape));
  EXPECT_FALSE(h.Lookup("team-a/lq", RunShape(Shaped("2"))));
  EXPECT_NE(RunShape(Shaped("2")), shape);
  // Only the last kRunTimeSamples count.
  for (size_t i = 0; i < kRunTimeSamples; ++i) h.Record("team-a/lq", shape, minutes(1));
  EXPECT_EQ(h.Lookup("team-a/lq", shape)->duration, minutes(1));
  EXPECT_EQ(h.Lookup("team-a/lq", shape)->spread, Duration::zero());
}

TEST(RunTimeHistoryTest, AtMostKRunTimeShapesTheLeastRecentlyRecordedGoFirst) {
  RunTimeHistory h;
  for (size_t i = 0; i < kRunTimeShapes + 10; ++i) h.Record("ns/lq", i, seconds(1));
  EXPECT_EQ(h.size(), kRunTimeShapes);
  EXPECT_FALSE(h.Lookup("ns/lq", 0));
  EXPECT_FALSE(h.Lookup("ns/lq", 9));
  EXPECT_TRUE(h.Lookup("ns/lq", 10));
  // Recording again makes a shape recent.
  h.Record("ns/lq", 10, seconds(2));
  h.Record("ns/lq", kRunTimeShapes + 100, seconds(1));
  EXPECT_TRUE(h.Lookup("ns/lq", 10));
  EXPECT_FALSE(h.Lookup("ns/lq", 11));
}

TEST(RunTimeOfTest, MaxExecutionTimeThenJobDeadlineThenPodDeadlinesThenHistory) {
  RunTimeHistory h;
  h.Record("team-a/lq", RunShape(WorkloadJson()), minutes(7));
  const admission::RunTime max = RunTimeOf(WorkloadJson({{"maximumExecutionTimeSeconds", 3600}}), minutes(5), h);
  EXPECT_EQ(max.source, RunTimeSource::kMaxExecutionTime);
  EXPECT_EQ(max.duration, seconds(3600));
  api::Object resumed = WorkloadJson({{"maximumExecutionTimeSeconds", 3600}});
  resumed["status"]["accumulatedPastExecutionTimeSeconds"] = 600;
  EXPECT_EQ(RunTimeOf(resumed, std::nullopt, h).duration, seconds(3000)) << "what an earlier admission used is gone";
  const admission::RunTime job = RunTimeOf(WorkloadJson(), minutes(5), h);
  EXPECT_EQ(job.source, RunTimeSource::kActiveDeadline);
  EXPECT_EQ(job.duration, minutes(5));
  api::Object pods = WorkloadJson();
  pods["spec"]["podSets"][0]["template"]["spec"]["activeDeadlineSeconds"] = 90;
  EXPECT_EQ(RunTimeOf(pods, std::nullopt, h).duration, seconds(90));
  // A podSet without a deadline: its pods are unbounded.
  pods["spec"]["podSets"].push_back({{"name", "workers"}, {"count", 2}, {"template", {{"spec", api::Object::object()}}}});
  h.Record("team-a/lq", RunShape(pods), minutes(7));
  EXPECT_EQ(RunTimeOf(pods, std::nullopt, h).source, RunTimeSource::kHistory);
  EXPECT_EQ(RunTimeOf(WorkloadJson(), std::nullopt, h).duration, minutes(7));
  EXPECT_EQ(RunTimeOf(WorkloadJson({{"maximumExecutionTimeSeconds", 0}}), std::nullopt, RunTimeHistory()).source,
            RunTimeSource::kUnknown);
}

TEST(EstimatedStartConditionTest, WordsForEachCase) {
  const Time now = Time(std::chrono::seconds(1767225600));  // 2026-01-01T00:00:00Z
  admission::StartEstimate bound{now + minutes(40), {}, RunTimeSource::kMaxExecutionTime, true, "team-b/pretrain"};
  api::Condition c = EstimatedStartCondition(&bound, {}, false, now);
  EXPECT_EQ(c.type, "EstimatedStart");
  EXPECT_EQ(c.status, "True");
  EXPECT_EQ(c.reason, "MaxExecutionTime");
  EXPECT_EQ(c.message,
            "Expected to start by 2026-01-01T00:40:00Z (in at most 40m), after team-b/pretrain ends; run times from "
            "kueue.x-k8s.io/max-exec-time-seconds");
  admission::StartEstimate learned{now + minutes(125), minutes(6), RunTimeSource::kHistory, false, "team-a/x"};
  c = EstimatedStartCondition(&learned, {}, false, now);
  EXPECT_EQ(c.reason, "RunTimeHistory");
  EXPECT_EQ(c.message,
            "Expected to start at 2026-01-01T02:05:00Z (in 2h5m ± 6m), after team-a/x ends; run times learned from "
            "finished workloads of the same LocalQueue and shape");
  admission::StartEstimate backoff{now + seconds(30), {}, std::nullopt, false, ""};
  EXPECT_EQ(EstimatedStartCondition(&backoff, {}, false, now).reason, "RequeueBackoff");
  c = EstimatedStartCondition(nullptr, {{"ns/a", "ns/b"}, 2}, false, now);
  EXPECT_EQ(c.status, "False");
  EXPECT_EQ(c.reason, "UnknownRunTime");
  EXPECT_EQ(c.message,
            "No estimate: it waits for workloads whose run time is unknown: ns/a, ns/b (set "
            "kueue.x-k8s.io/max-exec-time-seconds on their jobs)");
  EXPECT_EQ(EstimatedStartCondition(nullptr, {}, true, now).reason, "BeyondHorizon");
  admission::UnknownBlockers limited;
  limited.limited = true;
  EXPECT_EQ(EstimatedStartCondition(nullptr, limited, false, now).reason, "ReplayLimit");
  EXPECT_EQ(EstimateJson(nullptr, limited, now)["source"], "ReplayLimit");
  EXPECT_EQ(EstimateJson(nullptr, {}, now)["source"], "Unknown");

  const api::Object j = EstimateJson(&learned, {}, now);
  EXPECT_EQ(j["time"], "2026-01-01T02:05:00Z");
  EXPECT_EQ(j["waitSeconds"], 7500);
  EXPECT_EQ(j["uncertaintySeconds"], 360);
  EXPECT_EQ(j["source"], "RunTimeHistory");
  EXPECT_EQ(j["upperBound"], false);
  EXPECT_EQ(j["after"], "team-a/x");
  EXPECT_EQ(EstimateJson(nullptr, {{"ns/a"}, 1}, now), (api::Object{{"source", "Unknown"}, {"waitsFor", {"ns/a"}}}));
  // Past the listed keys, the message and the JSON count the rest.
  const admission::UnknownBlockers many{{"ns/a", "ns/b", "ns/c", "ns/d", "ns/e", "ns/f"}, 40};
  EXPECT_EQ(EstimatedStartCondition(nullptr, many, false, now).message,
            "No estimate: it waits for workloads whose run time is unknown: ns/a, ns/b, ns/c, ns/d, ns/e and 35 more "
            "(set kueue.x-k8s.io/max-exec-time-seconds on their jobs)");
  EXPECT_EQ(EstimateJson(nullptr, many, now)["waitsForTotal"], 40);
}

TEST(EstimateDelayTest, APassWaitsTenTimesThePreviousPassWhenThatIsLongerThanThePeriod) {
  EXPECT_EQ(EstimateDelay(seconds(5), Duration::zero()), seconds(5));
  EXPECT_EQ(EstimateDelay(seconds(5), std::chrono::milliseconds(400)), seconds(5));
  EXPECT_EQ(EstimateDelay(seconds(5), seconds(2)), seconds(20));
}

// Each kind of change between a written estimate and a pass's: the first
// write, the status and reason, the start's tolerance at short and long
// waits, the workload waited on, and the message of one without a start.
TEST(EstimateWorthWritingTest, TheStartTheReasonAndTheBlockersNotTheChainAlone) {
  const Time now = Time() + std::chrono::hours(1000);
  const api::Condition history{"EstimatedStart", "True", "RunTimeHistory", "Expected to start at X, after a/one ends"};
  EXPECT_FALSE(EstimateWorthWriting(nullptr, history, now + seconds(59), now)) << "the next cycles admit it";
  EXPECT_TRUE(EstimateWorthWriting(nullptr, history, now + seconds(60), now));
  const api::Condition unknown{"EstimatedStart", "False", "UnknownRunTime", "No estimate: it waits for a/x"};
  EXPECT_TRUE(EstimateWorthWriting(nullptr, unknown, std::nullopt, now)) << "no start: always worth a first write";

  // Written 10 min ahead, after a/one (its message).
  const WrittenEstimate written{"a/w", history, now + minutes(10)};
  api::Condition chain_moved = history;
  chain_moved.message = "Expected to start at X+30s, after a/two ends";
  EXPECT_FALSE(EstimateWorthWriting(&written, chain_moved, now + minutes(10) + seconds(30), now))
      << "another workload's end, the start within max(60 s, 10 %)";
  // The tolerance is max(60 s, 10 % of the new wait): 66 s at 11 min.
  EXPECT_FALSE(EstimateWorthWriting(&written, history, now + minutes(11) + seconds(6), now));
  EXPECT_TRUE(EstimateWorthWriting(&written, history, now + minutes(11) + seconds(7), now));
  EXPECT_TRUE(EstimateWorthWriting(&written, history, now + minutes(8) + seconds(59), now)) << "earlier by 61 s";
  // Two minutes ahead, the floor of 60 s holds.
  const WrittenEstimate near{"a/w", history, now + minutes(2)};
  EXPECT_FALSE(EstimateWorthWriting(&near, history, now + minutes(3), now));
  EXPECT_TRUE(EstimateWorthWriting(&near, history, now + minutes(3) + seconds(1), now));
  // Ten hours ahead, 10 % of the wait: 66 min at 11 h.
  const WrittenEstimate far{"a/w", history, now + std::chrono::hours(10)};
  EXPECT_FALSE(EstimateWorthWriting(&far, history, now + std::chrono::hours(11), now));
  EXPECT_TRUE(EstimateWorthWriting(&far, history, now + std::chrono::hours(11) + minutes(10), now));

  api::Condition bound = history;
  bound.reason = "ActiveDeadline";
  EXPECT_TRUE(EstimateWorthWriting(&written, bound, now + minutes(10), now)) << "reason";
  EXPECT_TRUE(EstimateWorthWriting(&written, unknown, std::nullopt, now)) << "status";

  const WrittenEstimate blocked{"a/w", unknown, std::nullopt};
  EXPECT_FALSE(EstimateWorthWriting(&blocked, unknown, std::nullopt, now));
  api::Condition other_blockers = unknown;
  other_blockers.message = "No estimate: it waits for a/y";
  EXPECT_TRUE(EstimateWorthWriting(&blocked, other_blockers, std::nullopt, now)) << "the blockers named changed";
}

TEST(EstimateInputsChangedTest, OnlyWhatTheReplayReads) {
  api::Object before = WorkloadJson();
  api::SetCondition(&before, {"QuotaReserved", "False", "Pending", "couldn't assign flavors"}, Time());
  api::Object after = before;
  api::SetCondition(&after, {"QuotaReserved", "False", "Pending", "another message"}, Time());
  api::SetCondition(&after, {"EstimatedStart", "True", "RunTimeHistory", "Expected to start ..."}, Time());
  EXPECT_FALSE(EstimateInputsChanged(before, after)) << "messages and the estimate itself";
  api::Object admitted = after;
  api::SetCondition(&admitted, {"QuotaReserved", "True", "QuotaReserved", "Quota reserved"}, Time());
  EXPECT_TRUE(EstimateInputsChanged(after, admitted));
  api::Object priority = before;
  priority["spec"]["priority"] = 7;
  EXPECT_TRUE(EstimateInputsChanged(before, priority));
  api::Object backoff = before;
  backoff["status"]["requeueState"] = {{"count", 1}};
  EXPECT_TRUE(EstimateInputsChanged(before, backoff));
}

TEST(HumanDurationTest, AsAPersonReadsIt) {
  EXPECT_EQ(HumanDuration(seconds(35)), "35s");
  EXPECT_EQ(HumanDuration(seconds(90)), "2m");
  EXPECT_EQ(HumanDuration(minutes(60)), "1h");
  EXPECT_EQ(HumanDuration(minutes(125)), "2h5m");
  EXPECT_EQ(HumanDuration(std::chrono::hours(50)), "2d2h");
  EXPECT_EQ(HumanDuration(seconds(-5)), "0s");
}

}  // namespace
}  // namespace berth::controllers::kueue
