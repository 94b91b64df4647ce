// One typed suite run against every backend: MemoryStore and SqliteStore.
#include "store/memory_store.h"
#include "store/sqlite_store.h"
#include "store/continue_token.h"
#include "api/unstructured.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <thread>

namespace berth::store {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

const api::GroupResource kPods{"", "pods"};
const api::GroupResource kQueues{"kueue.x-k8s.io", "clusterqueues"};

api::Object Pod(const std::string& ns, const std::string& name, nlohmann::json spec = {{"x", 1}}) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"namespace", ns}, {"name", name}}},
          {"spec", std::move(spec)}};
}

api::Object Queue(const std::string& name) {
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "ClusterQueue"},
          {"metadata", {{"name", name}}},
          {"spec", {{"cohort", "all"}}}};
}

WatchOptions From(int64_t revision, size_t buffer_limit = 0) {
  WatchOptions o;
  o.from_revision = revision;
  o.buffer_limit = buffer_limit;
  return o;
}

WatchOptions InNamespace(const std::string& ns) {
  WatchOptions o;
  o.ns = ns;
  return o;
}

int64_t Rev(const api::Object& obj) { return std::stoll(api::ResourceVersion(obj)); }

std::vector<std::string> Names(const ListResult& list) {
  std::vector<std::string> out;
  for (const auto& obj : list.items) {
    out.push_back(api::Namespace(*obj).empty() ? api::Name(*obj)
                                               : api::Namespace(*obj) + "/" + api::Name(*obj));
  }
  return out;
}

std::string TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "berth-store-XXXXXX").string();
  BERTH_CHECK(mkdtemp(tmpl.data()) != nullptr);
  return tmpl;
}

struct MemoryBackend {
  std::unique_ptr<CachedStore> Open(Clock& clock, const StoreOptions& options) {
    return std::make_unique<MemoryStore>(clock, options);
  }
};

struct SqliteBackend {
  std::string dir = TempDir();
  ~SqliteBackend() { std::filesystem::remove_all(dir); }
  std::unique_ptr<CachedStore> Open(Clock& clock, const StoreOptions& options) {
    SqliteOptions o;
    o.store = options;
    auto s = SqliteStore::Open(dir + "/berth.db", clock, o);
    BERTH_CHECK_OK(s.status());
    return std::move(s).value();
  }
};

template <typename Backend>
class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override { Open({}); }
  void Open(const StoreOptions& options) {
    store_.reset();
    options_ = options;
    store_ = backend_.Open(clock_, options);
  }

  api::Object MustCreate(const api::GroupResource& r, api::Object obj) {
    auto created = store_->Create(r, std::move(obj));
    BERTH_CHECK_OK(created.status());
    return *created;
  }

  FakeClock clock_;
  Backend backend_;
  StoreOptions options_;
  std::unique_ptr<Store> store_;
};

using Backends = ::testing::Types<MemoryBackend, SqliteBackend>;
TYPED_TEST_SUITE(StoreTest, Backends);

// ------------------------------------------------------------------- CRUD

