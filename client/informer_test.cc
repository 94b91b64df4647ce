#include "client/informer.h"

#include <atomic>
#include <condition_variable>
#include <gtest/gtest.h>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "client/testing/fake_client.h"

namespace berth::client {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeClient;

const GroupVersionResource kWorkloads{"kueue.x-k8s.io", "v1beta2", "workloads"};
// Generous real-time bound for waits that synchronise with informer threads;
// a passing test never waits for it.
constexpr auto kWait = seconds(20);

api::Object Workload(const std::string& name, const std::string& queue = "lq") {
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "Workload"},
          {"metadata", {{"name", name}, {"labels", {{"kueue.x-k8s.io/queue-name", queue}}}}},
          {"spec", {{"queueName", queue}}}};
}

// Records handler calls as strings, e.g. "add team-a/w1 initial",
// "update team-a/w1 3->4", "delete team-a/w2 unknown".
class Recorder {
 public:
  ResourceEventHandler Handler() {
    ResourceEventHandler h;
    h.on_add = [this](const ObjectPtr& o, bool initial) {
      Record("add " + MetaNamespaceKey(*o) + (initial ? " initial" : ""));
    };
    h.on_update = [this](const ObjectPtr& old_obj, const ObjectPtr& new_obj) {
      Record("update " + MetaNamespaceKey(*new_obj) + " " + api::ResourceVersion(*old_obj) + "->" +
             api::ResourceVersion(*new_obj));
    };
    h.on_delete = [this](const ObjectPtr& o, bool unknown) {
      Record("delete " + MetaNamespaceKey(*o) + (unknown ? " unknown" : ""));
    };
    return h;
  }
  // Waits until at least n events were recorded; returns them all.
  std::vector<std::string> WaitFor(size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_for(l, kWait, [&] { return events_.size() >= n; });
    return events_;
  }
  std::vector<std::string> Take(size_t n) {
    std::vector<std::string> all = WaitFor(n);
    std::lock_guard<std::mutex> l(mu_);
    events_.erase(events_.begin(), events_.begin() + std::min(n, events_.size()));
    return all.size() > n ? std::vector<std::string>(all.begin(), all.begin() + n) : all;
  }

