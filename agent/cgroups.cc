#include "agent/cgroups.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <signal.h>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "api/unstructured.h"
#include "core/quantity.h"
#include "placement/model.h"
#include "scheduling/pod_requests.h"

namespace berth::agent {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kV2Controllers[] = {"cpu", "memory", "pids"};
constexpr std::string_view kV1Controllers[] = {"cpu", "cpuacct", "memory", "pids"};

// The file that shows a v1 controller is attached to a hierarchy.
std::string_view V1ProbeFile(std::string_view controller) {
  if (controller == "cpu") return "cpu.shares";
  if (controller == "cpuacct") return "cpuacct.usage";
  if (controller == "memory") return "memory.limit_in_bytes";
  return "pids.max";
}

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// One write(2) of `text`, as the kernel's cgroup files want it.
Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) return InternalError("cannot open " + path + ": " + std::strerror(errno));
  out << text;
  out.flush();
  if (!out) return InternalError("cannot write \"" + text + "\" to " + path + ": " + std::strerror(errno));
  return Status::Ok();
}

bool HasWord(const std::string& text, std::string_view word) {
  std::istringstream in(text);
  std::string w;
  while (in >> w) {
    if (w == word) return true;
  }
  return false;
}

// The value of `key` in a "key value" per line file (memory.events, cpu.stat, memory.oom_control).
std::optional<int64_t> KeyedValue(const std::string& path, std::string_view key) {
  auto text = ReadFile(path);
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  std::string k;
  long long v;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return std::nullopt;
}

std::optional<int64_t> SingleValue(const std::string& path) {
  auto text = ReadFile(path);
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  long long v;
  if (!(in >> v)) return std::nullopt;
  return v;
}

bool SafeName(std::string_view s) {
  return !s.empty() && s.size() <= 128 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
  });
}

std::string Join(const std::string& mount, const std::string& cgroup_path) {
  return cgroup_path == "/" || cgroup_path.empty() ? mount : mount + cgroup_path;
}

std::vector<pid_t> Procs(const std::string& dir) {
  std::vector<pid_t> out;
  auto text = ReadFile(dir + "/cgroup.procs");
  if (!text) return out;
  std::istringstream in(*text);
  long long pid;
  while (in >> pid) {
    if (pid > 0) out.push_back(static_cast<pid_t>(pid));
  }
  return out;
}

}  // namespace

int64_t MilliCpuToShares(int64_t milli_cpu) {
  if (milli_cpu <= 0) return kMinCpuShares;
  // Conceptually milli / 1000 * 1024, factored for rounding (as upstream).
  const int64_t shares = milli_cpu >= kMaxCpuShares * kMilliCpuPerCpu / kCpuSharesPerCpu
                             ? kMaxCpuShares
                             : milli_cpu * kCpuSharesPerCpu / kMilliCpuPerCpu;
  return std::clamp(shares, kMinCpuShares, kMaxCpuShares);
}

int64_t MilliCpuToQuota(int64_t milli_cpu, int64_t period) {
  if (milli_cpu <= 0) return 0;
  // Bounded so the product cannot overflow (10^6 CPUs is far beyond any machine).
  const int64_t quota = std::min<int64_t>(milli_cpu, int64_t{1} << 30) * period / kMilliCpuPerCpu;
  return std::max(quota, kMinCpuQuotaMicros);
}

int64_t CpuSharesToCpuWeight(int64_t shares) {
  shares = std::clamp(shares, kMinCpuShares, kMaxCpuShares);
  return 1 + (shares - 2) * 9999 / 262142;
}

// ---------------------------------------------------------------------------
// Limits from the pod spec.

namespace {

std::optional<Quantity> QuantityAt(const api::Object& container, std::string_view list, std::string_view name) {
  const api::Object& v = api::NestedField(container, {"resources", list, name});
  if (v.is_null()) return std::nullopt;
  StatusOr<Quantity> q = Quantity::Parse(v.is_string() ? v.get<std::string>() : v.dump());
  if (!q.ok()) return std::nullopt;
  return *q;
}

}  // namespace

