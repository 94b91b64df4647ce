#include "apiserver/garbage_collector.h"

#include <gtest/gtest.h>

#include "api/registry.h"
#include "apiserver/deletion.h"
#include "core/clock.h"
#include "store/memory_store.h"

namespace berth::apiserver {
namespace {

using nlohmann::json;

const api::GroupResource kJobs{"batch", "jobs"};
const api::GroupResource kPods{"", "pods"};
const api::GroupResource kConfigMaps{"", "configmaps"};
const api::GroupResource kNamespaces{"", "namespaces"};
const api::GroupResource kJobSets{"jobset.x-k8s.io", "jobsets"};
const api::GroupResource kEvents{"", "events"};

class GarbageCollectorTest : public ::testing::Test {
 protected:
  GarbageCollectorTest() : store_(clock_), deleter_(store_), gc_(api::Registry::Default(), store_) {}

  void SetUp() override {
    Create(kNamespaces, {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "default"}}}});
    ASSERT_TRUE(gc_.Open().ok());
  }

  json Create(const api::GroupResource& gr, json obj) {
    auto created = store_.Create(gr, std::move(obj));
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? *created : json();
  }

  static json OwnerRef(const json& owner) {
    return {{"apiVersion", owner["apiVersion"]},
            {"kind", owner["kind"]},
            {"name", api::Name(owner)},
            {"uid", api::Uid(owner)},
            {"controller", true},
            {"blockOwnerDeletion", true}};
  }

  json JobSet(const std::string& name) {
    return Create(kJobSets, {{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
                             {"kind", "JobSet"},
                             {"metadata", {{"name", name}, {"namespace", "default"}}}});
  }
  json Job(const std::string& name, const std::vector<json>& owners = {}) {
    json obj = {{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", name}, {"namespace", "default"}}}};
    for (const json& o : owners) obj["metadata"]["ownerReferences"].push_back(OwnerRef(o));
    return Create(kJobs, obj);
  }
  static json Event(const std::string& ns, const std::string& name) {
    return {{"apiVersion", "v1"},
            {"kind", "Event"},
            {"metadata", {{"name", name}, {"namespace", ns}}},
            {"involvedObject", {{"kind", "Pod"}, {"name", "p"}, {"namespace", ns}}},
            {"reason", "Started"}};
  }
  json Pod(const std::string& name, const std::vector<json>& owners = {}) {
    json obj = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}, {"namespace", "default"}}}};
    for (const json& o : owners) obj["metadata"]["ownerReferences"].push_back(OwnerRef(o));
    return Create(kPods, obj);
  }

  Status Delete(const api::GroupResource& gr, const std::string& ns, const std::string& name,
                std::string_view policy) {
    DeleteRequest r;
    r.propagation_policy = std::string(policy);
    auto result = deleter_.Delete(*api::Registry::Default().Find(gr), store::ObjectKey{gr, ns, name}, r);
    return result.ok() ? Status::Ok() : result.status();
  }

  bool Exists(const api::GroupResource& gr, const std::string& ns, const std::string& name) {
    return store_.Get(store::ObjectKey{gr, ns, name}).ok();
  }
  json Get(const api::GroupResource& gr, const std::string& ns, const std::string& name) {
    auto obj = store_.Get(store::ObjectKey{gr, ns, name});
    return obj.ok() ? *obj : json();
  }

  FakeClock clock_;
  store::MemoryStore store_;
  Deleter deleter_;
  GarbageCollector gc_;
};

// Background: the owner goes at once; its dependents, then theirs, follow.
TEST_F(GarbageCollectorTest, BackgroundDeletesDependentsTransitively) {
  json js = JobSet("js");
  json job = Job("js-node-0", {js});
  Pod("js-node-0-0", {job});
  Pod("js-node-0-1", {job});
  Pod("unrelated");
  ASSERT_TRUE(Delete(kJobSets, "default", "js", kPropagationBackground).ok());
  EXPECT_FALSE(Exists(kJobSets, "default", "js"));
  EXPECT_TRUE(Exists(kJobs, "default", "js-node-0"));  // nothing happens before the collector runs
  EXPECT_GT(gc_.Sync(), 0);
  EXPECT_FALSE(Exists(kJobs, "default", "js-node-0"));
  EXPECT_FALSE(Exists(kPods, "default", "js-node-0-0"));
  EXPECT_FALSE(Exists(kPods, "default", "js-node-0-1"));
  EXPECT_TRUE(Exists(kPods, "default", "unrelated"));
}

// A dependent with another live owner only loses the dangling reference.
TEST_F(GarbageCollectorTest, DependentWithALiveOwnerKeepsLiving) {
  json a = Job("a"), b = Job("b");
  Pod("shared", {a, b});
  ASSERT_TRUE(Delete(kJobs, "default", "a", kPropagationBackground).ok());
  gc_.Sync();
  json pod = Get(kPods, "default", "shared");
  ASSERT_FALSE(pod.is_null());
  ASSERT_EQ(pod["metadata"]["ownerReferences"].size(), 1u);
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["name"], "b");
}

