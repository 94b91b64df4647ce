#include "agent/pod_sandbox.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <pwd.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/shim/run_record.h"
#include "api/unstructured.h"
#include "core/file.h"

namespace berth::agent {
namespace {

constexpr int kPodUsersVersion = 1;
constexpr size_t kMaxPodUsersBytes = 4 << 20;

// The securityContext field `key` as an id: absent → nullopt; not an integer in range → error.
StatusOr<std::optional<int64_t>> IdField(const api::Object& sc, const char* key, const std::string& where) {
  const api::Object& v = api::Field(sc, key);
  if (v.is_null()) return std::optional<int64_t>();
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > shim::kMaxSandboxId) {
    return InvalidError(where + "securityContext." + key + " must be an integer in [0, " +
                        std::to_string(shim::kMaxSandboxId) + "]");
  }
  return std::optional<int64_t>(v.get<int64_t>());
}

// The primary group of `uid` in the host's passwd database, 0 when it has none.
int64_t PrimaryGroup(int64_t uid) {
  struct passwd pw;
  struct passwd* found = nullptr;
  char buf[4096];
  if (getpwuid_r(static_cast<uid_t>(uid), &pw, buf, sizeof buf, &found) == 0 && found != nullptr) {
    return found->pw_gid;
  }
  return 0;
}

}  // namespace

StatusOr<std::unique_ptr<PodUsers>> PodUsers::Open(const std::string& data_dir, int64_t first_uid, int64_t count) {
  const std::string path = data_dir + "/" + kPodUsersFile;
  std::unique_ptr<PodUsers> users(new PodUsers(path, first_uid, count));
  StatusOr<std::string> text = ReadFileBounded(path, kMaxPodUsersBytes, /*follow_symlinks=*/false);
  if (!text.ok()) {
    if (text.status().code() == Code::kNotFound) return users;
    return InvalidError(text.status().message());
  }
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  const bool ok = j.is_object() && j.value("version", 0) == kPodUsersVersion && j.contains("namespaces") &&
                  j["namespaces"].is_object();
  if (!ok) return InvalidError(path + " is not a pod-users record (version " + std::to_string(kPodUsersVersion) + ")");
  for (const auto& [ns, uid] : j["namespaces"].items()) {
    if (!uid.is_number_integer() || uid.get<int64_t>() <= 0 || uid.get<int64_t>() > shim::kMaxSandboxId) {
      return InvalidError(path + ": the uid of namespace \"" + ns + "\" is not a valid uid");
    }
    users->uids_[ns] = uid.get<int64_t>();
  }
  return users;
}

StatusOr<int64_t> PodUsers::UidFor(const std::string& ns) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = uids_.find(ns); it != uids_.end()) return it->second;
  std::set<int64_t> used;
  for (const auto& [n, uid] : uids_) used.insert(uid);
  for (int64_t uid = first_; uid < first_ + count_; ++uid) {
    if (used.count(uid) != 0) continue;
    uids_[ns] = uid;
    nlohmann::json j = {{"version", kPodUsersVersion}, {"namespaces", uids_}};
    if (Status s = WriteFileAtomically(path_, j.dump(), 0600); !s.ok()) {
      uids_.erase(ns);
      return s;
    }
    return uid;
  }
  return UnavailableError("no free pod uid left in [" + std::to_string(first_) + ", " +
                          std::to_string(first_ + count_) + ") for namespace \"" + ns + "\"");
}

