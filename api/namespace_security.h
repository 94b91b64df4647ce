// The uid/gid block of a Namespace, as OpenShift's namespace security
// allocation controller writes it (openshift/cluster-policy-controller
// pkg/security/controller/namespace_scc_allocation_controller.go) and its SCC
// strategy MustRunAsRange reads it (openshift/apiserver-library-go
// pkg/securitycontextconstraints/user/mustrunasrange.go).
//
// Shape: annotations on the Namespace, "<base>/<size>" in decimal (OpenShift's
// uid.Block String form, e.g. "1000010000/10000"): the ids [base, base+size).
//   openshift.io/sa.scc.uid-range           the namespace's uids
//   openshift.io/sa.scc.supplemental-groups the namespace's gids (the same block)
// berth writes both with the same block (OpenShift does too). The controller
// (controllers/namespacesecurity) writes them; the node (agent/pod_sandbox.h)
// enforces them; nobody else may add, change or remove them
// (CheckNamespaceSecurityWrite).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "api/admission_attributes.h"
#include "api/object.h"
#include "core/status.h"

namespace berth::api {

inline constexpr char kUidRangeAnnotation[] = "openshift.io/sa.scc.uid-range";
inline constexpr char kSupplementalGroupsAnnotation[] = "openshift.io/sa.scc.supplemental-groups";
// The MCS label OpenShift's controller also writes; berth has no SELinux
// labels and never writes it, but it is protected the same way so a tool that
// trusts it cannot be misled.
inline constexpr char kMcsAnnotation[] = "openshift.io/sa.scc.mcs";

// A block of ids [base, base + size).
struct IdBlock {
  int64_t base = 0;
  int64_t size = 0;
  int64_t end() const { return base + size; }
  bool Contains(int64_t id) const { return id >= base && id < end(); }
  bool Overlaps(const IdBlock& o) const { return base < o.end() && o.base < end(); }
  bool operator==(const IdBlock&) const = default;
};

// "<base>/<size>" (OpenShift's uid.ParseBlock also accepts "<base>-<end>"; berth
// writes and reads only the "/" form). Errors: kInvalid when not two decimal
// integers with base >= 0, size >= 1 and base + size - 1 <= 2147483647 (the
// API's largest id, pod_validation.h).
StatusOr<IdBlock> ParseIdBlock(std::string_view text);
std::string FormatIdBlock(const IdBlock& block);

// The namespace's block from `annotation` (kUidRangeAnnotation or
// kSupplementalGroupsAnnotation). kNotFound when the annotation is absent (not
// allocated yet), kInvalid when malformed.
StatusOr<IdBlock> NamespaceIdBlock(const Object& ns, const char* annotation);

// The write rule: a create or update of a Namespace (`old` nullptr on create)
// by anyone but the control plane (`control_plane` false) that adds, changes
// or removes one of the three annotations is refused, kForbidden
// `namespaces "<name>" is forbidden: the annotation openshift.io/sa.scc.uid-range
// is set by the control plane and cannot be changed` (admission.NewForbidden's
// form, as a NodeRestriction-style plugin refuses a write it does not allow).
// Other resources and writes that keep the annotations pass.
Status CheckNamespaceSecurityWrite(bool control_plane, const GroupResource& resource, const Object& object,
                                   const Object* old);

}  // namespace berth::api
