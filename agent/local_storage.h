// Local ephemeral storage: what a pod uses of the node's disk, the limits it
// declares, and the node's disk pressure. What the kubelet's eviction manager
// does for its nodefs signals (kubernetes/kubernetes 1.32
// pkg/kubelet/eviction/eviction_manager.go localStorageEviction and
// synchronize, helpers.go evictionMessage / rankDiskPressureFunc), with usage
// measured as cadvisor's `du` measures it.
//
// Usage (MeasureDiskUsage): the bytes of a directory tree on disk, as
// `du -sx --block-size=1`: st_blocks × 512 of every entry (a sparse file counts
// what it allocated, not its size), each hard-linked inode once, symlinks
// themselves but never their targets, and nothing on another filesystem (a
// mount point is not entered). The walk is iterative (no recursion, so a
// directory nested 100,000 deep costs a stack of fds, not of frames: at most
// kMaxDiskUsageDepth open directories) and opens each directory relative to
// its parent's fd with O_NOFOLLOW, so a pod renaming or swapping entries
// while it is measured never makes the walk leave the tree. It visits at most
// kMaxDiskUsageEntries entries; beyond that the result is `truncated` and its
// bytes a lower bound (a pod can only be under-measured by hiding in
// millions of inodes, never over-measured). Entries that vanish during the
// walk are skipped.
//
// A pod's usage (MeasurePodStorage), over its directory
// <data dir>/pods/<ns>_<name>_<uid>/ (agent/node_agent.h):
//   containers[c]  runs/<c>/ (each run's record and its on-disk /tmp, the
//                  container's writable layer) + logs/<c>/ (its logs): the
//                  kubelet's container Rootfs + Logs
//   empty_dirs[v]  volumes/kubernetes.io~empty-dir/<v>/ of each disk-backed
//                  emptyDir (a `medium: Memory` one is a tmpfs, charged to
//                  memory)
//   total          the whole pod directory: the containers, every local
//                  volume, and the pod's shared working directory work/
//
// Limits (LocalStorageLimitViolation, localStorageEviction's order, the first
// exceeded one is the answer; usage must be strictly above the limit):
//   an emptyDir's sizeLimit (> 0):
//     Usage of EmptyDir volume "<v>" exceeds the limit "<sizeLimit>".
//   the pod's limit, the sum of its containers' limits.ephemeral-storage
//   (init containers: the largest one, when larger; resourcehelper.PodLimits),
//   present when any container declares one:
//     Pod ephemeral local storage usage exceeds the total limit of containers <q>.
//   a container's limits.ephemeral-storage (> 0):
//     Container <c> exceeded its local ephemeral storage limit "<q>".
// Quantities print canonically (Quantity::String). The pod is evicted: phase
// Failed, reason "Evicted", the message, a Warning Evicted event, its
// containers killed after kEvictionGraceSeconds (the kubelet's immediate
// eviction, grace 0, raised to its minimum of 2 s in killContainer). These
// evictions add no DisruptionTarget condition (1.32 passes none).
//
// Node pressure (EvictionThreshold, DiskPressureCandidate): the signal
// nodefs.available of the filesystem holding the node's data directory
// against the hard threshold (kubelet --eviction-hard, default
// "nodefs.available<10%"; "<5Gi" is an absolute amount). While it is met the
// Node has condition DiskPressure True (reason KubeletHasDiskPressure,
// message "kubelet has disk pressure"), kept until the signal has been clear
// for kPressureTransitionPeriod (--eviction-pressure-transition-period, 5m);
// the scheduler then sees the taint node.kubernetes.io/disk-pressure:
// NoSchedule (placement/snapshot.h) and the agent admits no new pod that does
// not tolerate it (reason Evicted, "The node had condition: [DiskPressure]. ").
// Once per kEvictionMonitoringPeriod under pressure, one running pod is
// evicted, chosen by RankForDiskPressure: pods using more than they request
// first, then lower priority, then the larger usage above the request.
// Any pod may be evicted: upstream spares only critical static pods
// (evictPod: IsCriticalPod && IsStaticPod), and berth runs no static pods, so
// a tenant's system-node-critical pod is no shield. Its message:
//   The node was low on resource: ephemeral-storage. Threshold quantity: <q>, available: <a>.
// followed, for each container using more than its request, by
//   Container <c> was using <u>, request is <r>, has larger consumption of ephemeral-storage.
// and the pod gets DisruptionTarget True, reason TerminationByKubelet.
//
// Thread-safety: pure functions, and walks of the file system that only read.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "core/clock.h"
#include "core/status.h"