TYPED_TEST(StoreTest, CreateStampsMetadataAndRevision) {
  api::Object in = Pod("default", "a");
  in["metadata"]["resourceVersion"] = "77";
  in["metadata"]["deletionTimestamp"] = "2020-01-01T00:00:00Z";
  this->clock_.Advance(std::chrono::seconds(90));
  api::Object a = this->MustCreate(kPods, in);
  EXPECT_EQ(api::ResourceVersion(a), "1");
  EXPECT_THAT(api::Uid(a), MatchesRegex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
  EXPECT_EQ(a["metadata"]["creationTimestamp"], "2026-01-01T00:01:30Z");
  EXPECT_EQ(a["metadata"]["generation"], 1);
  EXPECT_FALSE(a["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ(a["spec"], in["spec"]);

  api::Object b = this->MustCreate(kQueues, Queue("cq"));
  EXPECT_EQ(api::ResourceVersion(b), "2");
  EXPECT_NE(api::Uid(a), api::Uid(b));
  EXPECT_EQ(this->store_->CurrentRevision(), 2);

  auto got = this->store_->Get({kPods, "default", "a"});
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, a);
  // A uid the object carries (the admission pipeline's) is kept.
  api::Object with_uid = Pod("default", "with-uid");
  with_uid["metadata"]["uid"] = "6c4a1f3e-0b6d-4e59-9a43-1f2a8c0d7e55";
  EXPECT_EQ(api::Uid(this->MustCreate(kPods, with_uid)), "6c4a1f3e-0b6d-4e59-9a43-1f2a8c0d7e55");
}

TYPED_TEST(StoreTest, KubernetesErrorMessages) {
  this->MustCreate(kPods, Pod("default", "a"));
  this->MustCreate(kQueues, Queue("cq"));

  auto dup = this->store_->Create(kPods, Pod("default", "a"));
  EXPECT_EQ(dup.status().code(), Code::kAlreadyExists);
  EXPECT_EQ(dup.status().message(), "pods \"a\" already exists");
  auto dup_cq = this->store_->Create(kQueues, Queue("cq"));
  EXPECT_EQ(dup_cq.status().message(), "clusterqueues.kueue.x-k8s.io \"cq\" already exists");

  auto missing = this->store_->Get({kQueues, "", "nope"});
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_EQ(missing.status().message(), "clusterqueues.kueue.x-k8s.io \"nope\" not found");
  // Same name, other namespace: a different key.
  EXPECT_EQ(this->store_->Get({kPods, "other", "a"}).status().code(), Code::kNotFound);
  EXPECT_EQ(this->store_->Update(kPods, Pod("default", "zz")).status().message(),
            "pods \"zz\" not found");
  EXPECT_EQ(this->store_->Delete({kPods, "default", "zz"}).status().code(), Code::kNotFound);
  EXPECT_EQ(this->store_->CurrentRevision(), 2);  // failures write nothing
}

TYPED_TEST(StoreTest, GenerateNameAndMissingName) {
  api::Object in = Pod("default", "");
  in["metadata"].erase("name");
  in["metadata"]["generateName"] = "job-";
  std::set<std::string> names;
  for (int i = 0; i < 20; ++i) {
    api::Object created = this->MustCreate(kPods, in);
    EXPECT_THAT(api::Name(created), MatchesRegex("job-[bcdfghjklmnpqrstvwxz2456789]{5}"));
    names.insert(api::Name(created));
  }
  EXPECT_EQ(names.size(), 20u);

  in["metadata"].erase("generateName");
  auto bad = this->store_->Create(kPods, in);
  EXPECT_EQ(bad.status().code(), Code::kInvalid);
  ASSERT_EQ(bad.status().causes().size(), 1u);
  EXPECT_EQ(bad.status().causes()[0].field, "metadata.name");
  EXPECT_EQ(this->store_->Create(kPods, Pod("default", "a/b")).status().code(), Code::kInvalid);
}

TYPED_TEST(StoreTest, UpdatePreconditionsAndConflicts) {
  api::Object a = this->MustCreate(kPods, Pod("default", "a"));
  api::Object stale = a;

  a["spec"]["x"] = 2;
  auto updated = this->store_->Update(kPods, a);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(api::ResourceVersion(*updated), "2");

  stale["spec"]["x"] = 3;
  auto conflict = this->store_->Update(kPods, stale);
  EXPECT_EQ(conflict.status().code(), Code::kConflict);
  EXPECT_EQ(conflict.status().message(),
            "Operation cannot be fulfilled on pods \"a\": the object has been modified; please "
            "apply your changes to the latest version and try again");

  // No resourceVersion: unconditional.
  stale["metadata"].erase("resourceVersion");
  auto forced = this->store_->Update(kPods, stale);
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ(forced->at("spec")["x"], 3);
  EXPECT_EQ(api::ResourceVersion(*forced), "3");

  UpdateOptions wrong_uid;
  wrong_uid.uid = "not-the-uid";
  auto uid_conflict = this->store_->Update(kPods, *forced, wrong_uid);
  EXPECT_EQ(uid_conflict.status().code(), Code::kConflict);
  EXPECT_EQ(uid_conflict.status().message(),
            "Operation cannot be fulfilled on pods \"a\": Precondition failed: UID in "
            "precondition: not-the-uid, UID in object meta: " + api::Uid(a));
  EXPECT_EQ(this->store_->CurrentRevision(), 3);
}

TYPED_TEST(StoreTest, GenerationAndImmutableMetadata) {
  api::Object a = this->MustCreate(kPods, Pod("default", "a"));
  const std::string uid = api::Uid(a);
  const auto created_at = a["metadata"]["creationTimestamp"];

  // status-only: generation kept.
  a["status"] = {{"phase", "Running"}};
  a = *this->store_->Update(kPods, a);
  EXPECT_EQ(a["metadata"]["generation"], 1);
  // metadata-only (labels): kept; the client cannot change uid/creationTimestamp/generation.
  a["metadata"]["labels"] = {{"app", "x"}};
  a["metadata"]["uid"] = "forged";
  a["metadata"]["creationTimestamp"] = "1999-01-01T00:00:00Z";
  a["metadata"]["generation"] = 40;
  a = *this->store_->Update(kPods, a);
  EXPECT_EQ(a["metadata"]["generation"], 1);
  EXPECT_EQ(api::Uid(a), uid);
  EXPECT_EQ(a["metadata"]["creationTimestamp"], created_at);
  EXPECT_EQ(a["metadata"]["labels"]["app"], "x");
  // spec change: +1.
  a["spec"]["x"] = 5;
  a = *this->store_->Update(kPods, a);
  EXPECT_EQ(a["metadata"]["generation"], 2);
  // A new top-level field outside metadata/status counts as a spec change.
  a["data"] = {{"k", "v"}};
  a = *this->store_->Update(kPods, a);
  EXPECT_EQ(a["metadata"]["generation"], 3);
  EXPECT_EQ(api::ResourceVersion(a), "5");
}

TYPED_TEST(StoreTest, UnchangedUpdateWritesNothing) {
  api::Object a = this->MustCreate(kPods, Pod("default", "a"));
  auto w = this->store_->Watch(kPods, {});
  ASSERT_TRUE(w.ok());
  auto same = this->store_->Update(kPods, a);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, a);
  EXPECT_EQ(this->store_->CurrentRevision(), 1);
  auto ev = (*w)->TryNext();
  ASSERT_TRUE(ev.ok());
  EXPECT_FALSE(ev->has_value());
}

// The *Shared forms hand out the stored document itself: the pointer later
// reads and the watch event carry, never modified afterwards.
TYPED_TEST(StoreTest, SharedFormsReturnTheStoredObject) {
  auto w = this->store_->Watch(kPods, {});
  ASSERT_TRUE(w.ok());
  auto created = this->store_->CreateShared(kPods, Pod("default", "a"));
  ASSERT_TRUE(created.ok()) << created.status();
  const ObjectPtr v1 = *created;
  EXPECT_EQ(api::ResourceVersion(*v1), "1");
  EXPECT_EQ((*v1)["metadata"]["generation"], 1);
  auto got = this->store_->GetShared({kPods, "default", "a"});
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->get(), v1.get());
  EXPECT_EQ(*this->store_->Get({kPods, "default", "a"}), *v1);  // the value form: an equal copy

  api::Object body = *v1;
  body["spec"]["x"] = 2;
  auto updated = this->store_->UpdateShared(kPods, std::move(body));
  ASSERT_TRUE(updated.ok()) << updated.status();
  const ObjectPtr v2 = *updated;
  EXPECT_EQ(api::ResourceVersion(*v2), "2");
  EXPECT_EQ((*v2)["metadata"]["generation"], 2);
  EXPECT_EQ((*v2)["spec"]["x"], 2);
  EXPECT_EQ(this->store_->GetShared({kPods, "default", "a"})->get(), v2.get());
  // The earlier version is unchanged.
  EXPECT_EQ(api::ResourceVersion(*v1), "1");
  EXPECT_EQ((*v1)["spec"]["x"], 1);

  // The watch events share the same documents.
  auto added = (*w)->TryNext();
  ASSERT_TRUE(added.ok() && added->has_value());
  EXPECT_EQ((*added)->type, EventType::kAdded);
  EXPECT_EQ((*added)->object.get(), v1.get());
  auto modified = (*w)->TryNext();
  ASSERT_TRUE(modified.ok() && modified->has_value());
  EXPECT_EQ((*modified)->type, EventType::kModified);
  EXPECT_EQ((*modified)->object.get(), v2.get());

  // An update that changes nothing returns the stored object itself, unwritten.
  auto same = this->store_->UpdateShared(kPods, api::Object(*v2));
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->get(), v2.get());
  EXPECT_EQ(this->store_->CurrentRevision(), 2);

  // GuaranteedUpdateShared: the result is what a read returns next.
  auto guaranteed = this->store_->GuaranteedUpdateShared(
      {kPods, "default", "a"}, [](const api::Object& current) -> StatusOr<api::Object> {
        api::Object next = current;
        next["status"] = {{"phase", "Running"}};
        return next;
      });
  ASSERT_TRUE(guaranteed.ok()) << guaranteed.status();
  EXPECT_EQ(api::ResourceVersion(**guaranteed), "3");
  EXPECT_EQ((**guaranteed)["status"]["phase"], "Running");
  EXPECT_EQ((**guaranteed)["metadata"]["generation"], 2);  // status only
  EXPECT_EQ(this->store_->GetShared({kPods, "default", "a"})->get(), guaranteed->get());
}

