// Container environment and command line, resolved as the kubelet does
// before it asks the runtime to create a container
// (pkg/kubelet/kubelet_pods.go makeEnvironmentVariables, expansion of
// $(VAR_NAME) references, downward API field selectors).
//
// Inputs are the Pod object (JSON, as stored), the container's name and a
// few facts only the node knows (node allocatable for resourceFieldRef
// limits that are unset, the pod and host IPs). Output is the process's
// complete environment and argv.
//
// Environment (container.env, in order):
//   - value: literal, with $(VAR) references to variables defined EARLIER in
//     the list expanded (later ones and undefined names stay verbatim).
//   - valueFrom.fieldRef.fieldPath: metadata.name, metadata.namespace,
//     metadata.uid, metadata.labels['k'], metadata.annotations['k'] (a
//     missing key reads as ""), spec.nodeName, spec.serviceAccountName,
//     status.podIP, status.podIPs, status.hostIP, status.hostIPs. The Job
//     completion index (PET_NODE_RANK, RANK in the JobSet/Trainer templates)
//     comes through metadata.annotations['batch.kubernetes.io/job-completion-index'].
//   - valueFrom.resourceFieldRef {containerName, resource, divisor}: resource
//     requests.cpu|memory|ephemeral-storage or limits.*; divisor defaults to
//     "1"; the value is ceil(amount / divisor) (cpu in milli-units,
//     others in whole units, as upstream). An unset limit reads as the
//     node's allocatable (kubelet MergeContainerResourceLimits); an unset
//     request as 0.
//   - configMapKeyRef/secretKeyRef/envFrom: not supported yet → error.
//   Duplicated names: the last definition wins, listed at the position of the
//   first. Then HOSTNAME (spec.hostname, else metadata.name) and PATH (kDefaultPath)
//   are added when the container did not set them, as a container runtime does.
//
// Command line: command + args, each with $(VAR) references to the final
// environment expanded. berth has no images: a container without command has
// no entrypoint to fall back to; its argv is left empty and the process
// runner reports it as a start error (reason StartError), as a runtime
// reports an image whose entrypoint cannot run.
//
// $(VAR) expansion follows k8s.io/kubernetes third_party/forked/golang/expansion:
// "$(NAME)" → value when NAME is defined, else left as "$(NAME)"; "$$" → "$";
// any other "$" is kept.
//
// Errors: kInvalid with the kubelet's message, which the caller reports as
// container state waiting, reason CreateContainerConfigError.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/shim/shim.h"
#include "api/object.h"
#include "core/quantity.h"
#include "core/status.h"

namespace berth::agent {

using shim::kDefaultPath;

struct EnvVar {
  std::string name;
  std::string value;
  bool operator==(const EnvVar&) const = default;
};

// What the node contributes to a container's environment.
struct NodeFacts {
  std::string pod_ip;   // status.podIP (= host IP: pods share the host network)
  std::string host_ip;  // status.hostIP
  // Node allocatable by resource name ("cpu", "memory", ...): the default for
  // unset limits in resourceFieldRef.
  std::map<std::string, Quantity> allocatable;
};

// One container ready to start (argv[0] may be a bare name to look up in PATH).
struct ContainerCommand {
  std::vector<std::string> argv;
  std::vector<EnvVar> env;
  std::string working_dir;  // container.workingDir as written ("" when unset)
};

// Expands $(VAR) references in `text` with `lookup` (see above).
std::string ExpandVars(std::string_view text, const std::map<std::string, std::string, std::less<>>& vars);

// Resolves the environment of container `container_name` (regular or init).
// Errors: kInvalid (unsupported fieldPath / resource / source, bad divisor),
// kNotFound when the pod has no such container.
StatusOr<std::vector<EnvVar>> ResolveEnv(const api::Object& pod, std::string_view container_name,
                                         const NodeFacts& node);

// The full command: environment (ResolveEnv) and argv with $(VAR) expanded
// (empty argv when the container has no command). Errors as ResolveEnv.
StatusOr<ContainerCommand> ResolveCommand(const api::Object& pod, std::string_view container_name,
                                          const NodeFacts& node);

// One downward API field (the fieldRef paths listed above) of `pod`. Errors: kInvalid
// "unsupported fieldPath: <path>".
StatusOr<std::string> FieldRefValue(const api::Object& pod, std::string_view field_path, const NodeFacts& node);
// One resourceFieldRef of `own_container` (or of ref.containerName), as listed above.
// Errors: kInvalid for an unknown container, resource or divisor.
StatusOr<std::string> ResourceFieldRefValue(const api::Object& pod, const api::Object& own_container,
                                            const api::Object& ref, const NodeFacts& node);
// The container JSON (from spec.containers or spec.initContainers), or nullptr.
const api::Object* FindContainer(const api::Object& pod, std::string_view name);

}  // namespace berth::agent
