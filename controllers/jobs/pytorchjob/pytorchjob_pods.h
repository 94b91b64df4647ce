// PyTorchJob (kubeflow.org/v1) → pods and Services, as the Training Operator v1
// (kubeflow/training-operator pkg/controller.v1/pytorch, envvar.go and master.go; common
// job controller) creates them, as pure functions.
//
// Defaults (SetDefaults_PyTorchJob): replica-type keys camel-cased ("master" → "Master"),
// replicas 1, restartPolicy OnFailure, cleanPodPolicy None, nprocPerNode "auto", and a
// container port {name: pytorchjob-port, containerPort: 23456} on container `pytorch`
// when absent.
//
// Pods (Pods): per replica type in the order Master, Worker, then others by name; per index
// i < replicas: name "<job>-<type lower-case>-<i>", the replica template with
//   labels       training.kubeflow.org/job-name=<job>, training.kubeflow.org/operator-name=
//                pytorchjob-controller, training.kubeflow.org/replica-type=<type lower>,
//                training.kubeflow.org/replica-index=<i>, and for Master
//                training.kubeflow.org/job-role=master;
//   restartPolicy the replica's (ExitCode → Never, as upstream);
//   env          appended to every container, in upstream's order:
//                  PYTHONUNBUFFERED=0, MASTER_PORT, PET_MASTER_PORT, MASTER_ADDR,
//                  PET_MASTER_ADDR (= "<job>-master-0", port = the Master's pytorchjob-port),
//                  WORLD_SIZE (= Σ replicas × nprocPerNode when an integer, else Σ replicas),
//                  RANK (Master 0, Worker i + 1), PET_NPROC_PER_NODE (nprocPerNode),
//                  PET_NODE_RANK (= RANK), PET_NNODES (= Σ replicas);
//                the MASTER_*/WORLD_SIZE/RANK/PET_NPROC_PER_NODE/PET_NODE_RANK block only
//                when a Master replica exists; elasticPolicy variables are not done.
//   owner        controller reference to the PyTorchJob.
// Services (Services): one headless Service per pod, same name, clusterIP None, selector
//   job-name + replica-type + replica-index, the replica's pytorchjob-port (if any).
// PodSets: one per replica type (lower-cased name, count = replicas, the replica template),
//   order as Pods.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "api/unstructured.h"
#include "controllers/jobs/common/child_objects.h"
#include "controllers/kueue/pod_set.h"

namespace berth::controllers::jobs::pytorchjob {

using api::Object;
using kueue::PodSet;

inline constexpr std::string_view kDefaultContainerName = "pytorch";
inline constexpr std::string_view kDefaultPortName = "pytorchjob-port";
inline constexpr int kDefaultPort = 23456;
inline constexpr std::string_view kJobNameLabel = "training.kubeflow.org/job-name";
inline constexpr std::string_view kOperatorNameLabel = "training.kubeflow.org/operator-name";
inline constexpr std::string_view kReplicaTypeLabel = "training.kubeflow.org/replica-type";
inline constexpr std::string_view kReplicaIndexLabel = "training.kubeflow.org/replica-index";
inline constexpr std::string_view kJobRoleLabel = "training.kubeflow.org/job-role";

// Applies the Training Operator's defaults (see the file comment) in place.
void ApplyDefaults(Object* pytorchjob);
// The replica types in pod order: Master, Worker, then the rest by name.
std::vector<std::string> ReplicaTypes(const Object& pytorchjob);
// Every pod of the job (defaults applied to a copy first).
std::vector<Object> Pods(const Object& pytorchjob);
// Every Service of the job.
std::vector<Object> Services(const Object& pytorchjob);
std::vector<PodSet> PodSets(const Object& pytorchjob);

}  // namespace berth::controllers::jobs::pytorchjob
