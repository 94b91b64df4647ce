// EffectivePodRequests: a pod's effective resource request, computed once for
// the two layers that count it — Kueue quota (admission/) and kube-scheduler
// node fit (placement/) — which use the same Kubernetes helper
// (k8s.io/component-helpers/resource.PodRequests) and therefore the same
// formula (KEP-753's sidecar rule; kubernetes/website#57244 has a worked example):
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
// Generic over the caller's resource-list and pod shapes so each layer keeps
// its own representation (interned ids in admission/, names in placement/):
//   List   : default-constructible; items() iterable over pairs whose .first
//            is the key and .second the amount; Has(key); Set(key, amount);
//            AddAll(const List&) (per-key sum); MaxWith(const List&)
//            (per-key max). Arithmetic saturation is the List's business.
//   PodT   : members init_containers and containers (ranges of a container
//            type with members `List requests`, `List limits`,
//            `bool restart_always`) and `List overhead`.
//
// Thread-safety: pure functions.
#pragma once

namespace berth {

// A container's requests with missing requests defaulted to its limits (step 1).
template <typename ContainerT>
auto EffectiveContainerRequests(const ContainerT& c) -> decltype(c.requests) {
  auto out = c.requests;
  for (const auto& item : c.limits.items()) {
    if (!out.Has(item.first)) out.Set(item.first, item.second);
  }
  return out;
}

// The pod's effective request per resource (steps 1-5 above).
template <typename PodT>
auto EffectivePodRequests(const PodT& pod) -> decltype(pod.overhead) {
  using List = decltype(pod.overhead);
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

}  // namespace berth
