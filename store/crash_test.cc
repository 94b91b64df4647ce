// Kill -9 durability test for SqliteStore (run by CTest as store_crash_test).
//
// The parent re-executes this binary as a writer child that opens a
// SqliteStore and, from 4 threads, creates, updates and deletes objects,
// printing one line per acknowledged write to a pipe ("C|U|D <name> <rev>
// [n]"; before a delete it prints its intent "d <name>"). The parent SIGKILLs
// the child after a random number of acknowledgements (seeded RNG, the seed is
// printed; set BERTH_CRASH_SEED to replay), reopens the database and checks:
//   - every acknowledged create/update is present with resourceVersion >= the
//     acknowledged revision (and spec.n >= the acknowledged n), unless a
//     delete of it was started; every acknowledged delete is absent;
//   - nothing half-written: every stored object is well-formed and its
//     payload matches its checksum, and no resourceVersion exceeds the
//     recovered revision;
//   - the recovered revision is >= every acknowledged revision and never goes
//     backwards from one round to the next.
// Usage: store_crash_test <scratch dir>      (parent)
//        store_crash_test --child <db> <round>  (internal)
#include "store/sqlite_store.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace berth::store {
namespace {

const api::GroupResource kResource{"crash.berth.dev", "items"};
constexpr int kThreads = 4;
constexpr int kRounds = 6;

uint64_t Checksum(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

api::Object Item(const std::string& name, int n) {
  std::string payload(50 + (Checksum(name) % 400), static_cast<char>('a' + n % 26));
  payload += name;
  return {{"apiVersion", "crash.berth.dev/v1"},
          {"kind", "Item"},
          {"metadata", {{"namespace", "crash"}, {"name", name}}},
          {"spec", {{"n", n}, {"payload", payload}, {"checksum", std::to_string(Checksum(payload))}}}};
}

void Say(const std::string& line) {
  std::string l = line + "\n";
  // One write per line (< PIPE_BUF): lines never interleave.
  if (write(STDOUT_FILENO, l.data(), l.size()) != static_cast<ssize_t>(l.size())) _exit(3);
}

int RunChild(const std::string& db, int round) {
  RealClock clock;
  auto opened = SqliteStore::Open(db, clock);
  if (!opened.ok()) {
    std::fprintf(stderr, "child: %s\n", opened.status().ToString().c_str());
    return 2;
  }
  Store& store = **opened;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&store, round, t] {
      std::vector<std::string> mine;
      for (int i = 0;; ++i) {
        const std::string name = "r" + std::to_string(round) + "-t" + std::to_string(t) + "-" + std::to_string(i);
        auto created = store.Create(kResource, Item(name, 0));
        if (!created.ok()) _exit(4);
        Say("C " + name + " " + api::ResourceVersion(*created));
        mine.push_back(name);
        if (i % 2 == 1) {  // update an earlier one
          const std::string& target = mine[i / 2];
          int n = 0;
          auto updated = store.GuaranteedUpdate(
              {kResource, "crash", target}, [&n](const api::Object& cur) -> StatusOr<api::Object> {
                n = cur["spec"]["n"].get<int>() + 1;
                return Item(api::Name(cur), n);
              });
          if (updated.ok()) {
            Say("U " + target + " " + api::ResourceVersion(*updated) + " " + std::to_string(n));
          } else if (updated.status().code() != Code::kNotFound) {
            _exit(5);
          }
        }
        if (i % 5 == 4) {  // delete one
          const std::string target = mine[i - 2];
          Say("d " + target);
          auto deleted = store.Delete({kResource, "crash", target});
          if (deleted.ok()) {
            Say("D " + target + " " + api::ResourceVersion(deleted->object));
          } else if (deleted.status().code() != Code::kNotFound) {
            _exit(6);
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  return 0;
}

struct Expectation {
  int64_t min_revision = 0;
  int min_n = 0;
  bool delete_started = false;
  bool deleted = false;
};

// Runs one child until `kill_after` acknowledgements; returns the lines read.
std::vector<std::string> RunRound(const std::string& self, const std::string& db, int round,
                                  int kill_after) {
  int fds[2];
  BERTH_CHECK(pipe(fds) == 0);
  pid_t pid = fork();
  BERTH_CHECK(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::string r = std::to_string(round);
    execl(self.c_str(), self.c_str(), "--child", db.c_str(), r.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  std::vector<std::string> lines;
  std::string partial;
  char buf[4096];
  int acks = 0;
  bool killed = false;
  while (true) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    partial.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = partial.find('\n')) != std::string::npos) {
      lines.push_back(partial.substr(0, nl));
      partial.erase(0, nl + 1);
      if (lines.back()[0] != 'd') ++acks;
    }
    if (!killed && acks >= kill_after) {
      kill(pid, SIGKILL);
      killed = true;  // keep reading: lines already in the pipe were acknowledged too
    }
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) {
    std::fprintf(stderr, "round %d: child did not die by SIGKILL (status %d)\n", round, status);
    std::exit(1);
  }
  return lines;
}

int RunParent(const std::string& self, const std::string& dir) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string db = dir + "/berth.db";
  uint64_t seed = std::random_device{}();
  if (const char* s = std::getenv("BERTH_CRASH_SEED")) seed = std::strtoull(s, nullptr, 10);
  std::printf("store_crash_test: seed=%llu (BERTH_CRASH_SEED=%llu to replay)\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  std::map<std::string, Expectation> expect;
  int64_t last_revision = 0;
  int failures = 0;
  auto fail = [&](int round, const std::string& what) {
    std::fprintf(stderr, "round %d: %s\n", round, what.c_str());
    ++failures;
  };

  for (int round = 0; round < kRounds; ++round) {
    const int kill_after = std::uniform_int_distribution<int>(5, 600)(rng);
    std::vector<std::string> lines = RunRound(self, db, round, kill_after);
    int64_t max_acked = 0;
    for (const std::string& line : lines) {
      std::istringstream in(line);
      std::string op, name;
      int64_t rev = 0;
      int n = 0;
      in >> op >> name >> rev >> n;
      Expectation& e = expect[name];
      if (op == "d") {
        e.delete_started = true;
        continue;
      }
      max_acked = std::max(max_acked, rev);
      if (op == "D") e.deleted = true;
      e.min_revision = std::max(e.min_revision, rev);
      if (op == "U") e.min_n = std::max(e.min_n, n);
    }

    FakeClock clock;
    auto opened = SqliteStore::Open(db, clock);
    if (!opened.ok()) {
      fail(round, "reopen failed: " + opened.status().ToString());
      break;
    }
    Store& store = **opened;
    const int64_t revision = store.CurrentRevision();
    if (revision < max_acked) fail(round, "recovered revision " + std::to_string(revision) +
                                              " < acknowledged " + std::to_string(max_acked));
    if (revision < last_revision) fail(round, "revision went backwards");
    last_revision = revision;

    auto list = store.List(kResource, {});
    if (!list.ok()) {
      fail(round, "list failed: " + list.status().ToString());
      break;
    }
    std::set<std::string> present;
    for (const ObjectPtr& obj : list->items) {
      present.insert(api::Name(*obj));
      const auto& spec = (*obj)["spec"];
      if (!spec.is_object() || !spec["payload"].is_string() ||
          spec["checksum"] != std::to_string(Checksum(spec["payload"].get<std::string>())) ||
          spec["payload"] != Item(api::Name(*obj), spec["n"].get<int>())["spec"]["payload"]) {
        fail(round, "half-written object " + api::Name(*obj));
      }
      if (std::stoll(api::ResourceVersion(*obj)) > revision) {
        fail(round, "object " + api::Name(*obj) + " is newer than the recovered revision");
      }
    }
    for (const auto& [name, e] : expect) {
      auto got = store.Get({kResource, "crash", name});
      if (e.deleted) {
        if (got.ok()) fail(round, "acknowledged delete of " + name + " was lost");
        continue;
      }
      if (!got.ok()) {
        if (!e.delete_started) fail(round, "acknowledged write of " + name + " was lost");
        continue;
      }
      if (std::stoll(api::ResourceVersion(*got)) < e.min_revision) {
        fail(round, name + " is older than its acknowledged revision");
      }
      if ((*got)["spec"]["n"].get<int>() < e.min_n) fail(round, name + " lost an acknowledged update");
    }
    std::printf("round %d: killed after %d acks (%zu lines), recovered revision %lld, %zu objects\n",
                round, kill_after, lines.size(), static_cast<long long>(revision),
                present.size());
  }
  std::filesystem::remove_all(dir);
  if (failures > 0) {
    std::fprintf(stderr, "store_crash_test: %d failures (seed=%llu)\n", failures,
                 static_cast<unsigned long long>(seed));
    return 1;
  }
  std::printf("store_crash_test: OK\n");
  return 0;
}

}  // namespace
}  // namespace berth::store

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--child") {
    return berth::store::RunChild(argv[2], std::atoi(argv[3]));
  }
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <scratch dir>\n", argv[0]);
    return 2;
  }
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  return berth::store::RunParent(self, argv[1]);
}
