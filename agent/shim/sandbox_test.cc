#include "agent/shim/sandbox.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "agent/shim/container_log.h"
#include "agent/shim/run_record.h"
#include "agent/shim/shim.h"
#include "agent/shim/shim_client.h"
#include "agent/shim/testing/supervisor_command.h"
#include "agent/shim/testing/test_files.h"

namespace berth::agent::shim {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using testing::ReadFile;

SandboxSpec ValidSpec() {
  SandboxSpec s;
  s.enabled = true;
  s.rootfs_dir = "/var/lib/berth/pods/p/runs/c/0/rootfs";
  s.hidden_paths = {"/var/lib/berth"};
  s.user = {200000, 200000, {200001, 5}};
  s.mounts = {{SandboxMount::Kind::kBind, "/var/lib/berth/pods/p/work", "/var/lib/berth/pods/p/work", false, 0},
              {SandboxMount::Kind::kTmpfs, "", "/dev/shm/x", true, 1 << 20}};
  s.devices = {"/dev/nvidia1", "/dev/nvidiactl"};
  return s;
}

TEST(SandboxSpecTest, RoundTripsThroughTheLaunchRecordAndIsAbsentWhenDisabled) {
  const std::string dir = testing::FreshTestDirectory("sandbox-record").string();
  LaunchRecord l;
  l.container = "c";
  l.argv = {"true"};
  l.sandbox = ValidSpec();
  ASSERT_TRUE(WriteLaunchRecord(dir, l).ok());
  StatusOr<LaunchRecord> read = ReadLaunchRecord(dir);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->sandbox, l.sandbox);
  EXPECT_NE(ReadFile(dir + "/launch.json").find("\"sandbox\""), std::string::npos);

  l.sandbox = {};
  ASSERT_TRUE(WriteLaunchRecord(dir, l).ok());
  EXPECT_EQ(ReadFile(dir + "/launch.json").find("\"sandbox\""), std::string::npos);
  read = ReadLaunchRecord(dir);
  ASSERT_TRUE(read.ok());
  EXPECT_FALSE(read->sandbox.enabled);
  fs::remove_all(dir);
}

TEST(SandboxSpecTest, ARecordWithABadSandboxIsInvalidNamingTheField) {
  const std::string dir = testing::FreshTestDirectory("sandbox-record").string();
  auto read_with = [&](const std::function<void(SandboxSpec&)>& change) {
    LaunchRecord l;
    l.sandbox = ValidSpec();
    change(l.sandbox);
    EXPECT_TRUE(WriteLaunchRecord(dir, l).ok());
    return ReadLaunchRecord(dir).status();
  };
  EXPECT_TRUE(read_with([](SandboxSpec&) {}).ok());
  Status s = read_with([](SandboxSpec& s) { s.mounts[0].target = "/a/../etc"; });
  EXPECT_EQ(s.code(), Code::kInvalid);
  EXPECT_NE(s.message().find("mount target \"/a/../etc\""), std::string::npos) << s.message();
  EXPECT_EQ(read_with([](SandboxSpec& s) { s.mounts[0].source = "relative"; }).code(), Code::kInvalid);
  EXPECT_EQ(read_with([](SandboxSpec& s) { s.hidden_paths = {"/x/./y"}; }).code(), Code::kInvalid);
  EXPECT_EQ(read_with([](SandboxSpec& s) { s.devices = {"dev/nvidia0"}; }).code(), Code::kInvalid);
  EXPECT_EQ(read_with([](SandboxSpec& s) { s.rootfs_dir = ""; }).code(), Code::kInvalid);
  EXPECT_EQ(read_with([](SandboxSpec& s) { s.user.uid = -1; }).code(), Code::kInvalid);
  EXPECT_EQ(read_with([](SandboxSpec& s) { s.user.gid = kMaxSandboxId + 1; }).code(), Code::kInvalid);
  EXPECT_EQ(read_with([](SandboxSpec& s) { s.user.groups = {1, 1LL << 33}; }).code(), Code::kInvalid);
  EXPECT_EQ(read_with([](SandboxSpec& s) { s.mounts[1].size_bytes = -1; }).code(), Code::kInvalid);
  EXPECT_EQ(read_with([](SandboxSpec& s) { s.devices.assign(kMaxSandboxEntries + 1, "/dev/x"); }).code(),
            Code::kInvalid);

  // A field of the wrong type or an unknown mount kind.
  LaunchRecord l;
  l.sandbox = ValidSpec();
  ASSERT_TRUE(WriteLaunchRecord(dir, l).ok());
  std::string text = ReadFile(dir + "/launch.json");
  text.replace(text.find("\"tmpfs\""), 7, "\"nfs\"");
  std::ofstream(dir + "/launch.json", std::ios::trunc) << text;
  s = ReadLaunchRecord(dir).status();
  EXPECT_EQ(s.code(), Code::kInvalid);
  EXPECT_NE(s.message().find("\"kind\""), std::string::npos) << s.message();
  text.replace(text.find("\"uid\":200000"), 12, "\"uid\":\"0\"");
  std::ofstream(dir + "/launch.json", std::ios::trunc) << text;
  s = ReadLaunchRecord(dir).status();
  EXPECT_NE(s.message().find("\"uid\" must be an integer"), std::string::npos) << s.message();
  fs::remove_all(dir);
}

