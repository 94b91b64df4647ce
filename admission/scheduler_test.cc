// Kueue's TestSchedule cases (pkg/scheduler/scheduler_test.go), one scheduling cycle each,
// with the stated outcomes, reasons and messages; and TestEntryOrdering.
#include "admission/scheduler.h"

#include <functional>
#include <set>

#include <gtest/gtest.h>

#include "admission/testing/builders.h"

namespace berth::admission {
namespace {

using testing::ClusterQueueBuilder;
using testing::CohortBuilder;
using testing::FlavorBuilder;
using testing::FlavorQuotasBuilder;
using testing::Harness;
using testing::T;
using testing::WorkloadBuilder;
using FQ = FlavorQuotasBuilder;
using Policy = PreemptionPolicy;
using BWC = BorrowWithinCohort::Policy;

// The TestSchedule fixture (Kueue's pkg/scheduler/scheduler_test.go).
void TestScheduleFixture(Harness& h) {
  auto& n = h.names;
  n.Intern("cpu");
  n.Intern("example.com/gpu");
  h.flavors = {FlavorBuilder("default").Obj(),
               FlavorBuilder("on-demand").Obj(),
               FlavorBuilder("spot").Obj(),
               FlavorBuilder("model-a").Obj(),
               FlavorBuilder("spot-tainted").Taint("key", "val").Obj(),
               FlavorBuilder("spot-tainted-2").Taint("key", "val2").Obj()};
  h.cluster_queues = {
      ClusterQueueBuilder(n, "sales").StrictFIFO().Group({FQ("default").Resource("cpu", "50", "0")}).Obj(),
      ClusterQueueBuilder(n, "eng-alpha")
          .Cohort("eng")
          .StrictFIFO()
          .Group({FQ("on-demand").Resource("cpu", "50", "50"), FQ("spot").Resource("cpu", "100", "0")})
          .Obj(),
      ClusterQueueBuilder(n, "eng-beta")
          .Cohort("eng")
          .StrictFIFO()
          .ReclaimWithinCohort(Policy::kAny)
          .WithinClusterQueue(Policy::kLowerPriority)
          .Group({FQ("on-demand").Resource("cpu", "50", "10"), FQ("spot").Resource("cpu", "0", "100")})
          .Group({FQ("model-a").Resource("example.com/gpu", "20", "0")})
          .Obj(),
      ClusterQueueBuilder(n, "flavor-nonexistent-cq")
          .StrictFIFO()
          .Group({FQ("nonexistent-flavor").Resource("cpu", "50")})
          .Obj(),
      ClusterQueueBuilder(n, "lend-a").Cohort("lend").Group({FQ("default").Resource("cpu", "3", {}, "2")}).Obj(),
      ClusterQueueBuilder(n, "lend-b").Cohort("lend").Group({FQ("default").Resource("cpu", "2", {}, "2")}).Obj(),
  };
}

struct WantEntry {
  std::string outcome;  // "Admitted", "Preempting", "Pending"
  std::string reason;
  std::string message;  // empty: not checked
  std::string flavors;  // admitted: "cpu=on-demand" (podSets joined by ';')
};

struct ScheduleCase {
  std::string name;
  // Adds CQs/cohorts/flavors beyond the fixture (or replaces them).
  std::function<void(Harness&)> setup;
  std::function<std::vector<Workload>(ResourceNames&)> admitted;
  std::function<std::vector<Workload>(ResourceNames&)> pending;
  std::map<std::string, WantEntry> want;
  std::set<std::pair<std::string, std::string>> want_preempted;  // (uid, reason)
  std::set<std::string> want_left;          // in a heap after the cycle
  std::set<std::string> want_inadmissible;  // in an inadmissible set
  std::map<std::string, int> want_skips;
};

void RunCase(const ScheduleCase& c) {
  SCOPED_TRACE(c.name);
  Harness h;
  TestScheduleFixture(h);
  if (c.setup) c.setup(h);
  h.Build(c.admitted ? c.admitted(h.names) : std::vector<Workload>{});
  std::vector<Workload> pending = c.pending(h.names);
  for (const auto& w : pending) h.Submit(w);
  CycleResult r = h.Cycle();

  for (const auto& [uid, want] : c.want) {
    SCOPED_TRACE(uid);
    const EntryResult* e = r.Find(uid);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(EntryOutcomeName(e->outcome), want.outcome);
    EXPECT_EQ(e->reason, want.reason);
    if (!want.message.empty()) EXPECT_EQ(e->message, want.message);
    if (!want.flavors.empty()) EXPECT_EQ(h.Flavors(*e), want.flavors);
  }
  std::set<std::pair<std::string, std::string>> preempted;
  for (const auto& e : r.entries) {
    for (const auto& p : e.preempted) preempted.insert({p.uid, p.reason});
  }
  EXPECT_EQ(preempted, c.want_preempted);
  for (const auto& w : pending) {
    bool admitted = r.Find(w.uid) && r.Find(w.uid)->outcome == EntryOutcome::kAdmitted;
    bool left = h.queues.Contains(w.uid) && !h.queues.IsInadmissible(w.uid);
    bool inadmissible = h.queues.IsInadmissible(w.uid);
    EXPECT_EQ(left, c.want_left.count(w.uid) > 0) << w.uid << " in heap";
    EXPECT_EQ(inadmissible, c.want_inadmissible.count(w.uid) > 0) << w.uid << " inadmissible";
    if (admitted) EXPECT_FALSE(h.queues.Contains(w.uid));
  }
  EXPECT_EQ(r.preemption_skips, c.want_skips);
}

WorkloadBuilder W(ResourceNames& n, const std::string& ns, const std::string& name) { return WorkloadBuilder(n, name, ns); }

const std::string kPending = "Pending";
const std::string kAdmitted = "Admitted";
const std::string kPreempting = "Preempting";

std::vector<ScheduleCase> Cases() {
  std::vector<ScheduleCase> cases;

  cases.push_back({.name = "S1 admit in different cohorts",
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "sales", "new").Queue("sales").Request("cpu", "1").Obj(),
                         W(n, "eng-alpha", "new").Queue("eng-alpha").Count(51).Request("cpu", "1").Obj()};
                   },
                   .want = {{"sales/new", {kAdmitted, "QuotaReserved", "Quota reserved in ClusterQueue sales", "cpu=default"}},
                            {"eng-alpha/new", {kAdmitted, "QuotaReserved", "", "cpu=on-demand"}}}});

  cases.push_back({.name = "S2 admit in same cohort with no borrowing",
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "eng-alpha", "new").Queue("eng-alpha").Count(40).Request("cpu", "1").Obj(),
                         W(n, "eng-beta", "new").Queue("eng-beta").Count(40).Request("cpu", "1").Obj()};
                   },
                   .want = {{"eng-alpha/new", {kAdmitted, "QuotaReserved", "", "cpu=on-demand"}},
                            {"eng-beta/new", {kAdmitted, "QuotaReserved", "", "cpu=on-demand"}}}});

  cases.push_back({.name = "S3 assign multiple resources and flavors",
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{W(n, "eng-beta", "new")
                                                      .Queue("eng-beta")
                                                      .PodSets({{"one", 10}, {"two", 40}})
                                                      .Request("cpu", "1")
                                                      .Obj()};
                   },
                   .want = {{"eng-beta/new",
                             {kAdmitted, "QuotaReserved", "", "cpu=on-demand,example.com/gpu=model-a;cpu=spot"}}}});
  // podSet one needs cpu 6 + gpu 1 per pod: patch after building.
  cases.back().pending = [](ResourceNames& n) {
    Workload w = W(n, "eng-beta", "new").Queue("eng-beta").PodSets({{"one", 10}, {"two", 40}}).Request("cpu", "1").Obj();
    w.pod_sets[0].requests = {{n.Intern("cpu"), testing::Q("6")}, {n.Intern("example.com/gpu"), testing::Q("1")}};
    return std::vector<Workload>{w};
  };

  cases.push_back({.name = "S4 cannot borrow if cohort was assigned and would result in overadmission",
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "eng-alpha", "new").Queue("eng-alpha").Count(45).Request("cpu", "1").Obj(),
                         W(n, "eng-beta", "new").Queue("eng-beta").Count(56).Request("cpu", "1").Obj()};
                   },
                   .want = {{"eng-alpha/new", {kAdmitted, "QuotaReserved", "", "cpu=on-demand"}},
                            {"eng-beta/new",
                             {kPending, "WaitingForQuota", "Workload no longer fits after processing another workload", ""}}},
                   .want_left = {"eng-beta/new"}});

  cases.push_back({.name = "S4b can borrow if cohort was assigned and will not result in overadmission",
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "eng-alpha", "new").Queue("eng-alpha").Count(45).Request("cpu", "1").Obj(),
                         W(n, "eng-beta", "new").Queue("eng-beta").Count(55).Request("cpu", "1").Obj()};
                   },
                   .want = {{"eng-alpha/new", {kAdmitted, "QuotaReserved", "", "cpu=on-demand"}},
                            {"eng-beta/new", {kAdmitted, "QuotaReserved", "", "cpu=on-demand"}}}});

  cases.push_back({.name = "S5 can borrow if needs reclaim from cohort in different flavor",
                   .admitted = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "eng-beta", "user-on-demand").Request("cpu", "50").Admitted("eng-beta", "on-demand").Obj(),
                         W(n, "eng-beta", "user-spot").Request("cpu", "1").Admitted("eng-beta", "spot").Obj()};
                   },
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "eng-alpha", "can-reclaim").Queue("eng-alpha").Request("cpu", "100").Obj(),
                         W(n, "eng-beta", "needs-to-borrow").Queue("eng-beta").Request("cpu", "1").Obj()};
                   },
                   .want = {{"eng-beta/needs-to-borrow", {kAdmitted, "QuotaReserved", "", "cpu=on-demand"}},
                            {"eng-alpha/can-reclaim", {kPending, "WaitingForQuota", "", ""}}},
                   .want_left = {"eng-alpha/can-reclaim"}});

  cases.push_back({.name = "S6 workload exceeds lending limit when borrow in cohort",
                   .admitted = [](ResourceNames& n) {
                     return std::vector<Workload>{W(n, "lend", "a").Request("cpu", "2").Admitted("lend-b", "default").Obj()};
                   },
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{W(n, "lend", "b").Queue("lend-b").Request("cpu", "3").Obj()};
                   },
                   .want = {{"lend/b",
                             {kPending, "WaitingForQuota",
                              "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor "
                              "default, 1 more needed",
                              ""}}},
                   .want_inadmissible = {"lend/b"}});

  auto hierarchical = [](const std::string& lending) {
    return [lending](Harness& h) {
      h.cohorts = {CohortBuilder(h.names, "root").Obj(), CohortBuilder(h.names, "child").Parent("root").Obj()};
      h.cluster_queues.push_back(ClusterQueueBuilder(h.names, "cq-lender")
                                     .Cohort("child")
                                     .Group({FQ("on-demand").Resource("cpu", "10", {}, lending)})
                                     .Obj());
      h.cluster_queues.push_back(ClusterQueueBuilder(h.names, "cq-borrower")
                                     .Cohort("child")
                                     .Group({FQ("on-demand").Resource("cpu", "5", "10")})
                                     .Obj());
    };
  };
  cases.push_back({.name = "S7 hierarchical cohort respects lending limit when borrowing",
                   .setup = hierarchical("3"),
                   .admitted = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "default", "wl-existing").Request("cpu", "5").Admitted("cq-borrower", "on-demand").Obj()};
                   },
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{W(n, "default", "wl-pending").Queue("cq-borrower").Request("cpu", "4").Obj()};
                   },
                   .want = {{"default/wl-pending", {kPending, "WaitingForQuota", "", ""}}},
                   .want_inadmissible = {"default/wl-pending"}});
  cases.push_back({.name = "S7b hierarchical cohort allows borrowing up to lending limit",
                   .setup = hierarchical("5"),
                   .admitted = cases.back().admitted,
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{W(n, "default", "wl-borrowing").Queue("cq-borrower").Request("cpu", "5").Obj()};
                   },
                   .want = {{"default/wl-borrowing", {kAdmitted, "QuotaReserved", "", "cpu=on-demand"}}}});

  cases.push_back(
      {.name = "S8 preempt workloads in ClusterQueue and cohort",
       .admitted = [](ResourceNames& n) {
         return std::vector<Workload>{
             W(n, "eng-alpha", "use-all-spot").Request("cpu", "100").Admitted("eng-alpha", "spot").Obj(),
             W(n, "eng-alpha", "borrower").Request("cpu", "60").Admitted("eng-alpha", "on-demand").Obj(),
             W(n, "eng-beta", "low-1").Priority(-1).Request("cpu", "30").Admitted("eng-beta", "on-demand").Obj(),
             W(n, "eng-beta", "low-2").Priority(-2).Request("cpu", "10").Admitted("eng-beta", "on-demand").Obj()};
       },
       .pending = [](ResourceNames& n) {
         return std::vector<Workload>{W(n, "eng-beta", "preemptor").Queue("eng-beta").Request("cpu", "20").Obj()};
       },
       .want = {{"eng-beta/preemptor",
                 {kPreempting, "WaitingForPreemptedWorkloads",
                  "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor on-demand, 20 "
                  "more needed, insufficient unused quota for cpu in flavor spot, 20 more needed. Pending the "
                  "preemption of 2 workload(s)",
                  ""}}},
       .want_preempted = {{"eng-alpha/borrower", "InCohortReclamation"}, {"eng-beta/low-2", "InClusterQueue"}},
       .want_left = {"eng-beta/preemptor"}});

  cases.push_back(
      {.name = "S9 multiple CQs need preemption",
       .setup =
           [](Harness& h) {
             h.cluster_queues.push_back(ClusterQueueBuilder(h.names, "other-alpha")
                                            .Cohort("other")
                                            .Group({FQ("on-demand").Resource("cpu", "50", "50")})
                                            .Obj());
             h.cluster_queues.push_back(ClusterQueueBuilder(h.names, "other-beta")
                                            .Cohort("other")
                                            .ReclaimWithinCohort(Policy::kAny)
                                            .WithinClusterQueue(Policy::kLowerPriority)
                                            .Group({FQ("on-demand").Resource("cpu", "50", "10")})
                                            .Obj());
           },
       .admitted = [](ResourceNames& n) {
         return std::vector<Workload>{
             W(n, "eng-alpha", "use-all").Request("cpu", "100").Admitted("other-alpha", "on-demand").Obj()};
       },
       .pending = [](ResourceNames& n) {
         return std::vector<Workload>{
             W(n, "eng-beta", "preemptor").Queue("other-beta").Priority(-1).Request("cpu", "1").Obj(),
             W(n, "eng-alpha", "pending").Queue("other-alpha").Priority(1).Request("cpu", "1").Obj()};
       },
       .want = {{"eng-beta/preemptor", {kPreempting, "WaitingForPreemptedWorkloads", "", ""}},
                {"eng-alpha/pending",
                 {kPending, "WaitingForQuota",
                  "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor on-demand, 1 "
                  "more needed",
                  ""}}},
       .want_preempted = {{"eng-alpha/use-all", "InCohortReclamation"}},
       .want_left = {"eng-beta/preemptor"},
       .want_inadmissible = {"eng-alpha/pending"}});

  cases.push_back({.name = "S10 cannot borrow resource not listed in clusterQueue",
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "eng-alpha", "new").Queue("eng-alpha").Request("example.com/gpu", "1").Obj()};
                   },
                   .want = {{"eng-alpha/new",
                             {kPending, "NoMatchingFlavor",
                              "couldn't assign flavors to pod set main: resource example.com/gpu unavailable in "
                              "ClusterQueue",
                              ""}}},
                   .want_left = {"eng-alpha/new"}});

  cases.push_back({.name = "S11 not enough resources to borrow, fallback to next flavor",
                   .admitted = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "eng-beta", "existing").Count(45).Request("cpu", "1").Admitted("eng-beta", "on-demand").Obj()};
                   },
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{W(n, "eng-alpha", "new").Queue("eng-alpha").Count(60).Request("cpu", "1").Obj()};
                   },
                   .want = {{"eng-alpha/new", {kAdmitted, "QuotaReserved", "", "cpu=spot"}}}});

  cases.push_back({.name = "S12 workload should not fit in clusterQueue with nonexistent flavor",
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "sales", "foo").Queue("flavor-nonexistent-cq").Request("cpu", "1").Obj(),
                         W(n, "sales", "bar").Queue("nonexistent-cq").Request("cpu", "1").Obj()};
                   },
                   .want_left = {"sales/foo"}});

  cases.push_back(
      {.name = "S13 no overadmission while borrowing",
       .setup =
           [](Harness& h) {
             h.cluster_queues.push_back(
                 ClusterQueueBuilder(h.names, "eng-gamma")
                     .Cohort("eng")
                     .ReclaimWithinCohort(Policy::kAny)
                     .WithinClusterQueue(Policy::kLowerPriority)
                     .Group({FQ("on-demand").Resource("cpu", "50", "10"), FQ("spot").Resource("cpu", "0", "100")})
                     .Obj());
           },
       .pending = [](ResourceNames& n) {
         return std::vector<Workload>{
             W(n, "eng-beta", "new").Queue("eng-beta").Created(T(-2)).Count(50).Request("cpu", "1").Obj(),
             W(n, "eng-alpha", "new-alpha").Queue("eng-alpha").Created(T(-1)).Request("cpu", "1").Obj(),
             W(n, "eng-gamma", "new-gamma").Queue("eng-gamma").Created(T(0)).Count(50).Request("cpu", "1").Obj()};
       },
       .want = {{"eng-beta/new", {kAdmitted, "QuotaReserved", "", "cpu=on-demand"}},
                {"eng-alpha/new-alpha", {kAdmitted, "QuotaReserved", "", "cpu=on-demand"}},
                {"eng-gamma/new-gamma",
                 {kPending, "WaitingForQuota",
                  "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor on-demand, 41 "
                  "more needed, insufficient unused quota for cpu in flavor spot, 50 more needed",
                  ""}}},
       .want_inadmissible = {"eng-gamma/new-gamma"}});
  // existing: first podSet on on-demand (51), second on spot (100).
  cases.back().admitted = [](ResourceNames& n) {
    WorkloadBuilder b(n, "existing", "eng-gamma");
    b.PodSets({{"borrow-on-demand", 51}});
    b.Request("cpu", "1");
    Workload w = b.Obj();
    PodSet spot = w.pod_sets[0];
    spot.name = "use-all-spot";
    spot.count = 100;
    w.pod_sets.push_back(spot);
    Admission a;
    a.cluster_queue = "eng-gamma";
    ResourceId cpu = n.Intern("cpu");
    a.pod_sets.push_back({"borrow-on-demand", {{cpu, "on-demand"}}, {{cpu, testing::Q("51")}}, 51});
    a.pod_sets.push_back({"use-all-spot", {{cpu, "spot"}}, {{cpu, testing::Q("100")}}, 100});
    w.cluster_queue = "eng-gamma";
    w.admission = a;
    w.state = AdmissionState::kAdmitted;
    return std::vector<Workload>{w};
  };

  cases.push_back({.name = "S14 single clusterQueue full",
                   .admitted = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "sales", "assigned").Count(40).Request("cpu", "1").Admitted("sales", "default").Obj()};
                   },
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{W(n, "sales", "new").Queue("sales").Count(11).Request("cpu", "1").Obj()};
                   },
                   .want = {{"sales/new",
                             {kPending, "WaitingForQuota",
                              "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor "
                              "default, 1 more needed",
                              ""}}},
                   .want_left = {"sales/new"}});

  cases.push_back({.name = "S14b not enough resources",
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{W(n, "sales", "new").Queue("sales").Request("cpu", "100").Obj()};
                   },
                   .want = {{"sales/new",
                             {kPending, "ExceedsMaxQuota",
                              "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default, "
                              "previously considered podsets requests (0) + current podset request (100) > maximum "
                              "capacity (50)",
                              ""}}},
                   .want_left = {"sales/new"}});

  cases.push_back({.name = "S15 failed to match clusterQueue selector",
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "sales", "new").Queue("eng-alpha").NamespaceMismatch().Request("cpu", "1").Obj()};
                   },
                   .want = {{"sales/new",
                             {kPending, "Misconfigured", "workload namespace doesn't match ClusterQueue selector", ""}}},
                   .want_inadmissible = {"sales/new"}});

  auto custom_cq = [](std::string tainted_quota, std::string on_demand_quota, bool both_tainted) {
    return [=](Harness& h) {
      h.cluster_queues.push_back(
          ClusterQueueBuilder(h.names, "custom-cq")
              .StrictFIFO()
              .Group({FQ("spot-tainted").Resource("cpu", tainted_quota),
                      FQ(both_tainted ? "spot-tainted-2" : "on-demand").Resource("cpu", on_demand_quota)})
              .Obj());
    };
  };
  cases.push_back({.name = "S16 flavors with mixed misconfiguration and insufficient quota",
                   .setup = custom_cq("20", "15", false),
                   .admitted = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "sales", "existing").Request("cpu", "10").Admitted("custom-cq", "on-demand").Obj()};
                   },
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{W(n, "sales", "new-job").Queue("custom-cq").Request("cpu", "10").Obj()};
                   },
                   .want = {{"sales/new-job",
                             {kPending, "WaitingForQuota",
                              "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor "
                              "on-demand, 5 more needed, untolerated taint {key val NoSchedule <nil>} in flavor "
                              "spot-tainted",
                              ""}}},
                   .want_left = {"sales/new-job"}});
  cases.push_back({.name = "S16b flavors with mixed taint mismatch and exceeding limits",
                   .setup = custom_cq("20", "5", false),
                   .pending = cases.back().pending,
                   .want = {{"sales/new-job",
                             {kPending, "ExceedsMaxQuota",
                              "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor on-demand, "
                              "previously considered podsets requests (0) + current podset request (10) > maximum "
                              "capacity (5), untolerated taint {key val NoSchedule <nil>} in flavor spot-tainted",
                              ""}}},
                   .want_left = {"sales/new-job"}});
  cases.push_back({.name = "S16c flavors are structurally incompatible",
                   .setup = custom_cq("20", "15", true),
                   .pending = cases.back().pending,
                   .want = {{"sales/new-job",
                             {kPending, "NoMatchingFlavor",
                              "couldn't assign flavors to pod set main: untolerated taint {key val NoSchedule <nil>} in "
                              "flavor spot-tainted, untolerated taint {key val2 NoSchedule <nil>} in flavor "
                              "spot-tainted-2",
                              ""}}},
                   .want_left = {"sales/new-job"}});

  auto co = [](Harness& h) {
    for (std::string q : {"cq1", "cq2", "cq3"}) {
      h.cluster_queues.push_back(ClusterQueueBuilder(h.names, q)
                                     .Cohort("co")
                                     .ReclaimWithinCohort(Policy::kAny)
                                     .WithinClusterQueue(Policy::kLowerPriority)
                                     .Group({FQ("default").Resource("r1", "10", "10").Resource("r2", "10", "10")})
                                     .Obj());
    }
  };
  auto two = [](std::string r2res, std::string r2amount) {
    return [=](ResourceNames& n) {
      return std::vector<Workload>{W(n, "default", "wl1").Queue("cq1").Priority(-1).Request("r1", "16").Obj(),
                                   W(n, "default", "wl2").Queue("cq2").Priority(-2).Request(r2res, r2amount).Obj()};
    };
  };
  cases.push_back({.name = "S19 two workloads can borrow the same resources in the same cycle if fits in the cohort",
                   .setup = co,
                   .pending = two("r1", "14"),
                   .want = {{"default/wl1", {kAdmitted, "QuotaReserved", "", "r1=default"}},
                            {"default/wl2", {kAdmitted, "QuotaReserved", "", "r1=default"}}}});
  cases.push_back({.name = "S19b only one workload can borrow if cohort quota cannot fit",
                   .setup = co,
                   .pending = two("r1", "16"),
                   .want = {{"default/wl1", {kAdmitted, "QuotaReserved", "", "r1=default"}},
                            {"default/wl2",
                             {kPending, "WaitingForQuota", "Workload no longer fits after processing another workload", ""}}},
                   .want_left = {"default/wl2"}});
  cases.push_back({.name = "S19c two workloads borrowing different resources",
                   .setup = co,
                   .pending = two("r2", "16"),
                   .want = {{"default/wl1", {kAdmitted, "QuotaReserved", "", "r1=default"}},
                            {"default/wl2", {kAdmitted, "QuotaReserved", "", "r2=default"}}}});

  cases.push_back(
      {.name = "S20 workload waiting for preemption does not block a borrowing workload in another CQ",
       .setup =
           [](Harness& h) {
             h.cluster_queues.push_back(
                 ClusterQueueBuilder(h.names, "cq_shared").Cohort("c").Group({FQ("default").Resource("cpu", "4", "0")}).Obj());
             for (std::string q : {"cq_a", "cq_b"}) {
               h.cluster_queues.push_back(ClusterQueueBuilder(h.names, q)
                                              .Cohort("c")
                                              .ReclaimWithinCohort(Policy::kLowerPriority)
                                              .BorrowWithinCohort(BWC::kLowerPriority)
                                              .Group({q == "cq_a" ? FQ("default").Resource("cpu", "0", "3")
                                                                  : FQ("default").Resource("cpu", "0")})
                                              .Obj());
             }
           },
       .admitted = [](ResourceNames& n) {
         return std::vector<Workload>{W(n, "default", "admitted_a").Request("cpu", "2").Admitted("cq_a", "default").Obj()};
       },
       .pending = [](ResourceNames& n) {
         return std::vector<Workload>{
             W(n, "default", "a").Queue("cq_a").Created(T(1)).Request("cpu", "3").Obj(),
             W(n, "default", "b").Queue("cq_b").Created(T(2)).Request("cpu", "1").Obj()};
       },
       .want = {{"default/b", {kAdmitted, "QuotaReserved", "", "cpu=default"}},
                {"default/a",
                 {kPending, "WaitingForQuota",
                  "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 2 "
                  "more needed",
                  ""}}},
       .want_inadmissible = {"default/a"}});

  auto other3 = [](Harness& h) {
    h.cluster_queues.push_back(ClusterQueueBuilder(h.names, "other-alpha")
                                   .Cohort("other")
                                   .ReclaimWithinCohort(Policy::kAny)
                                   .WithinClusterQueue(Policy::kLowerPriority)
                                   .Group({FQ("on-demand").Resource("cpu", "2")})
                                   .Obj());
    for (std::string q : {"other-beta", "other-gamma"}) {
      h.cluster_queues.push_back(
          ClusterQueueBuilder(h.names, q).Cohort("other").Group({FQ("on-demand").Resource("cpu", "2")}).Obj());
    }
  };
  cases.push_back(
      {.name = "S21 minimal preemptions when target queue is exhausted",
       .setup = other3,
       .admitted = [](ResourceNames& n) {
         std::vector<Workload> out;
         out.push_back(W(n, "default", "a1").Priority(-2).Request("cpu", "1").Admitted("other-alpha", "on-demand").Obj());
         out.push_back(W(n, "default", "a2").Priority(-2).Request("cpu", "1").Admitted("other-alpha", "on-demand").Obj());
         out.push_back(W(n, "default", "a3").Priority(-1).Request("cpu", "1").Admitted("other-alpha", "on-demand").Obj());
         for (std::string b : {"b1", "b2", "b3"}) {
           out.push_back(W(n, "default", b).Request("cpu", "1").Admitted("other-beta", "on-demand").Obj());
         }
         return out;
       },
       .pending = [](ResourceNames& n) {
         return std::vector<Workload>{W(n, "default", "incoming").Queue("other-alpha").Request("cpu", "2").Obj()};
       },
       .want = {{"default/incoming",
                 {kPreempting, "WaitingForPreemptedWorkloads",
                  "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor on-demand, 2 "
                  "more needed. Pending the preemption of 2 workload(s)",
                  ""}}},
       .want_preempted = {{"default/a1", "InClusterQueue"}, {"default/a2", "InClusterQueue"}},
       .want_left = {"default/incoming"}});

  cases.push_back(
      {.name = "S22 only eligible to preempt if it fits fully within nominal quota",
       .setup = other3,
       .admitted = [](ResourceNames& n) {
         return std::vector<Workload>{
             W(n, "default", "a1").Priority(-1).Request("cpu", "1").Admitted("other-alpha", "on-demand").Obj(),
             W(n, "default", "b1").Priority(-1).Request("cpu", "1").Admitted("other-beta", "on-demand").Obj()};
       },
       .pending = [](ResourceNames& n) {
         return std::vector<Workload>{W(n, "default", "incoming").Queue("other-alpha").Priority(1).Request("cpu", "3").Obj()};
       },
       .want = {{"default/incoming",
                 {kPending, "WaitingForQuota",
                  "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor on-demand, 1 "
                  "more needed",
                  ""}}},
       .want_inadmissible = {"default/incoming"}});
  // S22 has no other-gamma: drop it so the cohort holds 4 cpu.
  cases.back().setup = [](Harness& h) {
    h.cluster_queues.push_back(ClusterQueueBuilder(h.names, "other-alpha")
                                   .Cohort("other")
                                   .ReclaimWithinCohort(Policy::kAny)
                                   .WithinClusterQueue(Policy::kLowerPriority)
                                   .Group({FQ("on-demand").Resource("cpu", "2")})
                                   .Obj());
    h.cluster_queues.push_back(
        ClusterQueueBuilder(h.names, "other-beta").Cohort("other").Group({FQ("on-demand").Resource("cpu", "2")}).Obj());
  };

  auto alpha_beta = [](std::string alpha_cpu, bool bwc, bool bank) {
    return [=](Harness& h) {
      for (std::string q : {"other-alpha", "other-beta"}) {
        ClusterQueueBuilder b(h.names, q);
        b.Cohort("other").WithinClusterQueue(Policy::kLowerPriority);
        if (bwc) b.ReclaimWithinCohort(Policy::kLowerPriority).BorrowWithinCohort(BWC::kLowerPriority);
        b.Group({FQ("default").Resource("cpu", q == "other-alpha" ? alpha_cpu : "2")});
        h.cluster_queues.push_back(b.Obj());
      }
      if (bank) {
        h.cluster_queues.push_back(
            ClusterQueueBuilder(h.names, "resource-bank").Cohort("other").Group({FQ("default").Resource("cpu", "1")}).Obj());
      }
    };
  };
  cases.push_back({.name = "S23 multiple preemptions without borrowing",
                   .setup = alpha_beta("2", false, false),
                   .admitted = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "default", "a1").Request("cpu", "2").Admitted("other-alpha", "default").Obj(),
                         W(n, "default", "b1").Request("cpu", "2").Admitted("other-beta", "default").Obj()};
                   },
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "default", "preemptor-a").Queue("other-alpha").Priority(100).Request("cpu", "2").Obj(),
                         W(n, "default", "preemptor-b").Queue("other-beta").Priority(100).Request("cpu", "2").Obj()};
                   },
                   .want = {{"default/preemptor-a", {kPreempting, "WaitingForPreemptedWorkloads", "", ""}},
                            {"default/preemptor-b", {kPreempting, "WaitingForPreemptedWorkloads", "", ""}}},
                   .want_preempted = {{"default/a1", "InClusterQueue"}, {"default/b1", "InClusterQueue"}},
                   .want_left = {"default/preemptor-a", "default/preemptor-b"}});
  cases.push_back({.name = "S23b multiple preemptions skip preemption when shared limited resource",
                   .setup = alpha_beta("2", true, true),
                   .admitted = cases.back().admitted,
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "default", "preemptor").Queue("other-alpha").Priority(100).Request("cpu", "3").Obj(),
                         W(n, "default", "pretending-preemptor").Queue("other-beta").Priority(99).Request("cpu", "3").Obj()};
                   },
                   .want = {{"default/preemptor", {kPreempting, "WaitingForPreemptedWorkloads", "", ""}},
                            {"default/pretending-preemptor",
                             {kPending, "WaitingForQuota", "Workload no longer fits after processing another workload", ""}}},
                   .want_preempted = {{"default/a1", "InClusterQueue"}},
                   .want_left = {"default/preemptor", "default/pretending-preemptor"},
                   .want_skips = {{"other-beta", 1}}});
  cases.push_back({.name = "S23c preemption possible after earlier workload fits",
                   .setup = alpha_beta("1", false, false),
                   .admitted = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "default", "b1").Request("cpu", "2").Admitted("other-beta", "default").Obj()};
                   },
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "default", "fit").Queue("other-alpha").Priority(100).Request("cpu", "1").Obj(),
                         W(n, "default", "preemptor").Queue("other-beta").Priority(99).Request("cpu", "2").Obj()};
                   },
                   .want = {{"default/fit", {kAdmitted, "QuotaReserved", "", "cpu=default"}},
                            {"default/preemptor", {kPreempting, "WaitingForPreemptedWorkloads", "", ""}}},
                   .want_preempted = {{"default/b1", "InClusterQueue"}},
                   .want_left = {"default/preemptor"}});

  auto gpu_cqs = [](bool beta_preempts) {
    return [=](Harness& h) {
      h.names.Intern("gpu");
      h.cluster_queues.push_back(ClusterQueueBuilder(h.names, "other-alpha")
                                     .Cohort("other")
                                     .WithinClusterQueue(Policy::kLowerPriority)
                                     .ReclaimWithinCohort(Policy::kLowerPriority)
                                     .Group({FQ("on-demand").Resource("gpu", "10"), FQ("spot").Resource("gpu", "10")})
                                     .Obj());
      ClusterQueueBuilder beta(h.names, "other-beta");
      beta.Cohort("other").Group({FQ("on-demand").Resource("gpu", "0"), FQ("spot").Resource("gpu", "0")});
      if (beta_preempts) beta.WithinClusterQueue(Policy::kLowerPriority).ReclaimWithinCohort(Policy::kLowerPriority);
      h.cluster_queues.push_back(beta.Obj());
    };
  };
  cases.push_back({.name = "S24 prefer reclamation over cq priority based preemption",
                   .setup = gpu_cqs(true),
                   .admitted = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "default", "a1").Priority(50).Request("gpu", "5").Admitted("other-alpha", "on-demand").Obj(),
                         W(n, "default", "b1").Priority(50).Request("gpu", "5").Admitted("other-beta", "spot").Obj()};
                   },
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "default", "preemptor").Queue("other-alpha").Priority(100).Request("gpu", "6").Obj()};
                   },
                   .want = {{"default/preemptor", {kPreempting, "WaitingForPreemptedWorkloads", "", ""}}},
                   .want_preempted = {{"default/b1", "InCohortReclamation"}},
                   .want_left = {"default/preemptor"}});
  cases.push_back({.name = "S24b prefer first preemption flavor when second needs reclaim and cq preemption",
                   .setup = gpu_cqs(false),
                   .admitted = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "default", "a1").Priority(50).Request("gpu", "5").Admitted("other-alpha", "on-demand").Obj(),
                         W(n, "default", "a2").Priority(50).Request("gpu", "5").Admitted("other-alpha", "spot").Obj(),
                         W(n, "default", "b1").Priority(50).Request("gpu", "5").Admitted("other-beta", "spot").Obj()};
                   },
                   .pending = cases.back().pending,
                   .want = {{"default/preemptor", {kPreempting, "WaitingForPreemptedWorkloads", "", ""}}},
                   .want_preempted = {{"default/a1", "InClusterQueue"}},
                   .want_left = {"default/preemptor"}});
  cases.push_back({.name = "S24c prefer first preemption flavor",
                   .setup = gpu_cqs(false),
                   .admitted = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "default", "a1").Priority(50).Request("gpu", "6").Admitted("other-alpha", "on-demand").Obj(),
                         W(n, "default", "a2").Priority(50).Request("gpu", "5").Admitted("other-alpha", "spot").Obj(),
                         W(n, "default", "b1").Priority(9001).Request("gpu", "5").Admitted("other-beta", "spot").Obj()};
                   },
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "default", "preemptor").Queue("other-alpha").Priority(100).Request("gpu", "5").Obj()};
                   },
                   .want = {{"default/preemptor", {kPreempting, "WaitingForPreemptedWorkloads", "", ""}}},
                   .want_preempted = {{"default/a1", "InClusterQueue"}},
                   .want_left = {"default/preemptor"}});

  cases.push_back(
      {.name = "S25 workload requiring reclamation prioritized over wl in another full cq",
       .setup =
           [](Harness& h) {
             h.names.Intern("gpu");
             h.cluster_queues.push_back(
                 ClusterQueueBuilder(h.names, "CQ1").Cohort("other").Group({FQ("on-demand").Resource("gpu", "10")}).Obj());
             h.cluster_queues.push_back(ClusterQueueBuilder(h.names, "CQ2")
                                            .Cohort("other")
                                            .ReclaimWithinCohort(Policy::kAny)
                                            .Group({FQ("on-demand").Resource("gpu", "10")})
                                            .Obj());
             h.cluster_queues.push_back(
                 ClusterQueueBuilder(h.names, "CQ3").Cohort("other").Group({FQ("on-demand").Resource("gpu", "0")}).Obj());
           },
       .admitted = [](ResourceNames& n) {
         return std::vector<Workload>{
             W(n, "default", "Admitted-Workload-1").Request("gpu", "5").Admitted("CQ1", "on-demand").Obj(),
             W(n, "default", "Admitted-Workload-2").Request("gpu", "5").Admitted("CQ3", "on-demand").Obj(),
             W(n, "default", "Admitted-Workload-3").Priority(1).Request("gpu", "5").Admitted("CQ3", "on-demand").Obj()};
       },
       .pending = [](ResourceNames& n) {
         return std::vector<Workload>{W(n, "default", "WL1").Queue("CQ1").Created(T(0)).Request("gpu", "10").Obj(),
                                      W(n, "default", "WL2").Queue("CQ2").Created(T(1)).Request("gpu", "10").Obj()};
       },
       .want = {{"default/WL2", {kPreempting, "WaitingForPreemptedWorkloads", "", ""}},
                {"default/WL1",
                 {kPending, "WaitingForQuota",
                  "couldn't assign flavors to pod set main: insufficient unused quota for gpu in flavor on-demand, 5 "
                  "more needed",
                  ""}}},
       .want_preempted = {{"default/Admitted-Workload-2", "InCohortReclamation"}},
       .want_left = {"default/WL2"},
       .want_inadmissible = {"default/WL1"}});

  auto reservation = [](Policy reclaim) {
    return [=](Harness& h) {
      h.names.Intern("gpu");
      h.cluster_queues.push_back(ClusterQueueBuilder(h.names, "ClusterQueueA")
                                     .Cohort("co")
                                     .ReclaimWithinCohort(reclaim)
                                     .Group({FQ("on-demand").Resource("gpu", "2")})
                                     .Obj());
      h.cluster_queues.push_back(
          ClusterQueueBuilder(h.names, "ClusterQueueB").Cohort("co").Group({FQ("on-demand").Resource("gpu", "0")}).Obj());
    };
  };
  auto reservation_admitted = [](ResourceNames& n) {
    return std::vector<Workload>{W(n, "default", "a1").Request("gpu", "1").Admitted("ClusterQueueA", "on-demand").Obj()};
  };
  auto reservation_pending = [](ResourceNames& n) {
    return std::vector<Workload>{W(n, "default", "a2").Queue("ClusterQueueA").Created(T(0)).Request("gpu", "2").Obj(),
                                 W(n, "default", "b1").Queue("ClusterQueueB").Created(T(1)).Request("gpu", "1").Obj()};
  };
  cases.push_back({.name = "S26 reclaimWithinCohort Any: no reservation, b1 borrows",
                   .setup = reservation(Policy::kAny),
                   .admitted = reservation_admitted,
                   .pending = reservation_pending,
                   .want = {{"default/b1", {kAdmitted, "QuotaReserved", "", "gpu=on-demand"}},
                            {"default/a2",
                             {kPending, "WaitingForQuota",
                              "couldn't assign flavors to pod set main: insufficient unused quota for gpu in flavor "
                              "on-demand, 1 more needed",
                              ""}}},
                   .want_inadmissible = {"default/a2"}});
  for (Policy p : {Policy::kLowerPriority, Policy::kNever}) {
    cases.push_back({.name = p == Policy::kNever ? "S26b reclaim Never reserves capacity" : "S26c reclaim LowerPriority reserves capacity",
                     .setup = reservation(p),
                     .admitted = reservation_admitted,
                     .pending = reservation_pending,
                     .want = {{"default/a2", {kPending, "WaitingForQuota", "", ""}},
                              {"default/b1",
                               {kPending, "WaitingForQuota", "Workload no longer fits after processing another workload", ""}}},
                     .want_left = {"default/b1"},
                     .want_inadmissible = {"default/a2"}});
  }

  cases.push_back({.name = "S27 in a hierarchical cohort, workload borrowing less is scheduled first",
                   .setup =
                       [](Harness& h) {
                         h.cohorts = {CohortBuilder(h.names, "root").Obj(),
                                      CohortBuilder(h.names, "guaranteed")
                                          .Parent("root")
                                          .Group({FQ("default").Resource("cpu", "4")})
                                          .Obj()};
                         h.cluster_queues.push_back(ClusterQueueBuilder(h.names, "guaranteed")
                                                        .Cohort("guaranteed")
                                                        .Group({FQ("default").Resource("cpu", "0")})
                                                        .Obj());
                         h.cluster_queues.push_back(ClusterQueueBuilder(h.names, "best-effort")
                                                        .Cohort("root")
                                                        .Group({FQ("default").Resource("cpu", "0")})
                                                        .Obj());
                       },
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "default", "guaranteed").Queue("guaranteed").Request("cpu", "4").Obj(),
                         W(n, "default", "best-effort").Queue("best-effort").Priority(3).Request("cpu", "4").Obj()};
                   },
                   .want = {{"default/guaranteed", {kAdmitted, "QuotaReserved", "", "cpu=default"}},
                            {"default/best-effort",
                             {kPending, "WaitingForQuota", "Workload no longer fits after processing another workload", ""}}},
                   .want_left = {"default/best-effort"}});

  // S28: flavor fungibility in the scheduler.
  cases.push_back({.name = "S28a use second flavor when the first has no preemption candidates",
                   .setup =
                       [](Harness& h) {
                         h.cluster_queues.push_back(
                             ClusterQueueBuilder(h.names, "other-alpha")
                                 .WithinClusterQueue(Policy::kLowerPriority)
                                 .Fungibility(FungibilityPolicy::kMayStopSearch, FungibilityPolicy::kMayStopSearch)
                                 .Group({FQ("on-demand").Resource("cpu", "50"), FQ("spot").Resource("cpu", "100")})
                                 .Obj());
                       },
                   .admitted = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "default", "existing").Request("cpu", "50").Admitted("other-alpha", "on-demand").Obj()};
                   },
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{W(n, "default", "new").Queue("other-alpha").Request("cpu", "20").Obj()};
                   },
                   .want = {{"default/new", {kAdmitted, "QuotaReserved", "", "cpu=spot"}}}});
  cases.push_back({.name = "S28b admit to second flavor when first needs preemption (TryNextFlavor)",
                   .setup =
                       [](Harness& h) {
                         h.cluster_queues.push_back(
                             ClusterQueueBuilder(h.names, "other-alpha")
                                 .WithinClusterQueue(Policy::kLowerPriority)
                                 .Group({FQ("on-demand").Resource("cpu", "1"), FQ("spot").Resource("cpu", "1")})
                                 .Obj());
                       },
                   .admitted = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "default", "blocker").Priority(50).Request("cpu", "1").Admitted("other-alpha", "on-demand").Obj()};
                   },
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "default", "test-wl").Queue("other-alpha").Priority(100).Request("cpu", "1").Obj()};
                   },
                   .want = {{"default/test-wl", {kAdmitted, "QuotaReserved", "", "cpu=spot"}}}});
  cases.push_back({.name = "S28c don't assign flavor if there are no candidates for preemption",
                   .setup =
                       [](Harness& h) {
                         h.cluster_queues.push_back(
                             ClusterQueueBuilder(h.names, "cq1")
                                 .Cohort("co")
                                 .WithinClusterQueue(Policy::kLowerPriority)
                                 .ReclaimWithinCohort(Policy::kAny)
                                 .BorrowWithinCohort(BWC::kLowerPriority)
                                 .Fungibility(FungibilityPolicy::kMayStopSearch, FungibilityPolicy::kMayStopSearch)
                                 .Group({FQ("on-demand").Resource("cpu", "0", "1"), FQ("spot").Resource("cpu", "0", "1")})
                                 .Obj());
                         h.cluster_queues.push_back(
                             ClusterQueueBuilder(h.names, "cq2")
                                 .Cohort("co")
                                 .Group({FQ("on-demand").Resource("cpu", "1"), FQ("spot").Resource("cpu", "1")})
                                 .Obj());
                       },
                   .admitted = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "default", "existing").Request("cpu", "1").Admitted("cq2", "on-demand").Obj()};
                   },
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{W(n, "default", "new").Queue("cq1").Priority(100).Request("cpu", "1").Obj()};
                   },
                   .want = {{"default/new", {kAdmitted, "QuotaReserved", "", "cpu=spot"}}}});
  auto pob = [](FungibilityPreference pref) {
    return [=](Harness& h) {
      h.cluster_queues.push_back(
          ClusterQueueBuilder(h.names, "pob-cq")
              .Cohort("pob")
              .WithinClusterQueue(Policy::kLowerPriority)
              .Fungibility(FungibilityPolicy::kTryNextFlavor, FungibilityPolicy::kTryNextFlavor, pref)
              .Group({FQ("on-demand").Resource("cpu", "5", "0"), FQ("spot").Resource("cpu", "0", "5")})
              .Obj());
      h.cluster_queues.push_back(
          ClusterQueueBuilder(h.names, "pob-lender")
              .Cohort("pob")
              .Group({FQ("on-demand").Resource("cpu", "0"), FQ("spot").Resource("cpu", "5")})
              .Obj());
    };
  };
  auto pob_admitted = [](ResourceNames& n) {
    return std::vector<Workload>{
        W(n, "default", "low").Priority(-1).Request("cpu", "5").Admitted("pob-cq", "on-demand").Obj()};
  };
  auto pob_pending = [](ResourceNames& n) {
    return std::vector<Workload>{W(n, "default", "high").Queue("pob-cq").Request("cpu", "5").Obj()};
  };
  cases.push_back({.name = "S28d PreemptionOverBorrowing: preempt in first flavor instead of borrowing in second",
                   .setup = pob(FungibilityPreference::kPreemptionOverBorrowing),
                   .admitted = pob_admitted,
                   .pending = pob_pending,
                   .want = {{"default/high", {kPreempting, "WaitingForPreemptedWorkloads", "", ""}}},
                   .want_preempted = {{"default/low", "InClusterQueue"}},
                   .want_left = {"default/high"}});
  cases.push_back({.name = "S28e BorrowingOverPreemption: borrow in second flavor instead of preempting in first",
                   .setup = pob(FungibilityPreference::kBorrowingOverPreemption),
                   .admitted = pob_admitted,
                   .pending = pob_pending,
                   .want = {{"default/high", {kAdmitted, "QuotaReserved", "", "cpu=spot"}}}});
  cases.push_back({.name = "S28f PreemptionOverBorrowing: fitting second flavor over first with no candidates",
                   .setup =
                       [](Harness& h) {
                         h.cohorts = {CohortBuilder(h.names, "nopc-root")
                                          .Group({FQ("on-demand").Resource("cpu", "0"), FQ("spot").Resource("cpu", "5")})
                                          .Obj(),
                                      CohortBuilder(h.names, "nopc-mid").Parent("nopc-root").Obj()};
                         h.cluster_queues.push_back(
                             ClusterQueueBuilder(h.names, "nopc-cq")
                                 .Cohort("nopc-mid")
                                 .WithinClusterQueue(Policy::kLowerPriority)
                                 .Fungibility(FungibilityPolicy::kTryNextFlavor, FungibilityPolicy::kTryNextFlavor,
                                              FungibilityPreference::kPreemptionOverBorrowing)
                                 .Group({FQ("on-demand").Resource("cpu", "5", "0"), FQ("spot").Resource("cpu", "0")})
                                 .Obj());
                       },
                   .admitted = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "default", "existing").Request("cpu", "5").Admitted("nopc-cq", "on-demand").Obj()};
                   },
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{W(n, "default", "new").Queue("nopc-cq").Request("cpu", "5").Obj()};
                   },
                   .want = {{"default/new", {kAdmitted, "QuotaReserved", "", "cpu=spot"}}}});

  cases.push_back({.name = "S29 admit workload with zero-quantity request for resource not in ClusterQueue",
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{W(n, "sales", "zero-resource-wl")
                                                      .Queue("sales")
                                                      .Request("cpu", "1")
                                                      .Request("example.com/gpu", "0")
                                                      .Obj()};
                   },
                   .want = {{"sales/zero-resource-wl", {kAdmitted, "QuotaReserved", "", "cpu=default"}}}});
  cases.push_back({.name = "S29b preempt when workload requests zero of a resource not defined in ClusterQueue",
                   .setup =
                       [](Harness& h) {
                         h.cluster_queues.push_back(ClusterQueueBuilder(h.names, "zero-cq")
                                                        .WithinClusterQueue(Policy::kLowerPriority)
                                                        .Group({FQ("default").Resource("cpu", "4")})
                                                        .Obj());
                       },
                   .admitted = [](ResourceNames& n) {
                     return std::vector<Workload>{
                         W(n, "default", "low-priority").Priority(-1).Request("cpu", "4").Admitted("zero-cq", "default").Obj()};
                   },
                   .pending = [](ResourceNames& n) {
                     return std::vector<Workload>{W(n, "default", "preemptor")
                                                      .Queue("zero-cq")
                                                      .Request("cpu", "2")
                                                      .Request("example.com/gpu", "0")
                                                      .Obj()};
                   },
                   .want = {{"default/preemptor", {kPreempting, "WaitingForPreemptedWorkloads", "", ""}}},
                   .want_preempted = {{"default/low-priority", "InClusterQueue"}},
                   .want_left = {"default/preemptor"}});
  return cases;
}

