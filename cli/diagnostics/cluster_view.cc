#include "cli/diagnostics/cluster_view.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "api/conditions.h"
#include "api/priority_admission.h"
#include "api/unstructured.h"

namespace berth::cli::diagnostics {

namespace resources {
const client::GroupVersionResource kWorkloads{"kueue.x-k8s.io", "v1beta2", "workloads"};
const client::GroupVersionResource kClusterQueues{"kueue.x-k8s.io", "v1beta2", "clusterqueues"};
const client::GroupVersionResource kLocalQueues{"kueue.x-k8s.io", "v1beta2", "localqueues"};
const client::GroupVersionResource kCohorts{"kueue.x-k8s.io", "v1beta2", "cohorts"};
const client::GroupVersionResource kResourceFlavors{"kueue.x-k8s.io", "v1beta2", "resourceflavors"};
const client::GroupVersionResource kWorkloadPriorityClasses{"kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses"};
const client::GroupVersionResource kNodes{"", "v1", "nodes"};
const client::GroupVersionResource kPods{"", "v1", "pods"};
const client::GroupVersionResource kEvents{"", "v1", "events"};
const client::GroupVersionResource kPriorityClasses{"scheduling.k8s.io", "v1", "priorityclasses"};
const client::GroupVersionResource kJobs{"batch", "v1", "jobs"};
const client::GroupVersionResource kJobSets{"jobset.x-k8s.io", "v1alpha2", "jobsets"};
const client::GroupVersionResource kTrainJobs{"trainer.kubeflow.org", "v1alpha1", "trainjobs"};
const client::GroupVersionResource kPyTorchJobs{"kubeflow.org", "v1", "pytorchjobs"};
const client::GroupVersionResource kNamespaces{"", "v1", "namespaces"};

const std::vector<client::GroupVersionResource>& All() {
  static const std::vector<client::GroupVersionResource> kAll = {kWorkloads,
                                                                 kClusterQueues,
                                                                 kLocalQueues,
                                                                 kCohorts,
                                                                 kResourceFlavors,
                                                                 kWorkloadPriorityClasses,
                                                                 kNodes,
                                                                 kPods,
                                                                 kEvents,
                                                                 kPriorityClasses,
                                                                 kJobs,
                                                                 kJobSets,
                                                                 kTrainJobs,
                                                                 kPyTorchJobs,
                                                                 kNamespaces};
  return kAll;
}
}  // namespace resources

namespace {

const std::vector<api::Object>& EmptyList() {
  static const std::vector<api::Object> kEmpty;
  return kEmpty;
}

std::optional<std::string> MetaMapValue(const api::Object& obj, const char* map, const std::string& key) {
  const api::Object& v = api::NestedField(obj, {"metadata", map, key});
  if (!v.is_string()) return std::nullopt;
  return v.get<std::string>();
}

// The uids of metadata.ownerReferences, in order.
std::vector<std::string> OwnerUids(const api::Object& obj) {
  std::vector<std::string> uids;
  for (const api::Object& ref : api::ArrayAt(api::ObjectAt(obj, "metadata"), "ownerReferences")) {
    const api::Object& uid = api::Field(ref, "uid");
    if (uid.is_string()) uids.push_back(uid.get<std::string>());
  }
  return uids;
}

Time ParseTime(const std::string& s) {
  Time t{};
  if (!s.empty()) ParseRfc3339(s, &t);
  return t;
}

// The time an event last happened (kubectl's event sorting key).
Time EventTime(const api::Object& ev) {
  for (const std::string& s :
       {api::StringAt(ev, "lastTimestamp"), api::StringAt(ev, "eventTime"), api::StringAt(ev, "firstTimestamp"),
        api::NestedString(ev, {"metadata", "creationTimestamp"})}) {
    if (!s.empty()) return ParseTime(s);
  }
  return Time{};
}

}  // namespace

StatusOr<ClusterView> ClusterView::Fetch(client::Client& client) {
  std::map<api::GroupResource, std::vector<api::Object>> objects;
  for (const client::GroupVersionResource& gvr : resources::All()) {
    auto list = client.List(gvr.Namespace(""));
    if (!list.ok()) {
      if (list.status().code() == Code::kNotFound) continue;  // kind not served
      return list.status();
    }
    objects[gvr.GroupResource()] = std::move(list->items);
  }
  return FromObjects(std::move(objects));
}

ClusterView ClusterView::FromObjects(std::map<api::GroupResource, std::vector<api::Object>> objects) {
  ClusterView view;
  view.objects_ = std::move(objects);
  view.Index();
  return view;
}

void ClusterView::Index() {
  by_uid_.clear();
  for (const auto& [gr, items] : objects_) {
    for (const api::Object& obj : items) {
      const std::string& uid = api::Uid(obj);
      if (!uid.empty()) by_uid_.emplace(uid, &obj);
    }
  }
}

bool ClusterView::Covers(const client::GroupVersionResource& gvr) const {
  return objects_.count(gvr.GroupResource()) > 0;
}

const std::vector<api::Object>& ClusterView::Objects(const client::GroupVersionResource& gvr) const {
  auto it = objects_.find(gvr.GroupResource());
  return it == objects_.end() ? EmptyList() : it->second;
}

const api::Object* ClusterView::Find(const client::GroupVersionResource& gvr, const std::string& ns,
                                     const std::string& name) const {
  for (const api::Object& obj : Objects(gvr)) {
    if (api::Name(obj) == name && api::Namespace(obj) == ns) return &obj;
  }
  return nullptr;
}

const api::Object* ClusterView::FindByUid(const std::string& uid) const {
  auto it = by_uid_.find(uid);
  return it == by_uid_.end() ? nullptr : it->second;
}

const api::Object* ClusterView::WorkloadFor(const api::Object& job) const {
  const std::string& uid = api::Uid(job);
  if (uid.empty()) return nullptr;
  for (const api::Object& wl : Workloads()) {
    if (api::Namespace(wl) != api::Namespace(job)) continue;
    for (const std::string& owner : OwnerUids(wl)) {
      if (owner == uid) return &wl;
    }
  }
  // Workloads written without ownerReferences still carry the job's uid label.
  for (const api::Object& wl : Workloads()) {
    if (api::Namespace(wl) == api::Namespace(job) && LabelValue(wl, kJobUidLabel) == uid) return &wl;
  }
  return nullptr;
}

const api::Object* ClusterView::ClusterQueueFor(const api::Object& local_queue) const {
  std::string cq = api::NestedString(local_queue, {"spec", "clusterQueue"});
  return cq.empty() ? nullptr : ClusterQueue(cq);
}

std::vector<const api::Object*> ClusterView::PodsOf(const api::Object& owner) const {
  std::vector<const api::Object*> pods;
  const std::string& target = api::Uid(owner);
  if (target.empty()) return pods;
  for (const api::Object& pod : Pods()) {
    // Walk the ownerReference chain breadth-first; `seen` guards against cycles.
    std::vector<std::string> frontier = OwnerUids(pod);
    std::set<std::string> seen;
    bool owned = false;
    while (!frontier.empty() && !owned) {
      std::string uid = frontier.back();
      frontier.pop_back();
      if (!seen.insert(uid).second) continue;
      if (uid == target) {
        owned = true;
        break;
      }
      if (const api::Object* parent = FindByUid(uid)) {
        for (std::string& u : OwnerUids(*parent)) frontier.push_back(std::move(u));
      }
    }
    if (owned) pods.push_back(&pod);
  }
  std::sort(pods.begin(), pods.end(), [](const api::Object* a, const api::Object* b) {
    return std::tie(api::Namespace(*a), api::Name(*a)) < std::tie(api::Namespace(*b), api::Name(*b));
  });
  return pods;
}

std::vector<const api::Object*> ClusterView::EventsFor(const api::Object& obj) const {
  std::vector<const api::Object*> events;
  const std::string& uid = api::Uid(obj);
  const std::string kind = obj.value("kind", "");
  for (const api::Object& ev : Events()) {
    const api::Object* involved = &api::Field(ev, "involvedObject");
    if (involved->is_null()) continue;
    std::string ev_uid = api::NestedString(*involved, {"uid"});
    bool match = !ev_uid.empty() ? ev_uid == uid
                                 : api::NestedString(*involved, {"kind"}) == kind &&
                                       api::NestedString(*involved, {"namespace"}) == api::Namespace(obj) &&
                                       api::NestedString(*involved, {"name"}) == api::Name(obj);
    if (match) events.push_back(&ev);
  }
  std::stable_sort(events.begin(), events.end(), [](const api::Object* a, const api::Object* b) {
    Time ta = EventTime(*a), tb = EventTime(*b);
    if (ta != tb) return ta < tb;
    return api::Name(*a) < api::Name(*b);
  });
  return events;
}

FlavorCapacity ClusterView::NodeCapacity(const api::Object& resource_flavor) const {
  FlavorCapacity cap;
  const api::Object* want = &api::NestedField(resource_flavor, {"spec", "nodeLabels"});
  for (const api::Object& node : Nodes()) {
    bool match = true;
    if (want->is_object()) {
      for (auto it = want->begin(); it != want->end() && match; ++it) {
        match = it->is_string() && LabelValue(node, it.key()) == it->get<std::string>();
      }
    }
    if (!match) continue;
    cap.nodes.push_back(api::Name(node));
    const api::Object* alloc = &api::NestedField(node, {"status", "allocatable"});
    if (!alloc->is_object()) continue;
    for (auto it = alloc->begin(); it != alloc->end(); ++it) {
      std::string text = it->is_string() ? it->get<std::string>() : it->is_number() ? it->dump() : "";
      auto q = Quantity::Parse(text);
      if (q.ok()) cap.allocatable[it.key()] += *q;
    }
  }
  std::sort(cap.nodes.begin(), cap.nodes.end());
  return cap;
}

const api::Object* ClusterView::ResolvePriorityClass(const std::string& name) const {
  if (!name.empty()) return PriorityClass(name);
  return api::DefaultPriorityClass(PriorityClasses());
}

std::optional<std::string> LabelValue(const api::Object& obj, const std::string& key) {
  return MetaMapValue(obj, "labels", key);
}
std::optional<std::string> AnnotationValue(const api::Object& obj, const std::string& key) {
  return MetaMapValue(obj, "annotations", key);
}

Time CreationTime(const api::Object& obj) {
  return ParseTime(api::NestedString(obj, {"metadata", "creationTimestamp"}));
}

}  // namespace berth::cli::diagnostics
