// Storage faults and object expiry: a commit that fails (disk full, fsync
// error, an exception) changes nothing and does not wedge later writers;
// writes and Health() recover by themselves; objects of TTL resources expire.
#include <atomic>
#include <filesystem>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <set>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "store/memory_store.h"
#include "store/sqlite_store.h"
#include "store/testing/fault_vfs.h"

namespace berth::store {
namespace {

using testing::FaultVfs;
using ::testing::HasSubstr;

const api::GroupResource kItems{"test.berth.dev", "items"};

// A payload large enough that every write appends new pages to the WAL.
api::Object Item(const std::string& name, int n = 0) {
  return {{"apiVersion", "test.berth.dev/v1"},
          {"kind", "Item"},
          {"metadata", {{"namespace", "ns"}, {"name", name}}},
          {"spec", {{"n", n}, {"payload", std::string(20000, 'x')}}}};
}

api::Object Event(const std::string& name, const std::string& message) {
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"namespace", "default"}, {"name", name}}},
          {"reason", "Test"},
          {"message", message}};
}

std::string TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "berth-fault-XXXXXX").string();
  BERTH_CHECK(mkdtemp(tmpl.data()) != nullptr);
  return tmpl;
}

class SqliteFaultTest : public ::testing::Test {
 protected:
  void TearDown() override {
    FaultVfs::Get().SetFull(false);
    FaultVfs::Get().SetSyncFails(false);
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::unique_ptr<SqliteStore> Open() {
    FaultVfs::Get();  // registers it
    SqliteOptions o;
    o.vfs = FaultVfs::kName;
    auto s = SqliteStore::Open(path_, clock_, o);
    BERTH_CHECK_OK(s.status());
    return std::move(s).value();
  }
  std::vector<std::string> StoredNames(Store& store) {
    auto list = store.List(kItems, {});
    BERTH_CHECK_OK(list.status());
    std::vector<std::string> out;
    for (const auto& obj : list->items) out.push_back(api::Name(*obj));
    return out;
  }

  FakeClock clock_;
  std::string dir_ = TempDir();
  std::string path_ = dir_ + "/berth.db";
  std::unique_ptr<SqliteStore> store_ = Open();
};

TEST_F(SqliteFaultTest, DiskFullFailsWritesWithNothingStoredThenWritesResume) {
  ASSERT_TRUE(store_->Create(kItems, Item("a")).ok());
  auto watcher = store_->Watch(kItems, {});
  ASSERT_TRUE(watcher.ok());
  ASSERT_TRUE(store_->Health().ok());

  FaultVfs::Get().SetFull(true);
  auto created = store_->Create(kItems, Item("b"));
  EXPECT_EQ(created.status().code(), Code::kUnavailable);
  EXPECT_THAT(created.status().message(), HasSubstr("storage commit failed: sqlite"));
  EXPECT_THAT(created.status().message(), HasSubstr("database or disk is full"));
  auto updated = store_->Update(kItems, Item("a", 1));
  EXPECT_EQ(updated.status().code(), Code::kUnavailable);
  EXPECT_EQ(store_->Delete({kItems, "ns", "a"}).status().code(), Code::kUnavailable);
  // Nothing changed: no object, no revision, no event.
  EXPECT_EQ(store_->Get({kItems, "ns", "b"}).status().code(), Code::kNotFound);
  EXPECT_EQ((*store_->Get({kItems, "ns", "a"}))["spec"]["n"], 0);
  EXPECT_EQ(store_->CurrentRevision(), 1);
  auto ev = (*watcher)->TryNext();
  ASSERT_TRUE(ev.ok());
  EXPECT_FALSE(ev->has_value());
  // Not ready while the disk stays full (the probe fails too).
  Status health = store_->Health();
  EXPECT_EQ(health.code(), Code::kUnavailable);
  EXPECT_THAT(health.message(), HasSubstr("database or disk is full"));
  EXPECT_EQ(store_->Health().code(), Code::kUnavailable);

  // Space returns: ready again without a write, and the next write succeeds
  // with the next revision.
  FaultVfs::Get().SetFull(false);
  EXPECT_TRUE(store_->Health().ok());
  auto b = store_->Create(kItems, Item("b"));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(api::ResourceVersion(*b), "2");
  ev = (*watcher)->TryNext();
  ASSERT_TRUE(ev.ok() && ev->has_value());
  EXPECT_EQ((*ev)->type, EventType::kAdded);
  EXPECT_EQ((*ev)->revision, 2);
  EXPECT_EQ(api::Name(*(*ev)->object), "b");

  store_.reset();
  store_ = Open();
  EXPECT_EQ(StoredNames(*store_), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(store_->CurrentRevision(), 2);
}

TEST_F(SqliteFaultTest, WritesResumeWithoutAProbe) {
  FaultVfs::Get().SetFull(true);
  EXPECT_EQ(store_->Create(kItems, Item("a")).status().code(), Code::kUnavailable);
  FaultVfs::Get().SetFull(false);
  ASSERT_TRUE(store_->Create(kItems, Item("a")).ok());
  EXPECT_TRUE(store_->Health().ok());
}

TEST_F(SqliteFaultTest, FsyncErrorFailsTheWriteAndChangesNothing) {
  ASSERT_TRUE(store_->Create(kItems, Item("a")).ok());
  FaultVfs::Get().SetSyncFails(true);
  auto created = store_->Create(kItems, Item("b"));
  EXPECT_EQ(created.status().code(), Code::kUnavailable);
  EXPECT_THAT(created.status().message(), HasSubstr("disk I/O error"));
  EXPECT_EQ(store_->Get({kItems, "ns", "b"}).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->Health().code(), Code::kUnavailable);
  FaultVfs::Get().SetSyncFails(false);
  ASSERT_TRUE(store_->Create(kItems, Item("c")).ok());
  EXPECT_EQ(store_->CurrentRevision(), 2);
  store_.reset();
  store_ = Open();
  EXPECT_EQ(StoredNames(*store_), (std::vector<std::string>{"a", "c"}));
}

// A crash right after failed writes recovers exactly the accepted ones: the
// child writes, fails some writes (disk full, then fsync errors) and is killed
// without closing the database; the parent reopens it.
TEST_F(SqliteFaultTest, CrashAfterFailedWritesRecoversExactlyTheAcceptedWrites) {
  store_.reset();
  for (const char* fault : {"full", "fsync", "fsync-once"}) {
    SCOPED_TRACE(fault);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto store = Open();
      bool ok = store->Create(kItems, Item("accepted-1")).ok() && store->Create(kItems, Item("accepted-2")).ok();
      if (std::string(fault) == "full") {
        FaultVfs::Get().SetFull(true);
      } else {
        FaultVfs::Get().SetSyncFails(true);
      }
      ok = ok && !store->Create(kItems, Item("failed-1")).ok();
      if (std::string(fault) != "fsync-once") {  // else: killed right after one refused write
        ok = ok && !store->Update(kItems, Item("accepted-1", 7)).ok() && !store->Health().ok();
      }
      kill(getpid(), SIGKILL);  // no close, no checkpoint
      _exit(ok ? 0 : 1);
    }
    int wstatus = 0;
    ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL) << "the child failed its writes wrongly";
    store_ = Open();
    EXPECT_EQ(StoredNames(*store_), (std::vector<std::string>{"accepted-1", "accepted-2"}));
    EXPECT_EQ((*store_->Get({kItems, "ns", "accepted-1"}))["spec"]["n"], 0);
    EXPECT_EQ(store_->CurrentRevision(), 2);
    store_.reset();
  }
}

