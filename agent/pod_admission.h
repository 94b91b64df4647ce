// The kubelet's resource admission of a pod bound to its node: the
// GeneralPredicates admit handler (pkg/kubelet/lifecycle/predicate.go
// predicateAdmitHandler.Admit → generalFilter → the scheduler's
// AdmissionCheck → noderesources.Fits), which every pod passes before it
// runs, whether kube-scheduler bound it or its spec.nodeName was written by
// hand. Pods are admitted one at a time, oldest first (HandlePodAdditions
// sorts by creationTimestamp); what was admitted and is not terminal counts
// as used. The node agent admits every non-terminal pod that has no run on
// this node, whatever phase the API shows (one set Running by another
// client, or whose runs the node lost, is admitted like a new one).
//
// Checks, in Fits' order; the first failure is the answer:
//   pods               admitted + 1 > allocatable pods
//   cpu                request (milli-cores) > allocatable − used
//   memory, ephemeral-storage   (bytes)
//   other scalar resources (hugepages-*, names with a '/'), by name (upstream
//                      walks a map); an extended resource the node does not
//                      advertise at all is ignored (removeMissingExtendedResources:
//                      the device manager answers for it)
// A pod's request is scheduling::PodRequests (requests, limits as requests,
// init containers and sidecars, overhead). Refusal:
//   reason  "OutOf<resource>" ("OutOfcpu", "OutOfnvidia.com/gpu")
//   message "Node didn't have enough resource: cpu, requested: 2000, used: 1500,
//            capacity: 2000" (InsufficientResourceError; amounts in milli-cores
//            for cpu, whole units otherwise; capacity is the allocatable)
// which the kubelet writes as phase Failed, that reason and the message
// prefixed "Pod was rejected: " (kubelet.go rejectPod).
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/node_agent.h"
#include "api/object.h"

namespace berth::agent {

struct PodAdmitResult {
  bool admit = true;
  std::string reason;   // "OutOfcpu"
  std::string message;  // "Node didn't have enough resource: ..."
};

// `pod` against the node's `allocatable` with `admitted` already running there.
PodAdmitResult AdmitPodResources(const api::Object& pod, const std::vector<const api::Object*>& admitted,
                                 const ResourceList& allocatable);

// The node's image declaration (scheduling/host_images.h), checked before
// resources: a container image the node does not run on its host refuses the
// pod with reason "UnsupportedImage" and the message
// `image "nginx" is not one the node n runs on its host (berth.dev/host-images: busybox,pytorch/*)`.
// The scheduler's HostImages filter keeps such pods off the node; this
// catches pods bound by hand (spec.nodeName). Admits everything when
// `host_images` is nullopt.
PodAdmitResult AdmitPodImages(const api::Object& pod, const std::string& node_name,
                              const std::optional<std::vector<std::string>>& host_images);

// The same check for one container's current image, made by the agent at every
// start and restart of a container (`kubectl set image` changes the image of a
// running pod): "" when the node runs `image` (or declares nothing), else the
// message above. The agent leaves the container waiting with reason
// "UnsupportedImage" and that message, and a Warning Failed event "Error: <message>".
std::string HostImageRefusal(const std::string& image, const std::string& node_name,
                             const std::optional<std::vector<std::string>>& host_images);

}  // namespace berth::agent