TEST(ScheduleTest, KueueTestScheduleCases) {
  for (const auto& c : Cases()) RunCase(c);
}

TEST(ScheduleTest, InactiveClusterQueueGetsNoHeadAndReportsReason) {
  Harness h;
  TestScheduleFixture(h);
  h.Build();
  int q = h.snapshot->ClusterQueueIndex("flavor-nonexistent-cq");
  EXPECT_FALSE(h.snapshot->Active(q));
  EXPECT_EQ(h.snapshot->ActiveReason(q), "FlavorNotFound");
  EXPECT_EQ(h.snapshot->ActiveMessage(q),
            "Can't admit new workloads: references missing ResourceFlavor(s): [nonexistent-flavor].");
  // A head of an inactive queue handed to the cycle anyway is Suspended.
  Workload w = WorkloadBuilder(h.names, "foo", "sales").Queue("flavor-nonexistent-cq").Request("cpu", "1").Obj();
  CycleResult r = Schedule(*h.snapshot, {w}, h.now);
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(r.entries[0].reason, "Suspended");
  EXPECT_EQ(r.entries[0].message, "ClusterQueue flavor-nonexistent-cq is inactive");
  Workload missing = WorkloadBuilder(h.names, "bar", "sales").Queue("nonexistent-cq").Request("cpu", "1").Obj();
  r = Schedule(*h.snapshot, {missing}, h.now);
  EXPECT_EQ(r.entries[0].reason, "Misconfigured");
  EXPECT_EQ(r.entries[0].message, "ClusterQueue nonexistent-cq not found");
}

