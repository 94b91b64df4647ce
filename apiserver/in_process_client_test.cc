// The Client contract (client/client.h) against a real ApiServer over a
// MemoryStore, run over both RestClient transports: HttpClient on loopback
// and the in-process client (in_process_client.h). The same assertions pass
// over both, which is the point: one request/response code path.
#include "apiserver/in_process_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/limits.h"
#include "apiserver/testing/test_api_server.h"
#include "client/http_client.h"
#include "client/informer.h"
#include "client/testing/informer_sync.h"

namespace berth::apiserver {
namespace {

using client::GroupVersionResource;
using client::WatchEvent;
using client::WatchEventType;
using nlohmann::json;
using std::chrono::seconds;

const GroupVersionResource kConfigMaps{"", "v1", "configmaps"};
const GroupVersionResource kPods{"", "v1", "pods"};
const GroupVersionResource kLocalQueues{"kueue.x-k8s.io", "v1beta2", "localqueues"};
// Real-time bound for waits on server threads; a passing test never reaches it.
constexpr auto kWait = seconds(20);

json ConfigMap(const std::string& name, const std::string& app = "demo") {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"labels", {{"app", app}}}}},
          {"data", {{"k", "v"}}}};
}

json Pod(const std::string& name) {
  return json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                     R"("},"spec":{"containers":[{"name":"c","image":"busybox"}]}})");
}

json LocalQueue(const std::string& name) {
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "LocalQueue"},
          {"metadata", {{"name", name}}},
          {"spec", {{"clusterQueue", "cq"}}}};
}

// A core Event about pod p (served also as events.k8s.io/v1, with `note`).
json CoreEvent(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"name", name}}},
          {"involvedObject", {{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", "p"}, {"namespace", "default"}}},
          {"reason", "Started"},
          {"message", "Started container c"},
          {"type", "Normal"}};
}

std::vector<std::string> Names(const std::vector<api::Object>& items) {
  std::vector<std::string> out;
  for (const auto& o : items) out.push_back(api::Name(o));
  return out;
}

// The next event, failing the test on a timeout or an ended stream.
WatchEvent NextEvent(client::WatchStream& w) {
  auto next = w.Next(kWait);
  EXPECT_TRUE(next.ok()) << next.status();
  if (!next.ok() || !next->has_value()) {
    ADD_FAILURE() << "no event";
    return {};
  }
  return std::move(**next);
}

std::string Describe(const WatchEvent& e) {
  return std::string(client::WatchEventTypeName(e.type)) + " " + api::Name(*e.object) + " " +
         api::ResourceVersion(*e.object);
}

enum class Transport { kHttp, kInProcess };

// A started server (listening, garbage collector running) with one client of
// the parameter's transport.
class ClientContractTest : public ::testing::TestWithParam<Transport> {
 protected:
  static ApiServerOptions Options() {
    ApiServerOptions o;
    o.http.threads = 2;
    return o;
  }

  void SetUp() override {
    ASSERT_TRUE(api_.server.Start().ok());
    if (GetParam() == Transport::kHttp) {
      client::RestConfig cfg;
      cfg.server = "http://127.0.0.1:" + std::to_string(api_.server.port());
      cfg.url = *client::ParseServerUrl(cfg.server);
      client_ = std::make_unique<client::HttpClient>(cfg);
    } else {
      client_ = NewInProcessClient(api_.server);
    }
  }
  void TearDown() override {
    client_.reset();
    api_.server.Stop();
  }

  // The in-process transport, or null over HTTP.
  InProcessTransport* in_process() { return dynamic_cast<InProcessTransport*>(&client_->transport()); }

  testing::TestApiServer api_{Options(), store::StoreOptions{.history_limit = 50, .watcher_buffer_limit = 1000}};
  std::unique_ptr<client::RestClient> client_;
};

TEST_P(ClientContractTest, CreateGetAndListWithSelectorsAndPages) {
  const auto ref = kConfigMaps.Namespace("default");
  for (const char* name : {"c", "a", "e", "b", "d"}) {
    auto created = client_->Create(ref, ConfigMap(name, name == std::string("e") ? "other" : "demo"));
    ASSERT_TRUE(created.ok()) << created.status();
    EXPECT_EQ(api::Name(*created), name);
    EXPECT_FALSE(api::ResourceVersion(*created).empty());
    EXPECT_FALSE((*created)["metadata"].value("uid", "").empty());
  }
  auto got = client_->Get(ref, "b");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)["data"]["k"], "v");

  Status missing = client_->Get(ref, "nope").status();
  EXPECT_EQ(missing.code(), Code::kNotFound);
  EXPECT_EQ(missing.message(), "configmaps \"nope\" not found");
  Status duplicate = client_->Create(ref, ConfigMap("a")).status();
  EXPECT_EQ(duplicate.code(), Code::kAlreadyExists);
  EXPECT_EQ(duplicate.message(), "configmaps \"a\" already exists");

  client::ListOptions selected;
  selected.label_selector = "app=demo";
  auto demo = client_->List(ref, selected);
  ASSERT_TRUE(demo.ok()) << demo.status();
  EXPECT_EQ(Names(demo->items), (std::vector<std::string>{"a", "b", "c", "d"}));
  // Built-in list items get apiVersion and kind back from the list.
  EXPECT_EQ(demo->items[0]["kind"], "ConfigMap");
  EXPECT_EQ(demo->items[0]["apiVersion"], "v1");
  EXPECT_EQ(demo->resource_version, std::to_string(api_.store.CurrentRevision()));

  client::ListOptions by_field;
  by_field.field_selector = "metadata.name!=c";
  by_field.label_selector = "app in (demo,other)";
  auto fields = client_->List(ref, by_field);
  ASSERT_TRUE(fields.ok()) << fields.status();
  EXPECT_EQ(Names(fields->items), (std::vector<std::string>{"a", "b", "d", "e"}));

  // Pages of 2, in (namespace, name) order, to the end.
  client::ListOptions page;
  page.limit = 2;
  std::vector<std::string> all;
  std::vector<size_t> sizes;
  for (int i = 0; i < 10; ++i) {
    auto p = client_->List(ref, page);
    ASSERT_TRUE(p.ok()) << p.status();
    sizes.push_back(p->items.size());
    for (const auto& n : Names(p->items)) all.push_back(n);
    if (p->continue_token.empty()) break;
    EXPECT_EQ(p->remaining_item_count, 5 - static_cast<int64_t>(all.size()));
    page.continue_token = p->continue_token;
  }
  EXPECT_EQ(all, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(sizes, (std::vector<size_t>{2, 2, 1}));

  Status bad = client_->List(ref, {.label_selector = "app in ("}).status();
  EXPECT_EQ(bad.code(), Code::kBadRequest);
}

