#include "admission/pod_requests.h"

namespace berth::admission {

ResourceList EffectiveContainerRequests(const ContainerResources& c) {
  ResourceList out = c.requests;
  for (const auto& [r, limit] : c.limits.items()) {
    if (!out.Has(r)) out.Set(r, limit);
  }
  return out;
}

ResourceList PodRequests(const PodResources& pod) {
  ResourceList running;
  for (const auto& c : pod.containers) running.AddAll(EffectiveContainerRequests(c));

  ResourceList sidecars;    // sidecars declared so far
  ResourceList init_peak;   // largest init-phase peak
  for (const auto& c : pod.init_containers) {
    ResourceList req = EffectiveContainerRequests(c);
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

}  // namespace berth::admission
