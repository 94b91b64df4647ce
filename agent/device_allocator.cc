#include "agent/device_allocator.h"

#include "core/quantity.h"

namespace berth::agent {

int DeviceAllocator::free_count() const {
  int n = 0;
  for (const auto& o : owner_of_) n += o.empty() ? 1 : 0;
  return n;
}

std::vector<int> DeviceAllocator::Held(const std::string& owner) const {
  std::vector<int> out;
  for (int i = 0; i < count_; ++i) {
    if (owner_of_[static_cast<size_t>(i)] == owner) out.push_back(i);
  }
  return out;
}

std::optional<std::vector<int>> DeviceAllocator::Allocate(const std::string& owner, int n) {
  BERTH_CHECK(!owner.empty());
  std::vector<int> held = Held(owner);
  if (!held.empty()) {
    if (static_cast<int>(held.size()) == n) return held;
    return std::nullopt;
  }
  if (n < 0 || free_count() < n) return std::nullopt;
  std::vector<int> out;
  for (int i = 0; i < count_ && static_cast<int>(out.size()) < n; ++i) {
    if (owner_of_[static_cast<size_t>(i)].empty()) {
      owner_of_[static_cast<size_t>(i)] = owner;
      out.push_back(i);
    }
  }
  return out;
}

Status DeviceAllocator::Restore(const std::string& owner, const std::vector<int>& indices) {
  for (int i : indices) {
    if (i < 0 || i >= count_) {
      return InvalidError("device index " + std::to_string(i) + " out of range [0, " + std::to_string(count_) + ")");
    }
    const std::string& cur = owner_of_[static_cast<size_t>(i)];
    if (!cur.empty() && cur != owner) {
      return ConflictError("device " + std::to_string(i) + " is held by " + cur);
    }
  }
  for (int i : indices) owner_of_[static_cast<size_t>(i)] = owner;
  return Status::Ok();
}

void DeviceAllocator::Release(const std::string& owner) {
  for (auto& o : owner_of_) {
    if (o == owner) o.clear();
  }
}

void DeviceAllocator::ReleasePrefix(const std::string& prefix) {
  for (auto& o : owner_of_) {
    if (!o.empty() && o.starts_with(prefix)) o.clear();
  }
}

StatusOr<int> DeviceRequest(const api::Object& container, std::string_view resource) {
  auto res = container.find("resources");
  if (res == container.end() || !res->is_object()) return 0;
  for (const char* kind : {"limits", "requests"}) {
    auto k = res->find(kind);
    if (k == res->end() || !k->is_object()) continue;
    auto v = k->find(std::string(resource));
    if (v == k->end()) continue;
    std::string text = v->is_string() ? v->get<std::string>() : v->dump();
    BERTH_ASSIGN_OR_RETURN(Quantity q, Quantity::Parse(text));
    if (q.milli() % 1000 != 0 || q.milli() < 0) {
      return InvalidError("resources." + std::string(kind) + "[" + std::string(resource) +
                          "]: must be a whole number of devices, got " + text);
    }
    return static_cast<int>(q.milli() / 1000);
  }
  return 0;
}

std::vector<EnvVar> DeviceEnv(const std::vector<int>& indices, int node_device_count) {
  if (node_device_count <= 0) return {};
  std::string list;
  for (size_t i = 0; i < indices.size(); ++i) list += (i ? "," : "") + std::to_string(indices[i]);
  return {{"CUDA_VISIBLE_DEVICES", list}, {"NVIDIA_VISIBLE_DEVICES", indices.empty() ? "void" : list}};
}

int ParseNvidiaSmiList(std::string_view output) {
  int n = 0;
  size_t pos = 0;
  while (pos < output.size()) {
    size_t nl = output.find('\n', pos);
    std::string_view line = output.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    if (line.starts_with("GPU ") && line.find(':') != std::string_view::npos) ++n;
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return n;
}

}  // namespace berth::agent