TEST_P(ClientContractTest, ListSharedHasTheItemsAndPagesOfList) {
  const auto ref = kConfigMaps.Namespace("default");
  for (const char* name : {"a", "b", "c"}) ASSERT_TRUE(client_->Create(ref, ConfigMap(name)).ok());
  ASSERT_TRUE(client_->Create(kLocalQueues.Namespace("default"), LocalQueue("q")).ok());
  for (const auto& [r, limit] : {std::pair{ref, 2}, std::pair{ref, 0}, std::pair{kLocalQueues.Namespace(""), 0}}) {
    auto copies = client_->List(r, {.limit = limit});
    auto shared = client_->ListShared(r, {.limit = limit});
    ASSERT_TRUE(copies.ok() && shared.ok());
    ASSERT_EQ(shared->items.size(), copies->items.size());
    for (size_t i = 0; i < copies->items.size(); ++i) EXPECT_EQ(*shared->items[i], copies->items[i]);
    EXPECT_EQ(shared->continue_token.empty(), copies->continue_token.empty());
    EXPECT_EQ(shared->resource_version, copies->resource_version);
  }
  EXPECT_EQ(client_->ListShared(ref, {.label_selector = "app in ("}).status().code(), Code::kBadRequest);
}

TEST_P(ClientContractTest, UpdateIsRefusedOnAStaleResourceVersion) {
  const auto ref = kConfigMaps.Namespace("default");
  auto v1 = client_->Create(ref, ConfigMap("cm"));
  ASSERT_TRUE(v1.ok()) << v1.status();
  json changed = *v1;
  changed["data"]["k"] = "v2";
  auto v2 = client_->Update(ref, changed);
  ASSERT_TRUE(v2.ok()) << v2.status();
  EXPECT_EQ((*v2)["data"]["k"], "v2");
  EXPECT_NE(api::ResourceVersion(*v2), api::ResourceVersion(*v1));

  changed["data"]["k"] = "v3";  // still carries v1's resourceVersion
  Status stale = client_->Update(ref, changed).status();
  EXPECT_EQ(stale.code(), Code::kConflict);
  EXPECT_EQ(stale.message(),
            "Operation cannot be fulfilled on configmaps \"cm\": the object has been modified; please apply "
            "your changes to the latest version and try again");
  EXPECT_EQ((*client_->Get(ref, "cm"))["data"]["k"], "v2");
}

TEST_P(ClientContractTest, StatusSubresourceWritesOnlyStatus) {
  const auto ref = kLocalQueues.Namespace("default");
  auto lq = client_->Create(ref, LocalQueue("lq"));
  ASSERT_TRUE(lq.ok()) << lq.status();
  json with_status = *lq;
  with_status["spec"]["clusterQueue"] = "elsewhere";
  with_status["status"]["pendingWorkloads"] = 3;
  auto updated = client_->UpdateStatus(ref, with_status);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ((*updated)["status"]["pendingWorkloads"], 3);
  EXPECT_EQ((*updated)["spec"]["clusterQueue"], "cq");

  // The main resource ignores status.
  json main = *updated;
  main["status"]["pendingWorkloads"] = 7;
  main["metadata"]["labels"]["tier"] = "gold";
  auto after = client_->Update(ref, main);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ((*after)["status"]["pendingWorkloads"], 3);
  EXPECT_EQ((*after)["metadata"]["labels"]["tier"], "gold");
}

