#include "agent/pod_status.h"

#include <gtest/gtest.h>

namespace berth::agent {
namespace {

using std::chrono::seconds;

const Time kT0 = FakeClock().Now();

api::Object Pod(const std::string& policy, std::vector<std::string> containers, std::vector<std::string> init = {}) {
  api::Object pod = {{"metadata", {{"name", "p"}, {"namespace", "ns"}, {"uid", "u1"}}},
                     {"spec", {{"containers", api::Object::array()}}}};
  if (!policy.empty()) pod["spec"]["restartPolicy"] = policy;
  for (const auto& c : containers) pod["spec"]["containers"].push_back({{"name", c}, {"image", "img"}});
  for (const auto& c : init) pod["spec"]["initContainers"].push_back({{"name", c}});
  return pod;
}

ContainerExit Exit(int code, Time started, Time finished) {
  ContainerExit e;
  e.exit_code = code;
  e.started_at = started;
  e.finished_at = finished;
  return e;
}

// Runs every container once with the given exit codes (in spec order) and returns the phase.
TEST(PodLifecycleTest, PhaseByRestartPolicyAndExitCodes) {
  struct Case {
    std::string policy;
    std::vector<int> exits;  // -1: still running
    PodPhase want;
  } cases[] = {
      {"Never", {0, 0}, PodPhase::kSucceeded},   {"Never", {0, 1}, PodPhase::kFailed},
      {"Never", {1, -1}, PodPhase::kRunning},    {"OnFailure", {0, 0}, PodPhase::kSucceeded},
      {"OnFailure", {0, 1}, PodPhase::kRunning}, {"", {0, 0}, PodPhase::kRunning},  // Always
      {"Always", {1, 1}, PodPhase::kRunning},    {"Never", {-1, -1}, PodPhase::kRunning},
  };
  for (const auto& c : cases) {
    PodLifecycle lc(Pod(c.policy, {"a", "b"}));
    EXPECT_EQ(lc.Phase(), PodPhase::kPending);
    EXPECT_EQ(lc.ContainersToStart(kT0), (std::vector<std::string>{"a", "b"}));
    lc.Started("a", kT0);
    lc.Started("b", kT0);
    for (size_t i = 0; i < c.exits.size(); ++i) {
      if (c.exits[i] >= 0) lc.Exited(i == 0 ? "a" : "b", Exit(c.exits[i], kT0, kT0 + seconds(1)));
    }
    EXPECT_EQ(lc.Phase(), c.want) << c.policy << " " << c.exits[0] << "," << c.exits[1];
  }
}

TEST(PodLifecycleTest, InitContainersRunOneAtATimeBeforeRegularOnes) {
  PodLifecycle lc(Pod("Never", {"main"}, {"i1", "i2"}));
  EXPECT_EQ(lc.ContainersToStart(kT0), std::vector<std::string>{"i1"});
  lc.Started("i1", kT0);
  EXPECT_TRUE(lc.ContainersToStart(kT0).empty());
  lc.Exited("i1", Exit(0, kT0, kT0 + seconds(1)));
  EXPECT_EQ(lc.ContainersToStart(kT0), std::vector<std::string>{"i2"});
  EXPECT_EQ(lc.Phase(), PodPhase::kPending);
  lc.Started("i2", kT0);
  lc.Exited("i2", Exit(0, kT0, kT0 + seconds(2)));
  EXPECT_EQ(lc.ContainersToStart(kT0), std::vector<std::string>{"main"});
  lc.Started("main", kT0 + seconds(2));
  EXPECT_EQ(lc.Phase(), PodPhase::kRunning);
  lc.Exited("main", Exit(0, kT0, kT0 + seconds(3)));
  EXPECT_EQ(lc.Phase(), PodPhase::kSucceeded);
  EXPECT_TRUE(lc.Finished());
}

TEST(PodLifecycleTest, FailedInitContainerFailsPodUnderNeverAndRestartsOtherwise) {
  PodLifecycle never(Pod("Never", {"main"}, {"i1"}));
  never.Started("i1", kT0);
  never.Exited("i1", Exit(2, kT0, kT0 + seconds(1)));
  EXPECT_EQ(never.Phase(), PodPhase::kFailed);
  EXPECT_TRUE(never.ContainersToStart(kT0 + seconds(100)).empty());
  EXPECT_TRUE(never.Finished());

  PodLifecycle always(Pod("Always", {"main"}, {"i1"}));
  always.Started("i1", kT0);
  always.Exited("i1", Exit(2, kT0, kT0 + seconds(1)));
  EXPECT_EQ(always.Phase(), PodPhase::kPending);
  EXPECT_EQ(always.ContainersToStart(kT0 + seconds(1)), std::vector<std::string>{"i1"});
}

TEST(PodLifecycleTest, CrashLoopBackOffDoublesToFiveMinutes) {
  PodLifecycle lc(Pod("Always", {"c"}));
  Time now = kT0;
  lc.Started("c", now);
  // First exit: restarted at once (no backoff entry yet).
  now += seconds(1);
  lc.Exited("c", Exit(1, kT0, now));
  EXPECT_EQ(lc.ContainersToStart(now), std::vector<std::string>{"c"});
  lc.Started("c", now);
  EXPECT_EQ(lc.containers()[0].restart_count, 1);
  const char* want[] = {"10s", "20s", "40s", "1m20s", "2m40s", "5m0s", "5m0s"};
  int want_seconds[] = {10, 20, 40, 80, 160, 300, 300};
  for (int i = 0; i < 7; ++i) {
    now += seconds(1);
    lc.Exited("c", Exit(1, now - seconds(1), now));
    const ContainerRecord& r = lc.containers()[0];
    EXPECT_EQ(r.state, ContainerRecord::State::kWaiting);
    EXPECT_EQ(r.waiting_reason, "CrashLoopBackOff");
    EXPECT_EQ(r.waiting_message, std::string("back-off ") + want[i] + " restarting failed container=c pod=p_ns(u1)");
    ASSERT_TRUE(r.last.has_value());
    EXPECT_EQ(r.last->exit_code, 1);
    EXPECT_EQ(lc.Phase(), PodPhase::kRunning);  // Always: restarting
    EXPECT_EQ(lc.NextRestartTime(), now + seconds(want_seconds[i]));
    EXPECT_TRUE(lc.ContainersToStart(now + seconds(want_seconds[i]) - seconds(1)).empty());
    now += seconds(want_seconds[i]);
    EXPECT_EQ(lc.ContainersToStart(now), std::vector<std::string>{"c"});
    lc.Started("c", now);
    EXPECT_EQ(lc.containers()[0].restart_count, i + 2);
  }
  // Ten idle minutes reset the backoff: the next restart is immediate again.
  now += seconds(601);
  lc.Exited("c", Exit(1, now - seconds(601), now));
  EXPECT_EQ(lc.ContainersToStart(now), std::vector<std::string>{"c"});
}

TEST(PodLifecycleTest, OnFailureRestartsOnlyFailedContainersAndTerminationStopsRestarts) {
  PodLifecycle lc(Pod("OnFailure", {"ok", "bad"}));
  lc.Started("ok", kT0);
  lc.Started("bad", kT0);
  lc.Exited("ok", Exit(0, kT0, kT0 + seconds(1)));
  lc.Exited("bad", Exit(1, kT0, kT0 + seconds(1)));
  EXPECT_EQ(lc.ContainersToStart(kT0 + seconds(1)), std::vector<std::string>{"bad"});
  lc.BeginTermination();
  EXPECT_TRUE(lc.ContainersToStart(kT0 + seconds(1)).empty());
}

TEST(PodStatusTest, KubeletShapeWhileRunningAndAfterSuccess) {
  PodLifecycle lc(Pod("Never", {"a", "b"}, {"init"}));
  PodAddresses addr{"10.0.0.5", "10.0.0.5"};
  api::Object s0 = BuildPodStatus(lc, nullptr, addr, kT0);
  EXPECT_EQ(s0["phase"], "Pending");
  EXPECT_EQ(s0["startTime"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(s0["hostIPs"], api::Object::parse(R"([{"ip": "10.0.0.5"}])"));
  EXPECT_EQ(s0["conditions"][0], api::Object::parse(R"json({"type": "Initialized", "status": "False",
      "lastProbeTime": null, "lastTransitionTime": "2026-01-01T00:00:00Z",
      "reason": "ContainersNotInitialized", "message": "containers with incomplete status: [init]"})json"));
  EXPECT_EQ(s0["conditions"][1]["message"], "containers with unready status: [a b]");
  EXPECT_EQ(s0["conditions"][3]["type"], "PodScheduled");
  EXPECT_EQ(s0["initContainerStatuses"][0]["state"],
            api::Object::parse(R"({"waiting": {"reason": "PodInitializing"}})"));
  EXPECT_EQ(s0["containerStatuses"][1]["state"]["waiting"]["reason"], "PodInitializing");

  lc.Started("init", kT0);
  lc.Exited("init", Exit(0, kT0, kT0 + seconds(1)));
  lc.Started("a", kT0 + seconds(2));
  lc.Started("b", kT0 + seconds(2));
  api::Object s1 = BuildPodStatus(lc, s0, addr, kT0 + seconds(2));
  EXPECT_EQ(s1["phase"], "Running");
  EXPECT_EQ(s1["startTime"], "2026-01-01T00:00:00Z");
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(s1["conditions"][i]["status"], "True");
    EXPECT_EQ(s1["conditions"][i]["lastTransitionTime"], "2026-01-01T00:00:02Z");
  }
  EXPECT_EQ(s1["containerStatuses"][0], api::Object::parse(R"json({"name": "a", "image": "img", "imageID": "",
      "state": {"running": {"startedAt": "2026-01-01T00:00:02Z"}}, "lastState": {},
      "ready": true, "started": true, "restartCount": 0})json"));
  EXPECT_EQ(s1["initContainerStatuses"][0]["state"]["terminated"],
            api::Object::parse(R"({"exitCode": 0, "reason": "Completed",
                "startedAt": "2026-01-01T00:00:00Z", "finishedAt": "2026-01-01T00:00:01Z"})"));

  // Unchanged conditions keep their transition time.
  api::Object s1b = BuildPodStatus(lc, s1, addr, kT0 + seconds(5));
  EXPECT_EQ(s1b["conditions"][1]["lastTransitionTime"], "2026-01-01T00:00:02Z");

  lc.Exited("a", Exit(0, kT0 + seconds(2), kT0 + seconds(9)));
  ContainerExit oom = Exit(137, kT0 + seconds(2), kT0 + seconds(9));
  oom.signal = 9;
  oom.oom_killed = true;
  lc.Exited("b", oom);
  api::Object s2 = BuildPodStatus(lc, s1, addr, kT0 + seconds(9));
  EXPECT_EQ(s2["phase"], "Failed");
  EXPECT_EQ(s2["conditions"][1], api::Object::parse(R"json({"type": "Ready", "status": "False",
      "lastProbeTime": null, "lastTransitionTime": "2026-01-01T00:00:09Z", "reason": "PodCompleted"})json"));
  EXPECT_EQ(s2["containerStatuses"][1]["state"]["terminated"]["reason"], "OOMKilled");
  EXPECT_EQ(s2["containerStatuses"][1]["state"]["terminated"]["exitCode"], 137);
  EXPECT_EQ(s2["containerStatuses"][0]["state"]["terminated"]["reason"], "Completed");
}

// A container that cannot start (exit code 128, StartError) under OnFailure is a failed run:
// it counts in restartCount and backs off as any crash does, so it never restarts in a busy
// loop and never shows restartCount 0 (the Job controller counts restarts for backoffLimit).
TEST(PodLifecycleTest, StartErrorsUnderOnFailureCountAsRestartsAndBackOff) {
  PodLifecycle lc(Pod("OnFailure", {"c"}));
  auto start_error = [](Time at) {
    ContainerExit e = Exit(128, at, at);
    e.start_error = "unable to start container process: exec: \"x\": executable file not found in $PATH";
    return e;
  };
  // The agent reports a start error without a Started (the run never began).
  lc.Exited("c", start_error(kT0));
  EXPECT_EQ(lc.containers()[0].restart_count, 0);
  EXPECT_EQ(lc.ContainersToStart(kT0), std::vector<std::string>{"c"});  // the first restart is immediate
  lc.Exited("c", start_error(kT0));
  const ContainerRecord& r = lc.containers()[0];
  EXPECT_EQ(r.restart_count, 1);
  EXPECT_EQ(r.state, ContainerRecord::State::kWaiting);
  EXPECT_EQ(r.waiting_reason, "CrashLoopBackOff");
  EXPECT_EQ(r.waiting_message, "back-off 10s restarting failed container=c pod=p_ns(u1)");
  EXPECT_EQ(lc.NextRestartTime(), kT0 + seconds(10));
  EXPECT_TRUE(lc.ContainersToStart(kT0 + seconds(9)).empty());
  EXPECT_EQ(lc.ContainersToStart(kT0 + seconds(10)), std::vector<std::string>{"c"});
  lc.Exited("c", start_error(kT0 + seconds(10)));
  EXPECT_EQ(lc.containers()[0].restart_count, 2);
  EXPECT_EQ(lc.containers()[0].waiting_message, "back-off 20s restarting failed container=c pod=p_ns(u1)");
  EXPECT_EQ(lc.NextRestartTime(), kT0 + seconds(30));
  EXPECT_EQ(lc.Phase(), PodPhase::kRunning);  // OnFailure: restarting
  api::Object s = BuildPodStatus(lc, nullptr, {}, kT0 + seconds(10));
  EXPECT_EQ(s["containerStatuses"][0]["restartCount"], 2);
  EXPECT_EQ(s["containerStatuses"][0]["lastState"]["terminated"]["reason"], "StartError");
  EXPECT_EQ(s["containerStatuses"][0]["lastState"]["terminated"]["exitCode"], 128);
  // A start error reported after Started (the supervisor found the command missing) counts once.
  PodLifecycle late(Pod("OnFailure", {"c"}));
  late.Started("c", kT0);
  late.Exited("c", start_error(kT0));
  late.Started("c", kT0);
  late.Exited("c", start_error(kT0));
  EXPECT_EQ(late.containers()[0].restart_count, 1);
  EXPECT_EQ(late.containers()[0].waiting_message, "back-off 10s restarting failed container=c pod=p_ns(u1)");
}

TEST(PodStatusTest, StartErrorAndConfigError) {
  PodLifecycle lc(Pod("Never", {"a", "b"}));
  ContainerExit e = Exit(128, kT0, kT0);
  e.start_error = "unable to start container process: exec: \"x\": executable file not found in $PATH";
  lc.Exited("a", e);
  lc.ConfigError("b", "unsupported fieldPath: spec.hostname");
  api::Object s = BuildPodStatus(lc, nullptr, {}, kT0);
  EXPECT_EQ(s["containerStatuses"][0]["state"]["terminated"],
            api::Object::parse(R"json({"exitCode": 128, "reason": "StartError",
                "message": "unable to start container process: exec: \"x\": executable file not found in $PATH",
                "startedAt": "2026-01-01T00:00:00Z", "finishedAt": "2026-01-01T00:00:00Z"})json"));
  EXPECT_EQ(s["containerStatuses"][1]["state"]["waiting"],
            api::Object::parse(R"({"reason": "CreateContainerConfigError",
                "message": "unsupported fieldPath: spec.hostname"})"));
  EXPECT_EQ(s["phase"], "Pending");  // b never started
  EXPECT_FALSE(s.contains("hostIP"));
  EXPECT_TRUE(lc.ContainersToStart(kT0).empty());  // a config error waits for a pod update
}

// The agent writes the kubelet's conditions only: PodScheduled (the scheduler's, written
// after binding) and DisruptionTarget (a preemption's) come from the API server's copy,
// never from the agent's own earlier write (which once turned a Running pod back to
// PodScheduled=False Unschedulable and dropped a victim's DisruptionTarget).
TEST(PodStatusTest, MergeForeignConditionsKeepsTheApiServersNonKubeletConditions) {
  auto cond = [](const char* type, const char* status, const char* reason) {
    return api::Object{{"type", type}, {"status", status}, {"reason", reason}};
  };
  api::Object ours = {{"phase", "Running"},
                      {"conditions",
                       {cond("Initialized", "True", ""), cond("Ready", "True", ""), cond("ContainersReady", "True", ""),
                        cond("PodScheduled", "False", "Unschedulable")}}};  // stale, from our last write
  api::Object api_status = {{"phase", "Pending"},
                            {"conditions",
                             {cond("PodScheduled", "True", ""), cond("Ready", "False", "ContainersNotReady"),
                              cond("DisruptionTarget", "True", "PreemptionByScheduler")}}};
  MergeForeignConditions(&ours, api_status);
  EXPECT_EQ(ours["conditions"],
            api::Object::array({cond("Initialized", "True", ""), cond("Ready", "True", ""),
                                cond("ContainersReady", "True", ""), cond("PodScheduled", "True", ""),
                                cond("DisruptionTarget", "True", "PreemptionByScheduler")}));
  EXPECT_EQ(ours["phase"], "Running");
  // Nothing on the API server yet: BuildPodStatus's own PodScheduled stays.
  api::Object fresh = {
      {"conditions", {cond("Ready", "False", "ContainersNotReady"), cond("PodScheduled", "True", "")}}};
  MergeForeignConditions(&fresh, api::Object{{"phase", "Pending"}});
  EXPECT_EQ(fresh["conditions"].size(), 2u);
  MergeForeignConditions(&fresh, api::Object{{"conditions", api::Object::array()}});
  EXPECT_EQ(fresh["conditions"],
            api::Object::array({cond("Ready", "False", "ContainersNotReady"), cond("PodScheduled", "True", "")}));
}

// The kubelet's TerminatePod (status_manager.go): containers of a pod the kubelet stopped that
// are not terminated become ContainerStatusUnknown 137, regular ones once the pod has
// initialized, init containers up to the last that tried to start.
TEST(PodStatusTest, TerminatePodStatusAsTheKubeletsTerminatePod) {
  const api::Object unknown = {{"terminated",
                                {{"reason", "ContainerStatusUnknown"},
                                 {"message", "The container could not be located when the pod was terminated"},
                                 {"exitCode", 137}}}};
  const api::Object running = {{"running", {{"startedAt", "2026-01-01T00:00:00Z"}}}};
  const api::Object waiting = {{"waiting", {{"reason", "PodInitializing"}}}};
  const api::Object crash = {{"waiting", {{"reason", "CrashLoopBackOff"}}}};
  auto exited = [](int code) { return api::Object{{"terminated", {{"exitCode", code}, {"reason", "Error"}}}}; };
  auto cs = [](const std::string& name, const api::Object& state, const api::Object& last = api::Object::object()) {
    return api::Object{{"name", name}, {"state", state}, {"lastState", last}, {"restartCount", 3}};
  };
  auto spec_with_inits = [](std::vector<std::string> inits) {
    api::Object spec = {{"containers", {{{"name", "main"}}, {{"name", "side"}}}}};
    for (const auto& n : inits) spec["initContainers"].push_back({{"name", n}});
    return spec;
  };
  auto states = [](const api::Object& status, const char* field) {
    std::vector<api::Object> out;
    for (const auto& c : status[field]) out.push_back(c["state"]);
    return out;
  };

  // No init containers: every regular container not terminated; a terminated one kept, and
  // lastState and restartCount kept; the pod Failed, not ready for PodCompleted.
  api::Object status = {
      {"phase", "Running"},
      {"conditions",
       {{{"type", "Initialized"}, {"status", "True"}},
        {{"type", "Ready"}, {"status", "False"}, {"reason", "ContainersNotReady"}, {"message", "containers with"}},
        {{"type", "ContainersReady"}, {"status", "False"}, {"reason", "ContainersNotReady"}, {"message", "x"}}}},
      {"containerStatuses", {cs("main", crash, exited(1)), cs("side", exited(0))}}};
  TerminatePodStatus(spec_with_inits({}), &status);
  EXPECT_EQ(status["phase"], "Failed");
  EXPECT_EQ(status["conditions"][0], (api::Object{{"type", "Initialized"}, {"status", "True"}}));
  for (int i : {1, 2}) {
    EXPECT_EQ(status["conditions"][i]["reason"], "PodCompleted");
    EXPECT_FALSE(status["conditions"][i].contains("message"));
  }
  EXPECT_EQ(states(status, "containerStatuses"), (std::vector<api::Object>{unknown, exited(0)}));
  EXPECT_EQ(status["containerStatuses"][0]["lastState"], exited(1));
  EXPECT_EQ(status["containerStatuses"][0]["restartCount"], 3);
  EXPECT_FALSE(status.contains("initContainerStatuses"));

  // The last init container runs: initialized; it and the waiting regular ones end unknown.
  status = {{"initContainerStatuses", {cs("i1", exited(0)), cs("i2", running)}},
            {"containerStatuses", {cs("main", waiting), cs("side", waiting)}}};
  TerminatePodStatus(spec_with_inits({"i1", "i2"}), &status);
  EXPECT_EQ(states(status, "initContainerStatuses"), (std::vector<api::Object>{exited(0), unknown}));
  EXPECT_EQ(states(status, "containerStatuses"), (std::vector<api::Object>{unknown, unknown}));

  // The first init container runs, the second never tried: not initialized; only the first ends.
  status = {{"initContainerStatuses", {cs("i1", running), cs("i2", waiting)}},
            {"containerStatuses", {cs("main", waiting), cs("side", waiting)}}};
  TerminatePodStatus(spec_with_inits({"i1", "i2"}), &status);
  EXPECT_EQ(states(status, "initContainerStatuses"), (std::vector<api::Object>{unknown, waiting}));
  EXPECT_EQ(states(status, "containerStatuses"), (std::vector<api::Object>{waiting, waiting}));

  // None tried: the first init container ends all the same; a waiting one that ran before
  // (a terminated lastState) has tried.
  status = {{"initContainerStatuses", {cs("i1", waiting), cs("i2", waiting)}}};
  TerminatePodStatus(spec_with_inits({"i1", "i2"}), &status);
  EXPECT_EQ(states(status, "initContainerStatuses"), (std::vector<api::Object>{unknown, waiting}));
  status = {{"initContainerStatuses", {cs("i1", exited(0)), cs("i2", crash, exited(2))}},
            {"containerStatuses", {cs("main", waiting), cs("side", waiting)}}};
  TerminatePodStatus(spec_with_inits({"i1", "i2"}), &status);
  EXPECT_EQ(states(status, "initContainerStatuses"), (std::vector<api::Object>{exited(0), unknown}));
  // Its last run failed: the pod never initialized, its regular containers stay waiting.
  EXPECT_EQ(states(status, "containerStatuses"), (std::vector<api::Object>{waiting, waiting}));

  // The last init container exited 0 earlier (lastState): initialized.
  status = {{"initContainerStatuses", {cs("i1", crash, exited(0))}}, {"containerStatuses", {cs("main", waiting)}}};
  TerminatePodStatus(spec_with_inits({"i1"}), &status);
  EXPECT_EQ(states(status, "containerStatuses"), (std::vector<api::Object>{unknown}));
  EXPECT_EQ(status["phase"], "Failed");

  // A terminal phase stays.
  status = {{"phase", "Succeeded"}, {"containerStatuses", {cs("main", exited(0))}}};
  TerminatePodStatus(spec_with_inits({}), &status);
  EXPECT_EQ(status["phase"], "Succeeded");
  EXPECT_EQ(states(status, "containerStatuses"), (std::vector<api::Object>{exited(0)}));
}

TEST(PodStatusTest, GoDurations) {
  EXPECT_EQ(FormatGoDuration(seconds(0)), "0s");
  EXPECT_EQ(FormatGoDuration(seconds(59)), "59s");
  EXPECT_EQ(FormatGoDuration(seconds(60)), "1m0s");
  EXPECT_EQ(FormatGoDuration(seconds(3725)), "1h2m5s");
}

}  // namespace
}  // namespace berth::agent
