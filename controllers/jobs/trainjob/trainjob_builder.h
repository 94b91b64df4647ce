// TrainJob (trainer.kubeflow.org/v1alpha1) + TrainingRuntime / ClusterTrainingRuntime →
// JobSet, as Kubeflow Trainer v2's runtime framework builds it
// (pkg/runtime/core/trainingruntime.go and the plugins torch, mpi, jobset, coscheduling),
// as pure functions. The API is Trainer's pkg/apis/trainer/v1alpha1 (trainjob_types.go,
// trainingruntime_types.go); trainjob_builder_test.cc replays the cases of its unit tests.
//
// Build(trainjob, runtime) returns the objects the TrainJob owns:
//   JobSet   name/namespace of the TrainJob, controller ownerReference to it
//            (trainer.kubeflow.org/v1alpha1 TrainJob, blockOwnerDeletion); spec = the
//            runtime's spec.template.spec; metadata labels/annotations = runtime template
//            metadata, then TrainJob spec.labels/spec.annotations (v2.1), then each
//            runtimePatch's template metadata (later wins); spec.suspend = TrainJob
//            spec.suspend when set.
//            Per replicatedJob, in this order:
//            - v2.1 spec.podTemplateOverrides, then v2.2+ spec.runtimePatches (its
//              replicatedJobs' job-template and pod-template labels/annotations and the
//              PodSpecPatch), each strategic-merge-patched onto the targeted pod template
//              in list order (api/strategic_merge_patch.h, Pod schema);
//            - trainer ancestor (label trainer.kubeflow.org/trainjob-ancestor-step=trainer),
//              container `node`: image, command, args replaced by spec.trainer's, env
//              upserted by name (TrainJob wins), resourcesPerNode merged per resource key
//              into requests and limits (TrainJob keys win, trainer#3551);
//            - initializers (ancestor dataset-initializer / model-initializer, container of
//              the same name): env STORAGE_URI = storageUri, then spec.initializer.<x>.env
//              upserted, envFrom secretRef when secretRef is set;
//            - replicas 1 for ancestor-labelled jobs; parallelism = completions = the podSet
//              count: numNodes for the job named `node` (numNodes − 1, at least 1, under MPI
//              runLauncherAsNode) and for a torch/plain trainer ancestor; 1 for the MPI
//              launcher; the template's parallelism (default 1) for every other job.
//              numNodes = spec.trainer.numNodes, else mlPolicy.numNodes, else 1.
//            - torch policy: container `node` of the trainer ancestor gets
//                PET_NNODES          numNodes
//                PET_NPROC_PER_NODE  ResolveNumProcPerNode (below)
//                PET_NODE_RANK       fieldRef metadata.annotations['batch.kubernetes.io/job-completion-index']
//                PET_MASTER_ADDR     "<trainjob>-node-0-0.<trainjob>" (always the TrainJob
//                                    name as subdomain and `node` as job, as upstream)
//                PET_MASTER_PORT     "29500"
//              and containerPort 29500. A torchtune command (["tune","run"]) gets no
//              PET_MASTER_* (upstream rewrites the command instead; not done here).
//            - coscheduling policy: pod label scheduling.x-k8s.io/pod-group=<trainjob> on
//              every replicatedJob (the PodGroup object itself is not built).
//   MPI hostfile ConfigMap "<trainjob>-mpi-hostfile" (mpi policy only), key `hostfile`, one
//            "<host> slots=<n>\n" line per endpoint: launcher endpoints first when
//            runLauncherAsNode, then `node` endpoints "<trainjob>-node-0-<p>.<subdomain>"
//            (subdomain = runtime network.subdomain, else the TrainJob name); mounted
//            read-only at /etc/mpi (volume mpi-hostfile) in the launcher's `node` container,
//            with OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile,
//            OMPI_MCA_orte_keep_fqdn_hostnames=true, OMPI_MCA_orte_set_default_slots=<slots>,
//            OMPI_MCA_plm_rsh_args="-o ConnectionAttempts=10". slots = spec.trainer
//            numProcPerNode, else mpi.numProcPerNode (default 1), raised to the GPU count per
//            node when that is 1 and the node has more than one GPU.
//            Not done: the ssh-auth Secret (key generation) and its volume.
//
// ResolveNumProcPerNode (torch, HEAD + v2.1 string forms): value = spec.trainer
// numProcPerNode, else the runtime's torch.numProcPerNode, else "auto"; resources =
// spec.trainer.resourcesPerNode when set (raw, not merged, as upstream), else the runtime
// `node` container's. GPUs = the first resource (key order) whose name contains "gpu"
// (case-insensitive) in requests, else in limits. "auto" with GPUs stays "auto"; "auto"
// without GPUs and "cpu" become max(1, ⌈cpu⌉) of the CPU request, else limit, else 1;
// "gpu" stays "gpu"; an integer is written in decimal.
//
// Errors (Status, for a condition/event on the TrainJob; kInvalid): the runtime has no
// trainer-ancestor replicatedJob ("runtime <Kind> <name> has no replicatedJob with label
// trainer.kubeflow.org/trainjob-ancestor-step=trainer"), the ancestor has no container
// `node` (the runtime webhook's "must contain the required container for the ancestor:
// trainer"), a patch or override names a replicatedJob or container the runtime does not
// have, a malformed strategic merge patch.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/field_errors.h"
#include "api/object.h"
#include "api/conditions.h"
#include "api/unstructured.h"
#include "controllers/jobs/common/child_objects.h"
#include "controllers/kueue/pod_set.h"
#include "core/status.h"

