// Per-pod requests that count against quota (requests; limits only as defaults), on the
// admission engine's ResourceList. The formula itself is
// berth::EffectivePodRequests (core/pod_requests.h), shared with placement/.
//
// Follows Kueue (pkg/workload/resources.go), which uses the Kubernetes
// PodRequests helper after defaulting:
//   1. In every container (regular, init, sidecar) a resource that has a
//      limit but no request gets request = limit (Kueue PR #317). Limits are
//      otherwise ignored: quota is counted from requests only.
//   2. Regular containers are summed.
//   3. Init containers are walked in order. A sidecar (init container with
//      restartPolicy: Always) keeps running: its request is added to the
//      running sum of step 2 and to the sidecars-so-far total. A regular init
//      container runs alone with the sidecars declared before it: its peak is
//      its request + sidecars-so-far.
//   4. Per resource, the pod request is max(sum of step 2 incl. sidecars,
//      largest init peak of step 3).
//   5. The pod overhead (spec.overhead, from the RuntimeClass) is added.
// Worked example (kubernetes/website PR #57373): sidecar 100m, then an init
// container 200m, then an app container 100m → 300m.
//
// Thread-safety: pure functions.
#pragma once

#include <vector>

#include "admission/model.h"

namespace berth::admission {

struct ContainerResources {
  ResourceList requests;
  ResourceList limits;
  // Only meaningful for init containers: restartPolicy: Always (a sidecar).
  bool restart_always = false;
};

struct PodResources {
  std::vector<ContainerResources> init_containers;
  std::vector<ContainerResources> containers;
  ResourceList overhead;
};

// A container's requests with missing requests defaulted to its limits.
ResourceList EffectiveContainerRequests(const ContainerResources& c);

// The pod's effective request per resource (steps 1–5 above).
ResourceList PodRequests(const PodResources& pod);

}  // namespace berth::admission
