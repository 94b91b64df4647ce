// A pod's volumes on the node and the mounts each container gets: what the kubelet's
// volume manager and its plugins do (kubernetes/kubernetes pkg/kubelet/volumemanager,
// pkg/volume/{emptydir,hostpath,configmap,secret,projected,downwardapi},
// pkg/volume/util/atomic_writer.go, pkg/kubelet/kubelet_pods.go makeMounts), for the
// volume kinds Kueue, Trainer and JobSet examples use.
//
// Layout: each volume is materialized under <pod dir>/volumes/<plugin>/<name>/, with the
// kubelet's plugin directory names:
//   emptyDir      kubernetes.io~empty-dir   a directory, mode 0777 (emptydir.go's perm);
//                 `medium: Memory` makes it a tmpfs mounted inside the container
//                 (shim::SandboxMount::Kind::kTmpfs, size = min(sizeLimit, the sum of the
//                 containers' memory limits when every container has one, else the node's
//                 allocatable memory), 0 = the kernel's default when neither is known)
//                 — the directory stays empty and each container gets
//                 a tmpfs of its own (berth makes no host mounts), so a memory emptyDir is
//                 not shared between the containers of a pod
//   configMap     kubernetes.io~configmap   `data` and `binaryData` (base64) keys, or only
//                 `items` (key → path, `mode`); defaultMode 0644
//                 (ConfigMapVolumeSourceDefaultMode); `optional`
//   secret        kubernetes.io~secret      `data` (base64) keys or `items`; defaultMode
//                 0644 (SecretVolumeSourceDefaultMode); `optional`
//   projected     kubernetes.io~projected   sources configMap, secret, downwardAPI and
//                 serviceAccountToken {path, expirationSeconds (default 3600),
//                 audience} merged into one directory; defaultMode 0644
//   downwardAPI   kubernetes.io~downward-api items fieldRef (metadata.name, namespace,
//                 uid, labels, annotations, labels['k'], annotations['k']; maps as
//                 fieldpath.FormatMap: sorted `k="v"` lines) and resourceFieldRef
//                 (containerName, resource, divisor, as agent/container_env.h)
//   hostPath      no directory: the host path itself (see below)
// configMap, secret, projected and downwardAPI directories are written as the kubelet's
// AtomicWriter writes them: the files go to a fresh directory
// `..<UTC yyyy_mm_dd_hh_mm_ss>.<random>` (mode 0755), the symlink `..data` points to it
// (replaced by renaming `..data_tmp` over it, so a reader sees the old or the new set,
// never a mix), every top-level user path is a symlink `<p>` → `..data/<p>`, then the
// previous timestamped directory and user paths no longer in the payload are removed.
// Nothing is rewritten when the payload and modes are unchanged. Every path written is
// checked to stay inside the volume directory (no absolute path, no ".." element, no
// leading ".."), although the API validated it (validateKeyToPath).
//
// hostPath: the path must be absolute, and (after resolving symlinks on the host: the
// deepest existing ancestor for a path that does not exist yet) equal to or below one of
// SandboxOptions::host_path_prefixes (each resolved too), compared by path elements, so
// /data2 is not below /data. Anything else is a configuration error of the containers
// that mount it:
//   hostPath volume "v" path "/etc" is not allowed on this node (allowed prefixes: /data, /scratch)
// ("... (this node allows no hostPath volumes)" without prefixes). A path that is, lies
// in or contains one of Options::protected_paths (berth's own data: the store, the CA and
// signing keys, every pod's directory) is refused even under an allowed prefix:
//   hostPath volume "v" path "/srv" is not allowed on this node (it holds berth's data directory /srv/berth)
// The type checks of
// hostpath.go checkType: "" (created as a directory when missing, as containerd's CRI
// does), DirectoryOrCreate (mkdir -p, 0755), Directory, FileOrCreate (an empty file 0644,
// its missing parent directories 0755), File, Socket, CharDevice, BlockDevice; a failed check is a
// FailedMount "hostPath type check failed: <path> is not a directory" (a file, a socket
// file, a character device, a block device), retried. The mount source is the resolved
// path.
//
// Ownership (volume.SetVolumeOwnership, pkg/volume/volume_linux.go), when an owner is
// given (the agent gives the sandbox's user when the sandbox is on): with the pod's
// securityContext.fsGroup, the volume directories and files are group-owned by it, the
// directories setgid and group r-x (an emptyDir 02777), the files of the atomic-writer
// kinds group-readable (mode | 0440, the kubelet's read-only mask); otherwise they are
// owned by the owner's uid and gid with the modes asked. An emptyDir is made once (its
// contents and modes are the pod's afterwards); hostPath contents are never changed.
//
// Errors of Sync (kubelet FailedMount, the pod stays ContainerCreating and the volume is
// retried with the volume manager's back-off: kVolumeRetryInitial doubling up to
// kVolumeRetryMax), one message per failed volume, as the kubelet's event text:
//   MountVolume.SetUp failed for volume "x" : configmap "y" not found
//   MountVolume.SetUp failed for volume "x" : secret "y" not found
//   MountVolume.SetUp failed for volume "x" : configmap references non-existent config key: k
//   MountVolume.SetUp failed for volume "x" : references non-existent secret key: k
//   MountVolume.SetUp failed for volume "x" : hostPath type check failed: /p is not a directory
// An optional ConfigMap/Secret that is missing gives an empty directory; an optional
// missing key is left out. A volume kind berth does not implement (persistentVolumeClaim,
// nfs, csi, ...) is a configuration error of the containers that mount it ("volume "x":
// persistentVolumeClaim volumes are not supported by berth").
//
// Resync: ConfigMap, Secret and downward API contents are read again every
// kVolumeResyncInterval of Clock time (the kubelet's pod sync period, 1 min) and
// rewritten atomically when they changed; containers see the new files without a
// restart (except through subPath, as upstream). Projected tokens are requested again at
// 80 % of their lifetime (token_manager.go requiresRefresh) on the first sync after it.
//
// MountsFor(container): one shim::SandboxMount per volumeMounts entry, in order (kubelet
// makeMounts): target = mountPath; configMap, secret, projected and downwardAPI always
// read-only; emptyDir and hostPath read-only when the mount says so; subPath (relative, no
// "..": checked again here) resolved inside the volume — after resolving symlinks the
// result must still be inside it, and for emptyDir a missing subPath directory is created
// (kubelet doSafeMakeDir); subPathExpr is refused as not implemented. Then, when the pod
// automounts its ServiceAccount token (the pod's automountServiceAccountToken, else its
// ServiceAccount's, else true) and the node writes tokens, the token directory
// <pod dir>/var/run/secrets/kubernetes.io/serviceaccount (agent/service_account_token.h)
// read-only at kServiceAccountMountPath, unless the container mounts something there.
// Errors: kInvalid with the message the agent reports as CreateContainerConfigError.
//
// Limits: a pod has at most api::kMaxPodVolumes volumes (validated by the API server,
// checked again here); each ConfigMap/Secret is at most 1 MiB (the API's limit).
//
// Thread-safety: not thread-safe; the agent's loop thread owns each PodVolumes.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/container_env.h"
#include "agent/shim/sandbox.h"
#include "api/object.h"
#include "client/client.h"
#include "core/clock.h"
#include "core/status.h"