TYPED_TEST(StoreTest, DeleteSharedMarksThenRemoves) {
  api::Object in = Pod("default", "a");
  in["metadata"]["finalizers"] = {"example.com/hold"};
  const ObjectPtr created = *this->store_->CreateShared(kPods, in);
  auto w = this->store_->Watch(kPods, {});
  ASSERT_TRUE(w.ok());

  auto marked = this->store_->DeleteShared({kPods, "default", "a"});
  ASSERT_TRUE(marked.ok()) << marked.status();
  EXPECT_FALSE(marked->removed);
  EXPECT_EQ(api::ResourceVersion(*marked->object), "2");
  EXPECT_EQ((*marked->object)["metadata"]["deletionTimestamp"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(this->store_->GetShared({kPods, "default", "a"})->get(), marked->object.get());
  EXPECT_FALSE(created->at("metadata").contains("deletionTimestamp"));

  // Removing the finalizer finishes the deletion: the removed object at its
  // deletion revision, shared with the DELETED event.
  api::Object last = *marked->object;
  last["metadata"].erase("finalizers");
  auto removed = this->store_->UpdateShared(kPods, std::move(last));
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(api::ResourceVersion(**removed), "3");
  EXPECT_EQ(this->store_->GetShared({kPods, "default", "a"}).status().code(), Code::kNotFound);
  std::vector<std::pair<EventType, const api::Object*>> events;
  while (true) {
    auto ev = (*w)->TryNext();
    ASSERT_TRUE(ev.ok());
    if (!ev->has_value()) break;
    events.emplace_back((*ev)->type, (*ev)->object.get());
  }
  EXPECT_THAT(events, ElementsAre(std::pair{EventType::kModified, marked->object.get()},
                                  std::pair{EventType::kDeleted, removed->get()}));

  // DeleteShared without finalizers removes at once.
  BERTH_CHECK_OK(this->store_->CreateShared(kPods, Pod("default", "b")).status());
  auto gone = this->store_->DeleteShared({kPods, "default", "b"});
  ASSERT_TRUE(gone.ok());
  EXPECT_TRUE(gone->removed);
  EXPECT_EQ(api::Name(*gone->object), "b");
  EXPECT_EQ(api::ResourceVersion(*gone->object), "5");
}

TYPED_TEST(StoreTest, SharedFormsReportKubernetesErrors) {
  this->MustCreate(kPods, Pod("default", "a"));
  EXPECT_EQ(this->store_->GetShared({kPods, "default", "zz"}).status().message(),
            "pods \"zz\" not found");
  auto dup = this->store_->CreateShared(kPods, Pod("default", "a"));
  EXPECT_EQ(dup.status().code(), Code::kAlreadyExists);
  EXPECT_EQ(dup.status().message(), "pods \"a\" already exists");
  EXPECT_EQ(this->store_->UpdateShared(kPods, Pod("default", "zz")).status().message(),
            "pods \"zz\" not found");
  api::Object stale = Pod("default", "a");
  stale["metadata"]["resourceVersion"] = "7";
  EXPECT_EQ(this->store_->UpdateShared(kPods, stale).status().code(), Code::kConflict);
  DeleteOptions wrong_uid;
  wrong_uid.preconditions.uid = "not-the-uid";
  EXPECT_EQ(this->store_->DeleteShared({kPods, "default", "a"}, wrong_uid).status().code(),
            Code::kConflict);
  EXPECT_EQ(this->store_->DeleteShared({kPods, "default", "zz"}).status().code(), Code::kNotFound);
  EXPECT_EQ(this->store_->CurrentRevision(), 1);  // failures write nothing
}

TYPED_TEST(StoreTest, GuaranteedUpdateRetriesOnConcurrentWrite) {
  this->MustCreate(kPods, Pod("default", "a"));
  int calls = 0;
  auto result = this->store_->GuaranteedUpdate(
      {kPods, "default", "a"}, [&](const api::Object& current) -> StatusOr<api::Object> {
        if (++calls == 1) {
          // Someone else writes between our read and our write.
          api::Object other = current;
          other["metadata"]["labels"] = {{"by", "other"}};
          BERTH_CHECK_OK(this->store_->Update(kPods, other).status());
        }
        api::Object next = current;
        next["spec"]["x"] = current["spec"]["x"].get<int>() + 10;
        return next;
      });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(calls, 2);
  EXPECT_EQ((*result)["spec"]["x"], 11);
  EXPECT_EQ((*result)["metadata"]["labels"]["by"], "other");  // the retry saw the other write
  EXPECT_EQ(api::ResourceVersion(*result), "3");

  auto err = this->store_->GuaranteedUpdate(
      {kPods, "default", "a"},
      [](const api::Object&) -> StatusOr<api::Object> { return InvalidError("nope"); });
  EXPECT_EQ(err.status().code(), Code::kInvalid);
  EXPECT_EQ(this->store_->GuaranteedUpdate({kPods, "default", "gone"},
                                           [](const api::Object& o) -> StatusOr<api::Object> { return o; })
                .status()
                .code(),
            Code::kNotFound);
}

TYPED_TEST(StoreTest, ConcurrentGuaranteedUpdatesAllApply) {
  this->MustCreate(kPods, Pod("default", "counter", {{"n", 0}}));
  constexpr int kThreads = 4, kEach = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        BERTH_CHECK_OK(this->store_->GuaranteedUpdate(
            {kPods, "default", "counter"}, [](const api::Object& cur) -> StatusOr<api::Object> {
              api::Object next = cur;
              next["spec"]["n"] = cur["spec"]["n"].get<int>() + 1;
              return next;
            }).status());
      }
    });
  }
  for (auto& t : threads) t.join();
  auto final_obj = this->store_->Get({kPods, "default", "counter"});
  EXPECT_EQ((*final_obj)["spec"]["n"], kThreads * kEach);
  EXPECT_EQ(this->store_->CurrentRevision(), 1 + kThreads * kEach);
}

