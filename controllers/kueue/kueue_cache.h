// KueueCache: the Kueue controllers' view of the cluster, built from shared
// informers (client/informer.h) only: ResourceFlavors, ClusterQueues,
// Cohorts, LocalQueues, WorkloadPriorityClasses, Workloads, Namespaces and
// PriorityClasses. It turns that view into the admission engine's Snapshot
// (admission/snapshot.h) through the decoder (decoder.h), and keeps Kueue's
// "assumed" workloads: a Workload status the controllers have just written
// (the scheduler's admissions and evictions, pending verdicts, the job
// reconcilers' conditions) overlays the informer's copy until the informer
// has caught up with it, so the next cycle never double-admits (Kueue's
// cache.AssumeWorkload).
//
// Overlay rule: an assumed object is used while the informer's copy of the
// same key has a smaller resourceVersion. resourceVersions are compared as
// integers (berth's store and etcd issue increasing integers); an overlay
// entry is dropped once the informer shows an equal or newer version, or no
// longer has the object.
//
// Workload indexes on the informer (each kept by the informer on every event,
// so a status reconcile reads the few workloads it counts, never every
// workload a queue ever had):
//   "clusterQueue"      status.admission.clusterQueue, finished ones included;
//   "quotaHolder"       the same for quota holders only (QuotaReserved=True,
//                       not Finished): what a snapshot and ClusterQueue usage count;
//   "finished"          the same for Finished workloads;
//   "queueQuotaHolder"  namespace/spec.queueName of quota holders;
//   "queuePending"      namespace/spec.queueName of the others not Finished;
//   "owner"             owner uid (client::OwnerUidIndexFunc), for job integrations.
//
// Decoded objects: the engine's form of a ClusterQueue, Cohort, flavor or
// quota-holding Workload is decoded once per stored object version and kept
// while the object is in the snapshot, so a cycle re-decodes only what
// changed since the previous one.
//
// Thread-safety: informer reads are thread-safe; Assume and overlay reads
// take an internal lock. ResourceNames is NOT synchronised: BuildSnapshot and
// every decode with names() must run under the owning controller's lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "admission/model.h"
#include "admission/snapshot.h"
#include "client/informer.h"

namespace berth::controllers::kueue {

inline constexpr char kClusterQueueIndex[] = "clusterQueue";
inline constexpr char kOwnerIndex[] = "owner";
inline constexpr char kQuotaHolderIndex[] = "quotaHolder";
inline constexpr char kFinishedIndex[] = "finished";
inline constexpr char kQueueQuotaHolderIndex[] = "queueQuotaHolder";
inline constexpr char kQueuePendingIndex[] = "queuePending";

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
  // How many workloads the informer's index holds under `value` (no overlay).
  size_t CountByIndex(const std::string& index, const std::string& value);
  // Overlays a Workload as a write returned it (see "Overlay rule"). Of two
  // writes of the same Workload assumed in either order, the newer (larger
  // resourceVersion) stays: writers return in any order, and an older write
  // assumed last would show the workload as it was before the newer one
  // (a pending verdict hiding the admission that followed it, so a cycle
  // would count its quota as free). Only successful writes are assumed
  // (Kueue assumes before writing and forgets on failure): a failed write
  // leaves nothing to forget.
  void Assume(const api::Object& written);
  // Writes assumed that the informer has not shown yet.
  size_t AssumedCount();

  // Whether the ClusterQueue's spec.namespaceSelector selects namespace `ns`
  // (nil selector: none; {}: all). The namespace's labels come from the
  // informer plus kubernetes.io/metadata.name, which the API server sets.
  bool NamespaceSelected(const api::Object& cluster_queue, const std::string& ns);

  // The engine's snapshot: every flavor, ClusterQueue and Cohort, and every
  // unfinished workload holding quota (QuotaReserved=True), evicting ones
  // included. Caller holds its lock (names()).
  // With `cluster_queues`, only their quota holders are added: the usage of
  // every other ClusterQueue reads zero, so such a snapshot answers only for
  // nodes whose subtree is within the list (a Cohort's or a ClusterQueue's own
  // usage, share and metrics), at O(their holders) instead of O(all holders)
  // (plus a copy of the tree). `tree`: the QueueSnapshot() the caller already
  // read (so both see the same queues); null: the current one.
  admission::Snapshot BuildSnapshot(const std::vector<std::string>* cluster_queues = nullptr,
                                    std::shared_ptr<const admission::Snapshot> tree = nullptr);
  // The same without workloads: the queue tree, activity and quotas only.
  // Built once per change of the tree: a flavor, ClusterQueue or Cohort
  // added, deleted, or changed in what the decoder reads (spec,
  // deletionTimestamp); their status writes reuse it, so reading the tree
  // costs O(1) in the number of queues, not O(queues).
  // The change is seen by an event handler the cache registers at
  // construction, before its owner's: a reconcile queued by the owner's
  // handler for the same event reads the new tree. Like Kueue's cache, which
  // its event handlers update, the tree trails the informer's cache by the
  // notifications not yet delivered: a reconcile queued from another
  // resource's event may read the tree before a change whose own event then
  // queues it again. Caller holds its lock.
  std::shared_ptr<const admission::Snapshot> QueueSnapshot();
  // Decodes a workload, resolving its ClusterQueue from its LocalQueue when it
  // holds no quota, and the namespaceSelector verdict. Caller holds its lock.
  admission::Workload Decode(const api::Object& workload);
  // DecodeWorkload of a workload object, from the decoded-object cache when
  // this object was decoded before. Caller holds its lock.
  std::shared_ptr<const admission::Workload> DecodeCached(const client::ObjectPtr& workload);

  admission::ResourceNames& names() { return names_; }

 private:
  client::ObjectPtr Overlaid(const client::ObjectPtr& cached);
  client::ObjectPtr Overlaid(const std::string& key, const client::ObjectPtr& cached);

  // Decoded objects by key, valid for one stored object: the informer's and
  // the overlay's objects are immutable and replaced on every change, so the
  // pointer identifies the content.
  template <typename T>
  class DecodedCache {
   public:
    template <typename Decode>
    std::shared_ptr<const T> Get(const client::ObjectPtr& obj, Decode&& decode) {
      return Get(client::MetaNamespaceKey(*obj), obj, std::forward<Decode>(decode));
    }
    template <typename Decode>
    std::shared_ptr<const T> Get(const std::string& key, const client::ObjectPtr& obj, Decode&& decode) {
      Entry& e = entries_[key];
      if (!e.decoded || e.source != obj) {
        e.decoded = std::make_shared<const T>(decode(*obj));
        e.source = obj;
      }
      e.used = true;
      return e.decoded;
    }
    // Drops every entry not looked up since the last Sweep.
    void Sweep();

   private:
    struct Entry {
      client::ObjectPtr source;  // kept, so its address is not reused
      std::shared_ptr<const T> decoded;
      bool used = false;
    };
    std::map<std::string, Entry> entries_;
  };

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
  // Under the owning controller's lock, as names_.
  DecodedCache<admission::ResourceFlavor> decoded_flavors_;
  DecodedCache<admission::ClusterQueue> decoded_cluster_queues_;
  DecodedCache<admission::Cohort> decoded_cohorts_;
  DecodedCache<admission::Workload> decoded_workloads_;
  // QueueSnapshot: bumped by the flavor, ClusterQueue and Cohort handlers.
  std::atomic<uint64_t> tree_version_{1};
  uint64_t queue_snapshot_version_ = 0;  // under the owner's lock, as below
  std::shared_ptr<const admission::Snapshot> queue_snapshot_;
};

}  // namespace berth::controllers::kueue
