#include "agent/shim/sandbox.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <grp.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <sstream>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/shim/launcher.h"
#include "agent/shim/run_record.h"
#include "agent/shim/seccomp.h"
#include "agent/shim/shim.h"

namespace berth::agent::shim {
namespace {

// A path the sandbox accepts: absolute, no empty-name tricks beyond repeated
// slashes, no "." or ".." component, no NUL, at most PATH_MAX.
bool CleanAbsolute(const std::string& p) {
  if (p.empty() || p[0] != '/' || p.size() >= 4096 || p.find('\0') != std::string::npos) return false;
  std::istringstream parts(p);
  std::string part;
  while (std::getline(parts, part, '/')) {
    if (part == "." || part == "..") return false;
  }
  return true;
}

Status CheckPath(const std::string& field, const std::string& p) {
  if (CleanAbsolute(p)) return Status::Ok();
  return InvalidError(field + " \"" + p + "\" must be an absolute path without \".\" or \"..\"");
}

bool IdInRange(int64_t id) { return id >= 0 && id <= kMaxSandboxId; }

// errno text as Go's syscall.Errno prints it (runc's messages): lower case.
std::string GoErrno(int err) {
  std::string s = std::strerror(err);
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

// A start error found in the init or the main process: reported, then exit.
[[noreturn]] void Fail(int report_fd, const std::string& message) {
  ReportStartError(report_fd, message);
  _exit(127);
}

std::string Hex(unsigned long v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%#lx", v);
  return buf;
}

// runc's mount error (libcontainer/rootfs_linux.go mountToRootfs, mount_linux.go mountError).
std::string MountError(const std::string& source, const std::string& target, unsigned long flags, int err) {
  return "error mounting \"" + source + "\" to rootfs at \"" + target + "\": mount " + source + ":" + target +
         ", flags: " + Hex(flags) + ": " + GoErrno(err);
}

// Opens `path` (absolute, inside the new root) below `root_fd` as runc's
// securejoin MkdirAll does: every symlink and ".." resolves inside the root
// (RESOLVE_IN_ROOT), missing components are created (directories 0755, the
// last one a directory or an empty file as `dir` says; a dangling symlink's
// target is created, inside the root). Returns an O_PATH descriptor or -1
// with errno set.
int OpenInRoot(int root_fd, std::string path, bool dir) {
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  for (int links = 0; links < 40; ++links) {  // the kernel's MAXSYMLINKS
    std::vector<std::string> parts;
    std::istringstream in(path);
    std::string part;
    while (std::getline(in, part, '/')) {
      if (!part.empty()) parts.push_back(part);
    }
    std::string prefix;
    int parent = dup(root_fd);
    bool restart = false;
    for (size_t i = 0; i < parts.size() && !restart; ++i) {
      const std::string parent_prefix = prefix;
      prefix += "/" + parts[i];
      int fd = static_cast<int>(syscall(SYS_openat2, root_fd, prefix.c_str(), &how, sizeof how));
      if (fd < 0 && errno == ENOENT) {
        const bool last = i + 1 == parts.size();
        // parent is an O_PATH descriptor: create through a real directory descriptor.
        int real = openat(parent, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (real >= 0) {
          char link[4096];
          const ssize_t n = readlinkat(real, parts[i].c_str(), link, sizeof link - 1);
          if (n > 0) {  // a dangling symlink: continue with its target, resolved inside the root
            std::string rest;
            for (size_t j = i + 1; j < parts.size(); ++j) rest += "/" + parts[j];
            const std::string target(link, static_cast<size_t>(n));
            path = (target[0] == '/' ? target : parent_prefix + "/" + target) + rest;
            restart = true;
          } else if (!last || dir) {
            mkdirat(real, parts[i].c_str(), 0755);
          } else {
            int f = openat(real, parts[i].c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
            if (f >= 0) close(f);
          }
          close(real);
        }
        if (restart) break;
        fd = static_cast<int>(syscall(SYS_openat2, root_fd, prefix.c_str(), &how, sizeof how));
      }
      const int err = errno;
      close(parent);
      parent = -1;
      if (fd < 0) {
        errno = err;
        return -1;
      }
      parent = fd;
    }
    if (!restart) return parent;
    if (parent >= 0) close(parent);
  }
  errno = ELOOP;
  return -1;
}

std::string FdPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

// Makes the mount at `path` and everything below it read-only.
int MakeReadOnly(const std::string& path) {
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_RDONLY;
  if (mount_setattr(AT_FDCWD, path.c_str(), AT_RECURSIVE, &attr, sizeof attr) == 0) return 0;
  if (errno != ENOSYS) return errno;
  // Kernels before 5.12: the top mount only, keeping its other flags.
  if (mount(nullptr, path.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_REC, nullptr) != 0) return errno;
  return 0;
}

// The mount points of the host (from /proc/self/mountinfo), unescaped.
std::vector<std::string> HostMountPoints() {
  std::vector<std::string> out;
  FILE* f = std::fopen("/proc/self/mountinfo", "re");
  if (f == nullptr) return out;
  char* line = nullptr;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    if (!(fields >> id >> parent >> dev >> root >> point)) continue;
    std::string unescaped;
    for (size_t i = 0; i < point.size(); ++i) {
      if (point[i] == '\\' && i + 3 < point.size()) {
        unescaped += static_cast<char>(std::stoi(point.substr(i + 1, 3), nullptr, 8));
        i += 3;
      } else {
        unescaped += point[i];
      }
    }
    out.push_back(unescaped);
  }
  free(line);
  std::fclose(f);
  return out;
}

bool Under(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

// tmpfs mount data: "mode=<octal>,size=<bytes>".
std::string TmpfsData(unsigned mode, int64_t size_bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "mode=%o,size=%lld", mode, static_cast<long long>(size_bytes));
  return buf;
}

// The directories that get fresh mounts instead of the host's.
constexpr const char* kFreshDirs[] = {"/proc", "/sys", "/dev", "/tmp", "/run"};

class RootBuilder {
 public:
  RootBuilder(const SandboxSpec& spec, int report_fd) : spec_(spec), report_fd_(report_fd) {}

  // Everything up to and including pivot_root; start errors end the process.
  void Build() {
    // Host mounts to bind, chosen before anything is mounted: the top ones
    // (not below another chosen one or a fresh directory).
    std::vector<std::string> points = HostMountPoints();
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    std::vector<std::string> binds;
    for (const std::string& p : points) {
      if (p == "/") continue;
      if (std::any_of(std::begin(kFreshDirs), std::end(kFreshDirs), [&](const char* d) { return Under(p, d); })) {
        continue;
      }
      if (std::any_of(binds.begin(), binds.end(), [&](const std::string& b) { return Under(p, b); })) continue;
      if (Under(p, spec_.rootfs_dir)) continue;
      binds.push_back(p);
    }

    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      Fail(report_fd_, MountError("/", "/", MS_REC | MS_PRIVATE, errno));
    }
    const std::string upper = spec_.rootfs_dir + "/upper", work = spec_.rootfs_dir + "/work";
    merged_ = spec_.rootfs_dir + "/merged";
    for (const std::string& d : {spec_.rootfs_dir, upper, work, merged_}) {
      if (mkdir(d.c_str(), 0700) != 0 && errno != EEXIST) Fail(report_fd_, MountError("overlay", "/", 0, errno));
    }
    chmod(upper.c_str(), 0755);  // the root directory of the container
    const std::string data = "lowerdir=/,upperdir=" + upper + ",workdir=" + work;
    Mount("overlay", "/", "overlay", 0, data.c_str());
    root_fd_ = open(merged_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root_fd_ < 0) Fail(report_fd_, MountError("overlay", "/", 0, errno));

    for (const std::string& p : binds) {
      struct stat st;
      const bool dir = stat(p.c_str(), &st) != 0 || S_ISDIR(st.st_mode);
      Bind(p, p, dir, /*read_only=*/true);
    }
    Mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
    ProtectProc();
    Bind("/sys", "/sys", true, true);
    Mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_STRICTATIME, TmpfsData(0755, kSandboxDevTmpfsBytes).c_str());
    for (const char* d : {"null", "zero", "full", "random", "urandom", "tty"}) {
      const std::string p = std::string("/dev/") + d;
      Bind(p, p, false, false);
    }
    Mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620,gid=5");
    Mount("shm", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, TmpfsData(01777, kSandboxShmBytes).c_str());
    const std::string dev = merged_ + "/dev/";
    for (const auto& [link, to] :
         std::initializer_list<std::pair<const char*, const char*>>{{"ptmx", "pts/ptmx"},
                                                                    {"fd", "/proc/self/fd"},
                                                                    {"stdin", "/proc/self/fd/0"},
                                                                    {"stdout", "/proc/self/fd/1"},
                                                                    {"stderr", "/proc/self/fd/2"}}) {
      (void)!symlink(to, (dev + link).c_str());
    }
    // /tmp is a directory of the writable layer's directory (on disk, counted with the run
    // as a container's /tmp is part of its writable layer), fresh for every run.
    const std::string tmp = spec_.rootfs_dir + "/" + kSandboxTmpDir;
    if (mkdir(tmp.c_str(), 0700) != 0 && errno != EEXIST) Fail(report_fd_, MountError(tmp, "/tmp", MS_BIND, errno));
    if (chmod(tmp.c_str(), 01777) != 0) Fail(report_fd_, MountError(tmp, "/tmp", MS_BIND, errno));
    Bind(tmp, "/tmp", true, false);
    Mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV, TmpfsData(0755, kSandboxRunTmpfsBytes).c_str());
    for (const std::string& h : spec_.hidden_paths) {
      Mount("tmpfs", h, "tmpfs", MS_NOSUID | MS_NODEV, TmpfsData(0755, kSandboxHiddenTmpfsBytes).c_str());
    }
    for (const SandboxMount& m : spec_.mounts) {
      if (m.kind == SandboxMount::Kind::kTmpfs) {
        const std::string size = m.size_bytes > 0 ? "size=" + std::to_string(m.size_bytes) : "";
        Mount("tmpfs", m.target, "tmpfs", MS_NOSUID | MS_NODEV | (m.read_only ? MS_RDONLY : 0), size.c_str());
      } else {
        // The source is opened once, refusing a symlink in any component (the agent
        // records resolved paths), and that very file is bound through its descriptor:
        // a path a pod swaps for a symlink between the agent's check and this mount
        // (a hostPath under an allowed prefix it can write) cannot lead the mount elsewhere.
        open_how how{};
        how.flags = O_PATH | O_CLOEXEC;
        how.resolve = RESOLVE_NO_SYMLINKS;
        const int src = static_cast<int>(syscall(SYS_openat2, AT_FDCWD, m.source.c_str(), &how, sizeof how));
        if (src < 0) Fail(report_fd_, MountError(m.source, m.target, MS_BIND | MS_REC, errno));
        struct stat st;
        const bool dir = fstat(src, &st) != 0 || S_ISDIR(st.st_mode);
        Bind(FdPath(src), m.target, dir, m.read_only, m.source);
        close(src);
      }
    }
    for (const std::string& d : spec_.devices) Bind(d, d, false, false);
    PivotRoot();
  }

