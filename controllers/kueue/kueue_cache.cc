#include "controllers/kueue/kueue_cache.h"

#include <set>

#include "api/selectors.h"
#include "controllers/common/conditions.h"
#include "controllers/kueue/decoder.h"

namespace berth::controllers::kueue {

namespace {

int64_t RvNumber(const api::Object& obj) {
  const std::string& rv = api::ResourceVersion(obj);
  try {
    return rv.empty() ? 0 : std::stoll(rv);
  } catch (...) {
    return 0;
  }
}

}  // namespace

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
  (void)workloads_->AddIndexer(kQueueIndex, [](const api::Object& wl) -> std::vector<std::string> {
    auto spec = wl.find("spec");
    if (spec == wl.end() || !spec->is_object()) return {};
    std::string q = spec->value("queueName", "");
    if (q.empty()) return {};
    return {api::Namespace(wl) + "/" + q};
  });
  (void)workloads_->AddIndexer(kClusterQueueIndex, [](const api::Object& wl) -> std::vector<std::string> {
    auto st = wl.find("status");
    if (st == wl.end() || !st->is_object()) return {};
    auto adm = st->find("admission");
    if (adm == st->end() || !adm->is_object()) return {};
    std::string cq = adm->value("clusterQueue", "");
    if (cq.empty()) return {};
    return {cq};
  });
  (void)workloads_->AddIndexer(kQuotaHolderIndex, [](const api::Object& wl) -> std::vector<std::string> {
    if (!IsConditionTrue(wl, "QuotaReserved") || IsConditionTrue(wl, "Finished")) return {};
    auto st = wl.find("status");
    auto adm = st->find("admission");
    if (adm == st->end() || !adm->is_object()) return {};
    std::string cq = adm->value("clusterQueue", "");
    if (cq.empty()) return {};
    return {cq};
  });
  (void)workloads_->AddIndexer(kOwnerIndex, client::OwnerUidIndexFunc());
}

std::vector<client::Informer*> KueueCache::informers() {
  return {flavors_, cqs_, cohorts_, lqs_, wpcs_, workloads_, namespaces_, pcs_};
}

client::ObjectPtr KueueCache::Overlaid(const client::ObjectPtr& cached) {
  if (!cached) return cached;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = assumed_.find(client::MetaNamespaceKey(*cached));
  if (it == assumed_.end()) return cached;
  if (RvNumber(*cached) >= RvNumber(*it->second) || api::Uid(*cached) != api::Uid(*it->second)) {
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
  return Overlaid(cached);
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

void KueueCache::Assume(const api::Object& written) {
  std::lock_guard<std::mutex> lock(mu_);
  assumed_[client::MetaNamespaceKey(written)] = std::make_shared<const api::Object>(written);
}

void KueueCache::Forget(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  assumed_.erase(key);
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

admission::Snapshot KueueCache::BuildSnapshot() {
  std::vector<admission::ResourceFlavor> flavors;
  for (const auto& rf : flavors_->GetIndexer().List()) flavors.push_back(DecodeResourceFlavor(*rf));
  std::vector<admission::ClusterQueue> cqs;
  for (const auto& cq : cqs_->GetIndexer().List()) cqs.push_back(DecodeClusterQueue(*cq, names_));
  std::vector<admission::Cohort> cohorts;
  for (const auto& c : cohorts_->GetIndexer().List()) cohorts.push_back(DecodeCohort(*c, names_));
  admission::Snapshot snap(names_, std::move(flavors), std::move(cqs), std::move(cohorts));
  // Only quota holders count: the quotaHolder index of every ClusterQueue
  // plus the assumed writes the informer has not shown yet, in key order, so
  // a snapshot costs O(workloads holding quota), not O(all workloads).
  std::set<std::string> keys;
  for (const auto& cq : cqs_->GetIndexer().List()) {
    auto held = workloads_->GetIndexer().ByIndex(kQuotaHolderIndex, api::Name(*cq));
    if (!held.ok()) continue;
    for (const auto& wl : held.value()) keys.insert(client::MetaNamespaceKey(*wl));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, wl] : assumed_) keys.insert(key);
  }
  for (const std::string& key : keys) {
    client::ObjectPtr wl = GetWorkload(key);
    if (!wl || !IsConditionTrue(*wl, "QuotaReserved") || IsConditionTrue(*wl, "Finished")) continue;
    admission::Workload w = DecodeWorkload(*wl, names_);
    if (w.finished || w.state == admission::AdmissionState::kPending) continue;
    // A workload admitted to a since-deleted ClusterQueue holds nothing here.
    (void)snap.AddWorkload(w);
  }
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
