#include "agent/volumes.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <linux/openat2.h>
#include <set>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/service_account_token.h"
#include "api/field_errors.h"
#include "api/limits.h"
#include "api/metadata_validation.h"
#include "api/pod_validation.h"
#include "api/unstructured.h"
#include "core/base64.h"
#include "core/file.h"
#include "core/quantity.h"

namespace berth::agent {
namespace {

namespace fs = std::filesystem;

const client::GroupVersionResource kConfigMaps{"", "v1", "configmaps"};
const client::GroupVersionResource kSecrets{"", "v1", "secrets"};
const client::GroupVersionResource kServiceAccounts{"", "v1", "serviceaccounts"};

// ConfigMapVolumeSourceDefaultMode, SecretVolumeSourceDefaultMode,
// DownwardAPIVolumeSourceDefaultMode, ProjectedVolumeSourceDefaultMode.
constexpr int kDefaultFileMode = 0644;
// emptydir.go: the directory's permissions.
constexpr mode_t kEmptyDirMode = 0777;
// The largest file a volume compares when deciding whether its payload changed (the
// API's object limit).
constexpr size_t kMaxCompareBytes = 1 << 20;

std::string Errno(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// A relative path whose elements are neither empty-at-start, "..", nor start with "..".
bool SafeRelativePath(std::string_view p) {
  if (p.empty() || p.front() == '/' || p.starts_with("..")) return false;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    if (p.substr(start, end - start) == "..") return false;
    start = end + 1;
  }
  return true;
}

std::string TopElement(const std::string& p) { return p.substr(0, p.find('/')); }

int ModeOf(const api::Object& v, int fallback) { return v.is_number_integer() ? v.get<int>() : fallback; }

// fieldpath.FormatMap: `k="v"` lines in key order, no trailing newline.
std::string FormatMap(const api::Object& m) {
  std::map<std::string, std::string> sorted;
  if (m.is_object()) {
    for (const auto& [k, v] : m.items()) sorted[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  std::string out;
  for (const auto& [k, v] : sorted) out += k + "=" + api::GoQuote(v) + "\n";
  if (!out.empty()) out.pop_back();
  return out;
}

// Applies the owner to one path (see "Ownership" in the header); `dir` adds setgid.
Status Own(const std::string& path, const VolumeOwner* owner, bool dir) {
  if (owner == nullptr) return Status::Ok();
  if (::lchown(path.c_str(), static_cast<uid_t>(owner->uid), static_cast<gid_t>(owner->gid)) != 0) {
    return Status(Code::kInternal, Errno("chown", path));
  }
  if (owner->fs_group) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return Status(Code::kInternal, Errno("stat", path));
    if (S_ISLNK(st.st_mode)) return Status::Ok();
    if (!dir) return Status::Ok();                        // the file's mode already includes 0440 (WriteAtomicPayload)
    mode_t mode = (st.st_mode & 07777) | S_ISGID | 0550;  // SetVolumeOwnership's execMask
    if (::chmod(path.c_str(), mode) != 0) return Status(Code::kInternal, Errno("chmod", path));
  }
  return Status::Ok();
}

// The files under an atomic writer's timestamped directory equal `files`.
bool SamePayload(const std::string& ts_dir, const std::map<std::string, ProjectedFile>& files) {
  size_t seen = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(ts_dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file(ec)) ++seen;
  }
  if (ec || seen != files.size()) return false;
  for (const auto& [path, file] : files) {
    const std::string full = ts_dir + "/" + path;
    struct stat st {};
    if (::lstat(full.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
    if (static_cast<int>(st.st_mode & 0777) != (file.mode & 0777)) return false;
    StatusOr<std::string> data = ReadFileBounded(full, kMaxCompareBytes, false);
    if (!data.ok() || *data != file.data) return false;
  }
  return true;
}

std::string TimestampName(Time now) {
  const auto since = now.time_since_epoch();
  const std::time_t secs = std::chrono::duration_cast<std::chrono::seconds>(since).count();
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "..%Y_%m_%d_%H_%M_%S.", &tm);
  return buf;
}

// kubelet makeMounts / hostutil: the real path of `path`, or of its deepest existing
// ancestor with the missing rest appended.
fs::path ResolveExisting(const fs::path& path) {
  std::error_code ec;
  fs::path existing = path;
  fs::path rest;
  while (!existing.empty() && existing != existing.root_path()) {
    if (fs::exists(fs::symlink_status(existing, ec))) break;
    rest = rest.empty() ? existing.filename() : existing.filename() / rest;
    existing = existing.parent_path();
  }
  fs::path real = fs::canonical(existing, ec);
  if (ec) return {};
  return rest.empty() ? real : (real / rest).lexically_normal();
}

// openat2 of one name below `dir`: never through a symlink (the name's own
// included), never outside `dir`.
int OpenBeneath(int dir, const char* name, uint64_t flags, mode_t mode = 0) {
  open_how how{};
  how.flags = flags | O_NOFOLLOW | O_CLOEXEC;
  how.mode = (flags & O_CREAT) != 0 ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, dir, name, &how, sizeof how));
}

// Creates what is missing of `rel` below the directory `base` (a path without
// symlinks, opened with RESOLVE_NO_SYMLINKS): a walk of descriptors, each
// component opened from its parent's, made with mkdirat (0755) when missing, and
// the last one created as a file (0644) when `file`, as the kubelet's
// DirectoryOrCreate (os.MkdirAll 0755) and FileOrCreate (open O_CREATE 0644) do
// (pkg/volume/hostpath/host_path.go). A component that is a symlink (swapped in
// meanwhile) fails the walk with ELOOP: nothing is created outside `base`.
Status CreateBeneath(const std::string& base, const fs::path& rel, bool file) {
  open_how how{};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS;
  int dir = static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, base.c_str(), &how, sizeof how));
  if (dir < 0) return Status(Code::kInternal, Errno("open", base));
  std::vector<std::string> names;
  for (const fs::path& part : rel) {
    if (!part.empty() && part != "." && part != "/") names.push_back(part.string());
  }
  std::string at = base;
  for (size_t i = 0; i < names.size(); ++i) {
    const char* name = names[i].c_str();
    at += "/" + names[i];
    if (i + 1 == names.size() && file) {
      const int fd = OpenBeneath(dir, name, O_RDONLY | O_CREAT | O_NONBLOCK, 0644);
      const int err = errno;
      ::close(dir);
      if (fd < 0) return Status(Code::kInternal, "create " + at + ": " + std::strerror(err));
      ::close(fd);
      return Status::Ok();
    }
    int next = OpenBeneath(dir, name, O_PATH | O_DIRECTORY);
    if (next < 0 && errno == ENOENT) {
      if (::mkdirat(dir, name, 0755) != 0 && errno != EEXIST) {
        const int err = errno;
        ::close(dir);
        return Status(Code::kInternal, "mkdir " + at + ": " + std::strerror(err));
      }
      next = OpenBeneath(dir, name, O_PATH | O_DIRECTORY);
    }
    const int err = errno;
    ::close(dir);
    if (next < 0) return Status(Code::kInternal, "mkdir " + at + ": " + std::strerror(err));
    dir = next;
  }
  ::close(dir);
  return Status::Ok();
}

}  // namespace