// Foreground: the owner stays (deletionTimestamp + foregroundDeletion) until
// its dependents are gone, then goes itself.
TEST_F(GarbageCollectorTest, ForegroundWaitsForDependents) {
  json js = JobSet("js");
  json job = Job("js-node-0", {js});
  Pod("js-node-0-0", {job});
  ASSERT_TRUE(Delete(kJobSets, "default", "js", kPropagationForeground).ok());
  json marked = Get(kJobSets, "default", "js");
  ASSERT_FALSE(marked.is_null());
  EXPECT_TRUE(api::BeingDeleted(marked));
  EXPECT_TRUE(HasFinalizer(marked, kFinalizerForeground));
  gc_.Sync();
  EXPECT_FALSE(Exists(kPods, "default", "js-node-0-0"));
  EXPECT_FALSE(Exists(kJobs, "default", "js-node-0"));
  EXPECT_FALSE(Exists(kJobSets, "default", "js"));
}

// Foreground with a dependent that cannot go yet (a running Pod on a node is
// deleted gracefully): the owner waits for it.
TEST_F(GarbageCollectorTest, ForegroundWaitsForGracefulPod) {
  json job = Job("j");
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}, {"namespace", "default"}, {"ownerReferences", {OwnerRef(job)}}}},
              {"spec", {{"nodeName", "node-1"}}},
              {"status", {{"phase", "Running"}}}};
  Create(kPods, pod);
  ASSERT_TRUE(Delete(kJobs, "default", "j", kPropagationForeground).ok());
  gc_.Sync();
  json p = Get(kPods, "default", "p");
  ASSERT_FALSE(p.is_null());
  EXPECT_TRUE(api::BeingDeleted(p));  // Terminating, waiting for its node agent
  EXPECT_TRUE(Exists(kJobs, "default", "j"));
  // The node agent confirms: the Pod goes with grace 0, then the Job.
  store::DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(store_.Delete(store::ObjectKey{kPods, "default", "p"}, now).ok());
  gc_.Sync();
  EXPECT_FALSE(Exists(kJobs, "default", "j"));
}

// Orphan: the dependents stay, without the reference; the owner goes.
TEST_F(GarbageCollectorTest, OrphanKeepsDependents) {
  json job = Job("j");
  Pod("p", {job});
  ASSERT_TRUE(Delete(kJobs, "default", "j", kPropagationOrphan).ok());
  EXPECT_TRUE(Exists(kJobs, "default", "j"));  // until the collector orphaned the pod
  gc_.Sync();
  EXPECT_FALSE(Exists(kJobs, "default", "j"));
  json p = Get(kPods, "default", "p");
  ASSERT_FALSE(p.is_null());
  EXPECT_FALSE(p["metadata"].contains("ownerReferences"));
}

// batch/v1 Job keeps upstream's default policy, Orphan.
TEST_F(GarbageCollectorTest, JobDefaultsToOrphan) {
  const api::ResourceDefinition* jobs = api::Registry::Default().Find(kJobs);
  const api::ResourceDefinition* pods = api::Registry::Default().Find(kPods);
  EXPECT_EQ(Deleter::DefaultPropagationPolicy(*jobs), kPropagationOrphan);
  EXPECT_EQ(Deleter::DefaultPropagationPolicy(*pods), kPropagationBackground);
  json job = Job("j");
  Pod("p", {job});
  ASSERT_TRUE(Delete(kJobs, "default", "j", "").ok());
  gc_.Sync();
  EXPECT_TRUE(Exists(kPods, "default", "p"));
}

