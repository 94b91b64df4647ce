#include "agent/shim/run_record.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "core/file.h"

namespace berth::agent::shim {
namespace {

using Json = nlohmann::json;

constexpr int kVersion = 1;

int64_t Nanos(Time t) { return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count(); }

Time FromNanos(int64_t ns) { return Time(std::chrono::duration_cast<Time::duration>(std::chrono::nanoseconds(ns))); }

// Parses `path` as a JSON object of record version kVersion.
StatusOr<Json> ReadRecord(const std::string& path) {
  StatusOr<std::string> text = ReadFileBounded(path, kMaxRecordBytes, /*follow_symlinks=*/false);
  if (!text.ok()) {
    if (text.status().code() == Code::kTooLarge) return InvalidError(text.status().message());
    return text.status();
  }
  Json j = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidError(path + " is not valid JSON (truncated or corrupt)");
  if (!j.is_object()) return InvalidError(path + " is not a JSON object");
  auto version = j.find("version");
  if (version == j.end() || !version->is_number_integer() || version->get<int64_t>() != kVersion) {
    return InvalidError(path + ": unknown record version (want " + std::to_string(kVersion) + ")");
  }
  return j;
}

// Typed field readers: each returns false (and sets *error) when the field is
// absent or of another type.
class Fields {
 public:
  Fields(const Json& j, std::string path) : j_(j), path_(std::move(path)) {}

  bool String(const char* key, std::string* out) {
    auto it = j_.find(key);
    if (it == j_.end() || !it->is_string()) return Fail(key, "a string");
    *out = it->get<std::string>();
    return true;
  }
  bool Int(const char* key, int64_t* out) {
    auto it = j_.find(key);
    if (it == j_.end() || !it->is_number_integer()) return Fail(key, "an integer");
    *out = it->get<int64_t>();
    return true;
  }
  bool IntIn(const char* key, int lo, int hi, int* out) {
    int64_t v;
    if (!Int(key, &v)) return false;
    if (v < lo || v > hi) return Fail(key, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    *out = static_cast<int>(v);
    return true;
  }
  bool Time(const char* key, berth::Time* out) {
    int64_t ns;
    if (!Int(key, &ns)) return false;
    *out = FromNanos(ns);
    return true;
  }
  bool Strings(const char* key, std::vector<std::string>* out) {
    auto it = j_.find(key);
    if (it == j_.end() || !it->is_array()) return Fail(key, "an array of strings");
    for (const Json& v : *it) {
      if (!v.is_string()) return Fail(key, "an array of strings");
      out->push_back(v.get<std::string>());
    }
    return true;
  }
  bool Ints(const char* key, std::vector<int>* out) {
    auto it = j_.find(key);
    if (it == j_.end() || !it->is_array()) return Fail(key, "an array of integers");
    for (const Json& v : *it) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 65535) {
        return Fail(key, "an array of integers");
      }
      out->push_back(v.get<int>());
    }
    return true;
  }
  bool Int64s(const char* key, std::vector<int64_t>* out) {
    auto it = j_.find(key);
    if (it == j_.end() || !it->is_array()) return Fail(key, "an array of integers");
    for (const Json& v : *it) {
      if (!v.is_number_integer()) return Fail(key, "an array of integers");
      out->push_back(v.get<int64_t>());
    }
    return true;
  }
  // The object `key` read by `each(Fields&)` (false on an error).
  template <typename Each>
  bool Object(const char* key, Each each) {
    auto it = j_.find(key);
    if (it == j_.end() || !it->is_object()) return Fail(key, "an object");
    Fields inner(*it, path_ + ": " + key);
    if (each(inner)) return true;
    error_ = inner.error_;
    return false;
  }
  bool Bool(const char* key, bool* out) {
    auto it = j_.find(key);
    if (it == j_.end() || !it->is_boolean()) return Fail(key, "a boolean");
    *out = it->get<bool>();
    return true;
  }
  bool Has(const char* key) const { return j_.contains(key); }
  // Each element of the array `key` read by `each(Fields&)` (false on an error).
  template <typename Each>
  bool Objects(const char* key, Each each) {
    auto it = j_.find(key);
    if (it == j_.end() || !it->is_array()) return Fail(key, "an array of objects");
    for (size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_object()) return Fail(key, "an array of objects");
      Fields element((*it)[i], path_ + ": " + key + "[" + std::to_string(i) + "]");
      if (!each(element)) {
        error_ = element.error_;
        return false;
      }
    }
    return true;
  }
  Status error() const { return InvalidError(error_); }
  bool Invalid(const char* key, const std::string& want) { return Fail(key, want); }

