#include "controllers/kueue/kueue_cache.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <unordered_set>

#include "api/conditions.h"
#include "api/resource_version.h"
#include "api/selectors.h"
#include "api/unstructured.h"
#include "controllers/kueue/decoder.h"

namespace berth::controllers::kueue {

using api::IsConditionTrue;

namespace {

// Where a workload is counted: its LocalQueue key (namespace/spec.queueName),
// the ClusterQueue of its admission, and whether it holds quota
// (QuotaReserved=True with an admission, not Finished) or is Finished.
struct WorkloadQueues {
  std::string local_queue, cluster_queue;
  bool holds_quota = false, finished = false;
};

WorkloadQueues QueuesOf(const api::Object& wl) {
  WorkloadQueues q;
  auto spec = wl.find("spec");
  if (spec != wl.end() && spec->is_object()) {
    std::string name = spec->value("queueName", "");
    if (!name.empty()) q.local_queue = api::Namespace(wl) + "/" + name;
  }
  auto st = wl.find("status");
  if (st != wl.end() && st->is_object()) {
    auto adm = st->find("admission");
    if (adm != st->end() && adm->is_object()) q.cluster_queue = adm->value("clusterQueue", "");
  }
  q.finished = IsConditionTrue(wl, "Finished");
  q.holds_quota = !q.finished && !q.cluster_queue.empty() && IsConditionTrue(wl, "QuotaReserved");
  return q;
}

}  // namespace

template <typename T>
void KueueCache::DecodedCache<T>::Sweep() {
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (!it->second.used) {
      it = entries_.erase(it);
    } else {
      it->second.used = false;
      ++it;
    }
  }
}

KueueCache::KueueCache(client::SharedInformerFactory& factory) {
  flavors_ = &factory.ForResource(kResourceFlavors);
  cqs_ = &factory.ForResource(kClusterQueues);
  cohorts_ = &factory.ForResource(kCohorts);
  lqs_ = &factory.ForResource(kLocalQueues);
  wpcs_ = &factory.ForResource(kWorkloadPriorityClasses);
  workloads_ = &factory.ForResource(kWorkloads);
  namespaces_ = &factory.ForResource(kNamespaces);
  pcs_ = &factory.ForResource(kPriorityClasses);
  // The informers are shared: another controller may have added the same index.
  (void)workloads_->AddIndexer(kClusterQueueIndex, [](const api::Object& wl) -> std::vector<std::string> {
    const WorkloadQueues q = QueuesOf(wl);
    if (q.cluster_queue.empty()) return {};
    return {q.cluster_queue};
  });
  (void)workloads_->AddIndexer(kQuotaHolderIndex, [](const api::Object& wl) -> std::vector<std::string> {
    const WorkloadQueues q = QueuesOf(wl);
    if (!q.holds_quota) return {};
    return {q.cluster_queue};
  });
  (void)workloads_->AddIndexer(kFinishedIndex, [](const api::Object& wl) -> std::vector<std::string> {
    const WorkloadQueues q = QueuesOf(wl);
    if (!q.finished || q.cluster_queue.empty()) return {};
    return {q.cluster_queue};
  });
  (void)workloads_->AddIndexer(kQueueQuotaHolderIndex, [](const api::Object& wl) -> std::vector<std::string> {
    const WorkloadQueues q = QueuesOf(wl);
    if (!q.holds_quota || q.local_queue.empty()) return {};
    return {q.local_queue};
  });
  (void)workloads_->AddIndexer(kQueuePendingIndex, [](const api::Object& wl) -> std::vector<std::string> {
    const WorkloadQueues q = QueuesOf(wl);
    if (q.holds_quota || q.finished || q.local_queue.empty()) return {};
    return {q.local_queue};
  });
  (void)workloads_->AddIndexer(kOwnerIndex, client::OwnerUidIndexFunc());
  // What the decoders of the tree read: spec and deletionTimestamp (a
  // resync's OnUpdate(obj, obj) and status writes change neither).
  client::ResourceEventHandler tree_changes;
  tree_changes.on_add = [this](const client::ObjectPtr&, bool) { ++tree_version_; };
  tree_changes.on_update = [this](const client::ObjectPtr& old_obj, const client::ObjectPtr& new_obj) {
    if (old_obj == new_obj) return;
    if (api::Field(*old_obj, "spec") != api::Field(*new_obj, "spec") ||
        api::NestedField(*old_obj, {"metadata", "deletionTimestamp"}) !=
            api::NestedField(*new_obj, {"metadata", "deletionTimestamp"})) {
      ++tree_version_;
    }
  };
  tree_changes.on_delete = [this](const client::ObjectPtr&, bool) { ++tree_version_; };
  for (client::Informer* i : {flavors_, cqs_, cohorts_}) i->AddEventHandler(tree_changes);
}