CgroupLimits ContainerCgroupLimits(const api::Object& container) {
  CgroupLimits out;
  std::optional<Quantity> cpu_limit = QuantityAt(container, "limits", "cpu");
  std::optional<Quantity> cpu_request = QuantityAt(container, "requests", "cpu");
  std::optional<Quantity> memory_limit = QuantityAt(container, "limits", "memory");
  if (cpu_limit && !cpu_limit->IsZero()) out.cpu_limit_milli = cpu_limit->milli();
  if (!cpu_request) cpu_request = cpu_limit;
  if (cpu_request) out.cpu_request_milli = std::max<int64_t>(cpu_request->milli(), 0);
  if (memory_limit && !memory_limit->IsZero()) out.memory_limit_bytes = memory_limit->Value();
  return out;
}

CgroupLimits PodCgroupLimits(const api::Object& pod, std::optional<int64_t> pids_limit) {
  using List = placement::ResourceList;
  scheduling::PodResources<List> requests, limits;
  bool cpu_declared = true, memory_declared = true;
  const api::Object& spec = api::Field(pod, "spec");
  for (std::string_view list : {"initContainers", "containers"}) {
    for (const api::Object& c : api::ArrayAt(spec, list)) {
      const CgroupLimits l = ContainerCgroupLimits(c);
      scheduling::ContainerResources<List> req, lim;
      req.restart_always = lim.restart_always = api::StringAt(c, "restartPolicy") == "Always";
      req.requests.Set("cpu", Quantity::FromMilli(l.cpu_request_milli));
      if (l.cpu_limit_milli) {
        lim.requests.Set("cpu", Quantity::FromMilli(*l.cpu_limit_milli));
      } else {
        cpu_declared = false;
      }
      if (l.memory_limit_bytes) {
        lim.requests.Set("memory", Quantity::FromUnits(*l.memory_limit_bytes));
      } else {
        memory_declared = false;
      }
      const bool init = list == "initContainers";
      (init ? requests.init_containers : requests.containers).push_back(std::move(req));
      (init ? limits.init_containers : limits.containers).push_back(std::move(lim));
    }
  }
  const List pod_requests = scheduling::PodRequests(requests);
  const List pod_limits = scheduling::PodRequests(limits);
  CgroupLimits out;
  out.cpu_request_milli = pod_requests.Get("cpu").milli();
  if (cpu_declared && pod_limits.Has("cpu")) out.cpu_limit_milli = pod_limits.Get("cpu").milli();
  if (memory_declared && pod_limits.Has("memory")) out.memory_limit_bytes = pod_limits.Get("memory").Value();
  out.pids_limit = pids_limit;
  return out;
}

// ---------------------------------------------------------------------------
// Detection.

Cgroups Cgroups::Unavailable(const std::string& reason) {
  Cgroups c;
  c.unenforced_.push_back(reason);
  return c;
}

