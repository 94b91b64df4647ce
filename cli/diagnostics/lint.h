// Lint: the seeds' configuration traps, found before they cost GPUs
// (`berth lint`, issue 8). Input is a ClusterView (cli/diagnostics/
// cluster_view.h) built from manifests, from a live server, or both merged
// (cli/diagnostics/lint_input.h); output is a list of Findings, each with a
// stable rule id, a severity, the object and field, why it costs (computed
// from the job's gang and requests) and the fix.
//
// Terms. A "training job" is an object of a job kind (batch/v1 Job, JobSet,
// TrainJob, PyTorchJob) without a controller ownerReference (a TrainJob's
// JobSet and a JobSet's Jobs are parts of their owner, as Kueue's "owner
// managed by Kueue"). Its pod groups are Kueue's podSets
// (controllers/kueue/pod_set.h; a TrainJob's come from its runtime, which must
// be in the view under trainer.kubeflow.org clustertrainingruntimes /
// trainingruntimes). Its gang is the sum of the podSet counts. Per-pod
// requests are Kueue's (requests, limits as defaults: scheduling/pod_requests.h).
// The "accelerator" a cost is stated in is the first resource whose name
// contains "gpu" that the job requests, else cpu.
// A job's pod PriorityClass is resolved as kube-apiserver's Priority
// admission does (plugin/pkg/admission/priority/admission.go): the named class, else the
// globalDefault class, else none (priority 0, preemptionPolicy
// PreemptLowerPriority). Its Kueue workload priority is the value of the
// WorkloadPriorityClass named by the kueue.x-k8s.io/priority-class label,
// else the pod PriorityClass value, else 0 (Kueue's workload priority
// sources, pkg/controller/jobframework/reconciler.go ExtractPriority).
// Two jobs "share nodes" when some node could hold pods of both: with Nodes
// in the view, a node whose labels match a node selector of each (the pod
// template's nodeSelector merged with the nodeLabels of each flavor of the
// job's ClusterQueue); without Nodes, when two such selectors do not
// contradict each other. Affinity and taints are not considered.
//
// Rules (id, severity, trigger):
//   pod-preemption-on-training-pods  error    a multi-pod training job whose
//       pods name a PriorityClass with preemptionPolicy PreemptLowerPriority
//       (the default): kube-scheduler may preempt single gang members.
//   global-default-priority-class    error    a globalDefault PriorityClass
//       with PreemptLowerPriority that training pods without
//       priorityClassName receive (reported on the PriorityClass).
//   mixed-pod-priority-classes       error    two training jobs (or a bare
//       Pod and a job) sharing nodes use different PriorityClasses and the
//       higher one may preempt: reported on the job whose pods can be
//       preempted one at a time.
//   priority-order-mismatch          warning  two Kueue-managed jobs sharing
//       nodes that Kueue orders one way (workload priority) and the
//       scheduler the other way (pod priority).
//   quota-exceeds-node-allocatable   error    a ClusterQueue nominalQuota
//       above the sum of allocatable of the flavor's nodes (only when the
//       view has Nodes): admitted but unschedulable; a flavor whose
//       nodeLabels select no node at all is reported once on the flavor
//       reference (correct nodeLabels or label the nodes).
//   missing-resource-flavor          error    a ClusterQueue names a
//       ResourceFlavor that does not exist (the ClusterQueue is inactive);
//       "did you mean" for a name within edit distance 2.
//   queue-name-label                 error    kueue.x-k8s.io/queue-name
//       written as an annotation, a label key within edit distance 3 of it,
//       or a LocalQueue that does not exist in the job's namespace.
//   kueue-v1beta1                    info     a kueue.x-k8s.io/v1beta1
//       manifest (files only); warning when converting it to v1beta2 loses
//       a field.
//   within-cluster-queue-never       warning  withinClusterQueue Never (the
//       default when unset) in a ClusterQueue whose jobs have different
//       workload priorities.
//   unresolved-reference             info     a LocalQueue or ResourceFlavor
//       reference (the two rules above) to a kind the input holds no object
//       of (files only, without --live; ClusterView::Covers): whether it
//       exists cannot be judged. With --live, or when the files hold objects
//       of that kind, a dangling reference stays an error.
//   grace-period-shorter-than-checkpoint error  a pod template's
//       terminationGracePeriodSeconds (default 30) shorter than the job's
//       annotation berth.dev/checkpoint-seconds (the seconds the job needs
//       to write a checkpoint after SIGTERM); a malformed annotation is a
//       warning.
//
// Field paths are written as Kubernetes writes them
// (spec.resourceGroups[0].flavors[0].name); map keys that contain '.' or '/'
// are bracketed (metadata.labels[kueue.x-k8s.io/queue-name]).
// Ordering: findings are sorted by (severity, error first), rule, kind,
// namespace, name, field, message.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "api/object.h"
#include "cli/diagnostics/cluster_view.h"
#include "client/client.h"