 private:
  // Mounts `source` of `type` at `target` (inside the new root).
  void Mount(const std::string& source, const std::string& target, const char* type, unsigned long flags,
             const char* data) {
    int fd = target == "/" ? -1 : OpenInRoot(root_fd_, target, true);
    if (target != "/" && fd < 0) Fail(report_fd_, MountError(source, target, flags, errno));
    const std::string at = target == "/" ? merged_ : FdPath(fd);
    const int rc = mount(source.c_str(), at.c_str(), type, flags, data);
    const int err = errno;
    if (fd >= 0) close(fd);
    if (rc != 0) Fail(report_fd_, MountError(source, target, flags, err));
  }

  // Binds host `source` at `target` (recursively), read-only when asked; errors
  // name `shown` (the host path when `source` is a descriptor's /proc path).
  void Bind(const std::string& source, const std::string& target, bool dir, bool read_only,
            std::string shown = "") {
    if (shown.empty()) shown = source;
    const unsigned long flags = MS_BIND | MS_REC;
    int fd = OpenInRoot(root_fd_, target, dir);
    if (fd < 0) Fail(report_fd_, MountError(shown, target, flags, errno));
    const std::string at = FdPath(fd);
    int err = mount(source.c_str(), at.c_str(), nullptr, flags, nullptr) == 0 ? 0 : errno;
    close(fd);
    if (err == 0 && read_only) {
      // Reopened: the descriptor above names the directory under the new mount.
      fd = OpenInRoot(root_fd_, target, dir);
      err = fd < 0 ? errno : MakeReadOnly(FdPath(fd));
      if (fd >= 0) close(fd);
    }
    if (err != 0) Fail(report_fd_, MountError(shown, target, flags | (read_only ? MS_RDONLY : 0), err));
  }