// Bytes from outside that are not UTF-8 (a probe's output in an Event, a file's name)
// never make a write fail or throw: over either transport each invalid sequence is
// written as U+FFFD, as Go's encoding/json writes such strings and keys, and the same
// document is stored.
TEST_P(ClientContractTest, StringsThatAreNotUtf8AreWrittenAsReplacementCharacters) {
  const auto ref = kConfigMaps.Namespace("default");
  api::Object cm = ConfigMap("bytes");
  cm["data"] = {{"k", "v\xff"}, {"overlong", "\xc0\xaf"}, {"ok", "\xe2\x82\xac"}};
  auto created = client_->Create(ref, cm);
  ASSERT_TRUE(created.ok()) << created.status();
  const json want = {{"k", "v\xef\xbf\xbd"}, {"overlong", "\xef\xbf\xbd\xef\xbf\xbd"}, {"ok", "\xe2\x82\xac"}};
  EXPECT_EQ((*created)["data"], want);
  auto got = client_->Get(ref, "bytes");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["data"], want);
  api::Object update = *got;
  update["data"]["k"] = "again \xed\xa0\x80";  // a surrogate
  auto updated = client_->Update(ref, update);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ((*updated)["data"]["k"], "again \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  // A key read as U+FFFD is then validated as any key: ConfigMap keys refuse it.
  api::Object bad_key = ConfigMap("key");
  bad_key["data"] = {{"\xfe\xfe", "x"}};
  auto refused = client_->Create(ref, bad_key);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kInvalid);
  EXPECT_NE(refused.status().message().find("data[\xef\xbf\xbd\xef\xbf\xbd]: Invalid value"), std::string::npos)
      << refused.status();

  const auto events = GroupVersionResource{"", "v1", "events"}.Namespace("default");
  api::Object event = CoreEvent("probe");
  event["message"] = "Liveness probe failed: bad \xff\xfe bytes";
  auto recorded = client_->Create(events, event);
  ASSERT_TRUE(recorded.ok()) << recorded.status();
  EXPECT_EQ((*recorded)["message"], "Liveness probe failed: bad \xef\xbf\xbd\xef\xbf\xbd bytes");
}

TEST_P(ClientContractTest, PatchTypes) {
  const auto pods = kPods.Namespace("default");
  ASSERT_TRUE(client_->Create(pods, Pod("p")).ok());
  auto merged = client_->Patch(pods, "p", client::PatchType::kMerge, R"({"metadata":{"labels":{"a":"1"}}})");
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ((*merged)["metadata"]["labels"]["a"], "1");

  auto json_patched = client_->Patch(pods, "p", client::PatchType::kJson,
                                     R"([{"op":"add","path":"/metadata/labels/b","value":"2"}])");
  ASSERT_TRUE(json_patched.ok()) << json_patched.status();
  EXPECT_EQ((*json_patched)["metadata"]["labels"], json::parse(R"({"a":"1","b":"2"})"));

  // Strategic merge: containers merge by name (the image changed, the rest kept).
  const api::Object before = (*json_patched)["spec"]["containers"][0];
  auto strategic = client_->Patch(pods, "p", client::PatchType::kStrategicMerge,
                                  R"({"spec":{"containers":[{"name":"c","image":"busybox:1.36"}]}})");
  ASSERT_TRUE(strategic.ok()) << strategic.status();
  ASSERT_EQ((*strategic)["spec"]["containers"].size(), 1u);
  api::Object expected = before;
  expected["image"] = "busybox:1.36";
  EXPECT_EQ((*strategic)["spec"]["containers"][0], expected);

  // Server-side apply creates what is absent.
  client::PatchOptions apply;
  apply.field_manager = "berth-test";
  apply.force = true;
  auto applied = client_->Patch(kLocalQueues.Namespace("default"), "lq", client::PatchType::kApply,
                                "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: lq\n"
                                "spec:\n  clusterQueue: cq\n",
                                apply);
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ((*applied)["spec"]["clusterQueue"], "cq");

  // Strategic merge is for built-in kinds only (415, as upstream).
  Status refused = client_->Patch(kLocalQueues.Namespace("default"), "lq", client::PatchType::kStrategicMerge,
                                  R"({"metadata":{"labels":{"a":"b"}}})")
                       .status();
  EXPECT_EQ(refused.code(), Code::kUnsupportedMedia);
  // A JSON patch that cannot apply is Invalid with the detail.
  Status invalid = client_->Patch(pods, "p", client::PatchType::kJson, R"([{"op":"remove","path":"/spec/nope"}])")
                       .status();
  EXPECT_EQ(invalid.code(), Code::kInvalid);
  EXPECT_EQ(client_->Patch(pods, "nope", client::PatchType::kMerge, "{}").status().code(), Code::kNotFound);
}

