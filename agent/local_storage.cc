#include "agent/local_storage.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <deque>
#include <dirent.h>
#include <fcntl.h>
#include <set>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <utility>

#include "api/unstructured.h"
#include "core/quantity.h"

namespace berth::agent {
namespace {

constexpr char kEmptyDirPluginDir[] = "volumes/kubernetes.io~empty-dir";

// One directory being read: its stream (which owns the fd).
struct OpenDir {
  DIR* dir = nullptr;
  explicit OpenDir(int fd) : dir(fdopendir(fd)) {
    if (dir == nullptr) close(fd);
  }
  OpenDir(OpenDir&& o) noexcept : dir(std::exchange(o.dir, nullptr)) {}
  OpenDir& operator=(OpenDir&&) = delete;
  ~OpenDir() {
    if (dir != nullptr) closedir(dir);
  }
};

// Opens `name` below `parent_fd` as a directory on `dev` without following a
// symlink; -1 when it is not one (any more: the entry may have been swapped
// since it was looked at, so the inode is checked again).
int OpenSubdir(int parent_fd, const char* name, dev_t dev, ino_t ino) {
  int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_dev != dev || st.st_ino != ino) {
    close(fd);
    return -1;
  }
  return fd;
}

class Walker {
 public:
  explicit Walker(int64_t max_entries) : max_entries_(max_entries) {}

  DiskUsage Run(const std::string& root) {
    int fd = open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return usage_;
    struct stat st {};
    if (fstat(fd, &st) != 0) {
      close(fd);
      return usage_;
    }
    dev_ = st.st_dev;
    usage_.bytes += st.st_blocks * 512;
    usage_.entries = 1;
    deferred_.push_back(fd);
    // Each deferred directory is walked as a root of its own once the stack is
    // empty, so open directories never exceed kMaxDiskUsageDepth for the stack
    // plus as many deferred ones.
    while (!deferred_.empty() && !usage_.truncated) {
      int next = deferred_.front();
      deferred_.pop_front();
      Walk(next);
    }
    for (int d : deferred_) close(d);
    deferred_.clear();
    return usage_;
  }

 private:
  void Walk(int root_fd) {
    std::vector<OpenDir> stack;
    stack.emplace_back(root_fd);
    if (stack.back().dir == nullptr) return;
    while (!stack.empty()) {
      DIR* d = stack.back().dir;
      errno = 0;
      const dirent* e = readdir(d);
      if (e == nullptr) {
        stack.pop_back();
        continue;
      }
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      if (usage_.entries >= max_entries_) {
        usage_.truncated = true;
        return;
      }
      struct stat st {};
      if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
      ++usage_.entries;
      if (st.st_dev != dev_) continue;  // a mount point: another filesystem's
      if (!S_ISDIR(st.st_mode) && st.st_nlink > 1 && !linked_.insert({st.st_dev, st.st_ino}).second) continue;
      usage_.bytes += st.st_blocks * 512;
      if (!S_ISDIR(st.st_mode)) continue;
      int fd = OpenSubdir(dirfd(d), e->d_name, dev_, st.st_ino);
      if (fd < 0) continue;
      if (stack.size() < static_cast<size_t>(kMaxDiskUsageDepth)) {
        stack.emplace_back(fd);
        if (stack.back().dir == nullptr) stack.pop_back();
      } else if (deferred_.size() < static_cast<size_t>(kMaxDiskUsageDepth)) {
        deferred_.push_back(fd);
      } else {
        close(fd);
        usage_.truncated = true;
        return;
      }
    }
  }