  // runc's default readonlyPaths and maskedPaths of /proc (spec's defaults).
  void ProtectProc() {
    for (const char* p : {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}) {
      const std::string at = merged_ + p;
      if (access(at.c_str(), F_OK) != 0) continue;
      if (mount(at.c_str(), at.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0 || MakeReadOnly(at) != 0) {
        Fail(report_fd_, MountError(p, p, MS_BIND | MS_REC | MS_RDONLY, errno));
      }
    }
    for (const char* p : {"/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sched_debug"}) {
      const std::string at = merged_ + p;
      if (access(at.c_str(), F_OK) == 0) mount("/dev/null", at.c_str(), nullptr, MS_BIND, nullptr);
    }
    for (const char* p : {"/proc/acpi", "/proc/scsi"}) {
      const std::string at = merged_ + p;
      if (access(at.c_str(), F_OK) == 0) mount("tmpfs", at.c_str(), "tmpfs", MS_RDONLY, nullptr);
    }
  }

  // runc's pivotRoot (libcontainer/rootfs_linux.go): pivot_root(".", ".")
  // stacks the old root on the new one; it is then detached.
  void PivotRoot() {
    int old_root = open("/", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
    int new_root = open(merged_.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC);
    if (old_root < 0 || new_root < 0 || fchdir(new_root) != 0 || syscall(SYS_pivot_root, ".", ".") != 0) {
      Fail(report_fd_, "unable to start container process: pivot_root " + merged_ + ": " + GoErrno(errno));
    }
    if (fchdir(old_root) != 0 || mount(nullptr, ".", nullptr, MS_SLAVE | MS_REC, nullptr) != 0 ||
        umount2(".", MNT_DETACH) != 0 || chdir("/") != 0) {
      Fail(report_fd_, "unable to start container process: detaching the old root: " + GoErrno(errno));
    }
    close(old_root);
    close(new_root);
    close(root_fd_);
  }

  const SandboxSpec& spec_;
  const int report_fd_;
  std::string merged_;
  int root_fd_ = -1;
};

}  // namespace

Status ValidateSandboxSpec(const SandboxSpec& spec) {
  if (!spec.enabled) return Status::Ok();
  BERTH_RETURN_IF_ERROR(CheckPath("rootfsDir", spec.rootfs_dir));
  if (spec.hidden_paths.size() > kMaxSandboxEntries || spec.mounts.size() > kMaxSandboxEntries ||
      spec.devices.size() > kMaxSandboxEntries || spec.user.groups.size() > kMaxSandboxEntries) {
    return InvalidError("more than " + std::to_string(kMaxSandboxEntries) + " hidden paths, mounts, devices or groups");
  }
  for (const std::string& p : spec.hidden_paths) BERTH_RETURN_IF_ERROR(CheckPath("hidden path", p));
  for (const std::string& p : spec.devices) BERTH_RETURN_IF_ERROR(CheckPath("device", p));
  for (const SandboxMount& m : spec.mounts) {
    BERTH_RETURN_IF_ERROR(CheckPath("mount target", m.target));
    if (m.kind == SandboxMount::Kind::kBind) BERTH_RETURN_IF_ERROR(CheckPath("mount source", m.source));
    if (m.size_bytes < 0) return InvalidError("mount at \"" + m.target + "\": sizeBytes must not be negative");
  }
  if (!IdInRange(spec.user.uid) || !IdInRange(spec.user.gid) ||
      !std::all_of(spec.user.groups.begin(), spec.user.groups.end(), IdInRange)) {
    return InvalidError("uid, gid and groups must be in [0, " + std::to_string(kMaxSandboxId) + "]");
  }
  return Status::Ok();
}

Status ProbeSandbox(const std::string& scratch_dir) {
  if (geteuid() != 0) return UnavailableError("not running as root (uid " + std::to_string(geteuid()) + ")");
  std::string dir = scratch_dir + "/.sandbox-probe-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) return UnavailableError("cannot create " + dir + ": " + GoErrno(errno));
  const std::string upper = dir + "/upper", work = dir + "/work", merged = dir + "/merged";
  const std::string data = "lowerdir=/,upperdir=" + upper + ",workdir=" + work;
  for (const std::string& d : {upper, work, merged}) mkdir(d.c_str(), 0700);
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return UnavailableError("pipe: " + GoErrno(errno));
  const pid_t pid = fork();
  if (pid == 0) {
    int result[2] = {0, 0};
    if (unshare(CLONE_NEWNS | CLONE_NEWPID) != 0) {
      result[1] = errno;
    } else if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      result[0] = 1;
      result[1] = errno;
    } else if (mount("overlay", merged.c_str(), "overlay", 0, data.c_str()) != 0) {
      result[0] = 2;
      result[1] = errno;
    }
    (void)!write(report[1], result, sizeof result);
    _exit(0);
  }
  close(report[1]);
  int result[2] = {0, 0};
  const ssize_t n = pid > 0 ? read(report[0], result, sizeof result) : -1;
  close(report[0]);
  if (pid > 0) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (n != sizeof result) return UnavailableError("the probe child failed");
  if (result[1] == 0) return Status::Ok();
  const std::string step = result[0] == 0   ? "unshare(CLONE_NEWNS|CLONE_NEWPID)"
                           : result[0] == 1 ? "making / private"
                                            : "overlay of / under " + scratch_dir;
  return UnavailableError(step + ": " + GoErrno(result[1]));
}

int EnterSandboxPidNamespace() { return unshare(CLONE_NEWPID) == 0 ? 0 : errno; }

uint64_t DockerDefaultCapabilities() {
  uint64_t caps = 0;
  for (int c : {CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FSETID, CAP_FOWNER, CAP_MKNOD, CAP_NET_RAW, CAP_SETGID, CAP_SETUID,
                CAP_SETFCAP, CAP_SETPCAP, CAP_NET_BIND_SERVICE, CAP_SYS_CHROOT, CAP_KILL, CAP_AUDIT_WRITE}) {
    caps |= uint64_t{1} << c;
  }
  return caps;
}

int EnterSandboxIdentity(const SandboxUser& user, const char** what) {
  const uint64_t keep = user.uid == 0 ? DockerDefaultCapabilities() : 0;
  for (int cap = 0; cap < 64; ++cap) {
    if ((keep >> cap) & 1) continue;
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) {
      *what = "dropping the capability bounding set";
      return errno;
    }
  }
  gid_t groups[kMaxSandboxEntries];
  const size_t n = std::min(user.groups.size(), kMaxSandboxEntries);
  for (size_t i = 0; i < n; ++i) groups[i] = static_cast<gid_t>(user.groups[i]);
  if (setgroups(n, groups) != 0) {
    *what = "setgroups";
    return errno;
  }
  if (setresgid(static_cast<gid_t>(user.gid), static_cast<gid_t>(user.gid), static_cast<gid_t>(user.gid)) != 0) {
    *what = "setgid";
    return errno;
  }
  if (setresuid(static_cast<uid_t>(user.uid), static_cast<uid_t>(user.uid), static_cast<uid_t>(user.uid)) != 0) {
    *what = "setuid";
    return errno;
  }
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  if (user.uid == 0) {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {};
    data[0].effective = data[0].permitted = static_cast<uint32_t>(keep);
    data[1].effective = data[1].permitted = static_cast<uint32_t>(keep >> 32);
    if (syscall(SYS_capset, &header, data) != 0) {
      *what = "capset";
      return errno;
    }
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    *what = "prctl(PR_SET_NO_NEW_PRIVS)";
    return errno;
  }
  return 0;
}