 private:
  void Record(std::string e) {
    std::lock_guard<std::mutex> l(mu_);
    events_.push_back(std::move(e));
    cv_.notify_all();
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> events_;
};

// Waits (real time, bounded) until the informer has an open watch.
bool WaitForActiveWatch(const FakeClient& fake) {
  auto deadline = std::chrono::steady_clock::now() + kWait;
  while (fake.ActiveWatches() == 0) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

InformerOptions FastOptions() {
  InformerOptions o;
  o.clock_poll_interval = milliseconds(1);
  o.min_backoff = milliseconds(1);
  o.max_backoff = milliseconds(10);
  o.page_size = 2;  // exercise continue tokens
  return o;
}

std::string Rv(const api::Object& o) { return api::ResourceVersion(o); }

TEST(InformerTest, InitialListThenWatchEventsInOrder) {
  FakeClock clock;
  FakeClient fake(clock);
  const ResourceRef ref = kWorkloads.Namespace("team-a");
  for (const char* n : {"w3", "w1", "w2"}) ASSERT_TRUE(fake.Create(ref, Workload(n)).ok());
  ASSERT_TRUE(fake.Create(kWorkloads.Namespace("team-b"), Workload("other")).ok());

  Informer informer(fake, ref, clock, FastOptions());
  Recorder rec;
  informer.AddEventHandler(rec.Handler());
  EXPECT_FALSE(informer.HasSynced());
  informer.Start();
  ASSERT_TRUE(informer.WaitForCacheSync(kWait));
  // Synced means the initial adds were delivered already: no wait needed.
  EXPECT_EQ(rec.Take(3), (std::vector<std::string>{"add team-a/w1 initial", "add team-a/w2 initial",
                                                    "add team-a/w3 initial"}));
  EXPECT_EQ(informer.GetIndexer().ListKeys(), (std::vector<std::string>{"team-a/w1", "team-a/w2", "team-a/w3"}));
  EXPECT_EQ(fake.CallCount("list"), 2);  // two pages of page_size 2

  api::Object w4 = *fake.Create(ref, Workload("w4"));
  api::Object w1 = *fake.Get(ref, "w1");
  api::Object w1_old = w1;
  w1["spec"]["queueName"] = "lq2";
  w1 = *fake.Update(ref, w1);
  ASSERT_TRUE(fake.Delete(ref, "w2").ok());
  const int64_t rv_after_delete = fake.store().CurrentRevision();
  ASSERT_TRUE(fake.Create(kWorkloads.Namespace("team-b"), Workload("ignored")).ok());  // other namespace
  EXPECT_EQ(rec.Take(3), (std::vector<std::string>{"add team-a/w4", "update team-a/w1 " + Rv(w1_old) + "->" + Rv(w1),
                                                    "delete team-a/w2"}));
  EXPECT_EQ(informer.GetIndexer().ListKeys(), (std::vector<std::string>{"team-a/w1", "team-a/w3", "team-a/w4"}));
  EXPECT_EQ(informer.GetIndexer().Get("team-a", "w1")->at("spec").at("queueName"), "lq2");
  // The namespaced watch never saw the team-b write (no bookmarks from the fake).
  EXPECT_EQ(informer.LastSyncResourceVersion(), std::to_string(rv_after_delete));
  EXPECT_EQ(Rv(w4), std::to_string(std::stoll(Rv(w1)) - 1));
  EXPECT_EQ(informer.ListCount(), 1);
}

// A handler that throws on an object (e.g. a key function reading an odd field) is
// logged; the other handlers get the object and later events still flow.
TEST(InformerTest, AHandlerThatThrowsDoesNotStopTheDispatch) {
  FakeClock clock;
  FakeClient fake(clock);
  const ResourceRef ref = kWorkloads.Namespace("team-a");
  ASSERT_TRUE(fake.Create(ref, Workload("odd")).ok());
  Informer informer(fake, ref, clock, FastOptions());
  ResourceEventHandler thrower;
  thrower.on_add = [](const ObjectPtr& o, bool) {
    if (api::Name(*o) == "odd") throw std::runtime_error("type_error");
  };
  informer.AddEventHandler(thrower);
  Recorder rec;
  informer.AddEventHandler(rec.Handler());
  informer.Start();
  ASSERT_TRUE(informer.WaitForCacheSync(kWait));
  EXPECT_EQ(rec.Take(1), (std::vector<std::string>{"add team-a/odd initial"}));
  ASSERT_TRUE(fake.Create(ref, Workload("next")).ok());
  EXPECT_EQ(rec.Take(1), (std::vector<std::string>{"add team-a/next"}));
}

TEST(InformerTest, ReconnectsAfterAClosedWatchWithoutRelisting) {
  FakeClock clock;
  FakeClient fake(clock);
  const ResourceRef ref = kWorkloads.Namespace("ns");
  ASSERT_TRUE(fake.Create(ref, Workload("a")).ok());
  Informer informer(fake, ref, clock, FastOptions());
  Recorder rec;
  informer.AddEventHandler(rec.Handler());
  informer.Start();
  ASSERT_TRUE(informer.WaitForCacheSync(kWait));
  rec.Take(1);

  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(WaitForActiveWatch(fake));
    fake.CloseWatches();  // as a server ending the watch after timeoutSeconds
    std::string name = "after-close-" + std::to_string(round);
    ASSERT_TRUE(fake.Create(ref, Workload(name)).ok());
    EXPECT_EQ(rec.Take(1), std::vector<std::string>{"add ns/" + name});
  }
  EXPECT_EQ(informer.ListCount(), 1);
  EXPECT_GE(fake.CallCount("watch"), 4);
  EXPECT_EQ(informer.GetIndexer().Size(), 4u);
}

TEST(InformerTest, RetriesAFailedListWithBackoff) {
  FakeClock clock;
  FakeClient fake(clock);
  const ResourceRef ref = kWorkloads.Namespace("ns");
  ASSERT_TRUE(fake.Create(ref, Workload("a")).ok());
  fake.InjectError("list", UnavailableError("connection refused"));
  fake.InjectError("list", UnavailableError("connection refused"));
  Informer informer(fake, ref, clock, FastOptions());
  informer.Start();
  ASSERT_TRUE(informer.WaitForCacheSync(kWait));
  EXPECT_EQ(fake.CallCount("list"), 3);
  EXPECT_EQ(informer.GetIndexer().ListKeys(), std::vector<std::string>{"ns/a"});
}

// Forwards to a FakeClient; Watch blocks while the gate is closed, so a test
// can change the store while the informer is between two watches.
class GatedClient final : public Client {
 public:
  explicit GatedClient(FakeClient& fake) : fake_(fake) {}
  void Close() {
    std::lock_guard<std::mutex> l(mu_);
    open_ = false;
  }
  void Open() {
    std::lock_guard<std::mutex> l(mu_);
    open_ = true;
    cv_.notify_all();
  }
  // Waits until a Watch call is blocked at the gate.
  bool WaitForBlockedWatch() {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, kWait, [&] { return blocked_ > 0; });
  }