TYPED_TEST(StoreTest, ConcurrentCreatesGetDistinctRevisions) {
  constexpr int kThreads = 4, kEach = 50;
  std::vector<std::vector<int64_t>> revs(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        auto c = this->store_->Create(kPods, Pod("ns" + std::to_string(t), "p" + std::to_string(i)));
        BERTH_CHECK_OK(c.status());
        revs[t].push_back(Rev(*c));
      }
    });
  }
  for (auto& t : threads) t.join();
  std::set<int64_t> all;
  for (const auto& r : revs) {
    EXPECT_TRUE(std::is_sorted(r.begin(), r.end()));  // one writer's revisions increase
    all.insert(r.begin(), r.end());
  }
  EXPECT_EQ(all.size(), size_t{kThreads * kEach});
  EXPECT_EQ(*all.begin(), 1);
  EXPECT_EQ(*all.rbegin(), kThreads * kEach);
  auto list = this->store_->List(kPods, {});
  EXPECT_EQ(list->items.size(), size_t{kThreads * kEach});
  EXPECT_EQ(list->revision, kThreads * kEach);
}

// --------------------------------------------------------------- deletion

TYPED_TEST(StoreTest, DeleteWithoutFinalizersRemoves) {
  this->MustCreate(kPods, Pod("default", "a"));
  auto w = *this->store_->Watch(kPods, {});
  auto del = this->store_->Delete({kPods, "default", "a"});
  ASSERT_TRUE(del.ok());
  EXPECT_TRUE(del->removed);
  EXPECT_EQ(api::ResourceVersion(del->object), "2");
  EXPECT_EQ(this->store_->Get({kPods, "default", "a"}).status().code(), Code::kNotFound);
  auto ev = w->TryNext();
  ASSERT_TRUE(ev.ok() && ev->has_value());
  EXPECT_EQ((*ev)->type, EventType::kDeleted);
  EXPECT_EQ((*ev)->revision, 2);
  EXPECT_EQ(api::ResourceVersion(*(*ev)->object), "2");
  EXPECT_EQ((*(*ev)->object)["spec"]["x"], 1);  // the last state
}

TYPED_TEST(StoreTest, FinalizersKeepTheObjectUntilRemoved) {
  api::Object in = Pod("default", "a");
  in["metadata"]["finalizers"] = {"kueue.x-k8s.io/resource-in-use"};
  this->MustCreate(kPods, in);
  auto w = *this->store_->Watch(kPods, {});
  this->clock_.Advance(std::chrono::seconds(5));

  auto del = this->store_->Delete({kPods, "default", "a"});
  ASSERT_TRUE(del.ok());
  EXPECT_FALSE(del->removed);
  EXPECT_EQ(del->object["metadata"]["deletionTimestamp"], "2026-01-01T00:00:05Z");
  EXPECT_EQ(del->object["metadata"]["deletionGracePeriodSeconds"], 0);
  EXPECT_EQ(api::ResourceVersion(del->object), "2");
  // Deleting again changes nothing.
  auto again = this->store_->Delete({kPods, "default", "a"});
  EXPECT_FALSE(again->removed);
  EXPECT_EQ(this->store_->CurrentRevision(), 2);

  // A client cannot clear the deletionTimestamp; dropping a label keeps it there.
  api::Object cur = *this->store_->Get({kPods, "default", "a"});
  cur["metadata"].erase("deletionTimestamp");
  cur["metadata"]["labels"] = {{"l", "1"}};
  cur = *this->store_->Update(kPods, cur);
  EXPECT_EQ(cur["metadata"]["deletionTimestamp"], "2026-01-01T00:00:05Z");

  // Removing the last finalizer removes the object.
  cur["metadata"]["finalizers"] = nlohmann::json::array();
  auto last = this->store_->Update(kPods, cur);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(api::ResourceVersion(*last), "4");
  EXPECT_EQ(this->store_->Get({kPods, "default", "a"}).status().code(), Code::kNotFound);

  std::vector<std::pair<EventType, int64_t>> events;
  while (true) {
    auto ev = w->TryNext();
    if (!ev.ok() || !ev->has_value()) break;
    events.emplace_back((*ev)->type, (*ev)->revision);
  }
  EXPECT_THAT(events, ElementsAre(std::pair{EventType::kModified, 2}, std::pair{EventType::kModified, 3},
                                  std::pair{EventType::kDeleted, 4}));
}

TYPED_TEST(StoreTest, GracePeriodMarksThenGraceZeroRemoves) {
  this->MustCreate(kPods, Pod("default", "a"));
  DeleteOptions graceful;
  graceful.grace_period_seconds = 30;
  auto marked = this->store_->Delete({kPods, "default", "a"}, graceful);
  ASSERT_TRUE(marked.ok());
  EXPECT_FALSE(marked->removed);
  EXPECT_EQ(marked->object["metadata"]["deletionTimestamp"], "2026-01-01T00:00:30Z");
  EXPECT_EQ(marked->object["metadata"]["deletionGracePeriodSeconds"], 30);

  // Removing nothing via update while grace has not elapsed keeps it.
  api::Object cur = marked->object;
  cur["status"] = {{"phase", "Terminating"}};
  ASSERT_TRUE(this->store_->Update(kPods, cur).ok());
  EXPECT_TRUE(this->store_->Get({kPods, "default", "a"}).ok());

  // A shorter grace period moves the deadline earlier; a longer one does nothing.
  this->clock_.Advance(std::chrono::seconds(2));
  graceful.grace_period_seconds = 10;
  auto shorter = this->store_->Delete({kPods, "default", "a"}, graceful);
  EXPECT_EQ(shorter->object["metadata"]["deletionTimestamp"], "2026-01-01T00:00:12Z");
  EXPECT_EQ(shorter->object["metadata"]["deletionGracePeriodSeconds"], 10);
  const int64_t rev = this->store_->CurrentRevision();
  graceful.grace_period_seconds = 60;
  EXPECT_FALSE(this->store_->Delete({kPods, "default", "a"}, graceful)->removed);
  EXPECT_EQ(this->store_->CurrentRevision(), rev);

  auto removed = this->store_->Delete({kPods, "default", "a"});  // grace 0
  ASSERT_TRUE(removed.ok());
  EXPECT_TRUE(removed->removed);
  EXPECT_EQ(this->store_->Get({kPods, "default", "a"}).status().code(), Code::kNotFound);
}