TEST_P(ClientContractTest, DeleteWithFinalizersGracePeriodsAndPreconditions) {
  const auto ref = kConfigMaps.Namespace("default");
  json held = ConfigMap("held");
  held["metadata"]["finalizers"] = {"example.com/hold"};
  auto created = client_->Create(ref, held);
  ASSERT_TRUE(created.ok()) << created.status();

  client::DeleteOptions wrong_uid;
  wrong_uid.preconditions.uid = "not-the-uid";
  EXPECT_EQ(client_->Delete(ref, "held", wrong_uid).code(), Code::kConflict);

  ASSERT_TRUE(client_->Delete(ref, "held").ok());
  auto marked = client_->Get(ref, "held");
  ASSERT_TRUE(marked.ok()) << marked.status();
  EXPECT_TRUE((*marked)["metadata"].contains("deletionTimestamp"));
  // Removing the last finalizer removes the object.
  ASSERT_TRUE(client_->Patch(ref, "held", client::PatchType::kMerge, R"({"metadata":{"finalizers":null}})").ok());
  EXPECT_EQ(client_->Get(ref, "held").status().code(), Code::kNotFound);

  // A Pod bound to a node, deleted with a grace period, is marked (an
  // unscheduled one goes at once, as upstream), then removed by a grace-0 delete.
  const auto pods = kPods.Namespace("default");
  json bound = Pod("p");
  bound["spec"]["nodeName"] = "node-1";
  ASSERT_TRUE(client_->Create(pods, bound).ok());
  ASSERT_TRUE(client_->Delete(pods, "p", {.grace_period_seconds = 30}).ok());
  auto terminating = client_->Get(pods, "p");
  ASSERT_TRUE(terminating.ok()) << terminating.status();
  EXPECT_EQ((*terminating)["metadata"]["deletionGracePeriodSeconds"], 30);
  ASSERT_TRUE(client_->Delete(pods, "p", {.grace_period_seconds = 0}).ok());
  EXPECT_EQ(client_->Get(pods, "p").status().code(), Code::kNotFound);
  EXPECT_EQ(client_->Delete(pods, "p").code(), Code::kNotFound);
}

TEST_P(ClientContractTest, WatchFromAResourceVersionThenFollows) {
  const auto ref = kConfigMaps.Namespace("default");
  auto created = client_->Create(ref, ConfigMap("w"));
  ASSERT_TRUE(created.ok());
  auto labelled = client_->Patch(ref, "w", client::PatchType::kMerge, R"({"metadata":{"labels":{"x":"1"}}})");
  ASSERT_TRUE(labelled.ok());

  auto watch = client_->Watch(ref, {.resource_version = api::ResourceVersion(*created)});
  ASSERT_TRUE(watch.ok()) << watch.status();
  // Replayed from history.
  EXPECT_EQ(Describe(NextEvent(**watch)), "MODIFIED w " + api::ResourceVersion(*labelled));
  auto other = client_->Create(ref, ConfigMap("w2"));
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(Describe(NextEvent(**watch)), "ADDED w2 " + api::ResourceVersion(*other));
  ASSERT_TRUE(client_->Delete(ref, "w").ok());
  WatchEvent deleted = NextEvent(**watch);
  EXPECT_EQ(deleted.type, WatchEventType::kDeleted);
  EXPECT_EQ(api::Name(*deleted.object), "w");
  EXPECT_EQ((*deleted.object)["metadata"]["labels"]["x"], "1");

  // From "": the current objects as ADDED first, filtered by the selector.
  ASSERT_TRUE(client_->Create(ref, ConfigMap("x", "other")).ok());
  auto from_now = client_->Watch(ref, {.label_selector = "app=demo"});
  ASSERT_TRUE(from_now.ok()) << from_now.status();
  EXPECT_EQ(Describe(NextEvent(**from_now)), "ADDED w2 " + api::ResourceVersion(*other));
  auto quiet = (*from_now)->Next(std::chrono::milliseconds(0));
  ASSERT_TRUE(quiet.ok());
  EXPECT_FALSE(quiet->has_value());

  EXPECT_EQ(client_->Watch(ref, {.label_selector = "app in ("}).status().code(), Code::kBadRequest);
}

TEST_P(ClientContractTest, StopEndsTheWatchOnBothSides) {
  const auto ref = kConfigMaps.Namespace("default");
  auto watch = client_->Watch(ref, {});
  ASSERT_TRUE(watch.ok()) << watch.status();
  if (in_process()) EXPECT_EQ(in_process()->open_streams(), 1u);
  (*watch)->Stop();
  auto after = (*watch)->Next(kWait);
  EXPECT_EQ(after.status().code(), Code::kUnavailable);
  EXPECT_EQ(after.status().message(), "watch closed");
  // In process the server side (the watch pump's session) ended within Stop.
  if (in_process()) EXPECT_EQ(in_process()->open_streams(), 0u);
  watch->reset();

  // A second watch works, and ends with the server's timeoutSeconds.
  auto timed = client_->Watch(ref, {.timeout_seconds = 1});
  ASSERT_TRUE(timed.ok()) << timed.status();
  ASSERT_TRUE(client_->Create(ref, ConfigMap("t")).ok());
  EXPECT_EQ(NextEvent(**timed).type, WatchEventType::kAdded);
  StatusOr<std::optional<WatchEvent>> end = std::optional<WatchEvent>();
  for (int i = 0; i < 20 && end.ok(); ++i) end = (*timed)->Next(seconds(1));
  EXPECT_EQ(end.status().code(), Code::kUnavailable);
  if (in_process()) EXPECT_EQ(in_process()->open_streams(), 0u);
}

