#include "agent/pod_sandbox.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/shim/run_record.h"
#include "api/unstructured.h"

namespace berth::agent {
namespace {

// An id the pod names, with the path of its field in the pod.
struct IdValue {
  int64_t id = 0;
  std::string path;  // "spec.containers[0].securityContext.runAsUser"
};

// The securityContext field `key` as an id: absent → nullopt; not an integer in range → error.
StatusOr<std::optional<IdValue>> IdField(const api::Object& sc, const char* key, const std::string& sc_path) {
  const api::Object& v = api::Field(sc, key);
  const std::string path = sc_path + "." + key;
  if (v.is_null()) return std::optional<IdValue>();
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > shim::kMaxSandboxId) {
    return InvalidError(path + " must be an integer in [0, " + std::to_string(shim::kMaxSandboxId) + "]");
  }
  return std::optional<IdValue>(IdValue{v.get<int64_t>(), path});
}

// The path of `container`'s securityContext in the pod: spec.containers[i] or spec.initContainers[i].
std::string ContainerScPath(const api::Object& pod, const std::string& name) {
  for (const char* list : {"containers", "initContainers"}) {
    const api::Object& cs = api::NestedField(pod, {"spec", list});
    if (!cs.is_array()) continue;
    for (size_t i = 0; i < cs.size(); ++i) {
      if (api::StringAt(cs[i], "name") == name) {
        return std::string("spec.") + list + "[" + std::to_string(i) + "].securityContext";
      }
    }
  }
  return "container " + name + ": securityContext";
}

// The ids of a pod (container == nullptr: its pod-level settings only), resolved and
// checked as pod_sandbox.h says.
struct ResolvedIds {
  int64_t uid = 0, gid = 0;
  std::optional<int64_t> fs_group;
  std::vector<int64_t> groups;  // fsGroup then supplementalGroups, without repeats
};

// `value` within `block`, else OpenShift's MustRunAsRange detail.
Status CheckInBlock(const IdValue& value, const api::IdBlock& block, const NamespaceIds& ns, const char* annotation) {
  if (block.Contains(value.id)) return Status::Ok();
  return InvalidError(value.path + ": Invalid value: " + std::to_string(value.id) + ": must be in the ranges: [" +
                      std::to_string(block.base) + ", " + std::to_string(block.end() - 1) + "] (namespace \"" + ns.ns +
                      "\": " + annotation + " \"" + api::FormatIdBlock(block) + "\")");
}

StatusOr<ResolvedIds> ResolveIds(const api::Object& pod, const api::Object* container, const IdentityRules& rules,
                                 const NamespaceIdsFunc& ns_ids) {
  const api::Object& pod_sc = api::NestedField(pod, {"spec", "securityContext"});
  const std::string pod_path = "spec.securityContext";
  BERTH_ASSIGN_OR_RETURN(std::optional<IdValue> user, IdField(pod_sc, "runAsUser", pod_path));
  BERTH_ASSIGN_OR_RETURN(std::optional<IdValue> group, IdField(pod_sc, "runAsGroup", pod_path));
  BERTH_ASSIGN_OR_RETURN(std::optional<IdValue> fs_group, IdField(pod_sc, "fsGroup", pod_path));
  if (container != nullptr) {
    const api::Object& sc = api::Field(*container, "securityContext");
    const std::string path = ContainerScPath(pod, api::StringAt(*container, "name"));
    BERTH_ASSIGN_OR_RETURN(std::optional<IdValue> c_user, IdField(sc, "runAsUser", path));
    BERTH_ASSIGN_OR_RETURN(std::optional<IdValue> c_group, IdField(sc, "runAsGroup", path));
    if (c_user) user = c_user;
    if (c_group) group = c_group;
  }
  std::vector<IdValue> supplemental;
  const api::Object& list = api::Field(pod_sc, "supplementalGroups");
  if (list.is_array()) {
    for (size_t i = 0; i < list.size(); ++i) {
      const api::Object& g = list[i];
      const std::string path = pod_path + ".supplementalGroups[" + std::to_string(i) + "]";
      if (!g.is_number_integer() || g.get<int64_t>() < 0 || g.get<int64_t>() > shim::kMaxSandboxId) {
        return InvalidError(path + " must be an integer in [0, " + std::to_string(shim::kMaxSandboxId) + "]");
      }
      supplemental.push_back({g.get<int64_t>(), path});
    }
  }
  const bool must_run_as_range = rules.policy == PodIdPolicy::kMustRunAsRange;
  std::optional<NamespaceIds> ns;
  if (must_run_as_range || !user || !group) {
    BERTH_ASSIGN_OR_RETURN(NamespaceIds got, ns_ids());
    ns = std::move(got);
  }
  ResolvedIds out;
  out.uid = user ? user->id : ns->uids.base;
  out.gid = group ? group->id : ns->groups.base;
  if (fs_group) out.fs_group = fs_group->id;
  if (must_run_as_range) {
    // uid 0 is --allow-root-pods' to allow (ContainerIdentity); a root container holds
    // every group already.
    const bool root = rules.allow_root && out.uid == 0;
    if (user && !root) BERTH_RETURN_IF_ERROR(CheckInBlock(*user, ns->uids, *ns, api::kUidRangeAnnotation));
    std::vector<IdValue> groups = supplemental;
    if (fs_group) groups.insert(groups.begin(), *fs_group);
    if (group) groups.insert(groups.begin(), *group);
    for (const IdValue& g : groups) {
      if (root && g.id == 0) continue;
      BERTH_RETURN_IF_ERROR(CheckInBlock(g, ns->groups, *ns, api::kSupplementalGroupsAnnotation));
    }
  }
  if (fs_group) out.groups.push_back(fs_group->id);
  for (const IdValue& g : supplemental) {
    if (std::find(out.groups.begin(), out.groups.end(), g.id) == out.groups.end()) out.groups.push_back(g.id);
  }
  if (out.groups.size() > shim::kMaxSandboxEntries) {
    return InvalidError("pod: more than " + std::to_string(shim::kMaxSandboxEntries) + " supplementalGroups");
  }
  return out;
}

}  // namespace