TYPED_TEST(StoreTest, DeletePreconditions) {
  api::Object a = this->MustCreate(kPods, Pod("default", "a"));
  DeleteOptions o;
  o.preconditions.uid = "other";
  EXPECT_EQ(this->store_->Delete({kPods, "default", "a"}, o).status().message(),
            "Operation cannot be fulfilled on pods \"a\": Precondition failed: UID in precondition: "
            "other, UID in object meta: " + api::Uid(a));
  o.preconditions.uid = api::Uid(a);
  o.preconditions.resource_version = "9";
  EXPECT_EQ(this->store_->Delete({kPods, "default", "a"}, o).status().message(),
            "Operation cannot be fulfilled on pods \"a\": Precondition failed: ResourceVersion in "
            "precondition: 9, ResourceVersion in object meta: 1");
  o.preconditions.resource_version = "1";
  EXPECT_TRUE(this->store_->Delete({kPods, "default", "a"}, o)->removed);
}

// ------------------------------------------------------------------ lists

TYPED_TEST(StoreTest, ListOrderNamespacesAndPredicate) {
  for (auto [ns, name] : std::vector<std::pair<std::string, std::string>>{
           {"b", "z"}, {"a", "y"}, {"a-b", "x"}, {"b", "a"}, {"a", "b"}, {"a", "a-1"}}) {
    api::Object p = Pod(ns, name);
    p["metadata"]["labels"] = {{"ns", ns}};
    this->MustCreate(kPods, p);
  }
  this->MustCreate(kQueues, Queue("q"));
  auto all = this->store_->List(kPods, {});
  ASSERT_TRUE(all.ok());
  EXPECT_THAT(Names(*all), ElementsAre("a/a-1", "a/b", "a/y", "a-b/x", "b/a", "b/z"));
  EXPECT_EQ(all->revision, 7);
  EXPECT_TRUE(all->continue_token.empty());

  ListOptions in_a;
  in_a.ns = "a";
  EXPECT_THAT(Names(*this->store_->List(kPods, in_a)), ElementsAre("a/a-1", "a/b", "a/y"));

  ListOptions selected;
  selected.predicate = [](const api::Object& o) { return o["metadata"]["labels"]["ns"] == "b"; };
  EXPECT_THAT(Names(*this->store_->List(kPods, selected)), ElementsAre("b/a", "b/z"));
  EXPECT_THAT(Names(*this->store_->List(kQueues, {})), ElementsAre("q"));
  EXPECT_TRUE(this->store_->List({"", "nodes"}, {})->items.empty());
}

TYPED_TEST(StoreTest, ListPagesAreConsistentWithTheFirstPage) {
  for (const char* n : {"a", "b", "c", "d", "e"}) this->MustCreate(kPods, Pod("default", n));
  ListOptions page;
  page.limit = 2;
  auto first = this->store_->List(kPods, page);
  ASSERT_TRUE(first.ok());
  EXPECT_THAT(Names(*first), ElementsAre("default/a", "default/b"));
  EXPECT_EQ(first->revision, 5);
  ASSERT_FALSE(first->continue_token.empty());
  EXPECT_EQ(first->remaining_item_count, 3);

  // Changes after the first page: d deleted, c modified, "bb" and "f" created.
  ASSERT_TRUE(this->store_->Delete({kPods, "default", "d"}).ok());
  api::Object c = *this->store_->Get({kPods, "default", "c"});
  c["spec"]["x"] = 99;
  ASSERT_TRUE(this->store_->Update(kPods, c).ok());
  this->MustCreate(kPods, Pod("default", "bb"));
  this->MustCreate(kPods, Pod("default", "f"));

  page.continue_token = first->continue_token;
  auto second = this->store_->List(kPods, page);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_THAT(Names(*second), ElementsAre("default/c", "default/d"));
  EXPECT_EQ(second->revision, 5);
  EXPECT_EQ((*second->items[0])["spec"]["x"], 1);  // c as of revision 5
  EXPECT_EQ(api::ResourceVersion(*second->items[0]), "3");
  page.continue_token = second->continue_token;
  auto third = this->store_->List(kPods, page);
  EXPECT_EQ(second->remaining_item_count, 1);
  EXPECT_THAT(Names(*third), ElementsAre("default/e"));
  EXPECT_TRUE(third->continue_token.empty());
  EXPECT_EQ(third->remaining_item_count, std::nullopt);

  // The latest state, for comparison.
  EXPECT_THAT(Names(*this->store_->List(kPods, {})),
              ElementsAre("default/a", "default/b", "default/bb", "default/c", "default/e", "default/f"));

  // An explicit revision reads that state too.
  ListOptions at;
  at.revision = 6;  // after d's deletion only
  EXPECT_THAT(Names(*this->store_->List(kPods, at)),
              ElementsAre("default/a", "default/b", "default/c", "default/e"));
  at.revision = 100;
  EXPECT_EQ(this->store_->List(kPods, at).status().code(), Code::kTimeout);
}

// remainingItemCount on every page equals what the later pages return, in a namespace and
// across namespaces, with creations and deletions before and after the cursor between
// pages (it is computed from the scope's size at the list's revision, not by counting).
TYPED_TEST(StoreTest, RemainingItemCountIsWhatTheLaterPagesReturn) {
  for (int i = 0; i < 12; ++i) {
    this->MustCreate(kPods, Pod(i % 3 ? "a" : "b", "p" + std::to_string(10 + i)));
  }
  for (const std::string ns : {"a", ""}) {
    ListOptions page;
    page.ns = ns;
    page.limit = 2;
    std::vector<std::optional<int64_t>> said;
    std::vector<size_t> got;
    int writes = 0;
    do {
      auto p = this->store_->List(kPods, page);
      ASSERT_TRUE(p.ok()) << p.status();
      got.push_back(p->items.size());
      said.push_back(p->remaining_item_count);
      page.continue_token = p->continue_token;
      // Between pages: one object before the cursor goes, one after it comes.
      const std::string n = std::to_string(writes++);
      this->MustCreate(kPods, Pod(ns.empty() ? "c" : ns, "z" + n));
      (void)this->store_->Delete({kPods, ns.empty() ? "a" : ns, "p1" + n});
    } while (!page.continue_token.empty());
    size_t later = 0;
    for (size_t i = got.size(); i-- > 0;) {
      if (i + 1 < got.size()) {
        EXPECT_EQ(said[i], static_cast<int64_t>(later)) << "ns " << ns << " page " << i;
      } else {
        EXPECT_EQ(said[i], std::nullopt);
      }
      later += got[i];
    }
  }
}

