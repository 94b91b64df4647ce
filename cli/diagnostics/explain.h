// Explain: answers "why is my job not running?" for one job, Workload or
// Pod by walking the two-step diagnosis a Kueue user follows — is the
// Workload admitted? if so, why are its pods Pending? — over the live
// objects (ClusterView, fetched once):
//
//   step 1, admission (Kueue): is there a Workload, and does it hold quota?
//     - no Workload: the job carries no kueue.x-k8s.io/queue-name label
//       (Kueue does not manage it; `kubectl get workloads` does not list it),
//       or writes it as an annotation (the seeds' trap: Kueue reads only the
//       label);
//     - a bare Pod (no job owner): not managed, since berth's Kueue queues
//       job kinds only (no Pod integration);
//     - not admitted: the LocalQueue and ClusterQueue it maps to (missing
//       LocalQueue / ClusterQueue), the ClusterQueue's Active condition and
//       reason (FlavorNotFound names the missing ResourceFlavors); the
//       blockers that keep Kueue from admitting it whatever its quota: a
//       deactivated Workload (spec.active=false; why, from the Evicted
//       Deactivated condition, DeactivationTarget and schedulingStats; after
//       RequeuingLimitExceeded, that re-activating repeats the loop), a
//       ClusterQueue namespaceSelector that does not select its namespace
//       (Kueue's cache: the Namespace's labels plus
//       kubernetes.io/metadata.name; a null selector selects none), and
//       waitForPodsReady.blockAdmission (QuotaReserved=False reason
//       WaitingForPodsReady: the admitted workloads not PodsReady); a podSet
//       whose per-pod requests exceed every node the ClusterQueue's flavors
//       select (its pods can never be placed, so never become Ready); Kueue's
//       last QuotaReserved=False message, the workload's position among the
//       ClusterQueue's pending workloads in Kueue's queue order (priority
//       descending, then creationTimestamp, then uid: Kueue's
//       pkg/cache/queue/cluster_queue.go), the
//       quota it needs against what is free and borrowable per flavor and
//       resource, and what berth's admission engine (admission/flavor_assigner,
//       admission/preemptor) decides over a snapshot of the live quotas and
//       admitted workloads: it fits (admitted at the next cycle), it would
//       preempt these workloads (the "admitted at the next cycle" claim is
//       made only when no blocker applies and Kueue's live QuotaReserved
//       message does not disagree; otherwise those are stated instead), or
//       these admitted workloads would have to finish first (the smallest such set, in admission order, that makes
//       the engine admit it), or it can never fit (above the maximum quota).
//   step 2, placement (kube-scheduler): admitted, pods Pending — per pod the
//     FailedScheduling message and per-node reasons in kube-scheduler's words,
//     recomputed with placement::Schedule over the live nodes and bound pods
//     (preemption not simulated) next to the pod's live PodScheduled
//     condition; and per admitted flavor and resource whether the
//     ClusterQueue's nominalQuota exceeds the allocatable of the nodes the
//     flavor selects (the trap of a quota above the nodes' allocatable: admitted,
//     pods Pending with "Insufficient cpu"; examples/trainer-kueue/README.md).
//   step 3, history: running, finished or evicted — the timeline of the
//     Workload's, the job's and its pods' conditions and events.
//
// Every statement is derived from a live object and names it as evidence
// (object, field path, value); nothing is guessed. A fix is given when the
// cause is a configuration the user owns.
//
// A job kind owned by another (a TrainJob's JobSet, a JobSet's Jobs) is
// explained through the job Kueue manages: the nearest owner along the
// controller ownerReferences with a Workload, else the top owner (the first
// finding says so). Amounts are printed in canonical Kubernetes quantity
// form (binary SI for memory, ephemeral-storage, hugepages-*), as strings in
// JSON.
//
// Kinds (what `berth get` accepts for them): trainjob(s), pytorchjob(s),
// jobset(s), job(s), workload(s)/wl, pod(s)/po, also as
// "<plural>.<group>".
//
// Errors: kBadRequest for a kind explain does not cover; kNotFound
// `<resource>.<group> "<name>" not found` (kube-apiserver's text) when the
// object does not exist; any error of the client's List calls, unchanged.
//
// Thread-safety: Explain is reentrant; the client must be usable from the
// calling thread.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/diagnostics/cluster_view.h"
#include "client/client.h"
#include "core/clock.h"
#include "core/status.h"