TEST(SandboxSpecTest, DockerDefaultCapabilitiesAreTheFourteenOfMoby) {
  EXPECT_EQ(__builtin_popcountll(DockerDefaultCapabilities()), 14);
  EXPECT_TRUE(DockerDefaultCapabilities() & (1ULL << 0));    // CAP_CHOWN
  EXPECT_FALSE(DockerDefaultCapabilities() & (1ULL << 21));  // CAP_SYS_ADMIN
}

// Whether this process may set up sandboxes (root, namespaces and overlayfs available).
bool CanSandbox() { return ProbeSandbox(fs::temp_directory_path().string()).ok(); }

TEST(SandboxProbeTest, SaysWhyWhenItCannot) {
  Status s = ProbeSandbox("/nonexistent-berth-dir");
  EXPECT_EQ(s.code(), Code::kUnavailable);
  EXPECT_NE(
      s.message().find(geteuid() == 0 ? "cannot create /nonexistent-berth-dir/.sandbox-probe-" : "not running as root"),
      std::string::npos)
      << s.message();
}

// Real sandboxed runs through the supervisor (root only).
class SandboxRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CanSandbox()) GTEST_SKIP() << "needs root and namespaces";
    dir_ = testing::FreshTestDirectory("sandbox").string();
    fs::create_directories(dir_ + "/work");
    fs::create_directories(dir_ + "/data/secret");
    std::ofstream(dir_ + "/data/secret/key") << "root only\n";
  }
  void TearDown() override {
    if (dir_.empty()) return;
    for (const auto& [n, run] : ListRuns(dir_, "c")) {
      if (StatusOr<int> c = ConnectShim(run); c.ok()) {
        SendSignal(*c, SIGKILL);
        close(*c);
      }
    }
    testing::RemoveWhenSupervisorsAreGone(dir_);
  }

  SandboxSpec Spec(int64_t uid = 0) {
    SandboxSpec s;
    s.enabled = true;
    s.rootfs_dir = dir_ + "/runs/c/" + std::to_string(run_) + "/rootfs";
    s.hidden_paths = {dir_ + "/data"};
    s.user = {uid, uid, {}};
    s.mounts = {{SandboxMount::Kind::kBind, dir_ + "/work", dir_ + "/work", false, 0}};
    return s;
  }

  // Runs `script` sandboxed as `spec` says; returns the exit record, the log in *log.
  StatusOr<ExitRecord> Run(const std::string& script, const SandboxSpec& spec, std::string* log,
                           std::vector<std::string> argv = {}) {
    LaunchRecord l;
    l.container = "c";
    l.run = run_;
    l.argv = argv.empty() ? std::vector<std::string>{"/bin/sh", "-c", script} : argv;
    l.env = {"PATH=/usr/bin:/bin:/tmp", "DIR=" + dir_};
    l.working_dir = dir_ + "/work";
    l.log_path = ContainerLogPath(dir_, "c", run_);
    l.started_at = RealClock::Get().Now();
    l.sandbox = spec;
    const std::string run_dir = RunDir(dir_, "c", run_++);
    EXPECT_TRUE(WriteLaunchRecord(run_dir, l).ok());
    BERTH_RETURN_IF_ERROR(SpawnShim(testing::SupervisorCommand(), run_dir, milliseconds(10000)));
    for (int i = 0; i < 2000; ++i) {
      if (fs::exists(run_dir + "/exit.json")) {
        StatusOr<LogChunk> chunk = ReadContainerLog(l.log_path, {});
        *log = chunk.ok() ? chunk->text : "";
        return ReadExitRecord(run_dir);
      }
      std::this_thread::sleep_for(milliseconds(10));
    }
    return InternalError("no exit.json");
  }

  std::string dir_;
  int run_ = 0;
};