  const int64_t max_entries_;
  dev_t dev_ = 0;
  DiskUsage usage_;
  std::set<std::pair<dev_t, ino_t>> linked_;  // hard-linked inodes already counted
  std::deque<int> deferred_;
};

std::optional<Quantity> QuantityAt(const api::Object& list, std::string_view name) {
  const api::Object& v = api::Field(list, std::string(name));
  if (!v.is_string() && !v.is_number()) return std::nullopt;
  StatusOr<Quantity> q = Quantity::Parse(v.is_string() ? v.get<std::string>() : v.dump());
  if (!q.ok()) return std::nullopt;
  return *q;
}

std::optional<Quantity> ContainerLimit(const api::Object& c) {
  return QuantityAt(api::NestedField(c, {"resources", "limits"}), "ephemeral-storage");
}

// A container's requests.ephemeral-storage, else its limit (the API defaults requests to limits).
Quantity ContainerRequest(const api::Object& c) {
  if (auto r = QuantityAt(api::NestedField(c, {"resources", "requests"}), "ephemeral-storage")) return *r;
  if (auto l = ContainerLimit(c)) return *l;
  return Quantity();
}

// resourcehelper.PodLimits for ephemeral-storage: the containers' sum, or the largest init
// container's when larger; nullopt when no container declares one.
std::optional<Quantity> PodLimit(const api::Object& pod) {
  const api::Object& spec = api::Field(pod, "spec");
  std::optional<Quantity> sum;
  for (const api::Object& c : api::ArrayAt(spec, "containers")) {
    if (auto l = ContainerLimit(c)) sum = sum ? *sum + *l : *l;
  }
  for (const api::Object& c : api::ArrayAt(spec, "initContainers")) {
    if (auto l = ContainerLimit(c); l && (!sum || *l > *sum)) sum = *l;
  }
  return sum;
}

// kubelet podRequest(pod, ephemeral-storage): the containers' sum, or the largest init container's.
int64_t PodRequest(const api::Object& pod) {
  const api::Object& spec = api::Field(pod, "spec");
  Quantity sum;
  for (const api::Object& c : api::ArrayAt(spec, "containers")) sum = sum + ContainerRequest(c);
  for (const api::Object& c : api::ArrayAt(spec, "initContainers")) sum = std::max(sum, ContainerRequest(c));
  return sum.Value();
}

std::string Bytes(int64_t n) { return Quantity::FromUnits(n, Quantity::Format::kBinarySI).String(); }

bool IsDiskEmptyDir(const api::Object& volume) {
  const api::Object& source = api::Field(volume, "emptyDir");
  return source.is_object() && api::StringAt(source, "medium") != "Memory";
}

}  // namespace

DiskUsage MeasureDiskUsage(const std::string& dir, int64_t max_entries) { return Walker(max_entries).Run(dir); }

PodStorageUsage MeasurePodStorage(const std::string& pod_dir, const api::Object& pod) {
  PodStorageUsage out;
  auto add = [&](const DiskUsage& u) {
    out.truncated = out.truncated || u.truncated;
    return u.bytes;
  };
  out.total = add(MeasureDiskUsage(pod_dir));
  const api::Object& spec = api::Field(pod, "spec");
  for (const char* list : {"initContainers", "containers"}) {
    for (const api::Object& c : api::ArrayAt(spec, list)) {
      const std::string name = api::StringAt(c, "name");
      // The API validated the name as a DNS-1123 label; a path element is still checked here.
      if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") continue;
      out.containers[name] =
          add(MeasureDiskUsage(pod_dir + "/runs/" + name)) + add(MeasureDiskUsage(pod_dir + "/logs/" + name));
    }
  }
  for (const api::Object& v : api::ArrayAt(spec, "volumes")) {
    const std::string name = api::StringAt(v, "name");
    if (!IsDiskEmptyDir(v) || name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
      continue;
    }
    out.empty_dirs[name] = add(MeasureDiskUsage(pod_dir + "/" + kEmptyDirPluginDir + "/" + name));
  }
  return out;
}

bool HasLocalStorageLimits(const api::Object& pod) {
  const api::Object& spec = api::Field(pod, "spec");
  for (const api::Object& v : api::ArrayAt(spec, "volumes")) {
    if (IsDiskEmptyDir(v) && QuantityAt(api::Field(v, "emptyDir"), "sizeLimit")) return true;
  }
  return PodLimit(pod).has_value();
}

std::optional<std::string> LocalStorageLimitViolation(const api::Object& pod, const PodStorageUsage& usage) {
  const api::Object& spec = api::Field(pod, "spec");
  for (const api::Object& v : api::ArrayAt(spec, "volumes")) {
    if (!IsDiskEmptyDir(v)) continue;
    std::optional<Quantity> size = QuantityAt(api::Field(v, "emptyDir"), "sizeLimit");
    const std::string name = api::StringAt(v, "name");
    auto used = usage.empty_dirs.find(name);
    if (!size || size->milli() <= 0 || used == usage.empty_dirs.end() || used->second <= size->Value()) continue;
    return "Usage of EmptyDir volume \"" + name + "\" exceeds the limit \"" + size->String() + "\". ";
  }
  if (std::optional<Quantity> limit = PodLimit(pod)) {
    if (usage.total > limit->Value()) {
      return "Pod ephemeral local storage usage exceeds the total limit of containers " + limit->String() + ". ";
    }
    if (usage.truncated) {
      // Not upstream (cadvisor's du has no bound): a pod that hides its usage
      // behind more entries than one walk visits cannot be held to its limit.
      return "Pod ephemeral local storage usage cannot be measured: its directory holds more than " +
             std::to_string(kMaxDiskUsageEntries) + " entries or nests deeper than the node measures. ";
    }
  }
  for (const api::Object& c : api::ArrayAt(spec, "containers")) {
    std::optional<Quantity> limit = ContainerLimit(c);
    const std::string name = api::StringAt(c, "name");
    auto used = usage.containers.find(name);
    if (!limit || limit->milli() == 0 || used == usage.containers.end() || used->second <= limit->Value()) continue;
    return "Container " + name + " exceeded its local ephemeral storage limit \"" + limit->String() + "\". ";
  }
  return std::nullopt;
}