// A finalizer orphan or foregroundDeletion already on the object (set by a client, or
// left by a deletion cut off between its two writes) decides only when the request names
// no policy; a policy the request names replaces it (upstream's
// deletionFinalizersForGarbageCollection). Every stale finalizer against every policy.
TEST_F(GarbageCollectorTest, ARequestedPolicyReplacesAFinalizerAlreadyOnTheObject) {
  const std::string_view stales[] = {"", kFinalizerOrphan, kFinalizerForeground};
  const std::string_view policies[] = {"", kPropagationBackground, kPropagationForeground, kPropagationOrphan};
  int n = 0;
  for (std::string_view stale : stales) {
    for (std::string_view policy : policies) {
      const std::string name = "j" + std::to_string(n++);
      const std::string what = "stale '" + std::string(stale) + "', policy '" + std::string(policy) + "'";
      json obj = {
          {"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", name}, {"namespace", "default"}}}};
      if (!stale.empty()) obj["metadata"]["finalizers"] = json::array({std::string(stale)});
      json job = Create(kJobs, obj);
      Pod(name + "-pod", {job});
      const std::string_view effective = !policy.empty()                 ? policy
                                         : stale == kFinalizerOrphan     ? kPropagationOrphan
                                         : stale == kFinalizerForeground ? kPropagationForeground
                                                                         : kPropagationOrphan;  // Job's default
      ASSERT_TRUE(Delete(kJobs, "default", name, policy).ok()) << what;
      // Marked with the effective policy's finalizer only (Background: none, gone at once).
      json marked = Get(kJobs, "default", name);
      if (effective == kPropagationBackground) {
        EXPECT_TRUE(marked.is_null()) << what;
      } else {
        ASSERT_FALSE(marked.is_null()) << what;
        const std::string want(effective == kPropagationOrphan ? kFinalizerOrphan : kFinalizerForeground);
        EXPECT_EQ(marked["metadata"]["finalizers"], json::array({want})) << what;
      }
      gc_.Sync();
      EXPECT_FALSE(Exists(kJobs, "default", name)) << what;
      EXPECT_EQ(Exists(kPods, "default", name + "-pod"), effective == kPropagationOrphan) << what;
    }
  }
}

// The collector's own deletes honour a dependent's orphan or foregroundDeletion
// finalizer, as upstream's attemptToDeleteItem does: a Job of a deleted JobSet that
// carries "orphan" orphans its pods; one that carries "foregroundDeletion" goes after its
// pods; one with neither goes at once and its pods follow.
TEST_F(GarbageCollectorTest, TheCollectorHonoursADependentsOwnFinalizer) {
  const std::string_view finalizers[] = {"", kFinalizerOrphan, kFinalizerForeground};
  int n = 0;
  for (std::string_view finalizer : finalizers) {
    const std::string name = "js" + std::to_string(n++);
    json js = JobSet(name);
    json obj = {
        {"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", {{"name", name + "-job"}, {"namespace", "default"}}}};
    obj["metadata"]["ownerReferences"].push_back(OwnerRef(js));
    if (!finalizer.empty()) obj["metadata"]["finalizers"] = json::array({std::string(finalizer)});
    json job = Create(kJobs, obj);
    Pod(name + "-pod", {job});
    ASSERT_TRUE(Delete(kJobSets, "default", name, kPropagationBackground).ok());
    gc_.Sync();
    EXPECT_FALSE(Exists(kJobs, "default", name + "-job")) << finalizer;
    json pod = Get(kPods, "default", name + "-pod");
    if (finalizer == kFinalizerOrphan) {
      ASSERT_FALSE(pod.is_null()) << finalizer;
      EXPECT_FALSE(pod["metadata"].contains("ownerReferences")) << finalizer;
    } else {
      EXPECT_TRUE(pod.is_null()) << finalizer;
    }
  }
}

// Dependents whose owner was deleted before the collector started are
// collected when it starts.
TEST_F(GarbageCollectorTest, DanglingAtStartIsCollected) {
  json job = Job("j");
  Pod("p", {job});
  store::DeleteOptions now;
  ASSERT_TRUE(store_.Delete(store::ObjectKey{kJobs, "default", "j"}, now).ok());
  GarbageCollector fresh(api::Registry::Default(), store_);
  ASSERT_TRUE(fresh.Open().ok());
  fresh.Sync();
  EXPECT_FALSE(Exists(kPods, "default", "p"));
}