namespace berth::controllers::jobs::trainjob {

using api::Condition;
using api::Object;
using kueue::PodSet;

inline constexpr std::string_view kTrainerGroup = "trainer.kubeflow.org";
inline constexpr std::string_view kTrainJobApiVersion = "trainer.kubeflow.org/v1alpha1";
inline constexpr std::string_view kAncestorLabel = "trainer.kubeflow.org/trainjob-ancestor-step";
inline constexpr std::string_view kAncestorTrainer = "trainer";
inline constexpr std::string_view kDatasetInitializer = "dataset-initializer";
inline constexpr std::string_view kModelInitializer = "model-initializer";
inline constexpr std::string_view kNode = "node";
inline constexpr std::string_view kLauncher = "launcher";
inline constexpr int kTorchMasterPort = 29500;
inline constexpr std::string_view kPodGroupLabel = "scheduling.x-k8s.io/pod-group";

// spec.runtimeRef with its defaults (apiGroup trainer.kubeflow.org, kind
// ClusterTrainingRuntime).
struct RuntimeRef {
  std::string api_group;
  std::string kind;
  std::string name;
  static RuntimeRef FromTrainJob(const Object& trainjob);
  bool cluster_scoped() const { return kind == "ClusterTrainingRuntime"; }
  // "clustertrainingruntimes" / "trainingruntimes".
  std::string resource() const;
};

// The message upstream's TrainJob webhook gives when the runtime does not exist:
// `clustertrainingruntimes.trainer.kubeflow.org "x" not found: specified
// clusterTrainingRuntime must be created before the TrainJob is created` (TrainingRuntime:
// "trainingruntimes…", "specified trainingRuntime…"). berth creates the TrainJob anyway (the
// runtime may appear later) and the controller reports this as a condition/event.
std::string RuntimeNotFoundMessage(const Object& trainjob);
// Reason upstream writes on the Failed condition for a runtimeRef kind/group it does not
// know, and its message "unsupported runtime: <Kind>.<group>"; nullopt when supported.
inline constexpr std::string_view kTrainingRuntimeNotSupported = "TrainingRuntimeNotSupported";
std::optional<std::string> UnsupportedRuntimeMessage(const Object& trainjob);

// The PET_NPROC_PER_NODE value (see the file comment).
std::string ResolveNumProcPerNode(const Object& trainjob, const Object& runtime);

struct TrainJobObjects {
  Object jobset;
  std::optional<Object> mpi_hostfile;  // ConfigMap, mpi policy only
};
StatusOr<TrainJobObjects> Build(const Object& trainjob, const Object& runtime);

// Kueue's podSets for a TrainJob: those of the JobSet Build() makes (jobset::PodSets).
StatusOr<std::vector<PodSet>> PodSets(const Object& trainjob, const Object& runtime);

// Checks of the TrainJob that need its runtime (upstream's TrainJob webhook with the
// runtime's plugins): torch policy → no reserved PET_* variable in spec.trainer.env
// (`spec.trainer.env: Invalid value: [...]: must not have reserved envs, invalid envs
// configured: [PET_NNODES PET_NPROC_PER_NODE]`, names sorted as Go's sets.List; the rule
// is api::ValidateTrainJobReservedEnv, which the TrainJob strategy applies to every TrainJob).
api::FieldErrorList ValidateWithRuntime(const Object& trainjob, const Object& runtime);

// Whether the controller should (re)apply the JobSet built now over `existing` (nullptr:
// none yet): never once the TrainJob is Complete or Failed (trainer#2981, #3779); always
// when there is none; otherwise only while the TrainJob or the existing JobSet is suspended
// (running JobSets are never mutated).
bool ShouldApplyJobSet(const Object& trainjob, const Object* existing_jobset);

// The TrainJob status derived from its JobSet (nullptr: none):
//   conditions  Suspended True "Suspended"/"TrainJob is suspended" while spec.suspend;
//               Suspended False "Resumed"/"TrainJob is resumed" once resumed after a True
//               Suspended; Complete True / Failed True copied (reason, message) from the
//               JobSet's Completed / Failed.
//   jobs_status status.jobsStatus: {name, ready, succeeded, failed, active, suspended} per
//               JobSet replicatedJobsStatus entry.
struct TrainJobStatus {
  std::vector<Condition> conditions;
  Object jobs_status = Object::array();
};
TrainJobStatus StatusFromJobSet(const Object& trainjob, const Object* jobset);

}  // namespace berth::controllers::jobs::trainjob