StatusOr<shim::SandboxUser> ContainerIdentity(const api::Object& pod, const api::Object& container, bool allow_root,
                                              const std::function<StatusOr<int64_t>()>& ns_uid) {
  const api::Object& pod_sc = api::NestedField(pod, {"spec", "securityContext"});
  const api::Object& sc = api::Field(container, "securityContext");
  const std::string name = api::StringAt(container, "name");
  const std::string where = "container " + name + ": ";
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> pod_user, IdField(pod_sc, "runAsUser", "pod: spec."));
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> pod_group, IdField(pod_sc, "runAsGroup", "pod: spec."));
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> user, IdField(sc, "runAsUser", where));
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> group, IdField(sc, "runAsGroup", where));
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> fs_group, IdField(pod_sc, "fsGroup", "pod: spec."));
  if (!user) user = pod_user;
  if (!group) group = pod_group;
  bool non_root = api::BoolAt(pod_sc, "runAsNonRoot", false);
  if (api::Field(sc, "runAsNonRoot").is_boolean()) non_root = api::Field(sc, "runAsNonRoot").get<bool>();

  shim::SandboxUser out;
  if (user) {
    if (*user == 0 && non_root) {
      return InvalidError("container's runAsUser breaks non-root policy (pod: \"" + api::Name(pod) + "_" +
                          api::Namespace(pod) + "(" + api::Uid(pod) + ")\", container: " + name + ")");
    }
    if (*user == 0 && !allow_root) {
      return InvalidError("container's runAsUser 0 is refused by this node (berth --allow-root-pods is off)");
    }
    out.uid = *user;
    out.gid = group ? *group : PrimaryGroup(*user);
  } else {
    BERTH_ASSIGN_OR_RETURN(out.uid, ns_uid());
    out.gid = group ? *group : out.uid;
  }
  if (fs_group) out.groups.push_back(*fs_group);
  const api::Object& supplemental = api::Field(pod_sc, "supplementalGroups");
  if (supplemental.is_array()) {
    for (const api::Object& g : supplemental) {
      if (!g.is_number_integer() || g.get<int64_t>() < 0 || g.get<int64_t>() > shim::kMaxSandboxId) {
        return InvalidError("pod: spec.securityContext.supplementalGroups must be integers in [0, " +
                            std::to_string(shim::kMaxSandboxId) + "]");
      }
      if (std::find(out.groups.begin(), out.groups.end(), g.get<int64_t>()) == out.groups.end()) {
        out.groups.push_back(g.get<int64_t>());
      }
    }
  }
  if (out.groups.size() > shim::kMaxSandboxEntries) {
    return InvalidError("pod: more than " + std::to_string(shim::kMaxSandboxEntries) + " supplementalGroups");
  }
  return out;
}

StatusOr<WorkDirOwner> PodWorkDirOwner(const api::Object& pod, const std::function<StatusOr<int64_t>()>& ns_uid) {
  const api::Object& pod_sc = api::NestedField(pod, {"spec", "securityContext"});
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> user, IdField(pod_sc, "runAsUser", "pod: spec."));
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> group, IdField(pod_sc, "runAsGroup", "pod: spec."));
  BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> fs_group, IdField(pod_sc, "fsGroup", "pod: spec."));
  WorkDirOwner owner;
  if (user) {
    owner.uid = *user;
    owner.gid = group ? *group : PrimaryGroup(*user);
  } else {
    BERTH_ASSIGN_OR_RETURN(owner.uid, ns_uid());
    owner.gid = group ? *group : owner.uid;
  }
  if (fs_group) {
    owner.gid = *fs_group;
    owner.fs_group = true;
  }
  return owner;
}

Status ApplyWorkDirOwner(const std::string& dir, const WorkDirOwner& owner) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return InternalError("cannot open " + dir + ": " + std::strerror(errno));
  const bool ok = fchown(fd, static_cast<uid_t>(owner.uid), static_cast<gid_t>(owner.gid)) == 0 &&
                  fchmod(fd, owner.fs_group ? 02770 : 0700) == 0;
  const int err = errno;
  close(fd);
  if (!ok) return InternalError("cannot give " + dir + " to the pod's user: " + std::strerror(err));
  return Status::Ok();
}

std::vector<std::string> GpuDeviceNodes(const std::string& device_dir, const std::vector<int>& indices) {
  std::vector<std::string> out;
  if (indices.empty()) return out;
  auto add_if_present = [&](const std::string& p) {
    struct stat st;
    if (stat(p.c_str(), &st) == 0) out.push_back(p);
  };
  // A declared (virtual) GPU has no device node: it is assigned by CUDA_VISIBLE_DEVICES only.
  for (int i : indices) add_if_present(device_dir + "/nvidia" + std::to_string(i));
  for (const char* control : {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"})
    add_if_present(device_dir + "/" + control);
  return out;
}

void RemoveRootfsBefore(const std::string& pod_dir, const std::string& container, int keep) {
  std::error_code ec;
  for (const auto& [run, dir] : shim::ListRuns(pod_dir, container)) {
    if (run >= keep) break;
    std::filesystem::remove_all(dir + "/" + shim::kRootfsDir, ec);  // never follows a link
  }
}

}  // namespace berth::agent