namespace berth::cli::diagnostics {

enum class Severity { kError, kWarning, kInfo };
// "error", "warning", "info".
std::string_view SeverityName(Severity s);

// The annotation a job declares its checkpoint time with (seconds, a decimal
// integer): how long its pods need after SIGTERM to write a checkpoint.
inline constexpr char kCheckpointSecondsAnnotation[] = "berth.dev/checkpoint-seconds";

// The training-runtime resources a TrainJob's pod templates come from
// (ClusterView::Objects holds them when the view was built with them).
namespace resources {
extern const client::GroupVersionResource kClusterTrainingRuntimes;
extern const client::GroupVersionResource kTrainingRuntimes;
}  // namespace resources

// Identity of an object in the view.
using ObjectKey = std::tuple<std::string /*kind*/, std::string /*namespace*/, std::string /*name*/>;

// Where an object read from a manifest came from.
struct ObjectOrigin {
  std::string source;              // file path or "STDIN"
  std::string api_version;         // as written (before conversion to the storage version)
  api::Object written;             // the object as written
  std::map<std::string, int> lines;  // field path ("" = the object) -> 1-based line
};
using Provenance = std::map<ObjectKey, ObjectOrigin>;

struct ObjectRef {
  std::string api_version;  // as written for files, the storage version for live objects
  std::string kind;
  std::string ns;           // "" for cluster-scoped objects
  std::string name;
  std::string source;       // "" for live objects
  int line = 0;             // line of the field (or of the object) in source; 0 unknown
};

struct Finding {
  std::string rule;
  Severity severity = Severity::kError;
  ObjectRef object;
  std::string field;    // "" when the finding is about the object as a whole
  std::string message;  // why it costs
  std::string fix;
};

std::vector<Finding> Lint(const ClusterView& view, const Provenance& provenance = {});

// True when some finding is an error.
bool HasErrors(const std::vector<Finding>& findings);

// -o json: an array of {rule, severity, object: {apiVersion, kind, namespace,
// name, source, line}, field, message, fix} (namespace/source/line omitted
// when empty/unknown).
api::Object FindingsToJson(const std::vector<Finding>& findings);
// Text: per finding "<severity>: <rule>: <Kind> [<ns>/]<name>[ (<source>[:<line>])]"
// then indented "field:", "why:" and "fix:" lines; a summary line at the end
// ("2 errors, 1 warning, 0 infos"; "No findings." when empty).
std::string FindingsToText(const std::vector<Finding>& findings);

// Field paths: parent + "." + key ("key" at the root; "[key]" when the key
// contains '.' or '/'), and parent + "[i]".
std::string FieldChild(std::string_view parent, std::string_view key);
std::string FieldIndex(std::string_view parent, size_t index);

// Levenshtein distance (bytes), for "did you mean".
size_t EditDistance(std::string_view a, std::string_view b);

}  // namespace berth::cli::diagnostics