Cgroups Cgroups::Detect(const CgroupDetectOptions& options) {
  const std::string& root = options.root;
  auto self = ReadFile(options.proc_self_cgroup);
  // controller → the agent's path in its v1 hierarchy; "" → the v2 path.
  std::map<std::string, std::string, std::less<>> paths;
  if (self) {
    std::istringstream in(*self);
    std::string line;
    while (std::getline(in, line)) {
      const size_t a = line.find(':');
      const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
      if (b == std::string::npos) continue;
      const std::string list = line.substr(a + 1, b - a - 1);
      const std::string path = line.substr(b + 1);
      if (list.empty()) {
        paths[""] = path;
        continue;
      }
      std::istringstream names(list);
      std::string name;
      while (std::getline(names, name, ',')) paths[name] = path;
    }
  }

  if (fs::exists(root + "/cgroup.controllers")) {
    // cgroup v2.
    Cgroups c;
    c.version_ = CgroupVersion::kV2;
    auto fail_all = [&](const std::string& why) {
      for (std::string_view ctrl : kV2Controllers) c.unenforced_.push_back(std::string(ctrl) + ": " + why);
      return c;
    };
    std::string parent_path;
    if (options.parent) {
      parent_path = *options.parent;
    } else {
      auto it = paths.find("");
      if (it == paths.end()) return fail_all("no cgroup v2 entry (\"0::\") in " + options.proc_self_cgroup);
      parent_path = (it->second == "/" ? "" : it->second) + "/berth";
    }
    const std::string parent = Join(root, parent_path);
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) return fail_all("cannot create the cgroup " + parent + ": " + ec.message());
    const std::string available = ReadFile(root + "/cgroup.controllers").value_or("");
    const std::string above = fs::path(parent).parent_path().string();
    Hierarchy h{parent, {}};
    for (std::string_view ctrl : kV2Controllers) {
      const std::string name(ctrl);
      if (!HasWord(available, ctrl)) {
        c.unenforced_.push_back(name + ": the cgroup v2 " + name + " controller is not available at " + root +
                                " (cgroup.controllers)");
        continue;
      }
      if (!HasWord(ReadFile(parent + "/cgroup.controllers").value_or(""), ctrl)) {
        Status s = WriteFile(above + "/cgroup.subtree_control", "+" + name);
        if (!HasWord(ReadFile(parent + "/cgroup.controllers").value_or(""), ctrl)) {
          c.unenforced_.push_back(name + ": not enabled for " + parent + " (" +
                                  (s.ok() ? "not delegated to " + above : s.message()) +
                                  "); run the agent in a delegated cgroup of its own (systemd Delegate=yes) whose "
                                  "processes sit in a leaf, or configure a delegated parent");
          continue;
        }
      }
      h.controllers.push_back(name);
    }
    if (!h.controllers.empty()) {
      c.hierarchies_.push_back(std::move(h));
      if (Status s = c.EnableForChildren(parent); !s.ok()) {
        c.hierarchies_.clear();
        c.unenforced_.clear();
        return fail_all(s.message());
      }
    }
    c.ProbeFeatures();
    return c;
  }

  // cgroup v1 (or hybrid).
  Cgroups c;
  std::map<std::string, size_t> by_mount;  // canonical hierarchy → index in hierarchies_
  for (std::string_view ctrl : kV1Controllers) {
    const std::string name(ctrl);
    const std::string mount = root + "/" + name;
    auto path = paths.find(name);
    if (!fs::exists(mount + "/cgroup.procs") || path == paths.end()) {
      c.unenforced_.push_back(name + ": no cgroup v2 unified hierarchy at " + root + " and no cgroup v1 " + name +
                              " hierarchy mounted at " + mount);
      continue;
    }
    std::error_code ec;
    const std::string canonical = fs::canonical(mount, ec).string();
    const std::string parent =
        Join(mount, options.parent ? *options.parent : (path->second == "/" ? "" : path->second) + "/berth");
    fs::create_directories(parent, ec);
    if (ec) {
      c.unenforced_.push_back(name + ": cannot create the cgroup " + parent + ": " + ec.message());
      continue;
    }
    if (access(parent.c_str(), W_OK) != 0 || !fs::exists(parent + "/" + std::string(V1ProbeFile(ctrl)))) {
      c.unenforced_.push_back(name + ": the cgroup " + parent + " is not usable (no writable " +
                              std::string(V1ProbeFile(ctrl)) + ")");
      continue;
    }
    auto [it, added] = by_mount.emplace(canonical, c.hierarchies_.size());
    if (added) c.hierarchies_.push_back(Hierarchy{parent, {}});
    c.hierarchies_[it->second].controllers.push_back(name);
  }
  if (!c.hierarchies_.empty()) c.version_ = CgroupVersion::kV1;
  c.ProbeFeatures();
  return c;
}

Cgroups Cgroups::AtDirectoryV2(const std::string& parent_dir) {
  Cgroups c;
  c.version_ = CgroupVersion::kV2;
  const std::string available = ReadFile(parent_dir + "/cgroup.controllers").value_or("");
  Hierarchy h{parent_dir, {}};
  for (std::string_view ctrl : kV2Controllers) {
    if (HasWord(available, ctrl)) {
      h.controllers.emplace_back(ctrl);
    } else {
      c.unenforced_.push_back(std::string(ctrl) + ": not listed in " + parent_dir + "/cgroup.controllers");
    }
  }
  if (!h.controllers.empty()) {
    c.hierarchies_.push_back(std::move(h));
    if (Status s = c.EnableForChildren(parent_dir); !s.ok()) return Unavailable(s.message());
  }
  c.ProbeFeatures();
  return c;
}

Cgroups Cgroups::AtDirectoriesV1(const std::map<std::string, std::string>& parent_dirs) {
  Cgroups c;
  for (std::string_view ctrl : kV1Controllers) {
    auto it = parent_dirs.find(std::string(ctrl));
    if (it == parent_dirs.end()) {
      c.unenforced_.push_back(std::string(ctrl) + ": no hierarchy given");
      continue;
    }
    auto h = std::find_if(c.hierarchies_.begin(), c.hierarchies_.end(),
                          [&](const Hierarchy& x) { return x.parent == it->second; });
    if (h == c.hierarchies_.end()) {
      c.hierarchies_.push_back(Hierarchy{it->second, {}});
      h = c.hierarchies_.end() - 1;
    }
    h->controllers.emplace_back(ctrl);
  }
  if (!c.hierarchies_.empty()) c.version_ = CgroupVersion::kV1;
  c.ProbeFeatures();
  return c;
}