// etcd's --max-request-bytes: a create or update whose object is larger than
// max_object_bytes (1.5 MiB by default) is refused with etcd's error and writes nothing.
TYPED_TEST(StoreTest, ObjectsLargerThanTheLimitAreNotWritten) {
  EXPECT_EQ(StoreOptions().max_object_bytes, 1536u * 1024u);
  StoreOptions small;
  small.max_object_bytes = 4096;
  this->Open(small);
  auto too_large = [](const Status& s) {
    EXPECT_EQ(s.code(), Code::kUnknown);
    EXPECT_EQ(s.message(), "etcdserver: request is too large");
  };
  too_large(this->store_->Create(kPods, Pod("default", "big", {{"x", std::string(4096, 'x')}})).status());
  api::Object a = this->MustCreate(kPods, Pod("default", "a", {{"x", std::string(3000, 'x')}}));
  api::Object grown = a;
  grown["spec"]["y"] = std::string(1000, 'y');
  too_large(this->store_->Update(kPods, grown).status());
  too_large(this->store_
                ->GuaranteedUpdate({kPods, "default", "a"},
                                   [](const api::Object& current) -> StatusOr<api::Object> {
                                     api::Object next = current;
                                     next["spec"]["z"] = std::string(2000, 'z');
                                     return next;
                                   })
                .status());
  EXPECT_EQ(*this->store_->Get({kPods, "default", "a"}), a);
  EXPECT_EQ(this->store_->CurrentRevision(), 1);
  // Without a limit.
  StoreOptions unlimited;
  unlimited.max_object_bytes = 0;
  this->Open(unlimited);
  EXPECT_TRUE(this->store_->Create(kPods, Pod("default", "huge", {{"x", std::string(2 << 20, 'x')}})).ok());
}

TYPED_TEST(StoreTest, ContinueAfterCompactionIsGone) {
  StoreOptions small;
  small.history_limit = 3;
  this->Open(small);
  for (const char* n : {"a", "b", "c", "d"}) this->MustCreate(kPods, Pod("default", n));
  ListOptions page;
  page.limit = 2;
  auto first = *this->store_->List(kPods, page);
  // Within the history: still served.
  this->MustCreate(kPods, Pod("default", "e"));
  page.continue_token = first.continue_token;
  EXPECT_TRUE(this->store_->List(kPods, page).ok());
  // Three more writes push revision 4's successors out of the history.
  for (const char* n : {"f", "g", "h"}) this->MustCreate(kPods, Pod("default", n));
  auto expired = this->store_->List(kPods, page);
  EXPECT_EQ(expired.status().code(), Code::kGone);
  EXPECT_EQ(expired.status().message(), ContinueExpiredMessage());
  // The inconsistent token resumes after "b" at the latest revision.
  page.continue_token = InconsistentContinue(first.continue_token);
  page.limit = 0;
  auto rest = this->store_->List(kPods, page);
  ASSERT_TRUE(rest.ok());
  EXPECT_THAT(Names(*rest), ElementsAre("default/c", "default/d", "default/e", "default/f",
                                        "default/g", "default/h"));
  EXPECT_EQ(rest->revision, 8);

  ListOptions old;
  old.revision = 2;
  EXPECT_EQ(this->store_->List(kPods, old).status().message(),
            "The resourceVersion for the provided list is too old.");
  page.continue_token = "not-a-token!";
  EXPECT_EQ(this->store_->List(kPods, page).status().code(), Code::kBadRequest);
}

TYPED_TEST(StoreTest, ListPagesWithPredicateAndNamespace) {
  for (int i = 0; i < 10; ++i) {
    api::Object p = Pod(i % 2 ? "odd" : "even", "p" + std::to_string(i));
    p["metadata"]["labels"] = {{"big", i >= 4 ? "yes" : "no"}};
    this->MustCreate(kPods, p);
  }
  ListOptions o;
  o.ns = "even";
  o.limit = 2;
  o.predicate = [](const api::Object& obj) { return obj["metadata"]["labels"]["big"] == "yes"; };
  std::vector<std::string> all;
  int pages = 0;
  do {
    auto page = this->store_->List(kPods, o);
    ASSERT_TRUE(page.ok());
    ++pages;
    for (auto& n : Names(*page)) all.push_back(n);
    EXPECT_EQ(page->remaining_item_count, std::nullopt);  // unknown with a predicate
    o.continue_token = page->continue_token;
  } while (!o.continue_token.empty());
  EXPECT_THAT(all, ElementsAre("even/p4", "even/p6", "even/p8"));
  EXPECT_EQ(pages, 2);  // no empty trailing page: a token is only handed out when more match
}

// A list whose predicate pins an indexed label visits only the objects carrying that
// value (the predicate runs on them alone), answers as a full scan would, also at an
// older revision (relabelled and deleted objects come back from the history), and after a
// reopen (the index is rebuilt from what was recovered).
TYPED_TEST(StoreTest, ListsPinningAnIndexedLabelVisitOnlyItsObjects) {
  const std::string key = "batch.kubernetes.io/controller-uid";
  auto labelled = [&](const std::string& name, const std::string& uid) {
    api::Object p = Pod("ns", name);
    if (!uid.empty()) p["metadata"]["labels"] = {{key, uid}, {"other", "x"}};
    return p;
  };
  for (int i = 0; i < 20; ++i) this->MustCreate(kPods, labelled("bulk" + std::to_string(i), i % 2 ? "" : "b"));
  this->MustCreate(kPods, labelled("a1", "a"));
  api::Object a2 = this->MustCreate(kPods, labelled("a2", "a"));
  api::Object a3 = this->MustCreate(kPods, labelled("a3", "a"));
  const int64_t before = std::stoll(api::ResourceVersion(a3));
  a2["metadata"]["labels"][key] = "b";  // leaves uid a
  ASSERT_TRUE(this->store_->Update(kPods, a2).ok());
  ASSERT_TRUE(this->store_->Delete({kPods, "ns", "a3"}, {}).ok());
  this->MustCreate(kPods, labelled("a4", "a"));

  int visited = 0;
  auto list = [&](int64_t revision) {
    ListOptions o;
    o.ns = "ns";
    o.revision = revision;
    o.predicate = [&](const api::Object& obj) {
      ++visited;
      return api::NestedField(obj, {"metadata", "labels", key}) == "a";
    };
    o.required_label = [&](std::string_view k) -> std::optional<std::string> {
      return k == key ? std::optional<std::string>("a") : std::nullopt;
    };
    auto page = this->store_->List(kPods, o);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    return page.ok() ? Names(*page) : std::vector<std::string>{};
  };
  EXPECT_THAT(list(0), ElementsAre("ns/a1", "ns/a4"));
  EXPECT_EQ(visited, 2);  // not the 24 pods of the namespace
  EXPECT_THAT(list(before), ElementsAre("ns/a1", "ns/a2", "ns/a3"));

  this->Open(this->options_);  // the SQLite backend recovers from disk; memory starts empty
  visited = 0;
  auto again = list(0);
  if (std::is_same_v<TypeParam, SqliteBackend>) {
    EXPECT_THAT(again, ElementsAre("ns/a1", "ns/a4"));
    EXPECT_EQ(visited, 2);
  }
}

