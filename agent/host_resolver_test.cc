#include "agent/host_resolver.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

#include "core/hash.h"

namespace berth::agent {
namespace {

// A value given to RewriteHostNames, the value it must return and the names
// it must report as pending.
struct RewriteCase {
  const char* in;
  const char* want;
  std::vector<std::string> pending;
};

void ExpectRewrites(const std::vector<RewriteCase>& cases, const std::string& ns, const HostLookup& lookup,
                    bool bare_service_names = false) {
  for (const auto& c : cases) {
    HostRewrite r = RewriteHostNames(c.in, ns, lookup, bare_service_names);
    EXPECT_EQ(r.value, c.want) << c.in;
    EXPECT_EQ(r.pending, c.pending) << c.in;
  }
}

PodHostDirectory Directory() {
  PodHostDirectory d;
  auto pod = [](const char* name, const char* hostname, const char* subdomain) {
    api::Object p = {{"metadata", {{"name", name}, {"namespace", "team-a"}}}, {"spec", api::Object::object()}};
    if (*hostname) p["spec"]["hostname"] = hostname;
    if (*subdomain) p["spec"]["subdomain"] = subdomain;
    return p;
  };
  d.Add(pod("pytorch-workers-0-0-x1", "pytorch-workers-0-0", "pytorch"), "10.0.0.1");
  d.Add(pod("pytorch-workers-0-1-x2", "pytorch-workers-0-1", "pytorch"), "10.0.0.2");
  d.Add(pod("tj-node-0-0-x3", "tj-node-0-0", "tj"), "");  // not placed yet
  d.Add(pod("pyjob-master-0", "", "pyjob"), "10.0.0.3");  // hostname = pod name
  d.Add(pod("lonely", "lonely", ""), "10.0.0.9");         // no subdomain: no DNS name
  return d;
}

TEST(HostResolverTest, RewritesPodNamesOfTheSameNamespace) {
  PodHostDirectory d = Directory();
  const std::vector<RewriteCase> cases = {
      {"pytorch-workers-0-0.pytorch", "10.0.0.1", {}},
      {"pytorch-workers-0-0.pytorch.team-a", "10.0.0.1", {}},
      {"pytorch-workers-0-0.pytorch.team-a.svc", "10.0.0.1", {}},
      {"pytorch-workers-0-0.pytorch.team-a.svc.cluster.local", "10.0.0.1", {}},
      {"pytorch-workers-0-0.pytorch.team-a.svc.cluster.local.", "10.0.0.1", {}},
      {"--rdzv_endpoint=pytorch-workers-0-0.pytorch:29500", "--rdzv_endpoint=10.0.0.1:29500", {}},
      {"tcp://pyjob-master-0.pyjob:23456", "tcp://10.0.0.3:23456", {}},
      {"pytorch-workers-0-0.pytorch,pytorch-workers-0-1.pytorch", "10.0.0.1,10.0.0.2", {}},
      // Other namespaces, unknown names, other shapes: untouched.
      {"pytorch-workers-0-0.pytorch.team-b", "pytorch-workers-0-0.pytorch.team-b", {}},
      {"pytorch-workers-0-0.pytorch.team-a.svc.example.com", "pytorch-workers-0-0.pytorch.team-a.svc.example.com", {}},
      {"example.com", "example.com", {}},
      {"localhost", "localhost", {}},
      {"lonely.x", "lonely.x", {}},
      {"Pytorch-workers-0-0.pytorch", "Pytorch-workers-0-0.pytorch", {}},
      {"pytorch-workers-0-0", "pytorch-workers-0-0", {}},
      {"3.14", "3.14", {}},
      // Known but not placed: kept and reported.
      {"tj-node-0-0.tj:29500", "tj-node-0-0.tj:29500", {"tj-node-0-0.tj"}},
  };
  ExpectRewrites(cases, "team-a", d.AsLookup());
}

// The Training Operator's per-replica headless Services: MASTER_ADDR=<job>-master-0 names the
// Service whose selector picks the master pod; resolved to that pod's node.
TEST(HostResolverTest, RewritesServiceNamesToTheNodeOfTheSelectedPod) {
  PodHostDirectory d;
  auto pod = [](const char* name, const char* index) {
    return api::Object{{"metadata",
                        {{"name", name},
                         {"namespace", "training"},
                         {"labels",
                          {{"training.kubeflow.org/job-name", "pj"},
                           {"training.kubeflow.org/replica-type", "master"},
                           {"training.kubeflow.org/replica-index", index}}}}},
                       {"spec", api::Object::object()}};
  };
  auto service = [](const char* name, const char* index) {
    return api::Object{{"metadata", {{"name", name}, {"namespace", "training"}}},
                       {"spec",
                        {{"clusterIP", "None"},
                         {"selector",
                          {{"training.kubeflow.org/job-name", "pj"},
                           {"training.kubeflow.org/replica-type", "master"},
                           {"training.kubeflow.org/replica-index", index}}}}}};
  };
  d.Add(pod("pj-master-0", "0"), "10.0.0.4");
  d.Add(pod("pj-master-1", "1"), "");  // selected by pj-master-1, not placed yet
  d.AddService(service("pj-master-0", "0"));
  d.AddService(service("pj-master-1", "1"));
  d.AddService(service("pj-master-2", "2"));                                                   // selects no pod (yet)
  d.AddService({{"metadata", {{"name", "external"}}}, {"spec", {{"type", "ExternalName"}}}});  // no selector
  const std::vector<RewriteCase> cases = {
      {"pj-master-0", "10.0.0.4", {}},
      {"pj-master-0.training", "10.0.0.4", {}},
      {"pj-master-0.training.svc", "10.0.0.4", {}},
      {"pj-master-0.training.svc.cluster.local", "10.0.0.4", {}},
      {"tcp://pj-master-0:23456", "tcp://10.0.0.4:23456", {}},
      {"pj-master-1", "pj-master-1", {"pj-master-1"}},
      {"pj-master-2:23456", "pj-master-2:23456", {"pj-master-2"}},
      // Another namespace, a form DNS does not resolve, no selector, not a Service.
      {"pj-master-0.other", "pj-master-0.other", {}},
      {"pj-master-0.training.cluster.local", "pj-master-0.training.cluster.local", {}},
      {"external", "external", {}},
      {"pj-worker-0", "pj-worker-0", {}},
  };
  ExpectRewrites(cases, "training", d.AsLookup(), /*bare_service_names=*/true);
  // Without bare names only the qualified forms are Services.
  EXPECT_EQ(RewriteHostNames("pj-master-0", "training", d.AsLookup()).value, "pj-master-0");
  EXPECT_EQ(RewriteHostNames("pj-master-0.training", "training", d.AsLookup()).value, "10.0.0.4");
  // In a container's environment a bare name is an address only in an address variable:
  // a job name or a path segment that equals a Service name stays as written.
  {
    RendezvousPortAllocator ports;
    EnvRewrite r = RewriteEnvForHostNetwork(
        {{"JOB_NAME", "pj-master-0"}, {"CHECKPOINT_DIR", "/ckpt/training/pj-master-0"}, {"RDZV_HOST", "pj-master-0"}},
        "training", d.AsLookup(), ports, "pod-1");
    EXPECT_EQ(r.env[0].value, "pj-master-0");
    EXPECT_EQ(r.env[1].value, "/ckpt/training/pj-master-0");
    EXPECT_EQ(r.env[2].value, "10.0.0.4");
  }
  EXPECT_TRUE(AddressVariable("MASTER_ADDR"));
  EXPECT_TRUE(AddressVariable("pet_master_addr"));
  EXPECT_TRUE(AddressVariable("RDZV_ENDPOINT"));
  EXPECT_FALSE(AddressVariable("JOB_NAME"));
  EXPECT_FALSE(AddressVariable("ADDRESSES_FILE"));
  // MASTER_ADDR and MASTER_PORT as the Training Operator sets them: every pod of the job maps
  // the port on the master's host to the same value.
  RendezvousPortAllocator ports;
  EnvRewrite r = RewriteEnvForHostNetwork({{"MASTER_ADDR", "pj-master-0"}, {"MASTER_PORT", "23456"}}, "training",
                                          d.AsLookup(), ports, "pod-1");
  EXPECT_EQ(r.env[0].value, "10.0.0.4");
  EXPECT_EQ(r.env[1].value,
            std::to_string(*RendezvousPortAllocator().Allocate("10.0.0.4", "training/pj-master-0:23456", "x")));
  EXPECT_TRUE(r.pending.empty());
}

TEST(PortAllocatorTest, DistinctPortsPerHostStablePerKey) {
  RendezvousPortAllocator a(30000, 30003);
  auto p1 = a.Allocate("10.0.0.1", "ns/a-node-0-0.a:29500", "pod-a0");
  auto p2 = a.Allocate("10.0.0.1", "ns/b-node-0-0.b:29500", "pod-b0");
  ASSERT_TRUE(p1 && p2);
  EXPECT_NE(*p1, *p2);
  EXPECT_GE(*p1, 30000);
  EXPECT_LE(*p1, 30003);
  // Idempotent, for the same or another holder, and the preferred port is the hash slot
  // (deterministic across runs).
  EXPECT_EQ(a.Allocate("10.0.0.1", "ns/a-node-0-0.a:29500", "pod-a0"), p1);
  EXPECT_EQ(a.Allocate("10.0.0.1", "ns/a-node-0-0.a:29500", "pod-a1"), p1);
  EXPECT_EQ(*p1, 30000 + Fnv1a64("ns/a-node-0-0.a:29500") % 4);
  // Another host has its own space: the same key gets its preferred slot there too.
  EXPECT_EQ(a.Allocate("10.0.0.2", "ns/a-node-0-0.a:29500", "pod-a2"), p1);
  // Exhaustion: nothing is held for a key that got no port.
  EXPECT_TRUE(a.Allocate("10.0.0.1", "k3", "pod-3"));
  EXPECT_TRUE(a.Allocate("10.0.0.1", "k4", "pod-4"));
  EXPECT_EQ(a.held("10.0.0.1"), 4u);
  EXPECT_FALSE(a.Allocate("10.0.0.1", "k5", "pod-5"));
  EXPECT_EQ(a.holders(), 6u);
  a.ReleaseHolder("pod-4");
  EXPECT_TRUE(a.Allocate("10.0.0.1", "k5", "pod-5"));
  // Job a's port stays while any of its pods holds it, on every host.
  a.ReleaseHolder("pod-a0");
  EXPECT_EQ(a.held("10.0.0.1"), 4u);
  EXPECT_EQ(a.Allocate("10.0.0.1", "ns/a-node-0-0.a:29500", "pod-a3"), p1);
  a.ReleaseHolder("pod-a1");
  a.ReleaseHolder("pod-a3");
  EXPECT_EQ(a.held("10.0.0.1"), 3u);
  EXPECT_EQ(a.held("10.0.0.2"), 1u);
  a.ReleaseHolder("pod-a2");
  EXPECT_EQ(a.held("10.0.0.2"), 0u);
  a.ReleaseHolder("no-such-pod");
  EXPECT_EQ(a.holders(), 3u);
}

// Ports are given back when their last holder goes, so a host serves any number of jobs over
// time, not just as many as its range holds: every job of a long churn gets its own port
// while it runs, and nothing is left held after.
TEST(PortAllocatorTest, ARangeServesAnyNumberOfJobsOverTime) {
  RendezvousPortAllocator a(30000, 30009);
  std::set<uint16_t> running;
  for (int job = 0; job < 1000; ++job) {
    const std::string key = "ns/job-" + std::to_string(job) + "-node-0-0:29500";
    for (int pod = 0; pod < 2; ++pod) {
      auto p = a.Allocate("h", key, key + "/" + std::to_string(pod));
      ASSERT_TRUE(p) << "job " << job;
      if (pod == 0) {
        EXPECT_TRUE(running.insert(*p).second) << "two running jobs share port " << *p;
      }
    }
    if (job >= 9) {  // at most 10 jobs run at once: the oldest finishes
      const std::string old = "ns/job-" + std::to_string(job - 9) + "-node-0-0:29500";
      auto p = a.Allocate("h", old, old + "/0");
      ASSERT_TRUE(p);
      running.erase(*p);
      a.ReleaseHolder(old + "/0");
      a.ReleaseHolder(old + "/1");
    }
  }
  EXPECT_EQ(a.held("h"), 9u);
  EXPECT_EQ(a.holders(), 18u);
}

TEST(PortAllocatorTest, ProbesPastCollisionsInOrder) {
  RendezvousPortAllocator a(100, 109);
  std::set<uint16_t> seen;
  for (int i = 0; i < 10; ++i) {
    auto p = a.Allocate("h", "job-" + std::to_string(i), "pod-" + std::to_string(i));
    ASSERT_TRUE(p);
    EXPECT_TRUE(seen.insert(*p).second) << *p;
  }
  EXPECT_EQ(seen.size(), 10u);
}

TEST(EnvRewriteTest, TwoJobsOnOneHostGetDistinctMasterPortsAndAllPodsAgree) {
  PodHostDirectory d;
  for (const char* job : {"a", "b"}) {
    api::Object master = {{"metadata", {{"name", std::string(job) + "-node-0-0-x"}}},
                          {"spec", {{"hostname", std::string(job) + "-node-0-0"}, {"subdomain", job}}}};
    d.Add(master, "10.0.0.1");  // both masters on one host
  }
  RendezvousPortAllocator ports;
  auto env_of = [](const std::string& job) {
    return std::vector<EnvVar>{{"PET_MASTER_ADDR", job + "-node-0-0." + job},
                               {"PET_MASTER_PORT", "29500"},
                               {"PET_NODE_RANK", "1"},
                               {"ENDPOINT", job + "-node-0-0." + job + ":29500"}};
  };
  EnvRewrite a = RewriteEnvForHostNetwork(env_of("a"), "ns", d.AsLookup(), ports, "a-0");
  EnvRewrite b = RewriteEnvForHostNetwork(env_of("b"), "ns", d.AsLookup(), ports, "b-0");
  EnvRewrite a2 = RewriteEnvForHostNetwork(env_of("a"), "ns", d.AsLookup(), ports, "a-1");  // another pod of job a
  EXPECT_EQ(a.env[0].value, "10.0.0.1");
  EXPECT_EQ(b.env[0].value, "10.0.0.1");
  EXPECT_NE(a.env[1].value, b.env[1].value);
  EXPECT_EQ(a.env[1].value, a2.env[1].value);
  EXPECT_EQ(a.env[1].value,
            std::to_string(*RendezvousPortAllocator().Allocate("10.0.0.1", "ns/a-node-0-0.a:29500", "x")));
  EXPECT_EQ(a.env[2].value, "1");
  EXPECT_EQ(a.env[3].value, "10.0.0.1:" + a.env[1].value);  // same host:port key as PET_MASTER_PORT
  EXPECT_TRUE(a.pending.empty());
  // A literal copy of the address before the name does not take the port rewrite.
  EnvRewrite lit = RewriteEnvForHostNetwork({{"X", "10.0.0.1:1 a-node-0-0.a:29500"}}, "ns", d.AsLookup(), ports, "x");
  EXPECT_EQ(lit.env[0].value, "10.0.0.1:1 10.0.0.1:" + a.env[1].value);
  EXPECT_EQ(ports.held("10.0.0.1"), 2u);
}

// A container's environment maps at most kMaxRendezvousPortsPerContainer ports (one tenant
// cannot take a host's range), and a full range makes the container wait, never run on the
// port as written that another job may hold.
TEST(EnvRewriteTest, PortsPerContainerAreBoundedAndAFullRangeWaits) {
  PodHostDirectory d;
  d.Add({{"metadata", {{"name", "m"}}}, {"spec", {{"hostname", "m"}, {"subdomain", "s"}}}}, "10.0.0.1");
  RendezvousPortAllocator ports(30000, 30999);
  std::string many;
  for (size_t i = 1; i <= kMaxRendezvousPortsPerContainer + 1; ++i) many += "m.s:" + std::to_string(i) + " ";
  EnvRewrite r = RewriteEnvForHostNetwork({{"PEERS", many}}, "ns", d.AsLookup(), ports, "greedy");
  EXPECT_EQ(r.error,
            "more than 16 rendezvous ports (host:port values of pods and Services) in one container's "
            "environment");
  EXPECT_EQ(ports.held("10.0.0.1"), kMaxRendezvousPortsPerContainer);
  ports.ReleaseHolder("greedy");
  EXPECT_EQ(ports.held("10.0.0.1"), 0u);
  // A one-port range: the second job waits for the first.
  RendezvousPortAllocator one(30000, 30000);
  PodHostDirectory d2;
  for (const char* job : {"a", "b"}) {
    d2.Add({{"metadata", {{"name", std::string(job) + "-m"}}},
            {"spec", {{"hostname", std::string(job) + "-m"}, {"subdomain", job}}}},
           "10.0.0.1");
  }
  auto env = [](const std::string& job) {
    return std::vector<EnvVar>{{"MASTER_ADDR", job + "-m." + job}, {"MASTER_PORT", "29500"}};
  };
  EnvRewrite a = RewriteEnvForHostNetwork(env("a"), "ns", d2.AsLookup(), one, "a-pod");
  EXPECT_TRUE(a.pending.empty());
  EXPECT_EQ(a.env[1].value, "30000");
  EnvRewrite b = RewriteEnvForHostNetwork(env("b"), "ns", d2.AsLookup(), one, "b-pod");
  EXPECT_EQ(b.pending, std::vector<std::string>{"a free rendezvous port on 10.0.0.1"});
  EXPECT_TRUE(b.error.empty());
  one.ReleaseHolder("a-pod");
  b = RewriteEnvForHostNetwork(env("b"), "ns", d2.AsLookup(), one, "b-pod");
  EXPECT_TRUE(b.pending.empty());
  EXPECT_EQ(b.env[1].value, "30000");
}

TEST(EnvRewriteTest, UnresolvedMasterKeepsValuesAndReportsPending) {
  PodHostDirectory d;
  d.Add({{"metadata", {{"name", "m"}}}, {"spec", {{"hostname", "j-node-0-0"}, {"subdomain", "j"}}}}, "");
  RendezvousPortAllocator ports;
  EnvRewrite r = RewriteEnvForHostNetwork({{"MASTER_ADDR", "j-node-0-0.j"}, {"MASTER_PORT", "29500"}}, "ns",
                                          d.AsLookup(), ports, "m");
  EXPECT_EQ(r.env[0].value, "j-node-0-0.j");
  EXPECT_EQ(r.env[1].value, "29500");
  EXPECT_EQ(r.pending, std::vector<std::string>{"j-node-0-0.j"});
  EXPECT_EQ(ports.held(""), 0u);
}

// HOSTNAME is the container's own host name: never looked up, never rewritten, even
// when a Service or a pod of that name exists (the lookup lists the namespace's pods, so
// asking it for every container's own name made each start cost a list).
TEST(EnvRewriteTest, HostnameIsNeverLookedUp) {
  int lookups = 0;
  HostLookup counting = [&](std::string_view, std::string_view) {
    ++lookups;
    return HostAnswer{HostAnswer::Kind::kResolved, "10.0.0.7"};
  };
  RendezvousPortAllocator ports;
  EnvRewrite r =
      RewriteEnvForHostNetwork({{"HOSTNAME", "j-node-0-0"}, {"HOSTNAME", "j-node-0-0.j"}}, "ns", counting, ports, "p");
  EXPECT_EQ(lookups, 0);
  ASSERT_EQ(r.env.size(), 2u);
  EXPECT_EQ(r.env[0].value, "j-node-0-0");
  EXPECT_EQ(r.env[1].value, "j-node-0-0.j");
  // Any other address variable is still resolved.
  r = RewriteEnvForHostNetwork({{"MASTER_HOST", "j-node-0-0"}}, "ns", counting, ports, "p");
  EXPECT_EQ(lookups, 1);
  EXPECT_EQ(r.env[0].value, "10.0.0.7");
}

TEST(RendezvousPortAllocatorTest, RestoreHoldsAPortAgainAndRefusesConflicts) {
  RendezvousPortAllocator ports(20000, 20009);
  EXPECT_TRUE(ports.Restore("h", "a", 20005, "pod-1"));
  EXPECT_TRUE(ports.Restore("h", "a", 20005, "pod-1"));   // idempotent
  EXPECT_TRUE(ports.Restore("h", "a", 20005, "pod-2"));   // another pod of the job
  EXPECT_FALSE(ports.Restore("h", "a", 20006, "pod-3"));  // the key holds another port
  EXPECT_FALSE(ports.Restore("h", "b", 20005, "pod-3"));  // the port is another key's
  EXPECT_FALSE(ports.Restore("h", "c", 30000, "pod-3"));  // outside the range
  EXPECT_EQ(ports.holders(), 2u);                         // a refused restore holds nothing
  EXPECT_EQ(ports.Allocate("h", "a", "pod-4"), 20005);
  for (int i = 0; i < 9; ++i) EXPECT_NE(ports.Allocate("h", "k" + std::to_string(i), "k-pod"), 20005);
  EXPECT_EQ(ports.held("h"), 10u);
  // Restored holders release like any other.
  for (const char* holder : {"pod-1", "pod-2", "pod-4"}) ports.ReleaseHolder(holder);
  EXPECT_EQ(ports.held("h"), 9u);
  EXPECT_TRUE(ports.Restore("h", "b", 20005, "pod-5"));
}

}  // namespace
}  // namespace berth::agent