void Cgroups::ProbeFeatures() {
  if (const Hierarchy* m = HierarchyOf("memory")) {
    swap_max_ = version_ == CgroupVersion::kV2 && fs::exists(m->parent + "/memory.swap.max");
    memsw_ = version_ == CgroupVersion::kV1 && fs::exists(m->parent + "/memory.memsw.limit_in_bytes");
  }
  cgroup_kill_ = version_ == CgroupVersion::kV2 && !hierarchies_.empty() &&
                 fs::exists(hierarchies_.front().parent + "/cgroup.kill");
}

Status Cgroups::EnableForChildren(const std::string& dir) const {
  if (version_ != CgroupVersion::kV2 || hierarchies_.empty()) return Status::Ok();
  std::string all;
  for (const std::string& ctrl : hierarchies_.front().controllers) all += (all.empty() ? "+" : " +") + ctrl;
  auto current = ReadFile(dir + "/cgroup.subtree_control").value_or("");
  if (std::all_of(hierarchies_.front().controllers.begin(), hierarchies_.front().controllers.end(),
                  [&](const std::string& c) { return HasWord(current, c); })) {
    return Status::Ok();
  }
  return WriteFile(dir + "/cgroup.subtree_control", all);
}

const Cgroups::Hierarchy* Cgroups::HierarchyOf(std::string_view controller) const {
  for (const Hierarchy& h : hierarchies_) {
    if (std::find(h.controllers.begin(), h.controllers.end(), controller) != h.controllers.end()) return &h;
  }
  return nullptr;
}

bool Cgroups::Enforces(std::string_view controller) const { return HierarchyOf(controller) != nullptr; }

std::string Cgroups::reason() const {
  std::string out;
  for (const std::string& r : unenforced_) out += (out.empty() ? "" : "; ") + r;
  return out;
}

std::vector<std::string> Cgroups::parent_dirs() const {
  std::vector<std::string> out;
  for (const Hierarchy& h : hierarchies_) out.push_back(h.parent);
  return out;
}

// ---------------------------------------------------------------------------
// Creation.

Status Cgroups::WriteLimits(const std::string& dir, const Hierarchy& h, const CgroupLimits& limits, bool pod) const {
  auto has = [&](std::string_view c) {
    return std::find(h.controllers.begin(), h.controllers.end(), c) != h.controllers.end();
  };
  const bool v2 = version_ == CgroupVersion::kV2;
  if (has("cpu")) {
    const int64_t shares = MilliCpuToShares(limits.cpu_request_milli);
    if (v2) {
      BERTH_RETURN_IF_ERROR(WriteFile(dir + "/cpu.weight", std::to_string(CpuSharesToCpuWeight(shares))));
    } else {
      BERTH_RETURN_IF_ERROR(WriteFile(dir + "/cpu.shares", std::to_string(shares)));
    }
    if (limits.cpu_limit_milli && *limits.cpu_limit_milli > 0) {
      const int64_t quota = MilliCpuToQuota(*limits.cpu_limit_milli);
      if (v2) {
        BERTH_RETURN_IF_ERROR(
            WriteFile(dir + "/cpu.max", std::to_string(quota) + " " + std::to_string(kCpuPeriodMicros)));
      } else {
        BERTH_RETURN_IF_ERROR(WriteFile(dir + "/cpu.cfs_period_us", std::to_string(kCpuPeriodMicros)));
        BERTH_RETURN_IF_ERROR(WriteFile(dir + "/cpu.cfs_quota_us", std::to_string(quota)));
      }
    }
  }
  if (has("memory") && limits.memory_limit_bytes) {
    const std::string bytes = std::to_string(*limits.memory_limit_bytes);
    if (v2) {
      BERTH_RETURN_IF_ERROR(WriteFile(dir + "/memory.max", bytes));
      if (swap_max_ && !pod) BERTH_RETURN_IF_ERROR(WriteFile(dir + "/memory.swap.max", "0"));
    } else {
      BERTH_RETURN_IF_ERROR(WriteFile(dir + "/memory.limit_in_bytes", bytes));
      if (memsw_ && !pod) BERTH_RETURN_IF_ERROR(WriteFile(dir + "/memory.memsw.limit_in_bytes", bytes));
    }
  }
  if (has("pids") && pod && limits.pids_limit) {
    BERTH_RETURN_IF_ERROR(
        WriteFile(dir + "/pids.max", *limits.pids_limit > 0 ? std::to_string(*limits.pids_limit) : "max"));
  }
  return Status::Ok();
}