 private:
  bool Fail(const char* key, const std::string& want) {
    error_ = path_ + ": field \"" + key + "\" must be " + want;
    return false;
  }
  const Json& j_;
  std::string path_;
  std::string error_;
};

Json SandboxToJson(const SandboxSpec& s) {
  Json mounts = Json::array();
  for (const SandboxMount& m : s.mounts) {
    mounts.push_back({{"kind", m.kind == SandboxMount::Kind::kTmpfs ? "tmpfs" : "bind"},
                      {"source", m.source},
                      {"target", m.target},
                      {"readOnly", m.read_only},
                      {"sizeBytes", m.size_bytes}});
  }
  return {{"rootfsDir", s.rootfs_dir},
          {"hiddenPaths", s.hidden_paths},
          {"user", {{"uid", s.user.uid}, {"gid", s.user.gid}, {"groups", s.user.groups}}},
          {"mounts", std::move(mounts)},
          {"devices", s.devices}};
}

bool SandboxFromJson(Fields& f, SandboxSpec* s) {
  s->enabled = true;
  return f.String("rootfsDir", &s->rootfs_dir) && f.Strings("hiddenPaths", &s->hidden_paths) &&
         f.Object("user",
                  [&](Fields& u) {
                    return u.Int("uid", &s->user.uid) && u.Int("gid", &s->user.gid) &&
                           u.Int64s("groups", &s->user.groups);
                  }) &&
         f.Objects("mounts",
                   [&](Fields& mf) {
                     SandboxMount m;
                     std::string kind;
                     if (!mf.String("kind", &kind) || !mf.String("source", &m.source) ||
                         !mf.String("target", &m.target) || !mf.Bool("readOnly", &m.read_only) ||
                         !mf.Int("sizeBytes", &m.size_bytes)) {
                       return false;
                     }
                     if (kind == "tmpfs") {
                       m.kind = SandboxMount::Kind::kTmpfs;
                     } else if (kind != "bind") {
                       return mf.Invalid("kind", "\"bind\" or \"tmpfs\"");
                     }
                     s->mounts.push_back(std::move(m));
                     return true;
                   }) &&
         f.Strings("devices", &s->devices);
}

}  // namespace

std::string RunDir(const std::string& pod_dir, std::string_view container, int run) {
  return pod_dir + "/runs/" + std::string(container) + "/" + std::to_string(run);
}