namespace berth::agent {

// The kubelet's plugin directory names (escaped plugin names, kubernetes.io/empty-dir).
inline constexpr char kEmptyDirPlugin[] = "kubernetes.io~empty-dir";
inline constexpr char kConfigMapPlugin[] = "kubernetes.io~configmap";
inline constexpr char kSecretPlugin[] = "kubernetes.io~secret";
inline constexpr char kProjectedPlugin[] = "kubernetes.io~projected";
inline constexpr char kDownwardApiPlugin[] = "kubernetes.io~downward-api";

// Where containers find the ServiceAccount token (the admission plugin's mount path).
inline constexpr char kServiceAccountMountPath[] = "/var/run/secrets/kubernetes.io/serviceaccount";
// The kubelet's Warning event reason for a volume that could not be set up.
inline constexpr char kFailedMountReason[] = "FailedMount";
// The kubelet's pod sync period (--sync-frequency 1m): ConfigMap/Secret/downward API resync.
inline constexpr Duration kVolumeResyncInterval = std::chrono::seconds(60);
// The volume manager's exponential back-off (nestedpendingoperations: 500 ms doubling,
// at most 2 min 2 s).
inline constexpr Duration kVolumeRetryInitial = std::chrono::milliseconds(500);
inline constexpr Duration kVolumeRetryMax = std::chrono::seconds(122);
// A projected serviceAccountToken's lifetime when the source does not say (API default).
inline constexpr int64_t kProjectedTokenDefaultExpirationSeconds = 3600;

// One file of an atomic-writer volume (FileProjection).
struct ProjectedFile {
  std::string data;
  int mode = 0644;
  bool operator==(const ProjectedFile&) const = default;
};

// Who owns a volume's files: `uid`, and `gid` (the pod's fsGroup when `fs_group`).
struct VolumeOwner {
  int64_t uid = 0;
  int64_t gid = 0;
  bool fs_group = false;
};

class PodVolumes {
 public:
  struct Options {
    std::string pod_dir;                          // <data dir>/pods/<ns>_<name>_<uid>
    std::vector<std::string> host_path_prefixes;  // SandboxOptions::host_path_prefixes
    // Host directories no hostPath may be, lie in or contain (berth's data directories,
    // SandboxOptions::hidden_paths and the node's own); checked after resolving symlinks.
    std::vector<std::string> protected_paths;
    NodeFacts node;                               // for resourceFieldRef (unset limits)
    // The node writes each pod's token directory (NodeAgentOptions::api_server has a host).
    bool service_account_tokens = false;
    // Who must be able to read the volumes (see "Ownership"); nullopt: files keep the
    // agent's user (the sandbox is off).
    std::optional<shim::SandboxUser> owner;
  };