TEST_F(SandboxRunTest, TheMainProcessIsPid2UnderAnInitAndItsOrphansDieWithIt) {
  std::string log;
  StatusOr<ExitRecord> e =
      Run("echo self=$$; cat /proc/1/comm; echo \"cmdline=$(tr -d '\\0' < /proc/1/cmdline)\"; "
          "setsid sleep 1093 & echo \"$!\" > work-pid; "
          "readlink /proc/$!/ns/pid >/dev/null; exit 7",
          Spec(), &log);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->exit_code, 7);
  EXPECT_EQ(e->start_error, "");
  EXPECT_NE(log.find("self=2\n"), std::string::npos) << log;
  EXPECT_NE(log.find("berth-init\n"), std::string::npos) << log;
  // Its command line names no host path (the supervisor's names the run directory).
  EXPECT_NE(log.find("cmdline=berth-init\n"), std::string::npos) << log;
  // No `sleep 1000` is left anywhere on the host.
  EXPECT_EQ(testing::FindProcess("sleep 1093"), 0);
}

TEST_F(SandboxRunTest, ASignalledMainProcessEndsTheRunWithThatSignal) {
  std::string log;
  StatusOr<ExitRecord> e = Run("kill -TERM $$", Spec(), &log);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->signal, SIGTERM);
  EXPECT_EQ(e->exit_code, 128 + SIGTERM);
}

TEST_F(SandboxRunTest, TheHostIsReadOnlyWritesLandInTheUpperLayerAndHiddenAndTmpArePrivate) {
  std::ofstream(fs::temp_directory_path() / ("berth-sandbox-host-" + std::to_string(getpid()))) << "host\n";
  std::string log;
  const std::string host_tmp = "/tmp/berth-sandbox-host-" + std::to_string(getpid());
  StatusOr<ExitRecord> e =
      Run("echo changed > /etc/berth-sandbox-test && echo etc-ok; "
          "ls -A " +
              dir_ +
              "/data | wc -l; "
              "test -e " +
              host_tmp +
              " && echo tmp-shared || echo tmp-private; "
              "touch /tmp/x && echo tmp-writable; "
              "echo in-work > in-work; "
              "touch /usr/berth-x 2>/dev/null && echo usr-rw; "
              "mount | grep -c ' /proc ' ; "
              "id -u",
          Spec(), &log);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->exit_code, 0) << log;
  EXPECT_EQ(log, "etc-ok\n0\ntmp-private\ntmp-writable\nusr-rw\n1\n0\n");
  EXPECT_FALSE(fs::exists("/etc/berth-sandbox-test"));
  EXPECT_FALSE(fs::exists("/usr/berth-x"));
  EXPECT_EQ(ReadFile(dir_ + "/runs/c/0/rootfs/upper/etc/berth-sandbox-test"), "changed\n");
  EXPECT_EQ(ReadFile(dir_ + "/work/in-work"), "in-work\n");
  fs::remove(host_tmp);
}

