// DeviceAllocator: assigns device indices of one extended resource (e.g.
// nvidia.com/gpu) on a node to containers, as the NVIDIA device plugin does
// through the kubelet's device manager, and the environment that exposes them.
//
// A node has `count` devices with indices 0..count-1: real GPUs (counted with
// `nvidia-smi -L`, ParseNvidiaSmiList) or virtual capacity declared for the
// node (`--node-capacity nvidia.com/gpu=8`), in which case the indices are
// only labels and the processes see CUDA_VISIBLE_DEVICES without real devices.
// A container asking for N devices (resources.limits["nvidia.com/gpu"]; for
// extended resources requests must equal limits) gets the N lowest free
// indices; the owner key is "<pod uid>/<container>". Allocation is
// all-or-nothing and idempotent for an owner that already holds devices.
// The environment (DeviceEnv): CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES
// set to the comma-separated indices ("0,1"); a container with no devices on
// a node with devices gets both set to "" ("void" for NVIDIA_VISIBLE_DEVICES,
// as the NVIDIA runtime hides all GPUs from containers that asked for none).
//
// Thread-safety: needs external synchronisation.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/container_env.h"
#include "api/object.h"
#include "core/status.h"

namespace berth::agent {

inline constexpr std::string_view kNvidiaGpu = "nvidia.com/gpu";

class DeviceAllocator {
 public:
  explicit DeviceAllocator(int count) : count_(count), owner_of_(static_cast<size_t>(count)) {}

  int count() const { return count_; }
  int free_count() const;
  // The N lowest free indices for `owner`, or nullopt when fewer than N are
  // free (nothing is assigned then). An owner that already holds devices gets
  // its existing set back when N matches; another N is an error (nullopt).
  std::optional<std::vector<int>> Allocate(const std::string& owner, int n);
  // Re-adopts an assignment found on disk after an agent restart. Errors:
  // kInvalid for an index out of range, kConflict when held by another owner.
  Status Restore(const std::string& owner, const std::vector<int>& indices);
  void Release(const std::string& owner);
  // Releases every owner starting with `prefix` ("<pod uid>/": a whole pod).
  void ReleasePrefix(const std::string& prefix);
  std::vector<int> Held(const std::string& owner) const;

 private:
  int count_;
  std::vector<std::string> owner_of_;  // index → owner ("" = free)
};

// The number of devices of `resource` the container asks for (limits, else
// requests; 0 when absent). Errors: kInvalid for a non-integer amount.
StatusOr<int> DeviceRequest(const api::Object& container, std::string_view resource = kNvidiaGpu);

// CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES for the assigned indices
// (see above); empty when the node has no devices at all.
std::vector<EnvVar> DeviceEnv(const std::vector<int>& indices, int node_device_count);

// Counts the GPUs in `nvidia-smi -L` output ("GPU 0: NVIDIA A100 (UUID: ...)" lines).
int ParseNvidiaSmiList(std::string_view output);

}  // namespace berth::agent