// Namespace deletion: Terminating until every object in it is gone.
TEST_F(GarbageCollectorTest, NamespaceDeletionRemovesContent) {
  Create(kNamespaces, {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team-a"}}}});
  Create(kConfigMaps, {{"apiVersion", "v1"},
                       {"kind", "ConfigMap"},
                       {"metadata", {{"name", "cm"}, {"namespace", "team-a"}}}});
  Create(kJobSets, {{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
                    {"kind", "JobSet"},
                    {"metadata", {{"name", "js"}, {"namespace", "team-a"}}}});
  Create(kEvents, Event("team-a", "ev"));
  Pod("keep");  // in default
  ASSERT_TRUE(Delete(kNamespaces, "", "team-a", "").ok());
  json ns = Get(kNamespaces, "", "team-a");
  ASSERT_FALSE(ns.is_null());
  EXPECT_EQ(ns["status"]["phase"], "Terminating");
  EXPECT_TRUE(HasFinalizer(ns, kFinalizerNamespace));
  gc_.Sync();
  EXPECT_FALSE(Exists(kConfigMaps, "team-a", "cm"));
  EXPECT_FALSE(Exists(kJobSets, "team-a", "js"));
  EXPECT_FALSE(Exists(kEvents, "team-a", "ev"));
  EXPECT_FALSE(Exists(kNamespaces, "", "team-a"));
  EXPECT_TRUE(Exists(kPods, "default", "keep"));
}

// A namespace whose finalizer is taken off by hand while it terminates (kubectl's usual
// "stuck namespace" fix) leaves nothing behind in the collector: no terminating state, no
// wait for ignored objects, nothing scanned at every later deletion.
TEST_F(GarbageCollectorTest, ANamespaceRemovedWhileTerminatingLeavesNothingHeld) {
  gc_.Sync();
  const GarbageCollector::Held before = gc_.HeldPerObject();
  Create(kNamespaces, {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "stuck"}}}});
  json held = Event("stuck", "held");
  held["metadata"]["finalizers"] = json::array({"example.com/hold"});
  Create(kEvents, held);
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}, {"namespace", "stuck"}, {"finalizers", json::array({"example.com/hold"})}}}};
  Create(kPods, pod);
  ASSERT_TRUE(Delete(kNamespaces, "", "stuck", "").ok());
  gc_.Sync();
  ASSERT_TRUE(Exists(kNamespaces, "", "stuck"));
  EXPECT_EQ(gc_.HeldPerObject().terminating_namespaces, before.terminating_namespaces + 1);
  EXPECT_EQ(gc_.HeldPerObject().awaiting_unwatched, before.awaiting_unwatched + 1);

  // The administrator takes the namespace's finalizer off; the store removes it.
  json ns = Get(kNamespaces, "", "stuck");
  ns["metadata"].erase("finalizers");
  if (ns.contains("spec")) ns["spec"].erase("finalizers");
  ASSERT_TRUE(store_.Update(kNamespaces, ns).ok());
  ASSERT_FALSE(Exists(kNamespaces, "", "stuck"));
  // So do the pod's and the Event's owners.
  for (const auto& [gr, name] : {std::pair{kPods, "p"}, std::pair{kEvents, "held"}}) {
    json obj = Get(gr, "stuck", name);
    obj["metadata"].erase("finalizers");
    ASSERT_TRUE(store_.Update(gr, obj).ok());
  }
  gc_.Sync();
  EXPECT_EQ(gc_.HeldPerObject(), before);
}

// Events are outside the graph, as upstream's ignoredResources: an Event naming an owner
// that is gone is not collected (the Event TTL removes it), and no write of one wakes the
// collector. A namespace's deletion still deletes them; one held by a finalizer holds the
// namespace until Recheck() finds it gone.
TEST_F(GarbageCollectorTest, EventsAreIgnoredButGoWithTheirNamespace) {
  json job = Job("owner");
  json owned = Event("default", "owned");
  owned["metadata"]["ownerReferences"] = json::array({OwnerRef(job)});
  Create(kEvents, owned);
  gc_.Sync();
  ASSERT_TRUE(Delete(kJobs, "default", "owner", "Background").ok());
  EXPECT_EQ(gc_.Sync(), 0);
  EXPECT_TRUE(Exists(kEvents, "default", "owned"));

  Create(kNamespaces, {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team-b"}}}});
  json held = Event("team-b", "held");
  held["metadata"]["finalizers"] = json::array({"example.com/hold"});
  Create(kEvents, held);
  Create(kEvents, Event("team-b", "plain"));
  ASSERT_TRUE(Delete(kNamespaces, "", "team-b", "").ok());
  gc_.Sync();
  EXPECT_FALSE(Exists(kEvents, "team-b", "plain"));
  json marked = Get(kEvents, "team-b", "held");
  ASSERT_FALSE(marked.is_null());
  EXPECT_TRUE(marked["metadata"].contains("deletionTimestamp"));
  EXPECT_TRUE(Exists(kNamespaces, "", "team-b"));

  // Orphan and Foreground act as Background on an Event: nothing would ever remove their
  // finalizers, so an Event deleted so goes at once (and cannot hold its namespace).
  Create(kEvents, Event("default", "fg"));
  Create(kEvents, Event("default", "orphan"));
  ASSERT_TRUE(Delete(kEvents, "default", "fg", "Foreground").ok());
  ASSERT_TRUE(Delete(kEvents, "default", "orphan", "Orphan").ok());
  EXPECT_FALSE(Exists(kEvents, "default", "fg"));
  EXPECT_FALSE(Exists(kEvents, "default", "orphan"));

  // The finalizer goes; nothing the collector watches changed, so only a recheck sees it.
  marked["metadata"].erase("finalizers");
  ASSERT_TRUE(store_.Update(kEvents, marked).ok());
  EXPECT_FALSE(Exists(kEvents, "team-b", "held"));
  gc_.Sync();
  EXPECT_TRUE(Exists(kNamespaces, "", "team-b"));
  gc_.Recheck();
  gc_.Sync();
  EXPECT_FALSE(Exists(kNamespaces, "", "team-b"));
}

}  // namespace
}  // namespace berth::apiserver