bool PathIsUnder(const std::string& path, const std::string& prefix) {
  if (prefix.empty() || path.empty()) return false;
  std::string p = prefix;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  if (p == "/") return path.front() == '/';
  return path == p || (path.size() > p.size() && path.compare(0, p.size(), p) == 0 && path[p.size()] == '/');
}

Status WriteAtomicPayload(const std::string& dir, const std::map<std::string, ProjectedFile>& files, Time now,
                          const VolumeOwner* owner) {
  // With an fsGroup every file is group-readable (SetVolumeOwnership's roMask), so the
  // comparison below sees the modes as they are on disk.
  std::map<std::string, ProjectedFile> owned;
  if (owner != nullptr && owner->fs_group) {
    owned = files;
    for (auto& [path, file] : owned) file.mode |= 0440;
  }
  const std::map<std::string, ProjectedFile>& payload = owned.empty() ? files : owned;
  for (const auto& [path, file] : payload) {
    if (!SafeRelativePath(path)) return Status(Code::kInvalid, "invalid path \"" + path + "\": it would leave " + dir);
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status(Code::kInternal, "mkdir " + dir + ": " + ec.message());
  BERTH_RETURN_IF_ERROR(Own(dir, owner, true));
  const std::string data_link = dir + "/..data";
  std::string old_ts;
  {
    char buf[256];
    ssize_t n = ::readlink(data_link.c_str(), buf, sizeof buf - 1);
    if (n > 0) old_ts.assign(buf, static_cast<size_t>(n));
  }
  if (!old_ts.empty() && old_ts.starts_with("..") && old_ts.find('/') == std::string::npos &&
      SamePayload(dir + "/" + old_ts, payload)) {
    return Status::Ok();
  }
  // 1. A fresh timestamped directory with the payload.
  std::string templ = dir + "/" + TimestampName(now) + "XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) return Status(Code::kInternal, Errno("mkdtemp", templ));
  const std::string ts_dir = templ;
  const std::string ts_name = fs::path(ts_dir).filename().string();
  if (::chmod(ts_dir.c_str(), 0755) != 0) return Status(Code::kInternal, Errno("chmod", ts_dir));
  BERTH_RETURN_IF_ERROR(Own(ts_dir, owner, true));
  for (const auto& [path, file] : payload) {
    const fs::path full = fs::path(ts_dir) / path;
    // Parent directories inside the timestamped directory, 0755 (writePayloadToDir).
    fs::path parent = full.parent_path();
    std::vector<fs::path> made;
    for (fs::path p = parent; p != fs::path(ts_dir) && !fs::exists(p, ec); p = p.parent_path()) made.push_back(p);
    for (auto it = made.rbegin(); it != made.rend(); ++it) {
      if (::mkdir(it->c_str(), 0755) != 0 && errno != EEXIST) {
        return Status(Code::kInternal, Errno("mkdir", it->string()));
      }
      BERTH_RETURN_IF_ERROR(Own(it->string(), owner, true));
    }
    const int fd = ::open(full.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return Status(Code::kInternal, Errno("create", full.string()));
    size_t off = 0;
    while (off < file.data.size()) {
      ssize_t n = ::write(fd, file.data.data() + off, file.data.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fd);
        return Status(Code::kInternal, Errno("write", full.string()));
      }
      off += static_cast<size_t>(n);
    }
    const bool mode_ok = ::fchmod(fd, static_cast<mode_t>(file.mode & 0777)) == 0;
    ::close(fd);
    if (!mode_ok) return Status(Code::kInternal, Errno("chmod", full.string()));
    BERTH_RETURN_IF_ERROR(Own(full.string(), owner, false));
  }
  // 2. ..data_tmp -> the new directory, renamed over ..data.
  const std::string tmp_link = dir + "/..data_tmp";
  ::unlink(tmp_link.c_str());
  if (::symlink(ts_name.c_str(), tmp_link.c_str()) != 0) return Status(Code::kInternal, Errno("symlink", tmp_link));
  if (::rename(tmp_link.c_str(), data_link.c_str()) != 0) return Status(Code::kInternal, Errno("rename", tmp_link));
  // 3. User-visible links for the top-level paths.
  std::set<std::string> top;
  for (const auto& [path, file] : payload) top.insert(TopElement(path));
  for (const std::string& t : top) {
    const std::string visible = dir + "/" + t;
    struct stat st {};
    if (::lstat(visible.c_str(), &st) == 0) continue;
    const std::string target = "..data/" + t;
    if (::symlink(target.c_str(), visible.c_str()) != 0) return Status(Code::kInternal, Errno("symlink", visible));
  }
  // 4. The old directory and the user-visible paths no longer in the payload.
  if (!old_ts.empty() && old_ts != ts_name && old_ts.starts_with("..") && old_ts.find('/') == std::string::npos) {
    fs::remove_all(fs::path(dir) / old_ts, ec);
  }
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("..") || top.count(name) != 0) continue;
    if (entry.is_symlink(ec)) fs::remove(entry.path(), ec);
  }
  return Status::Ok();
}