TEST(ScheduleTest, AdmittedWorkloadIsAssumedWithUsageAndAdmission) {
  Harness h;
  TestScheduleFixture(h);
  h.Build();
  h.Submit(WorkloadBuilder(h.names, "new", "eng-alpha").Queue("eng-alpha").Count(51).Request("cpu", "1").Obj());
  CycleResult r = h.Cycle();
  const EntryResult* e = r.Find("eng-alpha/new");
  ASSERT_NE(e, nullptr);
  ASSERT_TRUE(e->admission.has_value());
  ASSERT_EQ(e->admission->pod_sets.size(), 1u);
  EXPECT_EQ(e->admission->pod_sets[0].count, 51);
  EXPECT_EQ(e->admission->pod_sets[0].resource_usage.Get(h.names.Find("cpu")), testing::Q("51"));
  EXPECT_EQ(e->borrowing, 1);  // 1 cpu above nominal, borrowed from cohort eng
  EXPECT_EQ(h.UsageOf("eng-alpha", "on-demand", "cpu"), testing::Q("51"));
  const WorkloadInfo* info = h.snapshot->FindWorkload("eng-alpha/new");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->workload.state, AdmissionState::kAdmitted);
  EXPECT_EQ(info->workload.quota_reserved_time, h.now);
}