namespace berth::agent {

// Bounds of one walk: entries visited and directories open at once.
inline constexpr int64_t kMaxDiskUsageEntries = 1'000'000;
inline constexpr int kMaxDiskUsageDepth = 256;

// How often a running pod with storage limits is measured, and how often the
// node's filesystem is looked at (the eviction manager's monitoring period,
// kubelet evictionMonitoringPeriod = 10 s).
inline constexpr Duration kEvictionMonitoringPeriod = std::chrono::seconds(10);
// kubelet --eviction-pressure-transition-period default.
inline constexpr Duration kPressureTransitionPeriod = std::chrono::minutes(5);
// The kubelet's minimum kill grace (kuberuntime_container.go minimumGracePeriodInSeconds),
// which an immediate eviction (grace 0) gets.
inline constexpr int64_t kEvictionGraceSeconds = 2;
// kubelet --eviction-hard default for the nodefs signal.
inline constexpr char kDefaultEvictionHard[] = "nodefs.available<10%";

// The kubelet's eviction reason and the Node condition it sets (eviction/helpers.go,
// kubelet_node_status.go setNodeDiskPressureCondition).
inline constexpr char kEvictedReason[] = "Evicted";
inline constexpr char kDiskPressureCondition[] = "DiskPressure";
inline constexpr char kHasDiskPressureReason[] = "KubeletHasDiskPressure";
inline constexpr char kHasDiskPressureMessage[] = "kubelet has disk pressure";
inline constexpr char kNoDiskPressureReason[] = "KubeletHasNoDiskPressure";
inline constexpr char kNoDiskPressureMessage[] = "kubelet has no disk pressure";
inline constexpr char kDiskPressureTaint[] = "node.kubernetes.io/disk-pressure";
inline constexpr char kDiskPressureAdmitMessage[] = "The node had condition: [DiskPressure]. ";
// Pods at or above this priority are critical (kubelettypes.IsCriticalPod:
// scheduling.SystemCriticalPriority): admitted under disk pressure.
inline constexpr int32_t kSystemCriticalPriority = 2'000'000'000;

struct DiskUsage {
  int64_t bytes = 0;
  int64_t entries = 0;
  bool truncated = false;  // the walk hit kMaxDiskUsageEntries or kMaxDiskUsageDepth
};

// See the file comment. A missing `dir` is zero usage.
DiskUsage MeasureDiskUsage(const std::string& dir, int64_t max_entries = kMaxDiskUsageEntries);

struct PodStorageUsage {
  int64_t total = 0;
  std::map<std::string, int64_t> containers;  // every container of the spec (0 when nothing on disk)
  std::map<std::string, int64_t> empty_dirs;  // disk-backed emptyDir volumes
  bool truncated = false;
};

PodStorageUsage MeasurePodStorage(const std::string& pod_dir, const api::Object& pod);

// Whether the pod declares anything LocalStorageLimitViolation checks (an
// emptyDir sizeLimit or a limits.ephemeral-storage): others are measured only
// under node pressure.
bool HasLocalStorageLimits(const api::Object& pod);

// The eviction message of the first limit the usage exceeds; nullopt when none.
std::optional<std::string> LocalStorageLimitViolation(const api::Object& pod, const PodStorageUsage& usage);

// The capacity and free bytes of the filesystem holding `path` (statfs:
// f_blocks and f_bavail × f_frsize, what an unprivileged writer can use).
struct FilesystemStats {
  int64_t capacity = 0;
  int64_t available = 0;
};
StatusOr<FilesystemStats> StatFilesystem(const std::string& path);

// The hard threshold of nodefs.available: a percentage of the capacity or an
// absolute quantity. Parsed from kubelet's --eviction-hard syntax; only the
// nodefs.available signal is supported (others are refused by name). "" or
// "none" disables it.
struct EvictionThreshold {
  std::optional<double> percent;  // of capacity, (0, 100]
  std::optional<int64_t> bytes;
  bool enabled() const { return percent.has_value() || bytes.has_value(); }
  // The threshold in bytes for a filesystem of `capacity` bytes.
  int64_t Bytes(int64_t capacity) const;
  // available < threshold (the kubelet compares strictly).
  bool Met(const FilesystemStats& fs) const;
};
// kInvalid: `--eviction-hard "<text>": <reason>`.
StatusOr<EvictionThreshold> ParseEvictionHard(std::string_view text);

// A running pod as the disk-pressure ranking sees it.
struct DiskPressureCandidate {
  std::string uid;
  int32_t priority = 0;
  int64_t usage = 0;    // PodStorageUsage::total
  int64_t request = 0;  // the pod's requests.ephemeral-storage (scheduling::PodRequests)
};
// kubelet podRequest(pod, ephemeral-storage) in bytes: the containers' requests
// (a limit alone counts as its request) summed, or the largest init container's.
int64_t PodEphemeralStorageRequest(const api::Object& pod);

// Sorted into eviction order (first = evicted first).
void RankForDiskPressure(std::vector<DiskPressureCandidate>* pods);

// The node-pressure eviction message for `pod` (see the file comment).
std::string DiskPressureEvictionMessage(const EvictionThreshold& threshold, const FilesystemStats& fs,
                                        const api::Object& pod, const PodStorageUsage& usage);

// The pod tolerates node.kubernetes.io/disk-pressure:NoSchedule, so it is admitted under pressure.
bool ToleratesDiskPressure(const api::Object& pod);

}  // namespace berth::agent