std::string PodVolumes::VolumeDir(const char* plugin, const std::string& name) const {
  return options_.pod_dir + "/volumes/" + plugin + "/" + name;
}

std::optional<VolumeOwner> PodVolumes::Owner() const {
  if (!options_.owner) return std::nullopt;
  VolumeOwner o{options_.owner->uid, options_.owner->gid, false};
  if (const api::Object& g = api::NestedField(pod_, {"spec", "securityContext", "fsGroup"}); g.is_number_integer()) {
    o.gid = g.get<int64_t>();
    o.fs_group = true;
  }
  return o;
}

void PodVolumes::DecideAutomount(const api::Object& pod) {
  if (api::NestedField(pod, {"spec", "automountServiceAccountToken"}).is_boolean()) {
    automount_ = ShouldAutomountToken(pod, nullptr);
    return;
  }
  std::string sa_name = api::NestedString(pod, {"spec", "serviceAccountName"});
  if (sa_name.empty()) sa_name = "default";
  StatusOr<api::Object> sa = client_.Get(kServiceAccounts.Namespace(api::Namespace(pod)), sa_name);
  // An unreadable ServiceAccount keeps the default (true); the token manager retries it.
  automount_ = ShouldAutomountToken(pod, sa.ok() ? &*sa : nullptr);
}