TEST(ScheduleTest, PreemptionMessageNamesPathsAndReason) {
  Harness h;
  TestScheduleFixture(h);
  h.Build({WorkloadBuilder(h.names, "borrower", "eng-alpha").Request("cpu", "60").Admitted("eng-alpha", "on-demand").Obj(),
           WorkloadBuilder(h.names, "use-all-spot", "eng-alpha").Request("cpu", "100").Admitted("eng-alpha", "spot").Obj(),
           WorkloadBuilder(h.names, "high", "eng-beta").Priority(1).Request("cpu", "30").Admitted("eng-beta", "on-demand").Obj()});
  h.Submit(WorkloadBuilder(h.names, "preemptor", "eng-beta").Queue("eng-beta").Request("cpu", "20").Obj());
  CycleResult r = h.Cycle();
  const EntryResult* e = r.Find("eng-beta/preemptor");
  ASSERT_NE(e, nullptr);
  ASSERT_EQ(e->preempted.size(), 1u);
  EXPECT_EQ(e->preempted[0].uid, "eng-alpha/borrower");
  EXPECT_EQ(e->preempted[0].message,
            "Preempted to accommodate a workload (UID: eng-beta/preemptor, JobUID: UNKNOWN) due to reclamation "
            "within the cohort; preemptor path: /eng/eng-beta; preemptee path: /eng/eng-alpha");
  // The victim is now evicting: usage still counted, never a candidate again.
  const WorkloadInfo* v = h.snapshot->FindWorkload("eng-alpha/borrower");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->workload.state, AdmissionState::kEvicting);
  EXPECT_EQ(v->workload.evicted_for, "eng-beta/preemptor");
  EXPECT_EQ(h.UsageOf("eng-alpha", "on-demand", "cpu"), testing::Q("60"));
}