TEST_P(ClientContractTest, WatchFromACompactedResourceVersionGetsExpired) {
  const auto ref = kConfigMaps.Namespace("default");
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(client_->Create(ref, ConfigMap("cm" + std::to_string(i))).ok());
  auto watch = client_->Watch(ref, {.resource_version = "1"});
  ASSERT_TRUE(watch.ok()) << watch.status();
  WatchEvent e = NextEvent(**watch);
  EXPECT_EQ(e.type, WatchEventType::kError);
  EXPECT_EQ(e.error.code(), Code::kGone);
  // The store's own answer for the same request, decoded back intact.
  store::WatchOptions from_one;
  from_one.from_revision = 1;
  EXPECT_EQ(e.error.message(), api_.store.Watch({"", "configmaps"}, from_one).status().message());
  EXPECT_EQ(e.error.message().rfind("too old resource version: 1 (", 0), 0u) << e.error.message();
  EXPECT_EQ((*watch)->Next(kWait).status().code(), Code::kUnavailable);
}

TEST_P(ClientContractTest, InformerSyncsAndFollows) {
  const auto ref = kConfigMaps.Namespace("default");
  ASSERT_TRUE(client_->Create(ref, ConfigMap("a")).ok());
  ASSERT_TRUE(client_->Create(ref, ConfigMap("b")).ok());
  client::Informer informer(*client_, ref, api_.clock, client::testing::FastInformerOptions());
  informer.Start();
  ASSERT_TRUE(informer.WaitForCacheSync(kWait));
  EXPECT_TRUE(client::testing::WaitForCachesToMatch(*client_, {&informer}));
  EXPECT_EQ(informer.GetIndexer().List().size(), 2u);

  ASSERT_TRUE(client_->Patch(ref, "a", client::PatchType::kMerge, R"({"data":{"k":"changed"}})").ok());
  ASSERT_TRUE(client_->Delete(ref, "b").ok());
  ASSERT_TRUE(client_->Create(ref, ConfigMap("c")).ok());
  EXPECT_TRUE(client::testing::WaitForCachesToMatch(*client_, {&informer}));
  std::vector<std::string> cached;
  for (const auto& o : informer.GetIndexer().List()) cached.push_back(api::Name(*o));
  std::sort(cached.begin(), cached.end());
  EXPECT_EQ(cached, (std::vector<std::string>{"a", "c"}));
  informer.Stop();
  if (in_process()) EXPECT_EQ(in_process()->open_streams(), 0u);
}