  PodVolumes(client::Client& client, Clock& clock, Options options)
      : client_(client), clock_(clock), options_(std::move(options)) {}

  // Sets up every volume of `pod` that is due: all of them on the first call and every
  // kVolumeResyncInterval, a failed one when its back-off ends. Returns the FailedMount
  // messages of this call (see above); empty when nothing failed or nothing was due.
  std::vector<std::string> Sync(const api::Object& pod);
  // Every volume is set up (no FailedMount outstanding): containers may start.
  bool Ready() const;
  // When Sync has something to do next (a retry or the resync).
  std::optional<Time> NextSync() const;
  // The mounts of `container` (a container object of the pod last synced). Errors:
  // kInvalid (CreateContainerConfigError), see above.
  StatusOr<std::vector<shim::SandboxMount>> MountsFor(const api::Object& container) const;

  // <pod dir>/volumes/<plugin>/<name>.
  std::string VolumeDir(const char* plugin, const std::string& name) const;

 private:
  struct VolumeState {
    std::string kind;        // "emptyDir", "configMap", ... (the source's field)
    std::string source;      // host path to bind (emptyDir/hostPath/atomic-writer dirs)
    bool read_only = false;  // always read-only (configMap, secret, projected, downwardAPI)
    bool tmpfs = false;
    int64_t tmpfs_bytes = 0;
    std::string config_error;  // refused on this node (CreateContainerConfigError)
    std::string mount_error;   // last FailedMount text ("" = set up)
    Time next_attempt{};
    Duration backoff{};
  };
  struct Token {
    std::string token;
    Time refresh_at{};
  };
  // One volume: set up or refreshed; returns the FailedMount reason ("" = fine).
  std::string SetUp(const api::Object& pod, const api::Object& volume, VolumeState& state);
  // The resolved host path; a refusal is left in state.config_error (and "" returned);
  // errors are FailedMount reasons.
  StatusOr<std::string> ResolveHostPath(const std::string& name, const api::Object& source, VolumeState& state);
  // The payload pieces of the atomic-writer kinds; each returns a FailedMount reason or "".
  std::string CollectDownwardApi(const api::Object& source, int default_mode,
                                 std::map<std::string, ProjectedFile>* out) const;
  std::string CollectToken(const std::string& volume, const api::Object& source, int default_mode,
                           std::map<std::string, ProjectedFile>* out);
  int64_t EmptyDirMemoryBytes(const api::Object& pod, const api::Object& source) const;
  void DecideAutomount(const api::Object& pod);
  std::optional<VolumeOwner> Owner() const;

  client::Client& client_;
  Clock& clock_;
  Options options_;
  api::Object pod_;
  std::map<std::string, VolumeState> volumes_;  // by volume name
  std::map<std::string, Token> tokens_;         // by "<volume>/<path>"
  std::optional<Time> resync_at_;
  bool automount_ = true;
  std::string pod_config_error_;  // the pod as a whole cannot be set up (too many volumes)
};

// Writes `files` (relative path → contents and mode) into `dir` with the kubelet's
// AtomicWriter layout (see above); an unchanged payload is not rewritten. Errors:
// kInvalid for a path that would leave `dir`; kInternal for file system errors.
// `now` names the timestamped directory; `owner` (nullable) as "Ownership" above.
Status WriteAtomicPayload(const std::string& dir, const std::map<std::string, ProjectedFile>& files, Time now,
                          const VolumeOwner* owner = nullptr);

// Whether `path` is `prefix` or below it, by path elements (both absolute and clean).
bool PathIsUnder(const std::string& path, const std::string& prefix);

}  // namespace berth::agent