StatusOr<std::vector<std::string>> Cgroups::MakeDirs(const std::string& relative, const CgroupLimits* limits) const {
  std::vector<std::string> out;
  for (const Hierarchy& h : hierarchies_) {
    const std::string dir = h.parent + "/" + relative;
    if (mkdir(dir.c_str(), 0755) != 0 && errno == ENOENT && fs::path(relative).has_parent_path() == false) {
      // The (empty) parent was removed since Detect, e.g. by an administrator: made again.
      std::error_code ec;
      fs::create_directories(h.parent, ec);
      BERTH_RETURN_IF_ERROR(EnableForChildren(h.parent));
    }
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return InternalError("creating cgroup " + dir + ": " + std::strerror(errno));
    }
    if (limits != nullptr) {
      if (Status s = WriteLimits(dir, h, *limits, /*pod=*/true); !s.ok()) return s;
    }
    out.push_back(dir);
  }
  return out;
}

Status Cgroups::SetNodeCpu(int64_t milli_cpu) const {
  const Hierarchy* h = HierarchyOf("cpu");
  if (h == nullptr) return Status::Ok();
  const int64_t shares = MilliCpuToShares(milli_cpu);
  if (version_ == CgroupVersion::kV2) {
    return WriteFile(h->parent + "/cpu.weight", std::to_string(CpuSharesToCpuWeight(shares)));
  }
  return WriteFile(h->parent + "/cpu.shares", std::to_string(shares));
}

StatusOr<std::vector<std::string>> Cgroups::CreatePod(const std::string& pod_uid, const CgroupLimits& limits) const {
  if (!available()) return UnavailableError("cgroups unavailable: " + reason());
  if (!SafeName(pod_uid)) return InvalidError("invalid pod uid for a cgroup name: \"" + pod_uid + "\"");
  auto dirs = MakeDirs("pod" + pod_uid, &limits);
  if (!dirs.ok()) return dirs.status();
  for (const std::string& dir : *dirs) BERTH_RETURN_IF_ERROR(EnableForChildren(dir));
  return dirs;
}

StatusOr<std::vector<std::string>> Cgroups::CreateContainer(const std::string& pod_uid, const std::string& name,
                                                            const CgroupLimits& limits) const {
  if (!available()) return UnavailableError("cgroups unavailable: " + reason());
  if (!SafeName(pod_uid)) return InvalidError("invalid pod uid for a cgroup name: \"" + pod_uid + "\"");
  if (!SafeName(name)) return InvalidError("invalid cgroup name \"" + name + "\"");
  for (const Hierarchy& h : hierarchies_) {
    const std::string pod = h.parent + "/pod" + pod_uid;
    if (!fs::exists(pod)) {
      auto made = MakeDirs("pod" + pod_uid, nullptr);
      if (!made.ok()) return made.status();
      for (const std::string& dir : *made) BERTH_RETURN_IF_ERROR(EnableForChildren(dir));
      break;
    }
  }
  auto dirs = MakeDirs("pod" + pod_uid + "/" + name, nullptr);
  if (!dirs.ok()) return dirs.status();
  KillAll(*dirs);  // a directory left by an earlier agent holds nothing of this run
  for (size_t i = 0; i < dirs->size(); ++i) {
    if (Status s = WriteLimits((*dirs)[i], hierarchies_[i], limits, /*pod=*/false); !s.ok()) {
      Remove(*dirs);
      return s;
    }
  }
  return dirs;
}

