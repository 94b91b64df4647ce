// Deleter: deleting one object the way kube-apiserver's generic registry
// (k8s.io/apiserver/pkg/registry/generic/registry.Store.Delete) does it, on top
// of the store's deletion primitives (store/store.h "Deletion"). The REST DELETE
// handler and the garbage collector (garbage_collector.h) both delete through
// it, so a cascaded deletion behaves exactly like one a client asked for.
//
// Steps:
//   0. NamespaceLifecycle's rule for deletes: a system namespace (kImmortalNamespaces)
//      is never deleted, dry run included: 403 `namespaces "kube-system" is forbidden:
//      this namespace may not be deleted`.
//   1. Preconditions (uid, resourceVersion): kConflict with upstream's text.
//   2. Grace period: Pods use GracePeriodFor (object_ops.h); every other kind 0.
//   3. Propagation policy (DeleteOptions.propagationPolicy; default Background,
//      except batch/v1 Job, whose default is Orphan as upstream kept it for
//      compatibility):
//        Orphan      adds the finalizer "orphan": the garbage collector removes
//                    the object's ownerReferences from its dependents, then the
//                    finalizer, and the object goes away
//        Foreground  adds "foregroundDeletion": the object stays (Terminating)
//                    until the garbage collector has deleted every dependent
//        Background  no finalizer: the object goes now (or after its grace
//                    period); the collector then deletes the dependents
//      The policy is the request's when it names one, else the one an orphan or
//      foregroundDeletion finalizer already on the object asks for (orphan first),
//      else the default; the object's orphan/foregroundDeletion finalizers are
//      replaced by the policy's, so a stale one (set by a client, or left by a
//      deletion cut off between its two writes, step 4) never overrides the
//      request (upstream's deletionFinalizersForGarbageCollection,
//      staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go).
//      For a resource the garbage collector ignores (GarbageCollectorIgnores: Events)
//      Orphan and Foreground act as Background: no finalizer is added, since the
//      collector that would remove it never looks at the object, which has no
//      dependents it tracks. (berth's departure: upstream adds the finalizer and
//      the Event stays until its TTL.)
//      A Namespace also gets the finalizer "kubernetes" and status.phase
//      Terminating; the collector deletes its content, then the finalizer.
//      (Upstream keeps a namespace through spec.finalizers and the /finalize
//      subresource; berth uses a metadata finalizer of the same name, which the
//      store understands. Upstream writes finalizers and deletionTimestamp in
//      one update; here the finalizers are written first, then the store marks
//      the object deleted.)
//   4. store::Store::Delete with the grace period: removed at once when no
//      finalizer remains and the grace period is 0, marked otherwise.
//
// Errors: kNotFound, kForbidden (a system namespace), kConflict (preconditions), the
// store's errors.
// Thread-safety: Delete may be called from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "api/registry.h"
#include "store/store.h"

namespace berth::apiserver {

// The resources the garbage collector neither watches nor collects, as upstream's
// ignoredResources (pkg/controller/garbagecollector/garbagecollector.go): core/v1 Events
// (events.k8s.io/v1 Events are stored as them). `resource` is the stored resource.
bool GarbageCollectorIgnores(const api::GroupResource& resource);

// metav1.DeletionPropagation values.
inline constexpr std::string_view kPropagationOrphan = "Orphan";
inline constexpr std::string_view kPropagationBackground = "Background";
inline constexpr std::string_view kPropagationForeground = "Foreground";

// The finalizers the deletion machinery uses (metav1.FinalizerOrphanDependents,
// metav1.FinalizerDeleteDependents, and the namespace finalizer).
inline constexpr std::string_view kFinalizerOrphan = "orphan";
inline constexpr std::string_view kFinalizerForeground = "foregroundDeletion";
inline constexpr std::string_view kFinalizerNamespace = "kubernetes";

// The namespaces that may not be deleted. Upstream's NamespaceLifecycle admission plugin
// protects default, kube-system and kube-public
// (staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go);
// berth also protects kube-node-lease, which holds every node's Lease: without it every
// node would be found NotReady and its pods failed (upstream's system namespaces
// controller re-creates kube-node-lease within a minute instead).
inline constexpr std::string_view kImmortalNamespaces[] = {"default", "kube-system", "kube-public", "kube-node-lease"};

struct DeleteRequest {
  std::optional<int64_t> grace_period_seconds;
  std::string propagation_policy;  // "" = the kind's default
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  bool dry_run = false;
};

class Deleter {
 public:
  explicit Deleter(store::Store& store) : store_(store) {}

  // Deletes (or marks) the object `key` of kind `def`. With dry_run, nothing is
  // written and the object is returned as it is.
  StatusOr<store::DeleteResult> Delete(const api::ResourceDefinition& def, const store::ObjectKey& key,
                                       const DeleteRequest& request) const;

  // The policy used when a request names none.
  static std::string_view DefaultPropagationPolicy(const api::ResourceDefinition& def);

 private:
  store::Store& store_;
};

// True when metadata.finalizers of `obj` contains `finalizer`.
bool HasFinalizer(const api::Object& obj, std::string_view finalizer);
// The propagation policy an orphan or foregroundDeletion finalizer already on `obj` asks
// for (orphan first), else `otherwise`: what a delete naming no policy uses, and what the
// garbage collector's own deletes honour (upstream's shouldOrphanDependents and
// attemptToDeleteItem).
std::string_view FinalizerPolicy(const api::Object& obj, std::string_view otherwise);

}  // namespace berth::apiserver