TEST_P(ClientContractTest, RawRequestsAndStreamedBodies) {
  auto version = client_->Do({"GET", "/version", {}, ""});
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(version->status, 200);
  EXPECT_EQ(api::Object::parse(version->body)["minor"], "32");
  EXPECT_EQ(client_->Do({"GET", "/apis/nope.example.com/v1/things", {}, ""})->status, 404);

  // A watch read as raw lines through DoStream, ended by the callback.
  const auto ref = kConfigMaps.Namespace("default");
  ASSERT_TRUE(client_->Create(ref, ConfigMap("s")).ok());
  std::string seen;
  auto res = client_->DoStream({"GET", client::ResourcePath(ref) + "?watch=true", {}, ""},
                               [&](std::string_view bytes) {
                                 seen.append(bytes);
                                 return seen.find('\n') == std::string::npos;
                               });
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_EQ(res->status, 200);
  json first = json::parse(seen.substr(0, seen.find('\n')));
  EXPECT_EQ(first["type"], "ADDED");
  EXPECT_EQ(first["object"]["metadata"]["name"], "s");
  if (in_process()) EXPECT_EQ(in_process()->open_streams(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Transports, ClientContractTest, ::testing::Values(Transport::kHttp, Transport::kInProcess),
                         [](const ::testing::TestParamInfo<Transport>& info) {
                           return info.param == Transport::kHttp ? "Http" : "InProcess";
                         });

// Without Start(): no port, no garbage collector; REST and watches work.
TEST(InProcessClientTest, ServesWithoutAListeningServer) {
  testing::TestApiServer test_server;
  ASSERT_TRUE(test_server.server.EnsureSystemNamespaces().ok());
  auto client = NewInProcessClient(test_server.server);
  const auto ref = kConfigMaps.Namespace("default");

  auto watch = client->Watch(ref, {});
  ASSERT_TRUE(watch.ok()) << watch.status();
  auto created = client->Create(ref, ConfigMap("a"));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(Describe(NextEvent(**watch)), "ADDED a " + api::ResourceVersion(*created));
  EXPECT_EQ(api::Name(*client->Get(ref, "a")), "a");

  // Stopping the server ends open watches; later ones end at once.
  test_server.server.Stop();
  EXPECT_EQ((*watch)->Next(kWait).status().code(), Code::kUnavailable);
  auto late = client->Watch(ref, {});
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_EQ((*late)->Next(kWait).status().message(), "watch closed");
}

// A watch event's object over the in-process client is the stored object
// itself (one decoded copy for the store, its watch history and every
// informer), whenever the watch's API version is the one stored; a view in
// another version (events.k8s.io/v1 over the core Events) is converted, as
// over HTTP.
TEST(InProcessClientTest, AWatchHandsOverTheStoredObjectItself) {
  testing::TestApiServer test_server;
  ASSERT_TRUE(test_server.server.EnsureSystemNamespaces().ok());
  auto client = NewInProcessClient(test_server.server);
  const GroupVersionResource kCoreEvents{"", "v1", "events"};
  const GroupVersionResource kEventsV1{"events.k8s.io", "v1", "events"};
  auto cm_watch = client->Watch(kConfigMaps.Namespace("default"), {.resource_version = "1"});
  auto core_watch = client->Watch(kCoreEvents.Namespace("default"), {.resource_version = "1"});
  auto v1_watch = client->Watch(kEventsV1.Namespace("default"), {.resource_version = "1"});
  ASSERT_TRUE(cm_watch.ok() && core_watch.ok() && v1_watch.ok());

  auto created = client->Create(kConfigMaps.Namespace("default"), ConfigMap("a"));
  ASSERT_TRUE(created.ok()) << created.status();
  auto stored = test_server.store.GetShared({{"", "configmaps"}, "default", "a"});
  ASSERT_TRUE(stored.ok());
  WatchEvent added = NextEvent(**cm_watch);
  EXPECT_EQ(added.type, WatchEventType::kAdded);
  EXPECT_EQ(added.object.get(), stored->get()) << "the stored object itself, not a copy";
  EXPECT_EQ(*added.object, *created);

  ASSERT_TRUE(client->Delete(kConfigMaps.Namespace("default"), "a").ok());
  WatchEvent deleted = NextEvent(**cm_watch);
  EXPECT_EQ(deleted.type, WatchEventType::kDeleted);
  EXPECT_EQ(api::Name(*deleted.object), "a");
  EXPECT_NE(api::ResourceVersion(*deleted.object), api::ResourceVersion(*created));

  ASSERT_TRUE(client->Create(kCoreEvents.Namespace("default"), CoreEvent("e1")).ok());
  auto stored_event = test_server.store.GetShared({{"", "events"}, "default", "e1"});
  ASSERT_TRUE(stored_event.ok());
  EXPECT_EQ(NextEvent(**core_watch).object.get(), stored_event->get());
  WatchEvent viewed = NextEvent(**v1_watch);
  EXPECT_NE(viewed.object.get(), stored_event->get());
  EXPECT_EQ((*viewed.object)["apiVersion"], "events.k8s.io/v1");
  EXPECT_EQ((*viewed.object)["note"], "Started container c");
  EXPECT_EQ((**stored_event)["apiVersion"], "v1") << "the stored object is unchanged by the view";
}

// ListShared, and so an informer's cache, hands over the stored objects as
// watches do; List gives copies; a list in another version is converted, with
// the same items as List.
TEST(InProcessClientTest, ListSharedHandsOverTheStoredObjects) {
  testing::TestApiServer test_server;
  ASSERT_TRUE(test_server.server.EnsureSystemNamespaces().ok());
  auto client = NewInProcessClient(test_server.server);
  const auto ref = kConfigMaps.Namespace("default");
  for (const char* name : {"a", "b", "c"}) ASSERT_TRUE(client->Create(ref, ConfigMap(name)).ok());
  auto stored = [&](const std::string& name) {
    return test_server.store.GetShared({{"", "configmaps"}, "default", name}).value();
  };

  auto shared = client->ListShared(ref, {.label_selector = "app=demo", .limit = 2});
  ASSERT_TRUE(shared.ok()) << shared.status();
  ASSERT_EQ(shared->items.size(), 2u);
  EXPECT_EQ(shared->items[0].get(), stored("a").get());
  EXPECT_EQ(shared->items[1].get(), stored("b").get());
  EXPECT_FALSE(shared->continue_token.empty());
  auto rest = client->ListShared(ref, {.label_selector = "app=demo", .continue_token = shared->continue_token});
  ASSERT_TRUE(rest.ok()) << rest.status();
  ASSERT_EQ(rest->items.size(), 1u);
  EXPECT_EQ(rest->items[0].get(), stored("c").get());
  EXPECT_EQ(rest->resource_version, shared->resource_version);

  auto copies = client->List(ref, {.label_selector = "app=demo"});
  ASSERT_TRUE(copies.ok());
  ASSERT_EQ(copies->items.size(), 3u);
  EXPECT_EQ(copies->items[0], *stored("a"));

  client::Informer informer(*client, ref, test_server.clock);
  informer.Start();
  ASSERT_TRUE(informer.WaitForCacheSync(kWait));
  EXPECT_EQ(informer.GetIndexer().Get("default", "b").get(), stored("b").get()) << "the informer caches no copy";

  // Core Events listed through events.k8s.io/v1 are converted copies.
  const GroupVersionResource kEventsV1{"events.k8s.io", "v1", "events"};
  ASSERT_TRUE(client->Create(GroupVersionResource{"", "v1", "events"}.Namespace("default"), CoreEvent("e1")).ok());
  auto viewed = client->ListShared(kEventsV1.Namespace("default"));
  ASSERT_TRUE(viewed.ok()) << viewed.status();
  ASSERT_EQ(viewed->items.size(), 1u);
  EXPECT_EQ((*viewed->items[0])["apiVersion"], "events.k8s.io/v1");
  EXPECT_EQ((*viewed->items[0])["note"], "Started container c");
  auto listed = client->List(kEventsV1.Namespace("default"));
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(*viewed->items[0], listed->items.at(0));
}

// A get, create, update or patch over the in-process client answers with the
// stored object handed over (no response body to encode and parse) when the
// request's version is the stored one; in another version, or without
// take_objects (the network's requests), the body carries it as over HTTP.
// The client's answer is the same object either way.
TEST(InProcessClientTest, AWriteOrGetHandsOverTheStoredObject) {
  testing::TestApiServer test_server;
  ASSERT_TRUE(test_server.server.EnsureSystemNamespaces().ok());
  InProcessTransport transport(test_server.server);
  auto client = NewInProcessClient(test_server.server);
  const auto ref = kConfigMaps.Namespace("default");
  auto stored = [&](const std::string& name) {
    return test_server.store.GetShared({{"", "configmaps"}, "default", name}).value();
  };
  const std::string path = client::ResourcePath(ref);

  client::RawRequest create{"POST", path, {}, ConfigMap("a").dump(), /*take_objects=*/true};
  auto created = transport.Do(create);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->status, 201);
  EXPECT_TRUE(created->body.empty());
  ASSERT_EQ(created->objects.size(), 1u);
  EXPECT_EQ(created->objects[0].get(), stored("a").get());

  for (const char* method : {"GET", "PUT"}) {
    client::RawRequest r{method, client::ResourcePath(ref, "a"), {}, "", /*take_objects=*/true};
    if (std::string(method) == "PUT") r.body = stored("a")->dump();
    auto answered = transport.Do(r);
    ASSERT_TRUE(answered.ok()) << answered.status();
    EXPECT_EQ(answered->status, 200) << method << " " << answered->body;
    ASSERT_EQ(answered->objects.size(), 1u) << method;
    EXPECT_EQ(answered->objects[0].get(), stored("a").get()) << method;
  }
  client::RawRequest patch{"PATCH", client::ResourcePath(ref, "a"), {{"Content-Type", "application/merge-patch+json"}},
                           R"({"data":{"k":"patched"}})", /*take_objects=*/true};
  auto patched = transport.Do(patch);
  ASSERT_TRUE(patched.ok()) << patched.status();
  ASSERT_EQ(patched->objects.size(), 1u);
  EXPECT_EQ(patched->objects[0].get(), stored("a").get());
  EXPECT_EQ((*stored("a"))["data"]["k"], "patched");

  // Asked for YAML: the body, in YAML, as over HTTP.
  auto yaml = transport.Do({"GET", client::ResourcePath(ref, "a"), {{"Accept", "application/yaml"}}, "", true});
  ASSERT_TRUE(yaml.ok());
  EXPECT_TRUE(yaml->objects.empty());
  EXPECT_EQ(yaml->content_type, "application/yaml");
  EXPECT_NE(yaml->body.find("name: a"), std::string::npos) << yaml->body;
  auto yaml_list = transport.Do({"GET", path, {{"Accept", "application/yaml"}}, "", true});
  ASSERT_TRUE(yaml_list.ok());
  EXPECT_TRUE(yaml_list->objects.empty()) << "a List asked for in YAML is encoded too";
  EXPECT_NE(yaml_list->body.find("name: a"), std::string::npos) << yaml_list->body;

  // Without take_objects: the body, equal to the stored object.
  auto plain = transport.Do({"GET", client::ResourcePath(ref, "a"), {}, ""});
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->objects.empty());
  EXPECT_EQ(api::Object::parse(plain->body), *stored("a"));
  // A refused write hands nothing over.
  auto conflict = transport.Do(create);
  ASSERT_TRUE(conflict.ok());
  EXPECT_EQ(conflict->status, 409);
  EXPECT_TRUE(conflict->objects.empty());
  EXPECT_FALSE(conflict->body.empty());

  // Another version: a converted copy in the body.
  const GroupVersionResource kEventsV1{"events.k8s.io", "v1", "events"};
  ASSERT_TRUE(client->Create(GroupVersionResource{"", "v1", "events"}.Namespace("default"), CoreEvent("e1")).ok());
  auto viewed = transport.Do({"GET", client::ResourcePath(kEventsV1.Namespace("default"), "e1"), {}, "", true});
  ASSERT_TRUE(viewed.ok());
  EXPECT_TRUE(viewed->objects.empty());
  EXPECT_EQ(api::Object::parse(viewed->body)["apiVersion"], "events.k8s.io/v1");

  // Through the client: the same answers as the body would give.
  auto got = client->Get(ref, "a");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, *stored("a"));
  auto viewed_by_client = client->Get(kEventsV1.Namespace("default"), "e1");
  ASSERT_TRUE(viewed_by_client.ok());
  EXPECT_EQ((*viewed_by_client)["note"], "Started container c");
}