// An object nlohmann cannot serialize (not UTF-8) throws inside the SQLite
// transaction: the write fails, the transaction is rolled back, and later
// writers are not wedged.
TEST_F(SqliteFaultTest, ExceptionInsideACommitDoesNotWedgeLaterWriters) {
  auto watcher = store_->Watch(kItems, {});
  ASSERT_TRUE(watcher.ok());
  api::Object bad = Item("bad");
  bad["spec"]["payload"] = std::string("\xff\xfe");
  auto failed = store_->Create(kItems, bad);
  EXPECT_EQ(failed.status().code(), Code::kUnavailable);
  EXPECT_THAT(failed.status().message(), HasSubstr("storage commit failed: exception"));
  EXPECT_EQ(store_->Get({kItems, "ns", "bad"}).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->CurrentRevision(), 0);

  constexpr int kWriters = 100;
  std::atomic<int> ok{0};
  std::vector<std::thread> writers;
  for (int i = 0; i < kWriters; ++i) {
    writers.emplace_back([&, i] {
      if (store_->Create(kItems, Item("w" + std::to_string(i))).ok()) ++ok;
    });
  }
  for (auto& t : writers) t.join();
  EXPECT_EQ(ok.load(), kWriters);
  EXPECT_EQ(store_->CurrentRevision(), kWriters);
  EXPECT_TRUE(store_->Health().ok());
  std::set<int64_t> revisions;
  for (;;) {
    auto ev = (*watcher)->TryNext();
    ASSERT_TRUE(ev.ok());
    if (!ev->has_value()) break;
    EXPECT_NE(api::Name(*(*ev)->object), "bad");
    revisions.insert((*ev)->revision);
  }
  EXPECT_EQ(revisions.size(), static_cast<size_t>(kWriters));
  EXPECT_EQ(*revisions.begin(), 1);
  EXPECT_EQ(*revisions.rbegin(), kWriters);
  store_.reset();
  store_ = Open();
  EXPECT_EQ(StoredNames(*store_).size(), static_cast<size_t>(kWriters));
}