std::vector<std::string> PodVolumes::Sync(const api::Object& pod) {
  pod_ = pod;
  const Time now = clock_.Now();
  const api::Object& volumes = api::ArrayAt(api::Field(pod, "spec"), "volumes");
  std::vector<std::string> failures;
  if (volumes.size() > api::kMaxPodVolumes) {
    pod_config_error_ = "the pod has " + std::to_string(volumes.size()) + " volumes, more than the " +
                        std::to_string(api::kMaxPodVolumes) + " a node sets up";
    return failures;
  }
  const bool resync = !resync_at_ || now >= *resync_at_;
  if (resync) {
    resync_at_ = now + kVolumeResyncInterval;
    DecideAutomount(pod);
    if (automount_ && options_.service_account_tokens) {
      const std::string dir = options_.pod_dir + "/" + kServiceAccountDir;
      std::error_code ec;
      fs::create_directories(dir, ec);
      const std::optional<VolumeOwner> owner = Owner();
      if (!ec && owner) {
        VolumeOwner plain = *owner;
        plain.fs_group = false;
        (void)Own(dir, &plain, true);
      }
    }
  }
  std::set<std::string> names;
  for (const api::Object& v : volumes) {
    const std::string name = api::StringAt(v, "name");
    names.insert(name);
    VolumeState& state = volumes_[name];
    const bool retry = !state.mount_error.empty() && now >= state.next_attempt;
    if (!resync && !retry) continue;
    // An emptyDir is made once: its contents and modes are the pod's from then on.
    if (!retry && state.mount_error.empty() && state.kind == "emptyDir") continue;
    std::string failed = SetUp(pod, v, state);
    if (failed.empty()) {
      state.mount_error.clear();
      state.backoff = Duration::zero();
      continue;
    }
    state.mount_error = "MountVolume.SetUp failed for volume \"" + name + "\" : " + failed;
    state.backoff = state.backoff == Duration::zero() ? kVolumeRetryInitial
                                                      : std::min<Duration>(state.backoff * 2, kVolumeRetryMax);
    state.next_attempt = now + state.backoff;
    failures.push_back(state.mount_error);
  }
  std::erase_if(volumes_, [&](const auto& kv) { return names.count(kv.first) == 0; });
  return failures;
}

bool PodVolumes::Ready() const {
  if (!pod_config_error_.empty()) return true;  // MountsFor reports it
  return resync_at_.has_value() &&
         std::none_of(volumes_.begin(), volumes_.end(), [](const auto& kv) { return !kv.second.mount_error.empty(); });
}

std::optional<Time> PodVolumes::NextSync() const {
  std::optional<Time> next = resync_at_;
  for (const auto& [name, state] : volumes_) {
    if (!state.mount_error.empty() && (!next || state.next_attempt < *next)) next = state.next_attempt;
  }
  return next;
}

namespace {

// The object `name` of `gvr` in `ns`: nullopt with `*missing` when it does not exist;
// an error text otherwise (the kubelet's configmap/secret manager words NotFound with
// the singular resource).
std::optional<api::Object> GetSource(client::Client& client, const client::GroupVersionResource& gvr,
                                     const std::string& singular, const std::string& ns, const std::string& name,
                                     bool* missing, std::string* error) {
  StatusOr<api::Object> obj = client.Get(gvr.Namespace(ns), name);
  if (obj.ok()) return *obj;
  if (obj.status().code() == Code::kNotFound) {
    *missing = true;
    *error = singular + " \"" + name + "\" not found";
  } else {
    *error = obj.status().message();
  }
  return std::nullopt;
}

// A configMap or secret source (volume or projection) into `out`. "" = fine.
std::string CollectKeys(client::Client& client, const std::string& ns, const api::Object& source, bool secret,
                        int default_mode, std::map<std::string, ProjectedFile>* out) {
  const std::string name = api::StringAt(source, secret && source.contains("secretName") ? "secretName" : "name");
  const bool optional = api::Field(source, "optional").is_boolean() && api::Field(source, "optional").get<bool>();
  bool missing = false;
  std::string error;
  std::optional<api::Object> obj =
      GetSource(client, secret ? kSecrets : kConfigMaps, secret ? "secret" : "configmap", ns, name, &missing, &error);
  if (!obj) return missing && optional ? "" : error;
  std::map<std::string, std::string> keys;
  for (const char* field : {"data", "binaryData"}) {
    if (secret && std::string_view(field) == "binaryData") continue;  // a Secret has only data
    const api::Object& data = api::Field(*obj, field);
    if (!data.is_object()) continue;
    const bool encoded = secret || std::string_view(field) == "binaryData";
    for (const auto& [k, v] : data.items()) {
      if (!v.is_string()) continue;
      if (!encoded) {
        keys[k] = v.get<std::string>();
      } else if (std::optional<std::string> d = Base64Decode(v.get<std::string>())) {
        keys[k] = *d;
      }
    }
  }
  const api::Object& items = api::ArrayAt(source, "items");
  if (items.empty()) {
    for (auto& [k, v] : keys) (*out)[k] = {std::move(v), default_mode};
    return "";
  }
  for (const api::Object& item : items) {
    const std::string key = api::StringAt(item, "key");
    auto it = keys.find(key);
    if (it == keys.end()) {
      if (optional) continue;
      return secret ? "references non-existent secret key: " + key
                    : "configmap references non-existent config key: " + key;
    }
    (*out)[api::StringAt(item, "path")] = {it->second, ModeOf(api::Field(item, "mode"), default_mode)};
  }
  return "";
}

}  // namespace