  StatusOr<api::Object> Get(const ResourceRef& r, const std::string& n, const GetOptions& o) override {
    return fake_.Get(r, n, o);
  }
  StatusOr<ObjectList> List(const ResourceRef& r, const ListOptions& o) override { return fake_.List(r, o); }
  StatusOr<api::Object> Create(const ResourceRef& r, const api::Object& obj, const CreateOptions& o) override {
    return fake_.Create(r, obj, o);
  }
  StatusOr<api::Object> Update(const ResourceRef& r, const api::Object& obj, const UpdateOptions& o) override {
    return fake_.Update(r, obj, o);
  }
  StatusOr<api::Object> UpdateStatus(const ResourceRef& r, const api::Object& obj,
                                     const UpdateOptions& o) override {
    return fake_.UpdateStatus(r, obj, o);
  }
  StatusOr<api::Object> Patch(const ResourceRef& r, const std::string& n, PatchType t, std::string_view p,
                              const PatchOptions& o) override {
    return fake_.Patch(r, n, t, p, o);
  }
  Status Delete(const ResourceRef& r, const std::string& n, const DeleteOptions& o) override {
    return fake_.Delete(r, n, o);
  }
  StatusOr<std::unique_ptr<WatchStream>> Watch(const ResourceRef& r, const WatchOptions& o) override {
    {
      std::unique_lock<std::mutex> l(mu_);
      ++blocked_;
      cv_.notify_all();
      cv_.wait(l, [&] { return open_; });
      --blocked_;
      watched_from_.push_back(o.resource_version);
    }
    return fake_.Watch(r, o);
  }
  std::vector<std::string> watched_from() {
    std::lock_guard<std::mutex> l(mu_);
    return watched_from_;
  }

 private:
  FakeClient& fake_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int blocked_ = 0;
  std::vector<std::string> watched_from_;
};