// A Persistence that throws from the Nth commit on, as told.
class ThrowingPersistence final : public Persistence {
 public:
  explicit ThrowingPersistence(std::atomic<int>* throws) : throws_(throws) {}
  Status Commit(const std::vector<Mutation>&) override {
    if (throws_->load() > 0) {
      --*throws_;
      throw std::runtime_error("injected");
    }
    return Status::Ok();
  }
  Status Probe() override { return Status::Ok(); }

 private:
  std::atomic<int>* throws_;
};

class ThrowingStore final : public CachedStore {
 public:
  ThrowingStore(Clock& clock, std::atomic<int>* throws)
      : CachedStore(clock, {}, std::make_unique<ThrowingPersistence>(throws), RecoveredState{}) {}
};

TEST(CachedStoreFaultTest, ExceptionInCommitFailsTheBatchAndConcurrentWritersAllComplete) {
  FakeClock clock;
  std::atomic<int> throws{1};
  ThrowingStore store(clock, &throws);
  auto watcher = store.Watch(kItems, {});
  ASSERT_TRUE(watcher.ok());
  auto failed = store.Create(kItems, Item("first"));
  EXPECT_EQ(failed.status().code(), Code::kUnavailable);
  EXPECT_EQ(failed.status().message(), "storage commit failed: exception: injected");
  EXPECT_EQ(store.Get({kItems, "ns", "first"}).status().code(), Code::kNotFound);
  EXPECT_EQ(store.CurrentRevision(), 0);
  EXPECT_EQ(store.Health().code(), Code::kOk);  // the probe succeeds

  // One more exception while 100 writers run: its batch fails, every writer
  // returns, and those that failed succeed when they retry.
  throws = 1;
  constexpr int kWriters = 100;
  std::atomic<int> ok{0}, retried{0};
  std::vector<std::thread> writers;
  for (int i = 0; i < kWriters; ++i) {
    writers.emplace_back([&, i] {
      auto created = store.Create(kItems, Item("w" + std::to_string(i)));
      if (!created.ok()) {
        ++retried;
        created = store.Create(kItems, Item("w" + std::to_string(i)));
      }
      if (created.ok()) ++ok;
    });
  }
  for (auto& t : writers) t.join();
  EXPECT_EQ(ok.load(), kWriters);
  EXPECT_GE(retried.load(), 1);
  EXPECT_EQ(store.CurrentRevision(), kWriters);
  std::set<std::string> names;
  int64_t last = 0;
  for (;;) {
    auto ev = (*watcher)->TryNext();
    ASSERT_TRUE(ev.ok());
    if (!ev->has_value()) break;
    EXPECT_EQ((*ev)->revision, last + 1);
    last = (*ev)->revision;
    names.insert(api::Name(*(*ev)->object));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kWriters));
  EXPECT_EQ(names.count("first"), 0u);
}

// ------------------------------------------------------------------ expiry

StoreOptions EventTtl(Duration ttl) {
  StoreOptions o;
  o.ttl[kEventsResource] = ttl;
  return o;
}