StatusOr<FilesystemStats> StatFilesystem(const std::string& path) {
  struct statvfs fs {};
  if (statvfs(path.c_str(), &fs) != 0) return InternalError("statfs " + path + ": " + std::strerror(errno));
  const auto frsize = static_cast<int64_t>(fs.f_frsize ? fs.f_frsize : fs.f_bsize);
  return FilesystemStats{static_cast<int64_t>(fs.f_blocks) * frsize, static_cast<int64_t>(fs.f_bavail) * frsize};
}

int64_t EvictionThreshold::Bytes(int64_t capacity) const {
  if (bytes) return *bytes;
  if (percent) return static_cast<int64_t>(static_cast<double>(capacity) * *percent / 100.0);
  return 0;
}

bool EvictionThreshold::Met(const FilesystemStats& fs) const { return enabled() && fs.available < Bytes(fs.capacity); }

StatusOr<EvictionThreshold> ParseEvictionHard(std::string_view text) {
  EvictionThreshold t;
  if (text.empty() || text == "none") return t;
  auto fail = [&](const std::string& why) {
    return InvalidError("--eviction-hard \"" + std::string(text) + "\": " + why);
  };
  const size_t lt = text.find('<');
  if (lt == std::string_view::npos) return fail("want nodefs.available<QUANTITY or nodefs.available<PERCENT%");
  const std::string_view signal = text.substr(0, lt);
  const std::string_view value = text.substr(lt + 1);
  if (signal != "nodefs.available") {
    return fail("signal \"" + std::string(signal) + "\" is not supported (berth evicts on nodefs.available only)");
  }
  if (value.ends_with('%')) {
    const std::string number(value.substr(0, value.size() - 1));
    char* end = nullptr;
    errno = 0;
    const double p = std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() || errno != 0 || !std::isfinite(p) || p <= 0 ||
        p > 100) {
      return fail("percentage must be in (0%, 100%]");
    }
    t.percent = p;
    return t;
  }
  StatusOr<Quantity> q = Quantity::Parse(value);
  if (!q.ok()) return fail(q.status().message());
  if (q->milli() <= 0) return fail("quantity must be positive");
  t.bytes = q->Value();
  return t;
}

void RankForDiskPressure(std::vector<DiskPressureCandidate>* pods) {
  std::stable_sort(pods->begin(), pods->end(), [](const DiskPressureCandidate& a, const DiskPressureCandidate& b) {
    const bool a_exceeds = a.usage > a.request;
    const bool b_exceeds = b.usage > b.request;
    if (a_exceeds != b_exceeds) return a_exceeds;
    if (a.priority != b.priority) return a.priority < b.priority;
    return a.usage - a.request > b.usage - b.request;
  });
}

std::string DiskPressureEvictionMessage(const EvictionThreshold& threshold, const FilesystemStats& fs,
                                        const api::Object& pod, const PodStorageUsage& usage) {
  std::string message = "The node was low on resource: ephemeral-storage. ";
  message +=
      "Threshold quantity: " + Bytes(threshold.Bytes(fs.capacity)) + ", available: " + Bytes(fs.available) + ". ";
  for (const api::Object& c : api::ArrayAt(api::Field(pod, "spec"), "containers")) {
    const std::string name = api::StringAt(c, "name");
    auto used = usage.containers.find(name);
    if (used == usage.containers.end()) continue;
    const Quantity request = [&] {
      auto r = QuantityAt(api::NestedField(c, {"resources", "requests"}), "ephemeral-storage");
      return r ? *r : Quantity();
    }();
    if (used->second <= request.Value()) continue;
    message += "Container " + name + " was using " + Bytes(used->second) + ", request is " + request.String() +
               ", has larger consumption of ephemeral-storage. ";
  }
  return message;
}

bool ToleratesDiskPressure(const api::Object& pod) {
  for (const api::Object& t : api::ArrayAt(api::Field(pod, "spec"), "tolerations")) {
    const std::string key = api::StringAt(t, "key");
    const std::string op = api::StringAt(t, "operator");
    const std::string effect = api::StringAt(t, "effect");
    if (!effect.empty() && effect != "NoSchedule") continue;
    if (op == "Exists" ? (key.empty() || key == kDiskPressureTaint)
                       : (key == kDiskPressureTaint && api::StringAt(t, "value").empty())) {
      return true;
    }
  }
  return false;
}

int64_t PodEphemeralStorageRequest(const api::Object& pod) { return PodRequest(pod); }

}  // namespace berth::agent