// A create, update or status update hands the object to the server decoded
// (RawRequest::object, no JSON text), and the server reads it as that text: the same
// stored document as the text gives, the caller's object untouched, and a document
// the text parser would refuse (too deep) refused with nothing written.
TEST(InProcessClientTest, AWriteHandsItsObjectOverAndItIsReadAsItsText) {
  testing::TestApiServer test_server;
  ASSERT_TRUE(test_server.server.EnsureSystemNamespaces().ok());
  InProcessTransport transport(test_server.server);
  const auto ref = kConfigMaps.Namespace("default");
  const std::string path = client::ResourcePath(ref);
  auto stored = [&](const std::string& name) {
    return test_server.store.GetShared({{"", "configmaps"}, "default", name});
  };

  for (const api::Object& data : {json{{"k", "v"}}, json{{"k", "v\xff"}, {"l", "\xfe\xe2\x82"}}}) {
    api::Object by_object = ConfigMap("o");
    by_object["data"] = data;
    api::Object by_text = by_object;
    by_text["metadata"]["name"] = "t";
    client::RawRequest with_object{"POST", path, {}, "", /*take_objects=*/true};
    with_object.object = std::make_shared<const api::Object>(by_object);
    auto created = transport.Do(with_object);
    ASSERT_TRUE(created.ok()) << created.status();
    EXPECT_EQ(created->status, 201) << created->body;
    auto texted = transport.Do(
        {"POST", path, {}, by_text.dump(-1, ' ', false, json::error_handler_t::replace), /*take_objects=*/true});
    ASSERT_TRUE(texted.ok());
    EXPECT_EQ(texted->status, 201) << texted->body;
    auto o = stored("o");
    auto t = stored("t");
    ASSERT_TRUE(o.ok() && t.ok());
    EXPECT_EQ((**o)["data"], (**t)["data"]);
    EXPECT_EQ((**o)["metadata"]["labels"], (**t)["metadata"]["labels"]);
    EXPECT_EQ(*with_object.object, by_object) << "the caller's object is not changed";
    ASSERT_TRUE(test_server.store.Delete({{"", "configmaps"}, "default", "o"}).ok());
    ASSERT_TRUE(test_server.store.Delete({{"", "configmaps"}, "default", "t"}).ok());
  }

  const int64_t revision = test_server.store.CurrentRevision();
  api::Object deep = ConfigMap("deep");
  json nested = json::array();
  for (int i = 0; i < api::kMaxJsonNestingDepth + 5; ++i) nested = json::array({std::move(nested)});
  deep["extra"] = std::move(nested);
  client::RawRequest too_deep{"POST", path, {}, "", /*take_objects=*/true};
  too_deep.object = std::make_shared<const api::Object>(std::move(deep));
  auto refused = transport.Do(too_deep);
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, 400) << refused->body;
  EXPECT_NE(refused->body.find("exceeded max depth"), std::string::npos) << refused->body;
  EXPECT_EQ(test_server.store.CurrentRevision(), revision);
}