StatusOr<NamespaceIds> NamespaceIdsOf(const api::Object& ns) {
  NamespaceIds out;
  out.ns = api::Name(ns);
  StatusOr<api::IdBlock> uids = api::NamespaceIdBlock(ns, api::kUidRangeAnnotation);
  if (uids.status().code() == Code::kNotFound) {
    return UnavailableError("namespace \"" + out.ns + "\" has no " + api::kUidRangeAnnotation +
                            " yet: its pods start once the control plane has allocated its ids");
  }
  BERTH_RETURN_IF_ERROR(uids.status());
  out.uids = *uids;
  StatusOr<api::IdBlock> groups = api::NamespaceIdBlock(ns, api::kSupplementalGroupsAnnotation);
  if (groups.status().code() == Code::kNotFound) {
    out.groups = out.uids;
  } else {
    BERTH_RETURN_IF_ERROR(groups.status());
    out.groups = *groups;
  }
  return out;
}

StatusOr<shim::SandboxUser> ContainerIdentity(const api::Object& pod, const api::Object& container,
                                              const IdentityRules& rules, const NamespaceIdsFunc& ns_ids) {
  const api::Object& pod_sc = api::NestedField(pod, {"spec", "securityContext"});
  const api::Object& sc = api::Field(container, "securityContext");
  const std::string name = api::StringAt(container, "name");
  bool non_root = api::BoolAt(pod_sc, "runAsNonRoot", false);
  if (api::Field(sc, "runAsNonRoot").is_boolean()) non_root = api::Field(sc, "runAsNonRoot").get<bool>();
  // The root rules first: they hold whatever the namespace's range.
  const api::Object& user =
      api::Field(sc, "runAsUser").is_null() ? api::Field(pod_sc, "runAsUser") : api::Field(sc, "runAsUser");
  if (user.is_number_integer() && user.get<int64_t>() == 0) {
    if (non_root) {
      return InvalidError("container's runAsUser breaks non-root policy (pod: \"" + api::Name(pod) + "_" +
                          api::Namespace(pod) + "(" + api::Uid(pod) + ")\", container: " + name + ")");
    }
    if (!rules.allow_root) {
      return InvalidError("container's runAsUser 0 is refused by this node (berth --allow-root-pods is off)");
    }
  }
  BERTH_ASSIGN_OR_RETURN(ResolvedIds ids, ResolveIds(pod, &container, rules, ns_ids));
  return shim::SandboxUser{ids.uid, ids.gid, std::move(ids.groups)};
}

StatusOr<WorkDirOwner> PodWorkDirOwner(const api::Object& pod, const IdentityRules& rules,
                                       const NamespaceIdsFunc& ns_ids) {
  BERTH_ASSIGN_OR_RETURN(ResolvedIds ids, ResolveIds(pod, nullptr, rules, ns_ids));
  WorkDirOwner owner{ids.uid, ids.gid, false};
  if (ids.fs_group) {
    owner.gid = *ids.fs_group;
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