TEST_F(SandboxRunTest, ANonRootRunHasItsUidNoCapabilitiesAndCannotReadRootFiles) {
  const std::string secret = dir_ + "/work/secret";
  std::ofstream(secret) << "x\n";
  fs::permissions(secret, fs::perms::owner_read | fs::perms::owner_write);
  fs::permissions(dir_ + "/work", fs::perms::all);
  std::string log;
  StatusOr<ExitRecord> e = Run(
      "id -u; id -g; id -G; cat secret 2>&1 >/dev/null | grep -c 'Permission denied'; "
      "grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status",
      [&] {
        SandboxSpec s = Spec(200123);
        s.user.gid = 200124;
        s.user.groups = {200125};
        return s;
      }(),
      &log);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(log,
            "200123\n200124\n200124 200125\n1\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n"
            "NoNewPrivs:\t1\n");
}

TEST_F(SandboxRunTest, OnlyListedDevicesAreInDev) {
  const std::string devdir = dir_ + "/devs";
  fs::create_directories(devdir);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(mknod((devdir + "/nvidia" + std::to_string(i)).c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  }
  SandboxSpec s = Spec();
  s.devices = {devdir + "/nvidia1"};
  std::string log;
  StatusOr<ExitRecord> e = Run("ls /dev | tr '\\n' ' '; echo; ls " + devdir + "; echo hi > " + devdir +
                                   "/nvidia1 && echo opened; test -e /dev/sda || echo no-sda",
                               s, &log);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(log, "fd full null ptmx pts random shm stderr stdin stdout tty urandom zero \nnvidia1\nopened\nno-sda\n");
}

TEST_F(SandboxRunTest, TheProgramIsLookedUpInsideTheSandbox) {
  const std::string tool = "/tmp/berth-sandbox-tool-" + std::to_string(getpid());
  std::ofstream(tool) << "#!/bin/sh\necho tool\n";
  fs::permissions(tool, fs::perms::owner_all);
  const std::string name = fs::path(tool).filename().string();
  // The host finds it through the container's PATH (which has /tmp); the sandbox's /tmp is its own.
  LaunchRecord l;
  l.argv = {name};
  l.env = {"PATH=/usr/bin:/bin:/tmp"};
  l.working_dir = "/";
  std::string binary;
  EXPECT_EQ(CheckLaunch(l, &binary), "");
  std::string log;
  SandboxSpec s = Spec();
  StatusOr<ExitRecord> e = Run("", s, &log, {name});
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->exit_code, 128);
  EXPECT_EQ(e->start_error,
            "unable to start container process: exec: \"" + name + "\": executable file not found in $PATH");
  e = Run("", s, &log, {tool});
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->exit_code, 128);
  EXPECT_EQ(e->start_error,
            "unable to start container process: exec: \"" + tool + "\": stat " + tool + ": no such file or directory");
  fs::remove(tool);
}

TEST_F(SandboxRunTest, AMountThatCannotBeMadeIsAStartErrorNamingIt) {
  SandboxSpec s = Spec();
  s.mounts.push_back({SandboxMount::Kind::kBind, dir_ + "/missing", "/mnt/x", false, 0});
  std::string log;
  StatusOr<ExitRecord> e = Run("true", s, &log);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->exit_code, 128);
  EXPECT_EQ(e->start_error.rfind("error mounting \"" + dir_ + "/missing\" to rootfs at \"/mnt/x\": ", 0), 0u)
      << e->start_error;
  EXPECT_NE(e->start_error.find("no such file or directory"), std::string::npos) << e->start_error;
}

TEST_F(SandboxRunTest, AMountTargetSymlinkResolvesInsideTheNewRoot) {
  // A link in the (pod-writable) work dir pointing at a host directory.
  fs::create_directories(dir_ + "/outside");
  fs::create_symlink(dir_ + "/outside", dir_ + "/work/link");
  fs::create_directories(dir_ + "/vol");
  std::ofstream(dir_ + "/vol/file") << "vol\n";
  SandboxSpec s = Spec();
  s.mounts.push_back({SandboxMount::Kind::kBind, dir_ + "/vol", dir_ + "/work/link", true, 0});
  std::string log;
  StatusOr<ExitRecord> e = Run("cat link/file; (echo x > link/file) 2>/dev/null || echo ro", s, &log);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->start_error, "");
  EXPECT_EQ(log, "vol\nro\n");
  EXPECT_TRUE(fs::is_empty(dir_ + "/outside"));
}

