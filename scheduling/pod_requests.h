// A pod's resource requests as the two scheduling layers count them: the
// resource part of a PodSpec (ContainerResources, PodResources) and the
// pod's effective request, computed once for Kueue quota (admission/) and
// kube-scheduler node fit (placement/), which use the same Kubernetes helper
// (k8s.io/component-helpers/resource.PodRequests; Kueue through
// pkg/workload/resources.go) and therefore the same formula (KEP-753's sidecar
// rule; kubernetes/website#57373 has a worked example):
//
//   1. In every container (regular, init, sidecar) a resource that has a
//      limit but no request gets request = limit (the API server's pod
//      defaulting; Kueue PR #317 applies it again). Limits are otherwise
//      ignored: only requests count.
//   2. Regular containers are summed.
//   3. Init containers are walked in declaration order. A sidecar (an init
//      container with restartPolicy: Always) keeps running: its request is
//      added to the running sum of step 2 and to the sidecars-so-far total.
//      A regular init container runs alone with the sidecars declared before
//      it: its peak is its request + sidecars-so-far.
//   4. Per resource: max(sum of step 2 incl. sidecars, largest init peak).
//   5. The pod overhead (spec.overhead, from the RuntimeClass) is added.
//   Worked example (kubernetes/website PR #57373): sidecar 100m, then an init
//   container 200m, then an app container 100m -> 300m.
//
// Generic over the caller's resource list so each layer keeps its own
// representation (interned ids and milli-unit amounts in admission/, names
// and Quantities in placement/). `List` must be default-constructible and
// copyable and provide: items() iterable over pairs whose .first is the key
// and .second the amount; Has(key); Set(key, amount); AddAll(const List&)
// (per-key sum); MaxWith(const List&) (per-key max). Arithmetic saturation
// is the List's business.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <vector>

namespace berth::scheduling {

// The resource part of one container of a PodSpec.
template <typename List>
struct ContainerResources {
  List requests;  // resources.requests
  List limits;    // resources.limits
  // Init containers only: restartPolicy: Always (a sidecar).
  bool restart_always = false;
};

// The resource part of a PodSpec.
template <typename List>
struct PodResources {
  std::vector<ContainerResources<List>> init_containers;  // in declaration order
  std::vector<ContainerResources<List>> containers;
  List overhead;  // spec.overhead
};

// A container's requests with missing requests defaulted to its limits (step 1).
template <typename List>
List EffectiveContainerRequests(const ContainerResources<List>& c) {
  List out = c.requests;
  for (const auto& item : c.limits.items()) {
    if (!out.Has(item.first)) out.Set(item.first, item.second);
  }
  return out;
}

// The pod's effective request per resource (steps 1-5 above).
template <typename List>
List PodRequests(const PodResources<List>& pod) {
  List running;
  for (const auto& c : pod.containers) running.AddAll(EffectiveContainerRequests(c));
  List sidecars;   // sidecars declared so far
  List init_peak;  // largest init-phase peak
  for (const auto& c : pod.init_containers) {
    List req = EffectiveContainerRequests(c);
    if (c.restart_always) {
      running.AddAll(req);
      sidecars.AddAll(req);
      init_peak.MaxWith(sidecars);
    } else {
      req.AddAll(sidecars);
      init_peak.MaxWith(req);
    }
  }
  running.MaxWith(init_peak);
  running.AddAll(pod.overhead);
  return running;
}

}  // namespace berth::scheduling