// Kueue's TestEntryOrdering (pkg/scheduler/scheduler_test.go).
TEST(EntryOrderingTest, KueueEntryOrderingCases) {
  struct E {
    std::string name;
    int created;          // seconds
    int priority;
    int borrowing;
    int evicted_at = -1;  // PodsReadyTimeout eviction time, -1: none
  };
  std::vector<E> entries = {{"old_borrowing", 0, 0, 1},       {"old", 1, 0, 0},
                            {"new", 3, 0, 0},                 {"high_pri_borrowing", 3, 1, 1},
                            {"new_high_pri", 4, 1, 0},        {"new_borrowing", 3, 0, 1},
                            {"evicted_borrowing", 1, 0, 1, 2}, {"recently_evicted", 0, 0, 0, 2},
                            {"high_pri_borrowing_more", 3, 1, 2}};
  auto order = [&](bool priority_sorting, bool eviction_timestamp) {
    std::vector<EntryOrderKey> keys;
    for (const auto& e : entries) {
      int ts = (eviction_timestamp && e.evicted_at >= 0) ? e.evicted_at : e.created;
      keys.push_back({e.borrowing, e.priority, T(ts), e.name});
    }
    std::sort(keys.begin(), keys.end(),
              [&](const auto& a, const auto& b) { return EntryBefore(a, b, priority_sorting); });
    std::vector<std::string> names;
    for (const auto& k : keys) names.push_back(k.uid);
    return names;
  };
  EXPECT_EQ(order(true, true),
            (std::vector<std::string>{"new_high_pri", "old", "recently_evicted", "new", "high_pri_borrowing",
                                      "old_borrowing", "evicted_borrowing", "new_borrowing", "high_pri_borrowing_more"}));
  EXPECT_EQ(order(true, false),
            (std::vector<std::string>{"new_high_pri", "recently_evicted", "old", "new", "high_pri_borrowing",
                                      "old_borrowing", "evicted_borrowing", "new_borrowing", "high_pri_borrowing_more"}));
  EXPECT_EQ(order(false, true),
            (std::vector<std::string>{"old", "recently_evicted", "new", "new_high_pri", "old_borrowing",
                                      "evicted_borrowing", "high_pri_borrowing", "new_borrowing",
                                      "high_pri_borrowing_more"}));

  // Preempted set: the caller computes queue-order timestamps (Kueue's
  // workload.Ordering.GetQueueOrderTimestamp:
  // reclaimed-while-borrowing use preemption time + 1ms when priority sorting
  // is off); uids follow creation order as the final tie-break.
  struct P {
    std::string uid;
    std::string name;
    int priority;
    double ts_on;   // timestamp used with priority sorting on
    double ts_off;  // with priority sorting off
  };
  std::vector<P> preempted = {{"1", "recently-preempted-in-queue", 1, 0, 0},
                              {"2", "recently-reclaimed-while-borrowing", 1, 0, 6.001},
                              {"3", "more-recently-reclaimed-while-borrowing", 1, 0, 7.001},
                              {"4", "not-preempted-yet", 1, 1, 1},
                              {"5", "preemptor", 2, 7, 7}};
  auto order2 = [&](bool on) {
    std::vector<std::pair<EntryOrderKey, std::string>> keys;
    for (const auto& p : preempted) keys.push_back({{0, p.priority, T(on ? p.ts_on : p.ts_off), p.uid}, p.name});
    std::sort(keys.begin(), keys.end(), [&](const auto& a, const auto& b) { return EntryBefore(a.first, b.first, on); });
    std::vector<std::string> names;
    for (const auto& k : keys) names.push_back(k.second);
    return names;
  };
  EXPECT_EQ(order2(true), (std::vector<std::string>{"preemptor", "recently-preempted-in-queue",
                                                    "recently-reclaimed-while-borrowing",
                                                    "more-recently-reclaimed-while-borrowing", "not-preempted-yet"}));
  EXPECT_EQ(order2(false), (std::vector<std::string>{"recently-preempted-in-queue", "not-preempted-yet",
                                                     "recently-reclaimed-while-borrowing", "preemptor",
                                                     "more-recently-reclaimed-while-borrowing"}));
  // Preemptor set with PrioritizePreemptorWorkloads off (the only mode berth
  // implements): plain borrowing/priority/timestamp order.
  std::vector<EntryOrderKey> pre = {{1, 1, T(1), "preemptor-borrowing"},
                                    {0, 1, T(2), "preemptor-not-borrowing"},
                                    {0, 2, T(0), "not-preemptor-not-borrowing"}};
  std::sort(pre.begin(), pre.end(), [](const auto& a, const auto& b) { return EntryBefore(a, b, true); });
  EXPECT_EQ(pre[0].uid, "not-preemptor-not-borrowing");
  EXPECT_EQ(pre[1].uid, "preemptor-not-borrowing");
  EXPECT_EQ(pre[2].uid, "preemptor-borrowing");
}

}  // namespace
}  // namespace berth::admission