bool Cgroups::Owns(const std::vector<std::string>& dirs) const {
  if (dirs.empty() || dirs.size() > hierarchies_.size()) return false;
  std::set<size_t> seen;
  for (const std::string& dir : dirs) {
    if (dir.find("/..") != std::string::npos || dir.find("/./") != std::string::npos) return false;
    const fs::path p(dir);
    const std::string name = p.filename().string();
    const std::string pod = p.parent_path().filename().string();
    if (!SafeName(name) || pod.rfind("pod", 0) != 0 || !SafeName(pod)) return false;
    const std::string parent = p.parent_path().parent_path().string();
    bool found = false;
    for (size_t i = 0; i < hierarchies_.size(); ++i) {
      if (hierarchies_[i].parent == parent && seen.insert(i).second) {
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

std::string Cgroups::DirFor(const std::vector<std::string>& dirs, std::string_view controller) const {
  const Hierarchy* h = HierarchyOf(controller);
  if (h == nullptr) return "";
  for (const std::string& dir : dirs) {
    if (dir.size() > h->parent.size() && dir.compare(0, h->parent.size(), h->parent) == 0 &&
        dir[h->parent.size()] == '/') {
      return dir;
    }
  }
  return "";
}

// ---------------------------------------------------------------------------
// Reading, killing, removal.

bool Cgroups::OomKilled(const std::vector<std::string>& dirs, bool killed_by_sigkill) const {
  const std::string dir = DirFor(dirs, "memory");
  if (dir.empty()) return false;
  if (version_ == CgroupVersion::kV2) return KeyedValue(dir + "/memory.events", "oom_kill").value_or(0) > 0;
  if (auto kills = KeyedValue(dir + "/memory.oom_control", "oom_kill")) return *kills > 0;
  // Kernels before 4.13 do not count kills: the limit was hit and the run was SIGKILLed.
  return killed_by_sigkill && SingleValue(dir + "/memory.failcnt").value_or(0) > 0;
}

std::optional<int64_t> Cgroups::CpuUsageMicros(const std::vector<std::string>& dirs) const {
  if (version_ == CgroupVersion::kV2) {
    const std::string dir = DirFor(dirs, "cpu");
    if (dir.empty()) return std::nullopt;
    return KeyedValue(dir + "/cpu.stat", "usage_usec");
  }
  const std::string dir = DirFor(dirs, "cpuacct");
  if (dir.empty()) return std::nullopt;
  auto ns = SingleValue(dir + "/cpuacct.usage");
  if (!ns) return std::nullopt;
  return *ns / 1000;
}

std::optional<int64_t> Cgroups::PidsCurrent(const std::vector<std::string>& dirs) const {
  const std::string dir = DirFor(dirs, "pids");
  if (dir.empty()) return std::nullopt;
  return SingleValue(dir + "/pids.current");
}

bool Cgroups::KillAll(const std::vector<std::string>& dirs) const {
  if (dirs.empty()) return true;
  if (cgroup_kill_ && fs::exists(dirs.front() + "/cgroup.kill")) {
    if (WriteFile(dirs.front() + "/cgroup.kill", "1").ok()) {
      for (int i = 0; i < kMaxKillRounds; ++i) {
        if (Procs(dirs.front()).empty()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
  }
  // Every process joined every hierarchy: one directory lists them all.
  for (int round = 0; round < kMaxKillRounds; ++round) {
    std::vector<pid_t> pids;
    for (const std::string& dir : dirs) {
      pids = Procs(dir);
      if (!pids.empty()) break;
    }
    if (pids.empty()) return true;
    for (pid_t pid : pids) kill(pid, SIGKILL);
    if (round > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

void Cgroups::Remove(const std::vector<std::string>& dirs) const {
  KillAll(dirs);
  for (const std::string& dir : dirs) {
    // A killed process leaves its cgroup as it exits: retry briefly while it is busy.
    for (int i = 0; i < 200 && rmdir(dir.c_str()) != 0 && errno == EBUSY; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

std::vector<std::string> Cgroups::PodDirs(const std::string& pod_uid) const {
  std::vector<std::string> out;
  if (!SafeName(pod_uid)) return out;
  for (const Hierarchy& h : hierarchies_) out.push_back(h.parent + "/pod" + pod_uid);
  return out;
}

void Cgroups::RemovePod(const std::string& pod_uid) const {
  std::vector<std::string> pods = PodDirs(pod_uid);
  if (pods.empty() || !fs::exists(pods.front())) return;
  std::set<std::string> names;
  for (const std::string& pod : pods) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(pod, ec)) {
      if (e.is_directory(ec) && SafeName(e.path().filename().string())) names.insert(e.path().filename().string());
    }
  }
  for (const std::string& name : names) {
    std::vector<std::string> dirs;
    for (const std::string& pod : pods) {
      if (fs::exists(pod + "/" + name)) dirs.push_back(pod + "/" + name);
    }
    Remove(dirs);
  }
  for (const std::string& pod : pods) rmdir(pod.c_str());
}

}  // namespace berth::agent
