// ClusterView: a typed, read-only view over the live objects the diagnostics
// (`berth explain`, `berth lint --live`) reason about, fetched once through a
// client::Client (HTTP against any server, or the API server's in-process
// client) so every statement a diagnostic makes comes from one consistent
// read of the cluster.
//
// Kinds held (storage versions; every namespace):
//   kueue.x-k8s.io/v1beta2  Workload, ClusterQueue, LocalQueue, Cohort,
//                           ResourceFlavor, WorkloadPriorityClass
//   v1                      Node, Pod, Event, Namespace
//   scheduling.k8s.io/v1    PriorityClass
//   batch/v1 Job, jobset.x-k8s.io/v1alpha2 JobSet,
//   trainer.kubeflow.org/v1alpha1 TrainJob, kubeflow.org/v1 PyTorchJob
// A kind the server does not serve (kNotFound on List) reads as empty, so the
// view also works against a kube-apiserver without every CRD installed.
//
// Ordering: every list is in the server's order ((namespace, name) for
// berth); helpers that return several objects say how they sort.
//
// Relations (as Kueue and the job controllers record them):
//   job → Workload: the Workload whose metadata.ownerReferences name the
//     job's uid (Kueue's jobframework owns one Workload per job; its name is
//     "<kind>-<job name>-<hash>", so the name alone is not a key).
//   job → Pods: pods whose ownerReference chain (Pod → Job → JobSet →
//     TrainJob) reaches the job's uid.
//   Workload → LocalQueue: spec.queueName in the Workload's namespace;
//   LocalQueue → ClusterQueue: spec.clusterQueue.
//   ResourceFlavor → Nodes: nodes whose labels contain every
//     spec.nodeLabels entry (a flavor without nodeLabels matches every node),
//     as Kueue's flavor nodeLabels are injected as a pod nodeSelector.
//
// Thread-safety: immutable after construction; the pointers returned point
// into the view and live as long as it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/object.h"
#include "client/client.h"
#include "core/clock.h"
#include "core/quantity.h"
#include "core/status.h"

namespace berth::cli::diagnostics {

// The resources the view reads.
namespace resources {
extern const client::GroupVersionResource kWorkloads;
extern const client::GroupVersionResource kClusterQueues;
extern const client::GroupVersionResource kLocalQueues;
extern const client::GroupVersionResource kCohorts;
extern const client::GroupVersionResource kResourceFlavors;
extern const client::GroupVersionResource kWorkloadPriorityClasses;
extern const client::GroupVersionResource kNodes;
extern const client::GroupVersionResource kPods;
extern const client::GroupVersionResource kEvents;
extern const client::GroupVersionResource kPriorityClasses;
extern const client::GroupVersionResource kJobs;
extern const client::GroupVersionResource kJobSets;
extern const client::GroupVersionResource kTrainJobs;
extern const client::GroupVersionResource kPyTorchJobs;
extern const client::GroupVersionResource kNamespaces;
// Every resource above, in that order.
const std::vector<client::GroupVersionResource>& All();
}  // namespace resources

// Kueue's queue-name label and the job's uid label on its Workload (Kueue's
// pkg/controller/constants/constants.go).
inline constexpr char kQueueNameLabel[] = "kueue.x-k8s.io/queue-name";
inline constexpr char kJobUidLabel[] = "kueue.x-k8s.io/job-uid";

// Sum of allocatable over the nodes a ResourceFlavor selects.
struct FlavorCapacity {
  std::vector<std::string> nodes;                  // matching node names, sorted
  std::map<std::string, Quantity> allocatable;     // resource name -> Σ status.allocatable
};

class ClusterView {
 public:
  ClusterView() = default;

  // Lists every resource of resources::All() once. Errors: the first List
  // failure other than kNotFound (e.g. kUnavailable when the server is down,
  // kForbidden), unchanged.
  static StatusOr<ClusterView> Fetch(client::Client& client);
  // A view over objects already in hand (manifests, tests), keyed by
  // GroupResource; kinds absent from the map read as empty and are not
  // Covers()ed (a key with an empty list is).
  static ClusterView FromObjects(std::map<api::GroupResource, std::vector<api::Object>> objects);