std::vector<client::Informer*> KueueCache::informers() {
  return {flavors_, cqs_, cohorts_, lqs_, wpcs_, workloads_, namespaces_, pcs_};
}

client::ObjectPtr KueueCache::Overlaid(const client::ObjectPtr& cached) {
  if (!cached) return cached;
  return Overlaid(client::MetaNamespaceKey(*cached), cached);
}

client::ObjectPtr KueueCache::Overlaid(const std::string& key, const client::ObjectPtr& cached) {
  std::lock_guard<std::mutex> lock(mu_);
  if (assumed_.empty()) return cached;
  auto it = assumed_.find(key);
  if (it == assumed_.end()) return cached;
  if (api::ResourceVersionNumber(*cached) >= api::ResourceVersionNumber(*it->second) ||
      api::Uid(*cached) != api::Uid(*it->second)) {
    assumed_.erase(it);
    return cached;
  }
  return it->second;
}

client::ObjectPtr KueueCache::GetWorkload(const std::string& key) {
  client::ObjectPtr cached = workloads_->GetIndexer().Get(key);
  if (!cached) {
    std::lock_guard<std::mutex> lock(mu_);
    assumed_.erase(key);
    return nullptr;
  }
  return Overlaid(key, cached);
}

std::vector<client::ObjectPtr> KueueCache::ListWorkloads() {
  std::vector<client::ObjectPtr> out = workloads_->GetIndexer().List();
  for (auto& w : out) w = Overlaid(w);
  return out;
}

std::vector<client::ObjectPtr> KueueCache::WorkloadsByIndex(const std::string& index, const std::string& value) {
  auto res = workloads_->GetIndexer().ByIndex(index, value);
  if (!res.ok()) return {};
  std::vector<client::ObjectPtr> out = std::move(res).value();
  for (auto& w : out) w = Overlaid(w);
  return out;
}

size_t KueueCache::CountByIndex(const std::string& index, const std::string& value) {
  auto res = workloads_->GetIndexer().IndexCount(index, value);
  return res.ok() ? res.value() : 0;
}

std::shared_ptr<const admission::Workload> KueueCache::DecodeCached(const client::ObjectPtr& workload) {
  return decoded_workloads_.Get(workload, [this](const api::Object& o) { return DecodeWorkload(o, names_); });
}

size_t KueueCache::AssumedCount() {
  std::lock_guard<std::mutex> lock(mu_);
  return assumed_.size();
}

void KueueCache::Assume(const api::Object& written) {
  auto obj = std::make_shared<const api::Object>(written);
  std::lock_guard<std::mutex> lock(mu_);
  client::ObjectPtr& slot = assumed_[client::MetaNamespaceKey(written)];
  // Writers of one Workload (the scheduler, the pending verdicts, the job
  // reconcilers) return in any order: a write's result must not hide a newer
  // one that another writer assumed first.
  if (!slot || api::ResourceVersionNumber(*obj) > api::ResourceVersionNumber(*slot)) slot = std::move(obj);
}

bool KueueCache::NamespaceSelected(const api::Object& cluster_queue, const std::string& ns) {
  auto spec = cluster_queue.find("spec");
  if (spec == cluster_queue.end() || !spec->is_object()) return false;
  auto sel_json = spec->find("namespaceSelector");
  if (sel_json == spec->end() || sel_json->is_null()) return false;
  auto sel = api::LabelSelector::FromJson(*sel_json);
  if (!sel.ok()) return false;
  api::Object labels = api::Object::object();
  if (client::ObjectPtr nso = namespaces_->GetIndexer().Get(ns)) {
    auto m = nso->find("metadata");
    if (m != nso->end() && m->contains("labels") && (*m)["labels"].is_object()) labels = (*m)["labels"];
  }
  labels["kubernetes.io/metadata.name"] = ns;
  return sel.value().Matches(labels);
}