std::string PodVolumes::CollectDownwardApi(const api::Object& source, int default_mode,
                                           std::map<std::string, ProjectedFile>* out) const {
  for (const api::Object& item : api::ArrayAt(source, "items")) {
    std::string value;
    if (const api::Object& ref = api::Field(item, "fieldRef"); ref.is_object()) {
      const std::string path = api::StringAt(ref, "fieldPath");
      if (path == "metadata.labels" || path == "metadata.annotations") {
        value = FormatMap(api::NestedField(pod_, {"metadata", path == "metadata.labels" ? "labels" : "annotations"}));
      } else {
        StatusOr<std::string> v = FieldRefValue(pod_, path, options_.node);
        if (!v.ok()) return v.status().message();
        value = *v;
      }
    } else if (const api::Object& rref = api::Field(item, "resourceFieldRef"); rref.is_object()) {
      const api::Object* c = FindContainer(pod_, api::StringAt(rref, "containerName"));
      if (c == nullptr) return "container " + api::StringAt(rref, "containerName") + " not found";
      StatusOr<std::string> v = ResourceFieldRefValue(pod_, *c, rref, options_.node);
      if (!v.ok()) return v.status().message();
      value = *v;
    } else {
      continue;
    }
    (*out)[api::StringAt(item, "path")] = {value, ModeOf(api::Field(item, "mode"), default_mode)};
  }
  return "";
}

std::string PodVolumes::CollectToken(const std::string& volume, const api::Object& source, int default_mode,
                                     std::map<std::string, ProjectedFile>* out) {
  const std::string path = api::StringAt(source, "path");
  Token& t = tokens_[volume + "/" + path];
  const Time now = clock_.Now();
  if (t.token.empty() || now >= t.refresh_at) {
    std::vector<std::string> audiences;
    if (std::string a = api::StringAt(source, "audience"); !a.empty()) audiences.push_back(a);
    const api::Object& e = api::Field(source, "expirationSeconds");
    StatusOr<PodToken> issued = RequestPodToken(
        client_, pod_, audiences, e.is_number_integer() ? e.get<int64_t>() : kProjectedTokenDefaultExpirationSeconds);
    if (!issued.ok()) return "failed to fetch token: " + issued.status().message();
    t.token = issued->token;
    t.refresh_at = now + std::chrono::seconds(issued->expiration_seconds * 8 / 10);
  }
  (*out)[path] = {t.token, default_mode};
  return "";
}