TEST(StoreExpiryTest, EventsExpireAfterTheTtlFromTheirLastWrite) {
  FakeClock clock;
  MemoryStore store(clock, EventTtl(std::chrono::hours(1)));
  ASSERT_TRUE(store.Create(kEventsResource, Event("a", "one")).ok());
  ASSERT_TRUE(store.Create(kEventsResource, Event("b", "one")).ok());
  ASSERT_TRUE(store.Create(kItems, Item("not-an-event")).ok());
  auto watcher = store.Watch(kEventsResource, {});
  ASSERT_TRUE(watcher.ok());

  clock.Advance(std::chrono::minutes(40));
  EXPECT_EQ(*store.RemoveExpired(), 0u);
  // b is written again: its TTL restarts.
  ASSERT_TRUE(store.Update(kEventsResource, Event("b", "two")).ok());
  auto modified = (*watcher)->TryNext();
  ASSERT_TRUE(modified.ok() && modified->has_value());

  clock.Advance(std::chrono::minutes(20));  // a is 1h old
  EXPECT_EQ(*store.RemoveExpired(), 1u);
  EXPECT_EQ(store.Get({kEventsResource, "default", "a"}).status().code(), Code::kNotFound);
  EXPECT_TRUE(store.Get({kEventsResource, "default", "b"}).ok());
  auto deleted = (*watcher)->TryNext();
  ASSERT_TRUE(deleted.ok() && deleted->has_value());
  EXPECT_EQ((*deleted)->type, EventType::kDeleted);
  EXPECT_EQ(api::Name(*(*deleted)->object), "a");
  EXPECT_EQ(api::ResourceVersion(*(*deleted)->object), std::to_string(store.CurrentRevision()));

  clock.Advance(std::chrono::minutes(39));
  EXPECT_EQ(*store.RemoveExpired(), 0u);
  clock.Advance(std::chrono::minutes(1));  // b is 1h past its last write
  EXPECT_EQ(*store.RemoveExpired(), 1u);
  deleted = (*watcher)->TryNext();
  ASSERT_TRUE(deleted.ok() && deleted->has_value());
  EXPECT_EQ((*deleted)->type, EventType::kDeleted);
  EXPECT_EQ(api::Name(*(*deleted)->object), "b");
  EXPECT_EQ((*deleted)->object->at("message"), "two");
  EXPECT_TRUE(store.List(kEventsResource, {})->items.empty());
  EXPECT_TRUE(store.Get({kItems, "ns", "not-an-event"}).ok());  // no TTL
}

TEST(StoreExpiryTest, ExpiryIsDurableAndRestartsAtReopen) {
  FakeClock clock;
  const std::string dir = TempDir();
  SqliteOptions o;
  o.store = EventTtl(std::chrono::hours(1));
  {
    auto store = SqliteStore::Open(dir + "/berth.db", clock, o);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->Create(kEventsResource, Event("a", "one")).ok());
    ASSERT_TRUE((*store)->Create(kEventsResource, Event("b", "one")).ok());
    clock.Advance(std::chrono::minutes(30));
    ASSERT_TRUE((*store)->Update(kEventsResource, Event("b", "two")).ok());
    clock.Advance(std::chrono::minutes(30));
    EXPECT_EQ(*(*store)->RemoveExpired(), 1u);
  }
  {
    auto store = SqliteStore::Open(dir + "/berth.db", clock, o);
    ASSERT_TRUE(store.ok());
    EXPECT_EQ((*store)->Get({kEventsResource, "default", "a"}).status().code(), Code::kNotFound);
    EXPECT_EQ((*store)->CurrentRevision(), 4);
    // b's TTL restarted at the open (etcd extends leases at leader promotion).
    clock.Advance(std::chrono::minutes(59));
    EXPECT_EQ(*(*store)->RemoveExpired(), 0u);
    clock.Advance(std::chrono::minutes(1));
    EXPECT_EQ(*(*store)->RemoveExpired(), 1u);
  }
  std::filesystem::remove_all(dir);
}

TEST(StoreExpiryTest, OneSweepRemovesAtMostTheLimitInOneCommit) {
  FakeClock clock;
  MemoryStore store(clock, EventTtl(std::chrono::seconds(10)));
  const size_t n = kMaxExpiriesPerSweep + 5;
  for (size_t i = 0; i < n; ++i) ASSERT_TRUE(store.Create(kEventsResource, Event("e" + std::to_string(i), "m")).ok());
  clock.Advance(std::chrono::seconds(10));
  EXPECT_EQ(*store.RemoveExpired(), kMaxExpiriesPerSweep);
  EXPECT_EQ(*store.RemoveExpired(), 5u);
  EXPECT_EQ(*store.RemoveExpired(), 0u);
  EXPECT_EQ(store.CurrentRevision(), static_cast<int64_t>(2 * n));
}

}  // namespace
}  // namespace berth::store
