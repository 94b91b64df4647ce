// NamespaceSecurityController: OpenShift's namespace security allocation
// controller (openshift/cluster-policy-controller
// pkg/security/controller/namespace_scc_allocation_controller.go) in berth:
// every Namespace gets its own block of uids and gids, written as the
// annotations openshift.io/sa.scc.uid-range and
// openshift.io/sa.scc.supplemental-groups ("<base>/<size>", the same block in
// both; api/namespace_security.h). The node runs the namespace's pods with ids
// of that block only (agent/pod_sandbox.h, SCC strategy MustRunAsRange).
//
// Allocation: blocks of options.block_size ids, handed out in increasing order
// from options.first; the next free base is persisted in the store, as the
// annotation kNextUidAnnotation on the Namespace kAllocatorNamespace
// (kube-system, which cannot be deleted), before the block is written to its
// namespace, so
//   - it survives a crash and a restart (it is re-read from the store; a crash
//     between the two writes loses one block, never hands it out twice);
//   - a block is never handed out again in the life of the store, also after
//     its namespace is deleted (a recreated namespace gets a new block: a pod of
//     the old one may still run, or own files, with the old ids); OpenShift's
//     RangeAllocation frees blocks, berth does not;
//   - every node reads the same block (the Namespace), so a team has the same
//     ids on every host.
// Exhaustion: kUnavailable `no free block of <size> ids left in [first, end)
// for namespace "<ns>"` (the namespace stays unannotated, its pods wait;
// retried by the loop).
// Upgrade (legacy_uids, the server's former <data dir>/pod-users.json, one uid
// per namespace): on the first allocation of a store without the
// kNextUidAnnotation record, each existing namespace listed there gets its old
// uid as the block "<uid>/1" (its files stay its own), and new blocks start
// above every old uid. Once the record exists the table is not read again.
// Writes: a merge patch of the Namespace with its metadata.uid as precondition
// (a namespace recreated meanwhile is not given the old one's block), and an
// update of kube-system with its resourceVersion (optimistic concurrency).
// Terminating and missing namespaces are skipped, as upstream.
// A namespace already annotated keeps its block, even outside the current range
// (only the control plane can write the annotations: api/namespace_security.h).
//
// Thread-safety: Reconcile may run concurrently for different namespaces (an
// internal mutex serializes allocations).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "api/namespace_security.h"
#include "client/client.h"
#include "client/informer.h"
#include "core/status.h"

namespace berth::controllers::namespacesecurity {

inline const client::GroupVersionResource kNamespaces{"", "v1", "namespaces"};

// OpenShift's defaults (cluster-policy-controller's SecurityAllocator config):
// uids 1000000000-1999999999 in blocks of 10000, i.e. 100000 namespaces. They lie
// far above the host's users and the usual /etc/subuid ranges (100000-165535
// and the following 65536-id ranges), and below the API's largest id
// (2147483647). `berth server --pod-uid-range FIRST:COUNT` changes the range.
inline constexpr int64_t kDefaultFirstUid = 1000000000;
inline constexpr int64_t kDefaultUidCount = 1000000000;
inline constexpr int64_t kDefaultBlockSize = 10000;

// Where the next free base is recorded (a decimal string).
inline constexpr char kAllocatorNamespace[] = "kube-system";
inline constexpr char kNextUidAnnotation[] = "berth.dev/sa.scc.next-uid";

struct NamespaceSecurityOptions {
  int64_t first = kDefaultFirstUid;  // ids [first, first + count)
  int64_t count = kDefaultUidCount;
  int64_t block_size = kDefaultBlockSize;
  std::map<std::string, int64_t> legacy_uids;  // namespace → its uid before blocks (pod-users.json)
};

class NamespaceSecurityController {
 public:
  NamespaceSecurityController(client::Client& client, client::Informer& namespaces,
                              NamespaceSecurityOptions options = {})
      : client_(client), namespaces_(namespaces), options_(std::move(options)) {}

  // Gives namespace `ns` its block when it has none (see the file comment).
  Status Reconcile(const std::string& ns);

 private:
  // Reads (or, on a store without it, creates after seeding the legacy uids)
  // the record; returns the next free base. Called with mu_ held.
  StatusOr<int64_t> LoadNext();
  Status Annotate(const std::string& name, const std::string& uid, const api::IdBlock& block);

  client::Client& client_;
  client::Informer& namespaces_;
  const NamespaceSecurityOptions options_;
  std::mutex mu_;
};

// The table of the former per-server allocation, <data dir>/pod-users.json
// ({"version":1,"namespaces":{"<ns>":<uid>}}): empty when the file does not
// exist; kInvalid when it is not that JSON (the server then does not start:
// handing those namespaces new ids would take their files from them).
StatusOr<std::map<std::string, int64_t>> ReadLegacyPodUsers(const std::string& path);
inline constexpr char kLegacyPodUsersFile[] = "pod-users.json";

}  // namespace berth::controllers::namespacesecurity