TEST(InformerTest, RelistsAfterGoneWithSyntheticDeletesForVanishedObjects) {
  FakeClock clock;
  store::StoreOptions small_history;
  small_history.history_limit = 3;
  FakeClient fake(clock, small_history);
  GatedClient client(fake);
  const ResourceRef ref = kWorkloads.Namespace("ns");
  for (const char* n : {"a", "b", "c"}) ASSERT_TRUE(fake.Create(ref, Workload(n)).ok());

  Informer informer(client, ref, clock, FastOptions());
  Recorder rec;
  informer.AddEventHandler(rec.Handler());
  informer.Start();
  ASSERT_TRUE(informer.WaitForCacheSync(kWait));
  rec.Take(3);
  const std::string listed_rv = informer.LastSyncResourceVersion();

  // Disconnect: the informer's next watch waits at the gate.
  ASSERT_TRUE(WaitForActiveWatch(fake));
  client.Close();
  fake.CloseWatches();
  ASSERT_TRUE(client.WaitForBlockedWatch());
  // Meanwhile: a changes, b is deleted, d appears and changes until the
  // history no longer reaches back to listed_rv; c is untouched.
  api::Object a = *fake.Get(ref, "a");
  api::Object a_old = a;
  a["spec"]["queueName"] = "changed";
  a = *fake.Update(ref, a);
  ASSERT_TRUE(fake.Delete(ref, "b").ok());
  api::Object d = *fake.Create(ref, Workload("d"));
  for (int i = 0; i < 5; ++i) {
    d["spec"]["round"] = i;
    d = *fake.Update(ref, d);
  }
  client.Open();

  // The watch from listed_rv answers 410; the informer relists and reports
  // the difference: a updated, d added, b deleted with unknown final state.
  EXPECT_EQ(rec.Take(3), (std::vector<std::string>{"update ns/a " + Rv(a_old) + "->" + Rv(a), "add ns/d",
                                                    "delete ns/b unknown"}));
  EXPECT_EQ(informer.ListCount(), 2);
  EXPECT_EQ(informer.GetIndexer().ListKeys(), (std::vector<std::string>{"ns/a", "ns/c", "ns/d"}));
  EXPECT_EQ(informer.GetIndexer().Get("ns", "d")->at("spec").at("round"), 4);
  ASSERT_GE(client.watched_from().size(), 2u);
  EXPECT_EQ(client.watched_from()[0], listed_rv);
  EXPECT_EQ(client.watched_from()[1], listed_rv);  // the one that got 410

  // And it keeps watching from the relist.
  ASSERT_TRUE(fake.Create(ref, Workload("e")).ok());
  EXPECT_EQ(rec.Take(1), std::vector<std::string>{"add ns/e"});
}