namespace berth::cli::diagnostics {

// Where the job stands in the two layers.
enum class Layer {
  kNotManaged,           // no Workload: Kueue does not queue it
  kNotAdmitted,          // a Workload without quota; no pods (step 1)
  kAdmittedPodsPending,  // quota reserved, some pod not placed or not yet created (step 2)
  kRunning,              // admitted, every pod placed
  kEvicting,             // evicted, pods still terminating (quota still held)
  kFinished,             // Finished=True
};
// "NotManaged", "NotAdmitted", "AdmittedPodsPending", "Running", "Evicting", "Finished".
std::string_view LayerName(Layer layer);

// The live object and field a statement rests on.
struct Evidence {
  std::string object;  // "<Kind> <namespace>/<name>" or "<Kind> <name>" for cluster-scoped
  std::string field;   // field path as kubectl prints it, e.g. "status.conditions[QuotaReserved].message"
  std::string value;   // the field's value (may be empty)
};

struct ExplainFinding {
  std::string statement;
  std::vector<Evidence> evidence;
  std::string fix;  // empty when there is nothing for the user to change
};

// One point of the history: a condition transition or an event.
struct TimelineEntry {
  Time time{};
  std::string object;  // as Evidence::object
  std::string what;    // "QuotaReserved=True QuotaReserved: ..." / "Normal Started: ..." (events)
};

struct ExplainReport {
  std::string kind;  // the subject's kind, e.g. "TrainJob"
  std::string ns;
  std::string name;
  Layer layer = Layer::kNotAdmitted;
  std::string summary;             // one line: the layer in words
  std::vector<ExplainFinding> findings;   // in diagnosis order
  std::vector<TimelineEntry> timeline;  // by time, then insertion order (job, Workload, pods)
  Time as_of{};                         // when the objects were read (the Clock's now)

  // {"kind","namespace","name","layer","summary","asOf","findings":[{"statement",
  //  "evidence":[{"object","field","value"}],"fix"?}],"timeline":[{"time"
  //  (RFC 3339),"object","what"}]}
  nlohmann::json ToJson() const;
  // The text `berth explain` prints: header, numbered findings with
  // evidence and fix, then the timeline with each entry's age at as_of.
  std::string ToText() const;
};

// Fetches the cluster through `client` and explains KIND/NAME in `ns`.
// `clock` gives as_of (ages in the text), never a decision.
StatusOr<ExplainReport> Explain(client::Client& client, const std::string& kind, const std::string& ns,
                                const std::string& name, Clock& clock);
// The same over a view already fetched (tests, callers that explain several objects).
StatusOr<ExplainReport> Explain(const ClusterView& view, const std::string& kind, const std::string& ns,
                                const std::string& name, Clock& clock);

// The HTTP form, served by `berth server` (cmd/berth) for any client:
//   GET /berth/v1/explain/namespaces/{ns}/{resource}/{name}[?output=json|text]
// {resource} is any kind name Explain accepts ("trainjobs", "jobs",
// "workloads", "pods", ...). The body is ExplainReport::ToJson()
// (application/json, the default) or ToText() (text/plain; charset=utf-8).
// Errors (the caller writes them as a metav1.Status): kMethodNotAllowed for
// another method; kNotFound `the server could not find the requested
// resource` for another path shape; kBadRequest for an unknown output;
// Explain's errors otherwise.
inline constexpr char kExplainPathPrefix[] = "/berth/v1/explain";
struct ExplainHttpBody {
  std::string content_type;
  std::string body;
};
StatusOr<ExplainHttpBody> ServeExplain(client::Client& client, const std::string& method, const std::string& target,
                                       Clock& clock);

}  // namespace berth::cli::diagnostics