std::string PodVolumes::SetUp(const api::Object& pod, const api::Object& volume, VolumeState& state) {
  const std::string name = api::StringAt(volume, "name");
  VolumeState fresh;
  fresh.mount_error = state.mount_error;
  fresh.next_attempt = state.next_attempt;
  fresh.backoff = state.backoff;
  state = fresh;
  if (!api::IsDNS1123Label(name).empty()) {
    state.config_error = "invalid volume name \"" + name + "\"";
    return "";
  }
  std::vector<std::string> kinds;
  for (const char* k : api::kVolumeSourceFields) {
    if (api::Field(volume, k).is_object()) kinds.push_back(k);
  }
  if (kinds.size() != 1) {
    state.config_error = "volume \"" + name + "\" must have exactly one volume source";
    return "";
  }
  state.kind = kinds.front();
  const api::Object& source = api::Field(volume, state.kind);
  const std::optional<VolumeOwner> owner = Owner();
  const std::string ns = api::Namespace(pod);
  std::error_code ec;
  if (state.kind == "emptyDir") {
    const std::string medium = api::StringAt(source, "medium");
    if (!medium.empty() && medium != "Memory") {
      state.config_error = "volume \"" + name + "\": emptyDir medium \"" + medium + "\" is not supported by berth";
      return "";
    }
    state.source = VolumeDir(kEmptyDirPlugin, name);
    fs::create_directories(state.source, ec);
    if (ec) return "mkdir " + state.source + ": " + ec.message();
    if (::chmod(state.source.c_str(), kEmptyDirMode) != 0) return Errno("chmod", state.source);
    if (owner) {
      VolumeOwner o = *owner;
      if (Status s = Own(state.source, &o, true); !s.ok()) return s.message();
      if (o.fs_group && ::chmod(state.source.c_str(), kEmptyDirMode | S_ISGID) != 0) {
        return Errno("chmod", state.source);
      }
    }
    if (medium == "Memory") {
      state.tmpfs = true;
      state.tmpfs_bytes = EmptyDirMemoryBytes(pod, source);
    }
    return "";
  }
  if (state.kind == "hostPath") {
    StatusOr<std::string> resolved = ResolveHostPath(name, source, state);
    if (!resolved.ok()) return resolved.status().message();
    state.source = *resolved;
    return "";
  }
  const int default_mode = ModeOf(api::Field(source, "defaultMode"), kDefaultFileMode);
  std::map<std::string, ProjectedFile> files;
  std::string failed;
  const char* plugin = nullptr;
  if (state.kind == "configMap" || state.kind == "secret") {
    plugin = state.kind == "secret" ? kSecretPlugin : kConfigMapPlugin;
    failed = CollectKeys(client_, ns, source, state.kind == "secret", default_mode, &files);
  } else if (state.kind == "downwardAPI") {
    plugin = kDownwardApiPlugin;
    failed = CollectDownwardApi(source, default_mode, &files);
  } else if (state.kind == "projected") {
    plugin = kProjectedPlugin;
    for (const api::Object& src : api::ArrayAt(source, "sources")) {
      if (const api::Object& s = api::Field(src, "configMap"); s.is_object()) {
        failed = CollectKeys(client_, ns, s, false, default_mode, &files);
      } else if (const api::Object& s = api::Field(src, "secret"); s.is_object()) {
        failed = CollectKeys(client_, ns, s, true, default_mode, &files);
      } else if (const api::Object& s = api::Field(src, "downwardAPI"); s.is_object()) {
        failed = CollectDownwardApi(s, default_mode, &files);
      } else if (const api::Object& s = api::Field(src, "serviceAccountToken"); s.is_object()) {
        failed = CollectToken(name, s, default_mode, &files);
      } else {
        state.config_error = "volume \"" + name + "\": a projected source berth does not support";
        return "";
      }
      if (!failed.empty()) break;
    }
  } else {
    state.config_error = "volume \"" + name + "\": " + state.kind + " volumes are not supported by berth";
    return "";
  }
  if (!failed.empty()) return failed;
  state.source = VolumeDir(plugin, name);
  state.read_only = true;
  Status written = WriteAtomicPayload(state.source, files, clock_.Now(), owner ? &*owner : nullptr);
  if (!written.ok()) return written.message();
  return "";
}

int64_t PodVolumes::EmptyDirMemoryBytes(const api::Object& pod, const api::Object& source) const {
  // calculateEmptyDirMemorySize: the pod's memory limit (when every container has one), else
  // the node's allocatable memory, lowered to sizeLimit.
  std::optional<int64_t> size;
  int64_t sum = 0;
  bool all = true;
  for (const api::Object& c : api::ArrayAt(api::Field(pod, "spec"), "containers")) {
    const api::Object& m = api::NestedField(c, {"resources", "limits", "memory"});
    StatusOr<Quantity> q = m.is_string()           ? Quantity::Parse(m.get<std::string>())
                           : m.is_number_integer() ? Quantity::Parse(m.dump())
                                                   : StatusOr<Quantity>(InvalidError("unset"));
    if (!q.ok()) {
      all = false;
      break;
    }
    sum += q->Value();
  }
  if (all && sum > 0) size = sum;
  if (!size) {
    if (auto node = options_.node.allocatable.find("memory");
        node != options_.node.allocatable.end() && node->second.Value() > 0) {
      size = node->second.Value();
    }
  }
  const api::Object& limit = api::Field(source, "sizeLimit");
  StatusOr<Quantity> q = limit.is_string()           ? Quantity::Parse(limit.get<std::string>())
                         : limit.is_number_integer() ? Quantity::Parse(limit.dump())
                                                     : StatusOr<Quantity>(InvalidError("unset"));
  if (q.ok() && q->Value() > 0 && (!size || q->Value() < *size)) size = q->Value();
  return size.value_or(0);
}