TEST(InformerTest, IndexersFollowTheCache) {
  FakeClock clock;
  FakeClient fake(clock);
  const ResourceRef ref = kWorkloads;  // all namespaces
  ASSERT_TRUE(fake.Create(kWorkloads.Namespace("a"), Workload("w1", "q1")).ok());
  ASSERT_TRUE(fake.Create(kWorkloads.Namespace("b"), Workload("w2", "q1")).ok());
  ASSERT_TRUE(fake.Create(kWorkloads.Namespace("b"), Workload("w3", "q2")).ok());
  Informer informer(fake, ref, clock, FastOptions());
  ASSERT_TRUE(informer.AddIndexer("queue", LabelIndexFunc("kueue.x-k8s.io/queue-name")).ok());
  ASSERT_TRUE(informer.AddIndexer(kNamespaceIndex, NamespaceIndexFunc).ok());
  Recorder rec;
  informer.AddEventHandler(rec.Handler());
  informer.Start();
  ASSERT_TRUE(informer.WaitForCacheSync(kWait));
  EXPECT_EQ(*informer.GetIndexer().IndexKeys("queue", "q1"), (std::vector<std::string>{"a/w1", "b/w2"}));
  EXPECT_EQ(*informer.GetIndexer().IndexKeys(kNamespaceIndex, "b"), (std::vector<std::string>{"b/w2", "b/w3"}));
  rec.Take(3);

  api::Object w2 = *fake.Get(kWorkloads.Namespace("b"), "w2");
  w2["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "q2";
  ASSERT_TRUE(fake.Update(kWorkloads.Namespace("b"), w2).ok());
  rec.Take(1);
  EXPECT_EQ(*informer.GetIndexer().IndexKeys("queue", "q1"), std::vector<std::string>{"a/w1"});
  EXPECT_EQ(*informer.GetIndexer().IndexKeys("queue", "q2"), (std::vector<std::string>{"b/w2", "b/w3"}));
}

TEST(InformerTest, LateHandlerGetsTheCacheFirstAndResyncFollowsTheFakeClock) {
  FakeClock clock;
  FakeClient fake(clock);
  const ResourceRef ref = kWorkloads.Namespace("ns");
  ASSERT_TRUE(fake.Create(ref, Workload("x")).ok());
  ASSERT_TRUE(fake.Create(ref, Workload("y")).ok());
  InformerOptions options = FastOptions();
  options.resync_period = std::chrono::minutes(10);
  Informer informer(fake, ref, clock, options);
  informer.Start();
  ASSERT_TRUE(informer.WaitForCacheSync(kWait));

  Recorder late;
  informer.AddEventHandler(late.Handler());
  EXPECT_EQ(late.Take(2), (std::vector<std::string>{"add ns/x initial", "add ns/y initial"}));

  std::string rv_x = Rv(*fake.Get(ref, "x"));
  std::string rv_y = Rv(*fake.Get(ref, "y"));
  clock.Advance(std::chrono::minutes(10));
  EXPECT_EQ(late.Take(2), (std::vector<std::string>{"update ns/x " + rv_x + "->" + rv_x,
                                                     "update ns/y " + rv_y + "->" + rv_y}));
  clock.Advance(std::chrono::minutes(10));
  EXPECT_EQ(late.Take(2).size(), 2u);
}

// Handlers run one at a time and see each object's revisions in order, whichever thread
// delivers: watch events the reflector delivers itself (nothing queued before them), a
// late handler's replay, and resyncs the dispatch thread runs while events stream in.
// A watch event that finds nothing queued is delivered on the reflector's thread, not
// handed to the dispatch thread that delivered the LIST (checked while nothing else is due:
// once resyncs run, events queue behind them on the dispatch thread).
TEST(InformerTest, HandlersRunOneAtATimeInOrderWhicheverThreadDelivers) {
  FakeClock clock;
  FakeClient fake(clock);
  const ResourceRef ref = kWorkloads.Namespace("ns");
  ASSERT_TRUE(fake.Create(ref, Workload("w0")).ok());
  InformerOptions options = FastOptions();
  options.resync_period = std::chrono::seconds(1);
  Informer informer(fake, ref, clock, options);

  struct Seen {
    std::mutex mu;
    std::map<std::string, int64_t> last_rv;  // per handler and key
    std::thread::id list_thread;
    int64_t off_dispatch = 0;  // non-initial deliveries on another thread than the LIST's
    int out_of_order = 0;
    int64_t calls = 0;
  };
  Seen seen;
  std::atomic<int> in_handler{0};
  std::atomic<int> overlaps{0};
  auto handler = [&](const std::string& who) {
    auto on = [&, who](const ObjectPtr& obj, bool initial) {
      if (in_handler.fetch_add(1) != 0) overlaps++;
      std::this_thread::yield();
      {
        std::lock_guard<std::mutex> l(seen.mu);
        const int64_t rv = std::stoll(api::ResourceVersion(*obj));
        int64_t& last = seen.last_rv[who + "/" + api::Name(*obj)];
        if (rv < last) seen.out_of_order++;  // a resync repeats the current revision
        last = rv;
        seen.calls++;
        if (initial && who == "first") seen.list_thread = std::this_thread::get_id();
        if (!initial && std::this_thread::get_id() != seen.list_thread) seen.off_dispatch++;
      }
      in_handler.fetch_sub(1);
    };
    ResourceEventHandler h;
    h.on_add = on;
    h.on_update = [on](const ObjectPtr&, const ObjectPtr& obj) { on(obj, false); };
    h.on_delete = [on](const ObjectPtr& obj, bool) { on(obj, false); };
    return h;
  };
  informer.AddEventHandler(handler("first"));
  informer.Start();
  ASSERT_TRUE(informer.WaitForCacheSync(kWait));
  ASSERT_TRUE(WaitForActiveWatch(fake));
  auto wait_delivered = [&] {
    const std::string rv = std::to_string(fake.store().CurrentRevision());
    auto deadline = std::chrono::steady_clock::now() + kWait;
    while (!(informer.LastSyncResourceVersion() == rv && informer.NotificationsDelivered()) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(1));
    }
    return informer.NotificationsDelivered();
  };

  // With nothing else to deliver (no resync due, no late handler), watch events are
  // delivered on the reflector's thread, not the one that delivered the LIST.
  for (int i = 1; i < 5; ++i) ASSERT_TRUE(fake.Create(ref, Workload("w" + std::to_string(i))).ok());
  ASSERT_TRUE(wait_delivered());
  {
    std::lock_guard<std::mutex> l(seen.mu);
    EXPECT_EQ(seen.off_dispatch, 4);
  }

  for (int i = 0; i < 300; ++i) {
    const std::string name = "w" + std::to_string(i % 7);
    auto got = fake.Get(ref, name);
    if (got.ok()) {
      api::Object obj = *got;
      obj["spec"]["queueName"] = "q" + std::to_string(i);
      ASSERT_TRUE(fake.Update(ref, obj).ok());
    } else {
      ASSERT_TRUE(fake.Create(ref, Workload(name)).ok());
    }
    if (i == 100) informer.AddEventHandler(handler("late"));
    if (i % 50 == 0) clock.Advance(std::chrono::seconds(1));  // resyncs on the dispatch thread
  }
  ASSERT_TRUE(wait_delivered());
  informer.Stop();

  std::lock_guard<std::mutex> l(seen.mu);
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(seen.out_of_order, 0);
  for (int i = 0; i < 7; ++i) {
    const std::string name = "w" + std::to_string(i);
    const int64_t rv = std::stoll(api::ResourceVersion(*fake.Get(ref, name)));
    EXPECT_EQ(seen.last_rv["first/" + name], rv) << name;
    EXPECT_EQ(seen.last_rv["late/" + name], rv) << name;
  }
}

