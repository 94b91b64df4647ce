// Which container images a node can run on the host: berth runs a container's
// command as a host process (in the node's pod sandbox, agent/shim/sandbox.h)
// and pulls nothing, so `image` names the environment the command expects. A
// node declares the images its host provides (`berth agent --host-images`,
// `berth server --host-images`) and publishes them on its Node as the
// annotation kHostImagesAnnotation; a node with no such annotation runs any
// image's command on its host (berth's behaviour before the declaration
// existed, documented in docs/security.md "Images").
//
// Where it is enforced:
//   - placement: the HostImages filter (placement/filters.h) after
//     NodeAffinity → UnschedulableAndUnresolvable
//     `node(s) cannot run image "<image>" on the host`, so the pod stays
//     Pending with a FailedScheduling event naming the image;
//   - the node agent's admission (agent/pod_admission.h), for pods bound by
//     hand (spec.nodeName): phase Failed, reason kHostImageRejectReason.
// Kubernetes has no such filter (the kubelet pulls what is named; ImageLocality
// only scores); the closest upstream mechanism is an admission policy
// restricting image names.
//
// Patterns: a comma-separated list; each entry is an image name that matches
// exactly, or ends in '*' and matches every image starting with what precedes
// it ("pytorch/pytorch:*", "registry.example.com/team-a/*", "*" = any).
// Names are compared as written (no registry/tag normalization: "busybox" and
// "docker.io/library/busybox:latest" are different names). Empty entries and
// surrounding spaces are ignored.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace berth::scheduling {

inline constexpr std::string_view kHostImagesAnnotation = "berth.dev/host-images";
// Bounds of a declaration (a Node annotation; the API bounds all annotations at 256 KiB).
inline constexpr size_t kMaxHostImagePatterns = 256;
inline constexpr size_t kMaxHostImagePatternBytes = 512;
inline constexpr std::string_view kHostImageRejectReason = "UnsupportedImage";

// The patterns of a declaration; entries beyond the bounds above are dropped
// (ValidateHostImages reports them where a user writes the list).
std::vector<std::string> ParseHostImages(std::string_view text);
// "" when `text` is a valid declaration, else the reason (too many entries, an
// entry too long, a '*' not at the end).
std::string ValidateHostImages(std::string_view text);
// Whether `image` matches one of `patterns`.
bool HostImageAllowed(const std::vector<std::string>& patterns, std::string_view image);
// The first of `images` no pattern matches; nullopt when `patterns` is nullopt
// (the node declared nothing) or every image matches.
std::optional<std::string> FirstUnsupportedImage(const std::optional<std::vector<std::string>>& patterns,
                                                 const std::vector<std::string>& images);
// The declaration as the annotation carries it: the patterns joined by ','.
std::string FormatHostImages(const std::vector<std::string>& patterns);
// `node(s) cannot run image "<image>" on the host`.
std::string UnsupportedImageReason(std::string_view image);

}  // namespace berth::scheduling