// A watch that asked for bookmarks gets one shortly before its timeout ends
// it (kube-apiserver's cacher sends it 2 s before), at the store's current
// revision, even when the bookmark interval (60 s of a clock that does not
// move here) has not passed and other watches keep the pump busy: the client
// rewatches from a revision still in the history instead of relisting.
TEST(InProcessClientTest, AQuietWatchGetsABookmarkBeforeItsTimeoutWhileOthersAreBusy) {
  testing::TestApiServer test_server;
  ASSERT_TRUE(test_server.server.EnsureSystemNamespaces().ok());
  auto client = NewInProcessClient(test_server.server);
  const auto configmaps = kConfigMaps.Namespace("default");
  const GroupVersionResource kSecrets{"", "v1", "secrets"};
  ASSERT_TRUE(client->Create(configmaps, ConfigMap("first")).ok());

  // A busy watch: configmaps written without pause while the quiet one runs.
  auto busy = client->Watch(configmaps, {.resource_version = "1"});
  ASSERT_TRUE(busy.ok());
  std::atomic<bool> stop{false};
  std::atomic<int> written{0};
  std::thread writer([&] {
    for (int i = 0; !stop; ++i) {
      if (client->Create(configmaps, ConfigMap("busy-" + std::to_string(i))).ok()) ++written;
    }
  });
  std::thread reader([&] {
    while (!stop) (void)(*busy)->Next(std::chrono::milliseconds(100));
  });

  auto quiet = client->Watch(kSecrets.Namespace("default"),
                             {.resource_version = api::ResourceVersion(*client->Get(configmaps, "first")),
                              .timeout_seconds = 4,
                              .allow_watch_bookmarks = true});
  ASSERT_TRUE(quiet.ok());
  std::vector<std::string> bookmarks;
  for (;;) {
    auto next = (*quiet)->Next(kWait);
    if (!next.ok() || !next->has_value()) break;  // the timeout ended it
    if ((*next)->type == WatchEventType::kBookmark) bookmarks.push_back(api::ResourceVersion(*(*next)->object));
  }
  stop = true;
  writer.join();
  reader.join();
  (*busy)->Stop();
  EXPECT_GT(written.load(), 0);
  ASSERT_EQ(bookmarks.size(), 1u) << "one bookmark, before the timeout";
  // It carries a revision past the busy writes made before it.
  EXPECT_GT(std::stoll(bookmarks[0]), std::stoll(api::ResourceVersion(*client->Get(configmaps, "first"))));
}

}  // namespace
}  // namespace berth::apiserver