// ---------------------------------------------------------------- watches

std::vector<std::string> Drain(Watcher& w) {
  std::vector<std::string> out;
  while (true) {
    auto ev = w.TryNext();
    if (!ev.ok()) {
      out.push_back("closed: " + ev.status().ToString());
      break;
    }
    if (!ev->has_value()) break;
    const WatchEvent& e = **ev;
    out.push_back(std::string(EventTypeName(e.type)) + " " + api::Name(*e.object) + "@" +
                  api::ResourceVersion(*e.object));
  }
  return out;
}

TYPED_TEST(StoreTest, WatchFromNowAndFromRevision) {
  api::Object a = this->MustCreate(kPods, Pod("default", "a"));  // rev 1
  auto now = *this->store_->Watch(kPods, {});
  EXPECT_EQ(now->StartRevision(), 1);
  a["spec"]["x"] = 2;
  ASSERT_TRUE(this->store_->Update(kPods, a).ok());                 // rev 2
  this->MustCreate(kQueues, Queue("q"));                            // rev 3, other resource
  ASSERT_TRUE(this->store_->Delete({kPods, "default", "a"}).ok());  // rev 4
  EXPECT_THAT(Drain(*now), ElementsAre("MODIFIED a@2", "DELETED a@4"));
  EXPECT_EQ(now->ProgressRevision(), 4);

  auto replay = *this->store_->Watch(kPods, From(1));
  EXPECT_THAT(Drain(*replay), ElementsAre("MODIFIED a@2", "DELETED a@4"));
  EXPECT_THAT(Drain(**this->store_->Watch(kPods, From(3))), ElementsAre("DELETED a@4"));
  auto queues_now = *this->store_->Watch(kQueues, {});
  EXPECT_TRUE(Drain(*queues_now).empty());
  auto queues_all = *this->store_->Watch(kQueues, From(0));
  EXPECT_THAT(Drain(*queues_all), ElementsAre("ADDED q@3")) << "revision 0 is a revision, not 'now'";
  EXPECT_THAT(Drain(**this->store_->Watch(kQueues, From(2))), ElementsAre("ADDED q@3"));
}

// A list-then-watch (an informer, a watch without resourceVersion) misses
// nothing written between the two calls, whatever the list's revision: 0 on a
// new, empty store included (where "from now" would skip those writes).
TYPED_TEST(StoreTest, AWatchFromAListsRevisionGetsTheWritesBetweenThem) {
  for (int before : {0, 1, 3}) {
    SCOPED_TRACE("objects before the list: " + std::to_string(before));
    TypeParam backend;  // a new, empty store each time
    std::unique_ptr<Store> store = backend.Open(this->clock_, {});
    for (int i = 0; i < before; ++i) ASSERT_TRUE(store->Create(kPods, Pod("default", "old-" + std::to_string(i))).ok());
    auto list = store->List(kPods, {});
    ASSERT_TRUE(list.ok());
    ASSERT_EQ(list->revision, before);
    ASSERT_EQ(list->items.size(), static_cast<size_t>(before));
    ASSERT_TRUE(store->Create(kQueues, Queue("between")).ok());
    ASSERT_TRUE(store->Create(kPods, Pod("default", "between")).ok());
    auto w = store->Watch(kPods, From(list->revision));
    ASSERT_TRUE(w.ok());
    EXPECT_EQ((*w)->StartRevision(), before);
    EXPECT_THAT(Drain(**w), ElementsAre("ADDED between@" + std::to_string(before + 2)));
  }
}

TYPED_TEST(StoreTest, WatchFromCompactedRevisionIsGone) {
  StoreOptions small;
  small.history_limit = 2;
  this->Open(small);
  for (const char* n : {"a", "b", "c", "d"}) this->MustCreate(kPods, Pod("default", n));
  // History holds revisions 3 and 4: one can watch from 2 onwards.
  auto ok = this->store_->Watch(kPods, From(2));
  ASSERT_TRUE(ok.ok());
  EXPECT_THAT(Drain(**ok), ElementsAre("ADDED c@3", "ADDED d@4"));
  auto gone = this->store_->Watch(kPods, From(1));
  EXPECT_EQ(gone.status().code(), Code::kGone);
  EXPECT_EQ(gone.status().message(), "too old resource version: 1 (2)");
}

TYPED_TEST(StoreTest, WatchNamespaceAndSelectorTransitions) {
  WatchOptions o;
  o.ns = "default";
  o.predicate = [](const api::Object& obj) {
    auto l = obj["metadata"].find("labels");
    return l != obj["metadata"].end() && l->value("app", "") == "web";
  };
  auto w = *this->store_->Watch(kPods, o);
  api::Object p = Pod("default", "p");
  p["metadata"]["labels"] = {{"app", "web"}};
  p = this->MustCreate(kPods, p);                        // 1 ADDED
  api::Object elsewhere = Pod("other", "p");
  elsewhere["metadata"]["labels"] = {{"app", "web"}};
  this->MustCreate(kPods, elsewhere);                    // 2 other namespace
  p["metadata"]["labels"]["app"] = "db";
  p = *this->store_->Update(kPods, p);                   // 3 leaves the selector: DELETED
  p["spec"]["x"] = 7;
  p = *this->store_->Update(kPods, p);                   // 4 not selected either way
  p["metadata"]["labels"]["app"] = "web";
  p = *this->store_->Update(kPods, p);                   // 5 enters: ADDED
  ASSERT_TRUE(this->store_->Delete({kPods, "default", "p"}).ok());  // 6 DELETED
  EXPECT_THAT(Drain(*w), ElementsAre("ADDED p@1", "DELETED p@3", "ADDED p@5", "DELETED p@6"));

  // The DELETED for leaving the selection carries the old content.
  o.from_revision = 2;
  auto replay = *this->store_->Watch(kPods, o);
  auto ev = replay->TryNext();
  ASSERT_TRUE(ev.ok() && ev->has_value());
  EXPECT_EQ((*ev)->type, EventType::kDeleted);
  EXPECT_EQ((*(*ev)->object)["metadata"]["labels"]["app"], "web");
  EXPECT_EQ(api::ResourceVersion(*(*ev)->object), "3");
}