std::vector<std::pair<int, std::string>> ListRuns(const std::string& pod_dir, std::string_view container) {
  std::vector<std::pair<int, std::string>> out;
  std::error_code ec;
  const std::string base = pod_dir + "/runs/" + std::string(container);
  for (const auto& e : std::filesystem::directory_iterator(base, ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.size() > 10 || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    const long long run = std::stoll(name);
    if (run > std::numeric_limits<int>::max()) continue;
    out.emplace_back(static_cast<int>(run), e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Status WriteLaunchRecord(const std::string& run_dir, const LaunchRecord& r) {
  Json j = {{"version", kVersion},
            {"container", r.container},
            {"run", r.run},
            {"argv", r.argv},
            {"env", r.env},
            {"workingDir", r.working_dir},
            {"logPath", r.log_path},
            {"cgroupDirs", r.cgroup_dirs},
            {"startedAt", Nanos(r.started_at)},
            {"devices", r.devices}};
  Json ports = Json::array();
  for (const PortAllocation& p : r.ports) ports.push_back({{"host", p.host}, {"key", p.key}, {"port", p.port}});
  j["ports"] = std::move(ports);
  j["logMaxBytes"] = r.log_rotation.max_bytes;
  j["logMaxFiles"] = r.log_rotation.max_files;
  if (r.sandbox.enabled) j["sandbox"] = SandboxToJson(r.sandbox);
  std::error_code ec;
  std::filesystem::create_directories(run_dir, ec);
  if (ec) return InternalError("cannot create " + run_dir + ": " + ec.message());
  return WriteFileAtomically(run_dir + "/" + kLaunchFile, j.dump(-1, ' ', false, Json::error_handler_t::replace), 0600,
                             FileDurability::kDeferred);
}

Status MarkReleased(const std::string& run_dir) {
  const std::string released = run_dir + "/" + kReleasedFile;
  const int fd = open(released.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 && errno == EEXIST) return AlreadyExistsError(released + " exists");
  if (fd < 0) return InternalError("cannot create " + released + ": " + std::strerror(errno));
  close(fd);
  return Status::Ok();
}

Status ReleaseRun(const std::string& run_dir) {
  if (Status s = SyncPath(run_dir + "/" + kLaunchFile); !s.ok()) return s;
  if (Status s = MarkReleased(run_dir); !s.ok()) return s;
  // One fsync of the directory makes both names durable: launch.json's and released's.
  return SyncPath(run_dir);
}

Status SyncExitRecord(const std::string& run_dir) { return SyncFileAndDirectory(run_dir + "/" + kExitFile); }

StatusOr<LaunchRecord> ReadLaunchRecord(const std::string& run_dir) {
  const std::string path = run_dir + "/" + kLaunchFile;
  StatusOr<Json> j = ReadRecord(path);
  if (!j.ok()) return j.status();
  LaunchRecord r;
  Fields f(*j, path);
  if (!f.String("container", &r.container) || !f.IntIn("run", 0, 1 << 30, &r.run) || !f.Strings("argv", &r.argv) ||
      !f.Strings("env", &r.env) || !f.String("workingDir", &r.working_dir) || !f.String("logPath", &r.log_path) ||
      !f.Time("startedAt", &r.started_at) || !f.Ints("devices", &r.devices)) {
    return f.error();
  }
  if (f.Has("cgroupDirs")) {
    if (!f.Strings("cgroupDirs", &r.cgroup_dirs)) return f.error();
  } else {
    std::string dir;  // a record from before cgroupDirs
    if (!f.String("cgroupDir", &dir)) return f.error();
    if (!dir.empty()) r.cgroup_dirs.push_back(std::move(dir));
  }
  const bool ports_ok = !f.Has("ports") || f.Objects("ports", [&](Fields& port) {
    PortAllocation p;
    if (!port.String("host", &p.host) || !port.String("key", &p.key) || !port.IntIn("port", 1, 65535, &p.port)) {
      return false;
    }
    r.ports.push_back(std::move(p));
    return true;
  });
  if (!ports_ok) return f.error();
  if (f.Has("logMaxBytes") && !f.Int("logMaxBytes", &r.log_rotation.max_bytes)) return f.error();
  if (f.Has("logMaxFiles") && !f.IntIn("logMaxFiles", kMinContainerLogMaxFiles, 1 << 20, &r.log_rotation.max_files)) {
    return f.error();
  }
  if (f.Has("sandbox")) {
    if (!f.Object("sandbox", [&](Fields& sf) { return SandboxFromJson(sf, &r.sandbox); })) return f.error();
    if (Status s = ValidateSandboxSpec(r.sandbox); !s.ok()) return InvalidError(path + ": sandbox: " + s.message());
  }
  return r;
}

Status WriteExitRecord(const std::string& run_dir, const ExitRecord& r, FileDurability durability) {
  Json j = {{"version", kVersion},         {"exitCode", r.exit_code},          {"signal", r.signal},
            {"startError", r.start_error}, {"startedAt", Nanos(r.started_at)}, {"finishedAt", Nanos(r.finished_at)}};
  if (r.lost) {
    j["lost"] = true;
    j["lostDetail"] = r.lost_detail;
  }
  return WriteFileAtomically(run_dir + "/" + kExitFile, j.dump(-1, ' ', false, Json::error_handler_t::replace), 0600,
                             durability);
}

StatusOr<ExitRecord> ReadExitRecord(const std::string& run_dir) {
  const std::string path = run_dir + "/" + kExitFile;
  StatusOr<Json> j = ReadRecord(path);
  if (!j.ok()) return j.status();
  ExitRecord r;
  Fields f(*j, path);
  if (!f.IntIn("exitCode", 0, 255, &r.exit_code) || !f.IntIn("signal", 0, 64, &r.signal) ||
      !f.String("startError", &r.start_error) || !f.Time("startedAt", &r.started_at) ||
      !f.Time("finishedAt", &r.finished_at)) {
    return f.error();
  }
  if (f.Has("lost") && (!f.Bool("lost", &r.lost) || !f.String("lostDetail", &r.lost_detail))) return f.error();
  return r;
}

}  // namespace berth::agent::shim