StatusOr<std::string> PodVolumes::ResolveHostPath(const std::string& name, const api::Object& source,
                                                  VolumeState& state) {
  const std::string path = api::StringAt(source, "path");
  const std::string type = api::StringAt(source, "type");
  auto refuse = [&](const std::string& why) -> StatusOr<std::string> {
    state.config_error = why;
    return std::string();
  };
  if (path.empty() || path.front() != '/') {
    return refuse("hostPath volume \"" + name + "\" path \"" + path + "\" must be an absolute path");
  }
  if (!SafeRelativePath(path.substr(1)) && path != "/") {
    return refuse("hostPath volume \"" + name + "\" path \"" + path + "\" must not contain '..'");
  }
  std::string allowed;
  for (const std::string& p : options_.host_path_prefixes) allowed += (allowed.empty() ? "" : ", ") + p;
  // The allowed prefix (resolved) `resolved` is at or below, "" when none.
  auto prefix_of = [&](const fs::path& resolved) -> std::string {
    if (resolved.empty()) return "";
    for (const std::string& p : options_.host_path_prefixes) {
      std::error_code ec;
      const fs::path real = fs::canonical(p, ec);
      if (!ec && PathIsUnder(resolved.string(), real.string())) return real.string();
    }
    return "";
  };
  auto under_prefix = [&](const fs::path& resolved) { return !prefix_of(resolved).empty(); };
  auto not_allowed = [&] {
    return refuse("hostPath volume \"" + name + "\" path \"" + path + "\" is not allowed on this node " +
                  (allowed.empty() ? std::string("(this node allows no hostPath volumes)")
                                   : "(allowed prefixes: " + allowed + ")"));
  };
  // berth's own data is never a pod's volume, whatever the prefixes allow.
  auto touches_protected = [&](const fs::path& p) -> std::optional<std::string> {
    for (const std::string& d : options_.protected_paths) {
      std::error_code ec;
      const fs::path real = fs::canonical(d, ec);
      const std::string dir = ec ? d : real.string();
      if (PathIsUnder(p.string(), dir) || PathIsUnder(dir, p.string())) return dir;
    }
    return std::nullopt;
  };
  auto protected_refusal = [&](const std::string& dir) {
    return refuse("hostPath volume \"" + name + "\" path \"" + path +
                  "\" is not allowed on this node (it holds berth's data directory " + dir + ")");
  };
  fs::path resolved = ResolveExisting(path);
  if (!under_prefix(resolved)) return not_allowed();
  if (auto dir = touches_protected(resolved)) return protected_refusal(*dir);
  std::error_code ec;
  const bool exists = fs::exists(resolved, ec);
  static const std::set<std::string> kTypes = {"",       "DirectoryOrCreate", "Directory",  "FileOrCreate", "File",
                                               "Socket", "CharDevice",        "BlockDevice"};
  if (kTypes.count(type) == 0) return refuse("hostPath volume \"" + name + "\": unknown type \"" + type + "\"");
  if (!exists && (type.empty() || type == "DirectoryOrCreate" || type == "FileOrCreate")) {
    // Made from the prefix's descriptor down: a component a pod swaps for a
    // symlink meanwhile fails the creation instead of leading it elsewhere.
    const std::string prefix = prefix_of(resolved);
    BERTH_RETURN_IF_ERROR(CreateBeneath(prefix, resolved.lexically_relative(prefix), /*file=*/type == "FileOrCreate"));
    // Look again: the path the supervisor binds is opened with RESOLVE_NO_SYMLINKS.
    resolved = ResolveExisting(path);
    if (!under_prefix(resolved)) return not_allowed();
    if (auto dir = touches_protected(resolved)) return protected_refusal(*dir);
  }
  struct stat st {};
  const bool found = ::stat(resolved.c_str(), &st) == 0;
  auto check = [&](bool ok, const char* what) -> StatusOr<std::string> {
    if (ok) return resolved.string();
    return Status(Code::kUnavailable, "hostPath type check failed: " + path + " is not " + what);
  };
  if (type == "Directory" || type == "DirectoryOrCreate") return check(found && S_ISDIR(st.st_mode), "a directory");
  if (type == "File" || type == "FileOrCreate") return check(found && S_ISREG(st.st_mode), "a file");
  if (type == "Socket") return check(found && S_ISSOCK(st.st_mode), "a socket file");
  if (type == "CharDevice") return check(found && S_ISCHR(st.st_mode), "a character device");
  if (type == "BlockDevice") return check(found && S_ISBLK(st.st_mode), "a block device");
  return resolved.string();
}