TYPED_TEST(StoreTest, SlowWatcherIsClosedAndWritersGoOn) {
  WatchOptions o;
  o.buffer_limit = 3;
  auto slow = *this->store_->Watch(kPods, o);
  auto fast = *this->store_->Watch(kPods, {});
  for (int i = 0; i < 5; ++i) this->MustCreate(kPods, Pod("default", "p" + std::to_string(i)));
  EXPECT_EQ(this->store_->CurrentRevision(), 5);
  auto ev = slow->TryNext();
  EXPECT_EQ(ev.status().code(), Code::kGone);
  EXPECT_EQ(Drain(*fast).size(), 5u);  // the default buffer is large
  // The client relists and watches again from the list's revision.
  auto list = *this->store_->List(kPods, {});
  auto again = *this->store_->Watch(kPods, From(list.revision, 3));
  this->MustCreate(kPods, Pod("default", "late"));
  EXPECT_THAT(Drain(*again), ElementsAre("ADDED late@6"));
}

TYPED_TEST(StoreTest, NotifyCallbackAndBlockingNext) {
  std::atomic<int> notified{0};
  WatchOptions o;
  o.notify = [&] { ++notified; };
  auto w = *this->store_->Watch(kPods, o);
  this->MustCreate(kPods, Pod("default", "a"));
  this->MustCreate(kPods, Pod("default", "b"));
  EXPECT_EQ(notified.load(), 1);  // once: the buffer was not drained in between
  EXPECT_EQ(Drain(*w).size(), 2u);
  this->MustCreate(kPods, Pod("default", "c"));
  EXPECT_EQ(notified.load(), 2);

  // A thread blocked in Next wakes up for a write.
  auto blocking = *this->store_->Watch(kPods, {});
  std::string seen;
  std::thread reader([&] {
    auto ev = blocking->Next(std::chrono::seconds(60));
    if (ev.ok() && ev->has_value()) seen = api::Name(*(*ev)->object);
  });
  this->MustCreate(kPods, Pod("default", "d"));
  reader.join();
  EXPECT_EQ(seen, "d");

  // Stop from inside the callback is allowed; no callback after Stop.
  Watcher* self = nullptr;
  std::atomic<int> calls{0};
  WatchOptions stopping;
  stopping.notify = [&] {
    ++calls;
    self->Stop();
  };
  auto stopper = *this->store_->Watch(kPods, stopping);
  self = stopper.get();
  this->MustCreate(kPods, Pod("default", "e"));
  this->MustCreate(kPods, Pod("default", "f"));
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(stopper->TryNext().status().code(), Code::kUnavailable);
}

TYPED_TEST(StoreTest, ProgressRevisionForBookmarks) {
  auto w = *this->store_->Watch(kPods, InNamespace("default"));
  this->MustCreate(kPods, Pod("default", "a"));  // 1
  this->MustCreate(kPods, Pod("other", "b"));    // 2 not for this watcher
  EXPECT_EQ(w->ProgressRevision(), 0);            // event 1 still buffered
  EXPECT_EQ(Drain(*w).size(), 1u);
  EXPECT_EQ(w->ProgressRevision(), 2);
  this->MustCreate(kQueues, Queue("q"));          // 3 other resource
  EXPECT_EQ(w->ProgressRevision(), 3);
  EXPECT_EQ(this->store_->CurrentRevision(), 3);
}

TYPED_TEST(StoreTest, WatchersAreClosedWhenTheStoreCloses) {
  auto w = *this->store_->Watch(kPods, {});
  this->MustCreate(kPods, Pod("default", "a"));
  this->store_.reset();
  EXPECT_THAT(Drain(*w), ElementsAre("ADDED a@1", HasSubstr("ServiceUnavailable")));
}

// -------------------------------------------------------------- durability

// Reopening: only SqliteStore keeps anything across instances.
TEST(SqliteStoreTest, ReopenKeepsObjectsAndRevision) {
  FakeClock clock;
  SqliteBackend backend;
  std::unique_ptr<Store> store = backend.Open(clock, {});
  auto create = [&](const api::GroupResource& r, api::Object obj) {
    auto c = store->Create(r, std::move(obj));
    BERTH_CHECK_OK(c.status());
    return *c;
  };
  api::Object a = create(kPods, Pod("default", "a"));
  api::Object q = create(kQueues, Queue("cq"));
  create(kPods, Pod("default", "b"));
  a["status"] = {{"phase", "Running"}};
  a = *store->Update(kPods, a);
  ASSERT_TRUE(store->Delete({kPods, "default", "b"}).ok());  // revision 5 is a delete
  ASSERT_EQ(store->CurrentRevision(), 5);

  store.reset();
  store = backend.Open(clock, {});
  EXPECT_EQ(store->CurrentRevision(), 5);
  EXPECT_EQ(*store->Get({kPods, "default", "a"}), a);
  EXPECT_EQ(*store->Get({kQueues, "", "cq"}), q);
  EXPECT_EQ(store->Get({kPods, "default", "b"}).status().code(), Code::kNotFound);
  EXPECT_THAT(Names(*store->List(kPods, {})), ElementsAre("default/a"));
  // History does not survive: old watches are gone, new ones work.
  EXPECT_EQ(store->Watch(kPods, From(1)).status().message(), "too old resource version: 1 (5)");
  auto w = *store->Watch(kPods, From(5));
  EXPECT_EQ(Rev(create(kPods, Pod("default", "c"))), 6);
  EXPECT_THAT(Drain(*w), ElementsAre("ADDED c@6"));
}

TEST(SqliteStoreTest, SecondOpenerOfTheSameFileIsRefused) {
  std::string dir = TempDir();
  FakeClock clock;
  auto first = SqliteStore::Open(dir + "/db", clock);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = SqliteStore::Open(dir + "/db", clock);
  EXPECT_EQ(second.status().code(), Code::kUnavailable);
  EXPECT_THAT(second.status().message(), HasSubstr("locked"));
  first->reset();
  EXPECT_TRUE(SqliteStore::Open(dir + "/db", clock).ok());
  std::filesystem::remove_all(dir);
}

TEST(SqliteStoreTest, KeyEncodingRoundTrips) {
  for (const ObjectKey& key : {ObjectKey{{"", "pods"}, "default", "p-1.x"},
                               ObjectKey{{"kueue.x-k8s.io", "clusterqueues"}, "", "cq"}}) {
    ObjectKey back;
    ASSERT_TRUE(SqliteStore::DecodeKey(SqliteStore::EncodeKey(key), &back));
    EXPECT_EQ(back, key);
  }
  ObjectKey k;
  EXPECT_FALSE(SqliteStore::DecodeKey("only/three/parts", &k));
  EXPECT_FALSE(SqliteStore::DecodeKey("g/r/ns/", &k));
}

}  // namespace
}  // namespace berth::store