TEST_F(SandboxRunTest, AMountSourceWithASymlinkIsRefusedNotFollowed) {
  // The agent records resolved sources; a symlink found at mount time was swapped in
  // after its check (a pod writing below an allowed hostPath prefix): never followed.
  fs::create_directories(dir_ + "/secret");
  std::ofstream(dir_ + "/secret/key") << "berth's\n";
  fs::create_directories(dir_ + "/shared");
  fs::create_symlink(dir_ + "/secret", dir_ + "/shared/swapped");
  SandboxSpec s = Spec();
  s.mounts.push_back({SandboxMount::Kind::kBind, dir_ + "/shared/swapped", "/mnt/x", true, 0});
  std::string log;
  StatusOr<ExitRecord> e = Run("cat /mnt/x/key", s, &log);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->exit_code, 128);
  EXPECT_EQ(e->start_error.rfind("error mounting \"" + dir_ + "/shared/swapped\" to rootfs at \"/mnt/x\": ", 0), 0u)
      << e->start_error;
  EXPECT_EQ(log.find("berth's"), std::string::npos) << log;
}

TEST_F(SandboxRunTest, ARunHasItsOwnIpcNamespace) {
  std::string log;
  StatusOr<ExitRecord> e = Run("readlink /proc/self/ns/ipc", Spec(), &log);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->start_error, "");
  char host[64] = {};
  ASSERT_GT(readlink("/proc/self/ns/ipc", host, sizeof host - 1), 0);
  EXPECT_TRUE(log.rfind("ipc:[", 0) == 0) << log;
  EXPECT_NE(log, std::string(host) + "\n");
}

TEST_F(SandboxRunTest, TmpIsOnDiskBesideTheWritableLayerAndTheTmpfsMountsAreSized) {
  std::string log;
  // stat -f: total blocks and the fundamental block size of each mount.
  StatusOr<ExitRecord> e =
      Run("echo on-disk > /tmp/x; stat -c %a /tmp; "
          "for m in /run /dev /dev/shm " +
              dir_ + "/data; do echo $(( $(stat -f -c '%b * %S' $m) )); done",
          Spec(), &log);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->exit_code, 0) << log;
  EXPECT_EQ(log, "1777\n" + std::to_string(kSandboxRunTmpfsBytes) + "\n" + std::to_string(kSandboxDevTmpfsBytes) +
                     "\n" + std::to_string(kSandboxShmBytes) + "\n" + std::to_string(kSandboxHiddenTmpfsBytes) + "\n");
  EXPECT_EQ(ReadFile(dir_ + "/runs/c/0/rootfs/" + kSandboxTmpDir + "/x"), "on-disk\n");
  EXPECT_EQ(kSandboxRunTmpfsBytes, 64 << 20);
}

TEST_F(SandboxRunTest, UserNamespacesKeysAndMountsAreRefusedOrdinaryProgramsRun) {
  std::string log;
  StatusOr<ExitRecord> e = Run(
      "unshare -U true 2>&1 | grep -c 'Operation not permitted'; "
      "unshare -Ur true 2>&1 | grep -c 'Operation not permitted'; "
      "python3 -c 'import ctypes, os\n"
      "libc = ctypes.CDLL(None, use_errno=True)\n"
      "print(libc.syscall(250, 0, -3, 0), ctypes.get_errno())' ; "
      "python3 -c 'import threading, subprocess; t = threading.Thread(target=print, args=(\"thread\",)); t.start(); "
      "t.join(); print(subprocess.run([\"echo\", \"child\"], capture_output=True, text=True).stdout, end=\"\")'",
      Spec(200300), &log);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->start_error, "");
  // keyctl is system call 250 on x86_64.
  EXPECT_EQ(log, "1\n1\n-1 1\nthread\nchild\n");
}

}  // namespace
}  // namespace berth::agent::shim