StatusOr<std::vector<shim::SandboxMount>> PodVolumes::MountsFor(const api::Object& container) const {
  if (!pod_config_error_.empty()) return InvalidError(pod_config_error_);
  std::vector<shim::SandboxMount> out;
  const std::string cname = api::StringAt(container, "name");
  bool has_token_mount = false;
  for (const api::Object& m : api::ArrayAt(container, "volumeMounts")) {
    const std::string name = api::StringAt(m, "name");
    const std::string target = api::StringAt(m, "mountPath");
    const std::string sub = api::StringAt(m, "subPath");
    auto it = volumes_.find(name);
    if (it == volumes_.end()) {
      return InvalidError("cannot find volume \"" + name + "\" to mount into container \"" + cname + "\"");
    }
    const VolumeState& v = it->second;
    if (!v.config_error.empty()) return InvalidError(v.config_error);
    if (target.empty() || target.front() != '/') {
      return InvalidError("volume mount \"" + name + "\": mountPath \"" + target + "\" must be an absolute path");
    }
    if (!api::StringAt(m, "subPathExpr").empty()) {
      return InvalidError("volume mount \"" + name + "\" at " + target + ": subPathExpr is not implemented by berth");
    }
    std::string clean = fs::path(target).lexically_normal().string();
    while (clean.size() > 1 && clean.back() == '/') clean.pop_back();
    if (clean == kServiceAccountMountPath) has_token_mount = true;
    shim::SandboxMount mount;
    mount.target = target;
    mount.read_only = v.read_only || (api::Field(m, "readOnly").is_boolean() && api::Field(m, "readOnly").get<bool>());
    if (v.tmpfs) {
      if (!sub.empty()) {
        return InvalidError("volume mount \"" + name +
                            "\": subPath of an emptyDir with medium Memory is not "
                            "supported by berth");
      }
      mount.kind = shim::SandboxMount::Kind::kTmpfs;
      mount.size_bytes = v.tmpfs_bytes;
      out.push_back(mount);
      continue;
    }
    mount.source = v.source;
    if (!sub.empty()) {
      if (!SafeRelativePath(sub)) {
        return InvalidError("volume mount \"" + name + "\": subPath \"" + sub +
                            "\" must be a relative path without '..'");
      }
      std::error_code ec;
      const fs::path base = fs::canonical(v.source, ec);
      if (ec) return InvalidError("volume \"" + name + "\": " + ec.message());
      const fs::path candidate = base / sub;
      // kubelet makeMounts: a missing subPath directory is made (emptyDir, hostPath).
      if ((v.kind == "emptyDir" || v.kind == "hostPath") && !fs::exists(fs::symlink_status(candidate, ec))) {
        if (!PathIsUnder(ResolveExisting(candidate).string(), base.string())) {
          return InvalidError("volume mount \"" + name + "\": subPath \"" + sub + "\" leads outside the volume");
        }
        // Made as DirectoryOrCreate is: a walk of descriptors that follows no symlink.
        if (Status made = CreateBeneath(base.string(), fs::path(sub), /*file=*/false); !made.ok()) {
          return InvalidError("volume mount \"" + name + "\": subPath \"" + sub + "\": " + made.message());
        }
      }
      const fs::path real = fs::canonical(candidate, ec);
      if (ec) return InvalidError("volume mount \"" + name + "\": subPath \"" + sub + "\": " + ec.message());
      if (!PathIsUnder(real.string(), base.string())) {
        return InvalidError("volume mount \"" + name + "\": subPath \"" + sub + "\" leads outside the volume");
      }
      mount.source = real.string();
    }
    out.push_back(mount);
  }
  if (automount_ && options_.service_account_tokens && !has_token_mount) {
    shim::SandboxMount token;
    token.source = options_.pod_dir + "/" + kServiceAccountDir;
    token.target = kServiceAccountMountPath;
    token.read_only = true;
    out.push_back(token);
  }
  return out;
}

}  // namespace berth::agent
