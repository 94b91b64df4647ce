// Client-side helpers the job-kind reconcilers (controllers/jobs/<kind>/*_controller) share:
// listing the objects a controller owns,
// idempotent create/delete, writing status only when it changed, and the Kueue webhook's
// suspend default.
//
// Ownership: an object is owned by `owner` when one of its metadata.ownerReferences has
// controller: true and the owner's uid (as the upstream controllers' ClaimObjects match).
//
// Errors: API failures are returned as the client reports them; NotFound on delete and
// AlreadyExists on create are success (another reconcile got there first).
// Thread-safety: functions over the given client; safe from several threads.
#pragma once

#include <string>
#include <vector>

#include "api/object.h"
#include "client/client.h"
#include "core/status.h"

namespace berth::controllers::jobs {

// Objects of `gvr` in the owner's namespace matching `label_selector` and controlled by
// `owner`, sorted by name.
StatusOr<std::vector<api::Object>> ListOwned(client::Client& client, const client::GroupVersionResource& gvr,
                                             const api::Object& owner, const std::string& label_selector);

// Whether `obj` carries a controller ownerReference with `owner_uid`.
bool IsControlledBy(const api::Object& obj, const std::string& owner_uid);

// Create; AlreadyExists counts as done.
Status CreateIfAbsent(client::Client& client, const client::GroupVersionResource& gvr, const api::Object& obj);
// Delete by name with the given propagation; NotFound counts as done.
Status DeleteIfPresent(client::Client& client, const client::GroupVersionResource& gvr, const std::string& ns,
                       const std::string& name,
                       client::PropagationPolicy propagation = client::PropagationPolicy::kBackground);

// UpdateStatus of `updated` when its status differs from `original`'s.
Status WriteStatusIfChanged(client::Client& client, const client::GroupVersionResource& gvr,
                            const api::Object& original, const api::Object& updated);

// Whether a job object must be treated as suspended: its suspend field is true, or it
// carries the kueue.x-k8s.io/queue-name label and the field is absent — Kueue's mutating
// webhook sets suspend=true on create for queued jobs, and berth's controllers apply that
// default themselves so no pod is created before the Workload exists. `suspend` is the
// kind's switch (spec.suspend, or spec.runPolicy.suspend for PyTorchJob).
bool EffectivelySuspended(const api::Object& job, const api::Object& suspend);

// Whether some pod in `ns` matching `label_selector` is not terminal (Succeeded/Failed) —
// running or pending — or is being deleted and not yet gone (terminal or not: a deleted
// pod's name and hostname stay taken until the agent removes it, so an evicted job is not
// re-admitted, and its replacements not created, before then). A failed List counts as
// true (unknown: keep treating the job as active and look again on the next reconcile).
bool AnyPodAlive(client::Client& client, const std::string& ns, const std::string& label_selector);

}  // namespace berth::controllers::jobs