// A resync that falls due while the reflector delivers a watch event itself runs once
// that delivery ends, though no further event comes to wake the dispatch thread.
TEST(InformerTest, AResyncDueDuringTheReflectorsOwnDeliveryRunsWhenItEnds) {
  FakeClock clock;
  FakeClient fake(clock);
  const ResourceRef ref = kWorkloads.Namespace("ns");
  InformerOptions options = FastOptions();
  options.resync_period = std::chrono::minutes(10);
  Informer informer(fake, ref, clock, options);
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false, release = false;
  int resyncs = 0;
  ResourceEventHandler h;
  h.on_add = [&](const ObjectPtr&, bool initial) {
    if (initial) return;
    std::unique_lock<std::mutex> l(mu);
    entered = true;
    cv.notify_all();
    cv.wait_for(l, kWait, [&] { return release; });
  };
  h.on_update = [&](const ObjectPtr& old_obj, const ObjectPtr& new_obj) {
    std::lock_guard<std::mutex> l(mu);
    if (old_obj == new_obj) resyncs++;
    cv.notify_all();
  };
  informer.AddEventHandler(h);
  informer.Start();
  ASSERT_TRUE(informer.WaitForCacheSync(kWait));
  ASSERT_TRUE(WaitForActiveWatch(fake));

  ASSERT_TRUE(fake.Create(ref, Workload("gate")).ok());
  {
    std::unique_lock<std::mutex> l(mu);
    ASSERT_TRUE(cv.wait_for(l, kWait, [&] { return entered; }));
  }
  clock.Advance(std::chrono::minutes(10));
  std::this_thread::sleep_for(milliseconds(50));  // the dispatch thread sees the resync due
  {
    std::lock_guard<std::mutex> l(mu);
    release = true;
    cv.notify_all();
  }
  std::unique_lock<std::mutex> l(mu);
  EXPECT_TRUE(cv.wait_for(l, seconds(5), [&] { return resyncs >= 1; }));
}

TEST(SharedInformerFactoryTest, OneInformerPerResource) {
  FakeClock clock;
  FakeClient fake(clock);
  SharedInformerFactory factory(fake, clock, FastOptions());
  Informer& a = factory.ForResource(kWorkloads.Namespace("ns"));
  Informer& b = factory.ForResource(kWorkloads.Namespace("ns"));
  Informer& c = factory.ForResource(kWorkloads);
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &c);
  ASSERT_TRUE(fake.Create(kWorkloads.Namespace("ns"), Workload("w")).ok());
  factory.Start();
  ASSERT_TRUE(factory.WaitForCacheSync(kWait));
  EXPECT_EQ(a.GetIndexer().ListKeys(), std::vector<std::string>{"ns/w"});
  EXPECT_EQ(c.GetIndexer().ListKeys(), std::vector<std::string>{"ns/w"});
  factory.Shutdown();
}

}  // namespace
}  // namespace berth::client
