// KueueCache: the Kueue controllers' view of the cluster, built from shared
// informers (client/informer.h) only: ResourceFlavors, ClusterQueues,
// Cohorts, LocalQueues, WorkloadPriorityClasses, Workloads, Namespaces and
// PriorityClasses. It turns that view into the admission engine's Snapshot
// (admission/snapshot.h) through the decoder (decoder.h), and keeps Kueue's
// "assumed" workloads: a Workload status the scheduler has just written
// (admission, eviction) overlays the informer's copy until the informer has
// caught up with it, so the next cycle never double-admits (Kueue's
// cache.AssumeWorkload / ForgetWorkload).
//
// Overlay rule: an assumed object is used while the informer's copy of the
// same key has a smaller resourceVersion. resourceVersions are compared as
// integers (berth's store and etcd issue increasing integers); an overlay
// entry is dropped once the informer shows an equal or newer version, or no
// longer has the object.
//
// Workload indexes on the informer: "queue" (namespace/spec.queueName),
// "clusterQueue" (status.admission.clusterQueue, finished ones included),
// "quotaHolder" (the same for quota holders only) and the owner-uid index
// (client::OwnerUidIndexFunc) used by job integrations.
//
// Thread-safety: informer reads are thread-safe; Assume/Forget/overlay reads
// take an internal lock. ResourceNames is NOT synchronised: BuildSnapshot and
// every decode with names() must run under the owning controller's lock.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "admission/model.h"
#include "admission/snapshot.h"
#include "client/informer.h"

namespace berth::controllers::kueue {

inline constexpr char kQueueIndex[] = "queue";
inline constexpr char kClusterQueueIndex[] = "clusterQueue";
inline constexpr char kOwnerIndex[] = "owner";
// status.admission.clusterQueue of a workload holding quota now
// (QuotaReserved=True, not Finished): what a snapshot counts.
inline constexpr char kQuotaHolderIndex[] = "quotaHolder";

class KueueCache {
 public:
  explicit KueueCache(client::SharedInformerFactory& factory);

  client::Informer& flavors() { return *flavors_; }
  client::Informer& cluster_queues() { return *cqs_; }
  client::Informer& cohorts() { return *cohorts_; }
  client::Informer& local_queues() { return *lqs_; }
  client::Informer& workload_priority_classes() { return *wpcs_; }
  client::Informer& workloads() { return *workloads_; }
  client::Informer& namespaces() { return *namespaces_; }
  client::Informer& priority_classes() { return *pcs_; }
  std::vector<client::Informer*> informers();

  // Workloads with the overlay applied.
  client::ObjectPtr GetWorkload(const std::string& key);
  std::vector<client::ObjectPtr> ListWorkloads();
  std::vector<client::ObjectPtr> WorkloadsByIndex(const std::string& index, const std::string& value);
  void Assume(const api::Object& written);
  void Forget(const std::string& key);

  // Whether the ClusterQueue's spec.namespaceSelector selects namespace `ns`
  // (nil selector: none; {}: all). The namespace's labels come from the
  // informer plus kubernetes.io/metadata.name, which the API server sets.
  bool NamespaceSelected(const api::Object& cluster_queue, const std::string& ns);

  // The engine's snapshot: every flavor, ClusterQueue and Cohort, and every
  // unfinished workload holding quota (QuotaReserved=True), evicting ones
  // included. Caller holds its lock (names()).
  admission::Snapshot BuildSnapshot();
  // Decodes a workload, resolving its ClusterQueue from its LocalQueue when it
  // holds no quota, and the namespaceSelector verdict. Caller holds its lock.
  admission::Workload Decode(const api::Object& workload);

  admission::ResourceNames& names() { return names_; }

 private:
  client::ObjectPtr Overlaid(const client::ObjectPtr& cached);

  client::Informer* flavors_;
  client::Informer* cqs_;
  client::Informer* cohorts_;
  client::Informer* lqs_;
  client::Informer* wpcs_;
  client::Informer* workloads_;
  client::Informer* namespaces_;
  client::Informer* pcs_;

  admission::ResourceNames names_;
  std::mutex mu_;
  std::map<std::string, client::ObjectPtr> assumed_;  // workload key -> written object
};

}  // namespace berth::controllers::kueue