  // Whether the view's input covered this resource, so that an object of it
  // missing from the view does not exist: Fetch covers every resource the
  // server serves (even when it has none of them); FromObjects covers the
  // resources that are keys of its map (a manifest set covers only the kinds
  // it contains). Diagnostics judge a dangling reference only when the
  // referenced resource is covered.
  bool Covers(const client::GroupVersionResource& gvr) const;
  // Every object of a resource, in the server's order (empty when none).
  const std::vector<api::Object>& Objects(const client::GroupVersionResource& gvr) const;
  const std::vector<api::Object>& Workloads() const { return Objects(resources::kWorkloads); }
  const std::vector<api::Object>& ClusterQueues() const { return Objects(resources::kClusterQueues); }
  const std::vector<api::Object>& LocalQueues() const { return Objects(resources::kLocalQueues); }
  const std::vector<api::Object>& Cohorts() const { return Objects(resources::kCohorts); }
  const std::vector<api::Object>& ResourceFlavors() const { return Objects(resources::kResourceFlavors); }
  const std::vector<api::Object>& WorkloadPriorityClasses() const {
    return Objects(resources::kWorkloadPriorityClasses);
  }
  const std::vector<api::Object>& Nodes() const { return Objects(resources::kNodes); }
  const std::vector<api::Object>& Pods() const { return Objects(resources::kPods); }
  const std::vector<api::Object>& Events() const { return Objects(resources::kEvents); }
  const std::vector<api::Object>& PriorityClasses() const { return Objects(resources::kPriorityClasses); }
  const std::vector<api::Object>& Namespaces() const { return Objects(resources::kNamespaces); }

  // One object by namespace ("" for cluster-scoped) and name; nullptr when absent.
  const api::Object* Find(const client::GroupVersionResource& gvr, const std::string& ns,
                          const std::string& name) const;
  // Any held object by metadata.uid; nullptr when absent.
  const api::Object* FindByUid(const std::string& uid) const;

  const api::Object* LocalQueue(const std::string& ns, const std::string& name) const {
    return Find(resources::kLocalQueues, ns, name);
  }
  const api::Object* ClusterQueue(const std::string& name) const { return Find(resources::kClusterQueues, "", name); }
  const api::Object* ResourceFlavor(const std::string& name) const {
    return Find(resources::kResourceFlavors, "", name);
  }
  const api::Object* PriorityClass(const std::string& name) const {
    return Find(resources::kPriorityClasses, "", name);
  }
  const api::Object* WorkloadPriorityClass(const std::string& name) const {
    return Find(resources::kWorkloadPriorityClasses, "", name);
  }

  // The Workload Kueue created for `job` (see the file comment); nullptr when none.
  const api::Object* WorkloadFor(const api::Object& job) const;
  // The ClusterQueue a LocalQueue points to (spec.clusterQueue); nullptr when
  // the field is empty or the ClusterQueue does not exist.
  const api::Object* ClusterQueueFor(const api::Object& local_queue) const;
  // Pods whose ownerReference chain reaches `owner` (a job, JobSet, TrainJob,
  // PyTorchJob), sorted by (namespace, name).
  std::vector<const api::Object*> PodsOf(const api::Object& owner) const;
  // Events whose involvedObject is `obj` (by uid, or by kind/namespace/name
  // when the event carries no uid), ordered by time (lastTimestamp,
  // eventTime, firstTimestamp, then creationTimestamp), then name.
  std::vector<const api::Object*> EventsFor(const api::Object& obj) const;
  // The nodes a ResourceFlavor selects and the sum of their allocatable.
  FlavorCapacity NodeCapacity(const api::Object& resource_flavor) const;
  // The PriorityClass a pod template with spec.priorityClassName `name` gets
  // under kube-apiserver's Priority admission: the named class, or with an
  // empty name the globalDefault class (api::DefaultPriorityClass, the lookup the
  // admission plugin and Kueue use); nullptr when none applies.
  const api::Object* ResolvePriorityClass(const std::string& name) const;

 private:
  std::map<api::GroupResource, std::vector<api::Object>> objects_;
  std::map<std::string, const api::Object*> by_uid_;
  void Index();
};

// Readers shared by the diagnostics beside api/unstructured.h and api/conditions.h.
// metadata.labels[key] / metadata.annotations[key]; nullopt when absent.
std::optional<std::string> LabelValue(const api::Object& obj, const std::string& key);
std::optional<std::string> AnnotationValue(const api::Object& obj, const std::string& key);
// metadata.creationTimestamp; epoch when absent or malformed.
Time CreationTime(const api::Object& obj);

}  // namespace berth::cli::diagnostics