void ReportStartError(int report_fd, const std::string& message) {
  const size_t len = std::min(message.size(), kMaxStartErrorBytes);
  int header[2] = {kReportTextStage, static_cast<int>(len)};
  (void)!write(report_fd, header, sizeof header);
  (void)!write(report_fd, message.data(), len);
}

void SandboxInitMain(const LaunchRecord& launch, int report_fd, int status_fd, int gate_fd) {
  const SandboxSpec& spec = launch.sandbox;
  // Its own mount namespace, and its own IPC namespace (System V IPC and POSIX message
  // queues private to the run and gone with it, as runc gives each pod).
  if (unshare(CLONE_NEWNS | CLONE_NEWIPC) != 0) {
    Fail(report_fd, "unable to start container process: unshare: " + GoErrno(errno));
  }
  RootBuilder(spec, report_fd).Build();
  prctl(PR_SET_NAME, "berth-init");
  ReplaceSupervisorCommandLine("berth-init");

  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, nullptr);
  // Everything the main process needs, built before it forks.
  std::vector<std::string> argv_store = launch.argv, env_store = launch.env;
  std::vector<char*> argv, envp;
  for (auto& a : argv_store) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);

  StatusOr<SeccompProgram> filter = BuildRuntimeDefaultSeccomp();
  if (!filter.ok()) Fail(report_fd, "unable to start container process: " + filter.status().message());

  PassGateOrExit(gate_fd);
  const pid_t main_pid = fork();
  if (main_pid < 0) Fail(report_fd, "unable to start container process: fork: " + GoErrno(errno));
  if (main_pid == 0) {
    setpgid(0, 0);
    const char* what = "";
    if (int err = EnterSandboxIdentity(spec.user, &what); err != 0) {
      Fail(report_fd, std::string("unable to start container process: ") + what + ": " + GoErrno(err));
    }
    if (int err = ApplySeccomp(*filter); err != 0) {
      Fail(report_fd, "unable to start container process: seccomp: " + GoErrno(err));
    }
    std::string binary;
    if (std::string err = CheckLaunch(launch, &binary); !err.empty()) Fail(report_fd, err);
    ExecInChild({}, launch.working_dir.c_str(), binary.c_str(), argv.data(), envp.data(), report_fd);
  }
  setpgid(main_pid, main_pid);
  close(report_fd);

  // The init loop (tini's): forward, reap, and leave with the main process.
  while (true) {
    siginfo_t info;
    const int sig = sigwaitinfo(&all, &info);
    if (sig < 0) continue;
    if (sig == SIGCHLD) {
      int status = 0;
      pid_t pid;
      while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (pid != main_pid) continue;
        (void)!write(status_fd, &status, sizeof status);
        _exit(WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status));
      }
      continue;
    }
    if (std::find(std::begin(kSandboxForwardedSignals), std::end(kSandboxForwardedSignals), sig) !=
        std::end(kSandboxForwardedSignals)) {
      kill(-main_pid, sig);
    }
  }
}

}  // namespace berth::agent::shim
