#include "admission/pod_requests.h"

#include "core/pod_requests.h"

namespace berth::admission {

// The formula lives in core/pod_requests.h, shared with placement/.
ResourceList EffectiveContainerRequests(const ContainerResources& c) { return ::berth::EffectiveContainerRequests(c); }

ResourceList PodRequests(const PodResources& pod) { return ::berth::EffectivePodRequests(pod); }

}  // namespace berth::admission