std::shared_ptr<const admission::Snapshot> KueueCache::QueueSnapshot() {
  // Read before the informers: a change that lands during the build bumps
  // the version again, and the next call rebuilds.
  const uint64_t version = tree_version_.load();
  if (queue_snapshot_ && queue_snapshot_version_ == version) return queue_snapshot_;
  std::vector<admission::ResourceFlavor> flavors;
  for (const auto& rf : flavors_->GetIndexer().List()) {
    flavors.push_back(*decoded_flavors_.Get(rf, [](const api::Object& o) { return DecodeResourceFlavor(o); }));
  }
  const std::vector<client::ObjectPtr> cq_objects = cqs_->GetIndexer().List();
  std::vector<admission::ClusterQueue> cqs;
  for (const auto& cq : cq_objects) {
    cqs.push_back(*decoded_cluster_queues_.Get(cq, [this](const api::Object& o) { return DecodeClusterQueue(o, names_); }));
  }
  std::vector<admission::Cohort> cohorts;
  for (const auto& c : cohorts_->GetIndexer().List()) {
    cohorts.push_back(*decoded_cohorts_.Get(c, [this](const api::Object& o) { return DecodeCohort(o, names_); }));
  }
  decoded_flavors_.Sweep();
  decoded_cluster_queues_.Sweep();
  decoded_cohorts_.Sweep();
  queue_snapshot_ =
      std::make_shared<const admission::Snapshot>(names_, std::move(flavors), std::move(cqs), std::move(cohorts));
  queue_snapshot_version_ = version;
  return queue_snapshot_;
}

admission::Snapshot KueueCache::BuildSnapshot(const std::vector<std::string>* cluster_queues,
                                              std::shared_ptr<const admission::Snapshot> tree) {
  admission::Snapshot snap = tree ? *tree : *QueueSnapshot();
  // Only quota holders count: the quotaHolder index of every ClusterQueue
  // (or of the listed ones) plus the assumed writes the informer has not
  // shown yet, in key order, so a snapshot costs O(workloads holding quota),
  // not O(all workloads).
  std::set<std::string> keys;
  auto add_held = [&](const std::string& cq) {
    auto held = workloads_->GetIndexer().IndexKeys(kQuotaHolderIndex, cq);
    if (held.ok()) keys.insert(held.value().begin(), held.value().end());
  };
  std::unordered_set<std::string_view> listed;
  if (cluster_queues != nullptr) {
    for (const std::string& cq : *cluster_queues) {
      add_held(cq);
      listed.insert(cq);
    }
  } else {
    for (const auto& cq : cqs_->GetIndexer().List()) add_held(api::Name(*cq));
  }
  std::set<std::string> assumed_keys;  // checked against the list once decoded
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, wl] : assumed_) {
      if (!keys.count(key)) assumed_keys.insert(key);
    }
  }
  keys.insert(assumed_keys.begin(), assumed_keys.end());
  for (const std::string& key : keys) {
    client::ObjectPtr wl = GetWorkload(key);
    if (!wl) continue;
    // The decode says whether it holds quota (QuotaReserved=True with an
    // admission) and whether it finished.
    std::shared_ptr<const admission::Workload> w =
        decoded_workloads_.Get(key, wl, [this](const api::Object& o) { return DecodeWorkload(o, names_); });
    if (w->finished || w->state == admission::AdmissionState::kPending) continue;
    if (cluster_queues != nullptr && assumed_keys.count(key) && w->admission &&
        !listed.count(w->admission->cluster_queue)) {
      continue;  // an assumed write to another ClusterQueue
    }
    // A workload admitted to a since-deleted ClusterQueue holds nothing here.
    (void)snap.AddWorkload(*w);
  }
  // A partial build looked up only some: sweeping would drop the others'.
  if (cluster_queues == nullptr) decoded_workloads_.Sweep();
  return snap;
}

admission::Workload KueueCache::Decode(const api::Object& workload) {
  admission::Workload w = DecodeWorkload(workload, names_);
  if (w.state != admission::AdmissionState::kPending) return w;
  auto wspec = workload.find("spec");
  std::string queue = wspec != workload.end() && wspec->is_object() ? wspec->value("queueName", "") : "";
  client::ObjectPtr lq = lqs_->GetIndexer().Get(api::Namespace(workload), queue);
  if (!lq) return w;
  auto spec = lq->find("spec");
  if (spec != lq->end() && spec->is_object()) w.cluster_queue = spec->value("clusterQueue", "");
  if (client::ObjectPtr cq = cqs_->GetIndexer().Get(w.cluster_queue)) {
    w.namespace_matches = NamespaceSelected(*cq, w.namespace_name);
  }
  return w;
}

}  // namespace berth::controllers::kueue
