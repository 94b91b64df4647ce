// The REST handler without the network: ApiServer::Handle with requests as
// kubectl 1.32 sends them, over a MemoryStore and a FakeClock.
#include "apiserver/api_server.h"

#include <condition_variable>
#include <deque>
#include <gtest/gtest.h>
#include <mutex>
#include <tuple>
#include <variant>

#include "api/yaml_codec.h"
#include "apiserver/testing/test_api_server.h"

namespace berth::apiserver {
namespace {

using nlohmann::json;

// A ResponseStream that keeps the chunks; Wait blocks until n have arrived
// (a bounded wait for the pump thread, not a timing assertion).
class CollectingStream : public ResponseStreamBase {
 public:
  bool Write(std::string chunk) override {
    std::lock_guard<std::mutex> l(mu());
    if (done_locked()) return false;
    chunks_.push_back(std::move(chunk));
    cv_.notify_all();
    return true;
  }
  void Close() override {
    End([this] { cv_.notify_all(); });
  }
  // The first n events (parsed), or fewer if the stream ended first.
  std::vector<json> Wait(size_t n) {
    std::unique_lock<std::mutex> l(mu());
    cv_.wait_for(l, std::chrono::seconds(30), [&] { return chunks_.size() >= n || done_locked(); });
    std::vector<json> out;
    for (const auto& c : chunks_) out.push_back(json::parse(c));
    return out;
  }

 private:
  std::condition_variable cv_;
  std::vector<std::string> chunks_;  // guarded by mu()
};

class ApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(api_.server.EnsureSystemNamespaces().ok()); }

  HttpResponse Do(const std::string& method, const std::string& target, const std::string& body = "",
                  const std::string& content_type = "application/json") {
    return testing::Respond(api_.server, method, target, body, content_type);
  }
  static json Body(const HttpResponse& r) { return json::parse(r.body); }

  std::shared_ptr<CollectingStream> Watch(const std::string& target) {
    HandlerResult r = api_.server.Handle(testing::Request("GET", target));
    EXPECT_TRUE(std::holds_alternative<StreamingResponse>(r)) << target;
    auto stream = std::make_shared<CollectingStream>();
    if (auto* sr = std::get_if<StreamingResponse>(&r)) sr->start(stream);
    return stream;
  }

  static constexpr const char* kPod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1"},
    "spec":{"containers":[{"name":"c","image":"busybox","env":[{"name":"A","value":"1"}]}]}})";
  static constexpr const char* kLocalQueue = R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"LocalQueue",
    "metadata":{"name":"lq"},"spec":{"clusterQueue":"cq"}})";

  testing::TestApiServer api_{testing::WithoutGarbageCollector(),
                              store::StoreOptions{.history_limit = 50, .watcher_buffer_limit = 1000}};
};

// LIST bodies are written item by item from the stored objects: the text is
// exactly json's own form of the List (sorted keys, compact), items converted to
// the URL's version when it is not the storage version, continue when limited.
TEST_F(ApiServerTest, ListBodyIsTheListObjectInTheUrlVersion) {
  for (const char* name : {"p1", "p2", "p3"}) {
    json pod = json::parse(kPod);
    pod["metadata"]["name"] = name;
    ASSERT_EQ(Do("POST", "/api/v1/namespaces/default/pods", pod.dump()).status, 201);
  }
  HttpResponse pods = Do("GET", "/api/v1/namespaces/default/pods?limit=2");
  ASSERT_EQ(pods.status, 200);
  const json list = Body(pods);
  EXPECT_EQ(pods.body, list.dump());
  EXPECT_EQ(list["apiVersion"], "v1");
  EXPECT_EQ(list["kind"], "PodList");
  ASSERT_EQ(list["items"].size(), 2u);
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "p1");
  EXPECT_EQ(list["items"][1]["metadata"]["name"], "p2");
  EXPECT_TRUE(list["metadata"]["continue"].is_string());
  EXPECT_EQ(list["metadata"]["remainingItemCount"], 1);

  ASSERT_EQ(Do("POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues", kLocalQueue).status, 201);
  HttpResponse v1beta1 = Do("GET", "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/localqueues");
  ASSERT_EQ(v1beta1.status, 200);
  const json queues = Body(v1beta1);
  EXPECT_EQ(v1beta1.body, queues.dump());
  EXPECT_EQ(queues["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(queues["kind"], "LocalQueueList");
  ASSERT_EQ(queues["items"].size(), 1u);
  EXPECT_EQ(queues["items"][0]["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(queues["items"][0]["spec"]["clusterQueue"], "cq");
  EXPECT_FALSE(queues["metadata"].contains("continue"));

  HttpResponse empty = Do("GET", "/api/v1/namespaces/kube-system/pods");
  EXPECT_EQ(empty.body, Body(empty).dump());
  EXPECT_EQ(Body(empty)["items"], json::array());
}

// pods/binding (kube-apiserver's BindingREST): one write sets spec.nodeName and
// PodScheduled=True and answers a Success Status; a bound pod, a name that differs from the
// URL's, a missing target, a gated pod and a stale uid are refused, each changing nothing.
TEST_F(ApiServerTest, BindingAPodSetsItsNodeAndPodScheduledInOneWrite) {
  ASSERT_EQ(Do("POST", "/api/v1/namespaces/default/pods", kPod).status, 201);
  const std::string rv = Body(Do("GET", "/api/v1/namespaces/default/pods/p1"))["metadata"]["resourceVersion"];
  const std::string binding_url = "/api/v1/namespaces/default/pods/p1/binding";
  auto binding = [](const std::string& name, const std::string& node) {
    return json{{"apiVersion", "v1"},
                {"kind", "Binding"},
                {"metadata", {{"name", name}}},
                {"target", {{"kind", "Node"}, {"name", node}}}}
        .dump();
  };
  EXPECT_EQ(Do("POST", binding_url, binding("p2", "node-0")).status, 400);
  HttpResponse no_target = Do("POST", binding_url, binding("p1", ""));
  EXPECT_EQ(no_target.status, 422);
  EXPECT_EQ(Body(no_target)["message"], "Binding \"p1\" is invalid: target.name: Required value");
  EXPECT_EQ(Do("GET", binding_url).status, 405);
  json stale = json::parse(binding("p1", "node-0"));
  stale["metadata"]["uid"] = "not-the-pods";
  EXPECT_EQ(Do("POST", binding_url, stale.dump()).status, 409);
  EXPECT_EQ(Body(Do("GET", "/api/v1/namespaces/default/pods/p1"))["metadata"]["resourceVersion"], rv);

  HttpResponse bound = Do("POST", binding_url, binding("p1", "node-0"));
  ASSERT_EQ(bound.status, 201) << bound.body;
  EXPECT_EQ(Body(bound)["status"], "Success");
  const json pod = Body(Do("GET", "/api/v1/namespaces/default/pods/p1"));
  EXPECT_EQ(pod["spec"]["nodeName"], "node-0");
  EXPECT_EQ(std::stoll(pod["metadata"]["resourceVersion"].get<std::string>()), std::stoll(rv) + 1);  // one write
  ASSERT_TRUE(pod["status"]["conditions"].is_array());
  EXPECT_EQ(pod["status"]["conditions"][0]["type"], "PodScheduled");
  EXPECT_EQ(pod["status"]["conditions"][0]["status"], "True");
  EXPECT_TRUE(pod["status"]["conditions"][0]["lastTransitionTime"].is_string());

  HttpResponse again = Do("POST", binding_url, binding("p1", "node-1"));
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(Body(again)["message"],
            "Operation cannot be fulfilled on pods/binding \"p1\": pod p1 is already assigned to node \"node-0\"");

  json gated = json::parse(kPod);
  gated["metadata"]["name"] = "gated";
  gated["spec"]["schedulingGates"] = json::array({{{"name", "example.com/wait"}}});
  ASSERT_EQ(Do("POST", "/api/v1/namespaces/default/pods", gated.dump()).status, 201);
  EXPECT_EQ(Do("POST", "/api/v1/namespaces/default/pods/gated/binding", binding("gated", "node-0")).status, 409);
  EXPECT_EQ(Do("POST", "/api/v1/namespaces/default/pods/nope/binding", binding("nope", "node-0")).status, 404);
}

HttpResponse WithAccept(ApiServer& server, const std::string& method, const std::string& target,
                        const std::string& accept) {
  HttpRequest req = testing::Request(method, target);
  req.headers.emplace_back("Accept", accept);
  HandlerResult r = server.Handle(req);
  EXPECT_TRUE(std::holds_alternative<HttpResponse>(r)) << target;
  return std::holds_alternative<HttpResponse>(r) ? std::get<HttpResponse>(r) : HttpResponse{};
}

// kube-apiserver's content negotiation (apiserver/media_type.h): GET and LIST answer YAML
// for Accept: application/yaml, errors too; an Accept nothing serves is 406.
TEST_F(ApiServerTest, AcceptYamlAnswersYamlAndUnservedTypesAre406) {
  ASSERT_EQ(Do("POST", "/api/v1/namespaces/default/pods", kPod).status, 201);
  HttpResponse get = WithAccept(api_.server, "GET", "/api/v1/namespaces/default/pods/p1", "application/yaml");
  ASSERT_EQ(get.status, 200);
  EXPECT_EQ(get.content_type, "application/yaml");
  const json pod = Body(Do("GET", "/api/v1/namespaces/default/pods/p1"));
  EXPECT_EQ(api::ParseYaml(get.body).value(), pod);
  EXPECT_TRUE(get.body.starts_with("apiVersion: v1\nkind: Pod\nmetadata:\n")) << get.body;

  HttpResponse list = WithAccept(api_.server, "GET", "/api/v1/namespaces/default/pods", "application/yaml");
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.content_type, "application/yaml");
  EXPECT_EQ(api::ParseYaml(list.body).value()["items"][0]["metadata"]["name"], "p1");

  HttpResponse missing = WithAccept(api_.server, "GET", "/api/v1/namespaces/default/pods/nope", "application/yaml");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.content_type, "application/yaml");
  EXPECT_EQ(api::ParseYaml(missing.body).value()["reason"], "NotFound");

  for (const char* target : {"/api/v1/namespaces/default/pods/p1", "/api/v1/namespaces/default/pods/p1/log",
                             "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues"}) {
    HttpResponse refused = WithAccept(api_.server, "GET", target, "text/plain");
    EXPECT_EQ(refused.status, 406) << target;
    EXPECT_EQ(Body(refused)["reason"], "NotAcceptable") << target;
  }
  EXPECT_EQ(Body(WithAccept(api_.server, "GET", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues",
                            "application/vnd.kubernetes.protobuf"))["message"],
            "only the following media types are accepted: application/json, application/yaml");
}

// client-go's metadata client (metadata-only informers, controller-runtime's OnlyMetadata)
// asks for PartialObjectMetadata(List): the objects' whole metadata and nothing else, in the
// meta.k8s.io version asked for, on GET, LIST (paginated too), a write's answer and a watch;
// a list asked for the single kind, or an object for the list kind, is 406 as upstream.
TEST_F(ApiServerTest, PartialObjectMetadataAnswersCarryTheWholeMetadataAndNothingElse) {
  const std::string cms = "/api/v1/namespaces/default/configmaps";
  for (const char* name : {"a", "b"}) {
    json cm = {{"apiVersion", "v1"},
               {"kind", "ConfigMap"},
               {"metadata", {{"name", name}, {"labels", {{"team", name}}}, {"annotations", {{"note", "n"}}}}},
               {"data", {{"secret-ish", "value"}}}};
    ASSERT_EQ(Do("POST", cms, cm.dump()).status, 201);
  }
  const std::string item = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
  const std::string list =
      "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
      "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
  const json a = Body(Do("GET", cms + "/a"));
  HttpResponse got = WithAccept(api_.server, "GET", cms + "/a", item);
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(Body(got),
            (json{{"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", a["metadata"]}}));

  const json plain = Body(Do("GET", cms));
  HttpResponse listed = WithAccept(api_.server, "GET", cms, list);
  ASSERT_EQ(listed.status, 200) << listed.body;
  const json l = Body(listed);
  EXPECT_EQ(l["kind"], "PartialObjectMetadataList");
  EXPECT_EQ(l["apiVersion"], "meta.k8s.io/v1");
  EXPECT_EQ(l["metadata"], plain["metadata"]);
  ASSERT_EQ(l["items"].size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(l["items"][i], (json{{"kind", "PartialObjectMetadata"},
                                   {"apiVersion", "meta.k8s.io/v1"},
                                   {"metadata", plain["items"][i]["metadata"]}}));
  }
  const json page = Body(WithAccept(api_.server, "GET", cms + "?limit=1", list));
  EXPECT_EQ(page["items"].size(), 1u);
  EXPECT_FALSE(page["metadata"].value("continue", "").empty()) << page.dump();
  EXPECT_EQ(page["metadata"]["remainingItemCount"], 1);
  // A Table page carries the list's metadata too (upstream's table generator).
  const json table_page =
      Body(WithAccept(api_.server, "GET", cms + "?limit=1", "application/json;as=Table;g=meta.k8s.io;v=v1"));
  EXPECT_EQ(table_page["rows"].size(), 1u);
  EXPECT_FALSE(table_page["metadata"].value("continue", "").empty()) << table_page.dump();
  EXPECT_EQ(table_page["metadata"]["remainingItemCount"], 1) << table_page.dump();

  // v1beta1, and YAML.
  EXPECT_EQ(Body(WithAccept(api_.server, "GET", cms + "/a",
                            "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1"))["apiVersion"],
            "meta.k8s.io/v1beta1");
  HttpResponse yaml =
      WithAccept(api_.server, "GET", cms, "application/yaml;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1");
  ASSERT_EQ(yaml.content_type, "application/yaml");
  const json from_yaml = api::ParseYaml(yaml.body).value();
  EXPECT_EQ(from_yaml["kind"], "PartialObjectMetadataList");
  EXPECT_EQ(from_yaml["items"][1]["apiVersion"], "meta.k8s.io/v1beta1");
  EXPECT_FALSE(from_yaml["items"][1].contains("data"));

  // The kinds must fit the answer: 406, and nothing else changes.
  for (const auto& [target, accept, message] :
       {std::tuple{cms, std::string("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"),
                   "you requested PartialObjectMetadata, but the requested object is a list"},
        std::tuple{cms + "/a", std::string("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"),
                   "you requested PartialObjectMetadataList, but the requested object is not a list"}}) {
    HttpResponse refused = WithAccept(api_.server, "GET", target, accept);
    EXPECT_EQ(refused.status, 406) << target;
    EXPECT_EQ(Body(refused)["reason"], "NotAcceptable");
    EXPECT_EQ(Body(refused)["message"], message);
  }

  // A write's answer is transformed too (the object is written as sent).
  HttpRequest create = testing::Request(
      "POST", cms, R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"v"}})");
  create.headers.emplace_back("Accept", item);
  HandlerResult created = api_.server.Handle(create);
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(created));
  EXPECT_EQ(std::get<HttpResponse>(created).status, 201);
  const json c = Body(std::get<HttpResponse>(created));
  EXPECT_EQ(c["kind"], "PartialObjectMetadata");
  EXPECT_EQ(c["metadata"]["name"], "c");
  EXPECT_FALSE(c.contains("data"));
  EXPECT_EQ(Body(Do("GET", cms + "/c"))["data"]["k"], "v");

  // A watch sends PartialObjectMetadata events, its bookmarks too.
  HttpRequest watch = testing::Request("GET", cms + "?watch=true&allowWatchBookmarks=true");
  watch.headers.emplace_back("Accept", item);
  HandlerResult w = api_.server.Handle(watch);
  ASSERT_TRUE(std::holds_alternative<StreamingResponse>(w));
  auto stream = std::make_shared<CollectingStream>();
  std::get<StreamingResponse>(w).start(stream);
  ASSERT_EQ(Do("PATCH", cms + "/a", R"({"data":{"k":"changed"}})", "application/merge-patch+json").status, 200);
  std::vector<json> events = stream->Wait(4);
  ASSERT_GE(events.size(), 4u);
  for (const json& ev : events) {
    EXPECT_EQ(ev["object"]["kind"], "PartialObjectMetadata") << ev.dump();
    EXPECT_EQ(ev["object"]["apiVersion"], "meta.k8s.io/v1") << ev.dump();
    EXPECT_FALSE(ev["object"].contains("data")) << ev.dump();
  }
  EXPECT_EQ(events[3]["type"], "MODIFIED");
  EXPECT_EQ(events[3]["object"]["metadata"], Body(Do("GET", cms + "/a"))["metadata"]);
  stream->Close();

  // A deletecollection's answer is a list, transformed as a LIST's (upstream's
  // DeleteCollection passes it through transformResponseObject).
  HttpResponse deleted = WithAccept(api_.server, "DELETE", cms + "?labelSelector=team%3Db", list);
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  const json d = Body(deleted);
  EXPECT_EQ(d["kind"], "PartialObjectMetadataList");
  ASSERT_EQ(d["items"].size(), 1u) << d.dump();
  EXPECT_EQ(d["items"][0]["kind"], "PartialObjectMetadata");
  EXPECT_EQ(d["items"][0]["metadata"]["name"], "b");
  EXPECT_FALSE(d["items"][0].contains("data"));
  const json table = Body(WithAccept(api_.server, "DELETE", cms + "?labelSelector=team%3Da",
                                     "application/json;as=Table;g=meta.k8s.io;v=v1"));
  EXPECT_EQ(table["kind"], "Table");
  ASSERT_EQ(table["rows"].size(), 1u) << table.dump();
  EXPECT_EQ(table["rows"][0]["object"]["metadata"]["name"], "a");
}

// A v1beta1 Table is written in meta.k8s.io/v1beta1, its rows' objects too (upstream's asTable).
TEST_F(ApiServerTest, ATableIsWrittenInTheVersionAskedFor) {
  ASSERT_EQ(Do("POST", "/api/v1/namespaces/default/pods", kPod).status, 201);
  for (const char* version : {"v1", "v1beta1"}) {
    const std::string accept = std::string("application/json;as=Table;g=meta.k8s.io;v=") + version;
    for (const char* target : {"/api/v1/namespaces/default/pods", "/api/v1/namespaces/default/pods/p1"}) {
      const json table = Body(WithAccept(api_.server, "GET", target, accept));
      EXPECT_EQ(table["kind"], "Table") << target;
      EXPECT_EQ(table["apiVersion"], std::string("meta.k8s.io/") + version) << target;
      ASSERT_EQ(table["rows"].size(), 1u) << target;
      EXPECT_EQ(table["rows"][0]["object"]["apiVersion"], std::string("meta.k8s.io/") + version) << target;
      EXPECT_EQ(table["rows"][0]["object"]["metadata"]["name"], "p1") << target;
    }
  }
}

// A continue token whose revision left the history: 410 with the message upstream gives and a
// token in the Status's metadata that goes on after the same key at the latest revision
// (handleCompactedErrorForPaging), which then serves the rest as it is now.
TEST_F(ApiServerTest, AnExpiredContinueTokenIsAnsweredWithATokenForTheRest) {
  const std::string cms = "/api/v1/namespaces/default/configmaps";
  auto create = [&](const std::string& name) {
    return Do("POST", cms, R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name + R"("}})").status;
  };
  for (const char* name : {"a", "b", "c"}) ASSERT_EQ(create(name), 201);
  const json first = Body(Do("GET", cms + "?limit=1"));
  const std::string token = first["metadata"]["continue"];
  ASSERT_FALSE(token.empty());
  // More writes than the fixture's history holds (50 events), and a new object after "a".
  for (int i = 0; i < 60; ++i) {
    ASSERT_EQ(
        Do("PATCH", cms + "/c", R"({"data":{"i":")" + std::to_string(i) + R"("}})", "application/merge-patch+json")
            .status,
        200);
  }
  ASSERT_EQ(create("bb"), 201);
  HttpResponse expired = Do("GET", cms + "?limit=1&continue=" + token);
  ASSERT_EQ(expired.status, 410) << expired.body;
  const json status = Body(expired);
  EXPECT_EQ(status["reason"], "Expired");
  EXPECT_EQ(status["message"], store::ContinueExpiredMessage());
  const std::string fresh = status["metadata"].value("continue", "");
  ASSERT_FALSE(fresh.empty()) << status.dump();
  // The rest after "a", at the latest revision: b, bb, c, one page at a time.
  std::vector<std::string> names;
  std::string next = fresh;
  while (!next.empty()) {
    HttpResponse page = Do("GET", cms + "?limit=1&continue=" + next);
    ASSERT_EQ(page.status, 200) << page.body;
    const json body = Body(page);
    for (const json& item : body["items"]) names.push_back(item["metadata"]["name"]);
    next = body["metadata"].value("continue", "");
  }
  EXPECT_EQ(names, (std::vector<std::string>{"b", "bb", "c"}));
  // A token that was never valid is still a 400, with no token offered.
  HttpResponse bad = Do("GET", cms + "?limit=1&continue=bogus");
  EXPECT_EQ(bad.status, 400);
  EXPECT_FALSE(Body(bad).contains("metadata") && Body(bad)["metadata"].contains("continue"));
}

// A Table watch sends columnDefinitions in its first event only (upstream's serveWatchHandler
// sets TableOptions.NoHeaders after it; kubectl keeps the last columns it was sent), whether the
// first event is one of the initial ADDED or a change.
TEST_F(ApiServerTest, ATableWatchSendsItsColumnDefinitionsOnce) {
  const std::string cms = "/api/v1/namespaces/default/configmaps";
  const std::string table = "application/json;as=Table;g=meta.k8s.io;v=v1";
  for (const char* name : {"a", "b"}) {
    ASSERT_EQ(
        Do("POST", cms, R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + std::string(name) + R"("}})")
            .status,
        201);
  }
  const json columns = Body(WithAccept(api_.server, "GET", cms, table))["columnDefinitions"];
  ASSERT_FALSE(columns.empty());
  // From now (two initial ADDED, then the changes) and from a list's revision (changes only).
  for (const bool from_list : {false, true}) {
    const std::string query = from_list ? "?watch=true&resourceVersion=" +
                                              Body(Do("GET", cms))["metadata"]["resourceVersion"].get<std::string>()
                                        : "?watch=true";
    HttpRequest watch = testing::Request("GET", cms + query);
    watch.headers.emplace_back("Accept", table);
    HandlerResult w = api_.server.Handle(watch);
    ASSERT_TRUE(std::holds_alternative<StreamingResponse>(w)) << query;
    auto stream = std::make_shared<CollectingStream>();
    std::get<StreamingResponse>(w).start(stream);
    for (const char* name : {"a", "b"}) {
      ASSERT_EQ(Do("PATCH", cms + "/" + name, R"({"data":{"from_list":")" + std::to_string(from_list) + R"("}})",
                   "application/merge-patch+json")
                    .status,
                200);
    }
    const size_t want = from_list ? 2 : 4;
    std::vector<json> events = stream->Wait(want);
    ASSERT_EQ(events.size(), want) << query;
    for (size_t i = 0; i < events.size(); ++i) {
      const json& t = events[i]["object"];
      EXPECT_EQ(t["kind"], "Table") << query << " " << i;
      ASSERT_EQ(t["rows"].size(), 1u) << query << " " << i;
      if (i == 0) {
        EXPECT_EQ(t["columnDefinitions"], columns) << query;
      } else {
        ASSERT_TRUE(t.contains("columnDefinitions")) << query << " " << i;
        EXPECT_TRUE(t["columnDefinitions"].is_null()) << query << " " << i << ": " << t.dump();
      }
    }
    EXPECT_EQ(events.back()["object"]["rows"][0]["object"]["metadata"]["name"], "b") << query;
    stream->Close();
  }
}

// An includeObject a Table cannot have is a 400 naming it, on every verb, before anything is
// done (upstream's ValidateTableOptions); other answers than a Table ignore it, as upstream.
TEST_F(ApiServerTest, AnUnknownIncludeObjectOfATableIsRefused) {
  const std::string cms = "/api/v1/namespaces/default/configmaps";
  const std::string table = "application/json;as=Table;g=meta.k8s.io;v=v1";
  ASSERT_EQ(Do("POST", cms, R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}})").status, 201);
  const std::string message =
      "Unable to convert to Table as requested: includeObject: Invalid value: \"Everything\": must be 'Metadata', "
      "'Object', 'None', or empty";
  for (const auto& [method, target] : {std::pair<std::string, std::string>{"GET", cms + "?includeObject=Everything"},
                                       {"GET", cms + "/a?includeObject=Everything"},
                                       {"GET", cms + "?watch=true&includeObject=Everything"},
                                       {"DELETE", cms + "/a?includeObject=Everything"}}) {
    HttpResponse refused = WithAccept(api_.server, method, target, table);
    EXPECT_EQ(refused.status, 400) << method << " " << target;
    EXPECT_EQ(Body(refused)["reason"], "BadRequest") << target;
    EXPECT_EQ(Body(refused)["message"], message) << target;
  }
  HttpRequest create = testing::Request("POST", cms + "?includeObject=Everything",
                                        R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}})");
  create.headers.emplace_back("Accept", table);
  HandlerResult created = api_.server.Handle(create);
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(created));
  EXPECT_EQ(std::get<HttpResponse>(created).status, 400);
  EXPECT_EQ(Do("GET", cms + "/b").status, 404);  // the refused create wrote nothing
  EXPECT_EQ(Do("GET", cms + "/a").status, 200);  // nor did the refused delete
  for (const char* known : {"None", "Object", "Metadata"}) {
    EXPECT_EQ(WithAccept(api_.server, "GET", cms + "?includeObject=" + known, table).status, 200) << known;
  }
  EXPECT_EQ(Do("GET", cms + "?includeObject=Everything").status, 200);  // not a Table: ignored
}

// kubectl debug POD patches pods/ephemeralcontainers and reads details.name of the 404
// (a nil details crashed it): every NotFound carries details, {} for an unserved path.
TEST_F(ApiServerTest, NotFoundAlwaysCarriesDetails) {
  ASSERT_EQ(Do("POST", "/api/v1/namespaces/default/pods", kPod).status, 201);
  HttpResponse sub = Do("PATCH", "/api/v1/namespaces/default/pods/p1/ephemeralcontainers", "{}",
                        "application/strategic-merge-patch+json");
  EXPECT_EQ(sub.status, 404);
  EXPECT_EQ(Body(sub)["details"], json::object());
  HttpResponse pod = Do("GET", "/api/v1/namespaces/default/pods/nope");
  EXPECT_EQ(Body(pod)["details"], json::parse(R"({"name":"nope","kind":"pods"})"));
  EXPECT_EQ(Body(Do("GET", "/api/v1/nosuchresource"))["details"], json::object());
}

TEST_F(ApiServerTest, StrategicMergePatchOfAPodMergesContainersByName) {
  ASSERT_EQ(Do("POST", "/api/v1/namespaces/default/pods", kPod).status, 201);
  // What kubectl apply sends after changing the image (the one container field a pod
  // update may change): the container is merged by name, its env kept.
  HttpResponse r = Do("PATCH", "/api/v1/namespaces/default/pods/p1?fieldManager=kubectl-client-side-apply",
                      R"({"spec":{"$setElementOrder/containers":[{"name":"c"}],
                          "containers":[{"image":"busybox:1.36","name":"c"}]}})",
                      "application/strategic-merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["spec"]["containers"].size(), 1u);
  EXPECT_EQ(Body(r)["spec"]["containers"][0]["env"], json::parse(R"([{"name":"A","value":"1"}])"));
  EXPECT_EQ(Body(r)["spec"]["containers"][0]["image"], "busybox:1.36");
  // Anything else in a pod's spec is immutable: ValidatePodUpdate's Forbidden.
  HttpResponse env = Do("PATCH", "/api/v1/namespaces/default/pods/p1",
                        R"({"spec":{"containers":[{"env":[{"name":"B","value":"2"}],"name":"c"}]}})",
                        "application/strategic-merge-patch+json");
  EXPECT_EQ(env.status, 422);
  EXPECT_EQ(Body(env)["details"]["causes"][0]["field"], "spec");
}

TEST_F(ApiServerTest, StrategicMergePatchOfACustomResourceIs415) {
  ASSERT_EQ(Do("POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues", kLocalQueue).status, 201);
  HttpResponse r = Do("PATCH", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues/lq",
                      R"({"metadata":{"labels":{"a":"b"}}})", "application/strategic-merge-patch+json");
  EXPECT_EQ(r.status, 415);
  EXPECT_EQ(Body(r)["reason"], "UnsupportedMediaType");
  EXPECT_EQ(Body(r)["message"],
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml");
  // The same change as a merge patch works.
  r = Do("PATCH", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues/lq",
         R"({"metadata":{"labels":{"a":"b"}}})", "application/merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["metadata"]["labels"]["a"], "b");
}

TEST_F(ApiServerTest, JsonPatchThatCannotApplyIs422WithTheDetail) {
  ASSERT_EQ(Do("POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues", kLocalQueue).status, 201);
  HttpResponse r = Do("PATCH", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues/lq",
                      R"([{"op":"remove","path":"/spec/nope"}])", "application/json-patch+json");
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(Body(r)["reason"], "Invalid");
  ASSERT_EQ(Body(r)["details"]["causes"].size(), 1u);
  EXPECT_NE(Body(r)["details"]["causes"][0]["message"].get<std::string>().find("/spec/nope"), std::string::npos);
}

// A patch's result meets the checks a PUT body meets (upstream's patcher.applyPatch:
// EnsureObjectNamespaceMatchesRequestNamespace, then checkName): whatever the patch type,
// a result that renames the object, moves it to another namespace or has lost its
// metadata is a 400 that changes nothing; a cleared namespace is the URL's again, and a
// cluster-scoped object's namespace is dropped.
TEST_F(ApiServerTest, APatchMayNotRenameMoveOrEmptyItsObject) {
  const std::string cm_url = "/api/v1/namespaces/default/configmaps/cm";
  ASSERT_EQ(Do("POST", "/api/v1/namespaces/default/configmaps",
               R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","labels":{"team":"a"}},
                   "data":{"k":"v"}})")
                .status,
            201);
  ASSERT_EQ(Do("POST", "/api/v1/namespaces/default/pods", kPod).status, 201);
  const json cm_before = Body(Do("GET", cm_url));
  const json pod_before = Body(Do("GET", "/api/v1/namespaces/default/pods/p1"));
  const std::string no_name = "the name of the object () does not match the name on the URL (cm)";
  const std::string moved = "the namespace of the provided object does not match the namespace sent on the request";
  struct Case {
    std::string url, content_type, patch, message;
  };
  const std::string smp = "application/strategic-merge-patch+json";
  const std::string merge = "application/merge-patch+json";
  const std::string json_patch = "application/json-patch+json";
  const std::vector<Case> refused = {
      {cm_url, smp, R"({"$patch":"delete"})", no_name},
      {cm_url, smp, R"({"$patch":"replace","data":{"k":"w"}})", no_name},
      {cm_url, smp, R"({"metadata":{"name":"other"}})",
       "the name of the object (other) does not match the name on the URL (cm)"},
      {cm_url, merge, R"({"metadata":null})", no_name},
      {cm_url, merge, R"({"metadata":{"name":null}})", no_name},
      {cm_url, merge, R"({"metadata":{"name":"other"}})",
       "the name of the object (other) does not match the name on the URL (cm)"},
      {cm_url, merge, R"({"metadata":{"namespace":"kube-system"}})", moved},
      {cm_url, merge, R"({"metadata":"x"})",
       "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: metadata must be an object"},
      {cm_url, json_patch, R"([{"op":"remove","path":"/metadata"}])", no_name},
      {cm_url, json_patch, R"([{"op":"replace","path":"/metadata/namespace","value":"kube-system"}])", moved},
      {"/api/v1/namespaces/default/pods/p1/status", merge, R"({"metadata":{"name":"p2"}})",
       "the name of the object (p2) does not match the name on the URL (p1)"},
  };
  for (const Case& c : refused) {
    HttpResponse r = Do("PATCH", c.url, c.patch, c.content_type);
    EXPECT_EQ(r.status, 400) << c.patch << " " << r.body;
    EXPECT_EQ(Body(r)["reason"], "BadRequest") << c.patch;
    EXPECT_EQ(Body(r)["message"], c.message) << c.patch;
  }
  EXPECT_EQ(Body(Do("GET", cm_url)), cm_before);
  EXPECT_EQ(Body(Do("GET", "/api/v1/namespaces/default/pods/p1")), pod_before);

  // A removed namespace is the URL's again: the patch applies.
  HttpResponse cleared = Do("PATCH", cm_url, R"({"metadata":{"namespace":null},"data":{"k":"w"}})", merge);
  ASSERT_EQ(cleared.status, 200) << cleared.body;
  EXPECT_EQ(Body(cleared)["metadata"]["namespace"], "default");
  EXPECT_EQ(Body(cleared)["data"]["k"], "w");
  // A cluster-scoped object has no namespace to move to.
  ASSERT_EQ(Do("POST", "/apis/kueue.x-k8s.io/v1beta2/resourceflavors",
               R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ResourceFlavor","metadata":{"name":"rf"}})")
                .status,
            201);
  HttpResponse flavor = Do("PATCH", "/apis/kueue.x-k8s.io/v1beta2/resourceflavors/rf",
                           R"({"metadata":{"namespace":"default","labels":{"a":"b"}}})", merge);
  ASSERT_EQ(flavor.status, 200) << flavor.body;
  EXPECT_FALSE(Body(flavor)["metadata"].contains("namespace"));
  EXPECT_EQ(Body(flavor)["metadata"]["labels"]["a"], "b");
}

// Metadata whose fields have the wrong JSON type is refused as Go's decoder refuses it
// (400, before any validation) on every write path, and changes nothing: before, a label
// map given as a string was stored, and typed clients (kubectl drain, describe) and
// berth's own informers failed on the object.
TEST_F(ApiServerTest, MetadataFieldsOfTheWrongTypeAreRefusedOnEveryWritePath) {
  struct Case {
    std::string field;  // metadata.<field>
    json value;
    std::string message;  // after "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: "
  };
  const std::string go = "json: cannot unmarshal ";
  const std::vector<Case> cases = {
      {"labels", "abc", go + "string into Go struct field ObjectMeta.metadata.labels of type map[string]string"},
      {"labels", {{"a", 1}}, go + "number into Go struct field ObjectMeta.metadata.labels of type string"},
      {"annotations", json::array(),
       go + "array into Go struct field ObjectMeta.metadata.annotations of type map[string]string"},
      {"annotations", {{"a", true}}, go + "bool into Go struct field ObjectMeta.metadata.annotations of type string"},
      {"finalizers", {{"a", 1}}, go + "object into Go struct field ObjectMeta.metadata.finalizers of type []string"},
      {"finalizers", {1}, go + "number into Go struct field ObjectMeta.metadata.finalizers of type string"},
      {"ownerReferences", "x",
       go + "string into Go struct field ObjectMeta.metadata.ownerReferences of type []v1.OwnerReference"},
      {"ownerReferences",
       {"x"},
       go + "string into Go struct field ObjectMeta.metadata.ownerReferences of type v1.OwnerReference"},
      {"ownerReferences", json::array({{{"name", 1}}}),
       go + "number into Go struct field OwnerReference.metadata.ownerReferences.name of type string"},
      {"ownerReferences", json::array({{{"controller", "yes"}}}),
       go + "string into Go struct field OwnerReference.metadata.ownerReferences.controller of type bool"},
      {"generateName", 5, go + "number into Go struct field ObjectMeta.metadata.generateName of type string"},
      {"name", json::object(), go + "object into Go struct field ObjectMeta.metadata.name of type string"},
      {"generation", "1", go + "string into Go struct field ObjectMeta.metadata.generation of type int64"},
      {"generation", 1.5, go + "number 1.5 into Go struct field ObjectMeta.metadata.generation of type int64"},
      {"deletionGracePeriodSeconds", true,
       go + "bool into Go struct field ObjectMeta.metadata.deletionGracePeriodSeconds of type int64"},
      {"creationTimestamp", 5, go + "number into Go struct field ObjectMeta.metadata.creationTimestamp of type string"},
      {"managedFields",
       {1},
       go + "number into Go struct field ObjectMeta.metadata.managedFields of type v1.ManagedFieldsEntry"},
  };
  const std::string url = "/api/v1/namespaces/default/configmaps";
  ASSERT_EQ(
      Do("POST", url, R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","labels":{"a":"b"}}})").status,
      201);
  const json before = Body(Do("GET", url + "/cm"));
  for (const Case& c : cases) {
    const std::string want = "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: " + c.message;
    json created = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "new"}}}};
    created["metadata"][c.field] = c.value;
    json replaced = before;
    replaced["metadata"][c.field] = c.value;
    json merge = {{"metadata", {{c.field, c.value}}}};
    json json_patch = json::array({{{"op", "add"}, {"path", "/metadata/" + c.field}, {"value", c.value}}});
    const std::vector<HttpResponse> answers = {
        Do("POST", url, created.dump()),
        Do("PUT", url + "/cm", replaced.dump()),
        Do("PATCH", url + "/cm", merge.dump(), "application/merge-patch+json"),
        Do("PATCH", url + "/cm", json_patch.dump(), "application/json-patch+json"),
    };
    for (size_t i = 0; i < answers.size(); ++i) {
      EXPECT_EQ(answers[i].status, 400) << c.field << " " << c.value << " path " << i << ": " << answers[i].body;
      EXPECT_EQ(Body(answers[i])["message"], want) << c.field << " path " << i;
    }
  }
  EXPECT_EQ(Do("GET", url + "/new").status, 404);
  EXPECT_EQ(Body(Do("GET", url + "/cm")), before);
  // null is Go's zero value: accepted.
  HttpResponse nulls = Do("PATCH", url + "/cm", R"({"metadata":{"annotations":null,"finalizers":null}})",
                          "application/merge-patch+json");
  EXPECT_EQ(nulls.status, 200) << nulls.body;
}

// A quantity berth cannot hold (beyond int64 milli-units, about 8 PiB) would compute as
// "unlimited": a ClusterQueue's 100Pi nominalQuota admitted any Workload. It is refused,
// in quotas and in requests alike, naming the field.
TEST_F(ApiServerTest, QuantitiesBeyondWhatBerthHoldsAreRefusedInQuotasAndRequests) {
  const std::string range =
      "must be between -9223372036854775807m and 9223372036854775807m (berth holds quantities as int64 milli-units)";
  json cq = json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue","metadata":{"name":"cq"},
    "spec":{"resourceGroups":[{"coveredResources":["memory"],
      "flavors":[{"name":"f","resources":[{"name":"memory","nominalQuota":"100Pi"}]}]}]}})");
  HttpResponse r = Do("POST", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues", cq.dump());
  EXPECT_EQ(r.status, 422) << r.body;
  ASSERT_EQ(Body(r)["details"]["causes"].size(), 1u) << r.body;
  EXPECT_EQ(Body(r)["details"]["causes"][0]["field"], "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota");
  EXPECT_EQ(Body(r)["details"]["causes"][0]["message"], "Invalid value: \"100Pi\": " + range);
  cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "8Pi";
  EXPECT_EQ(Do("POST", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues", cq.dump()).status, 201);

  json pod = json::parse(kPod);
  pod["spec"]["containers"][0]["resources"] = {{"requests", {{"memory", "40Pi"}}}};
  r = Do("POST", "/api/v1/namespaces/default/pods", pod.dump());
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_NE(r.body.find("spec.containers[0].resources.requests[memory]"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(range), std::string::npos) << r.body;
}

// Upstream returns the object for Pods and custom resources, a Success Status
// for the other built-in kinds removed at once.
TEST_F(ApiServerTest, DeleteResponses) {
  ASSERT_EQ(Do("POST", "/api/v1/namespaces/default/configmaps",
               R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"}})").status, 201);
  HttpResponse r = Do("DELETE", "/api/v1/namespaces/default/configmaps/cm", R"({"propagationPolicy":"Background"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["kind"], "Status");
  EXPECT_EQ(Body(r)["status"], "Success");
  EXPECT_EQ(Body(r)["details"]["name"], "cm");
  EXPECT_EQ(Body(r)["details"]["kind"], "configmaps");

  ASSERT_EQ(Do("POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues", kLocalQueue).status, 201);
  r = Do("DELETE", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues/lq");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["kind"], "LocalQueue");
  EXPECT_EQ(Do("GET", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues/lq").status, 404);
}

// metadata.generateName names the object before admission, so validation and the kind's
// prepare see the name (the Job strategy's job-name label carries it), as Kueue's
// `kubectl create -f sample-job.yaml` relies on; neither name nor generateName is 422.
TEST_F(ApiServerTest, GenerateNameNamesTheObjectBeforeAdmission) {
  const std::string job = R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"generateName":"sample-job-"},
    "spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}})";
  HttpResponse r = Do("POST", "/apis/batch/v1/namespaces/default/jobs", job);
  ASSERT_EQ(r.status, 201) << r.body;
  const std::string name = Body(r)["metadata"]["name"];
  EXPECT_EQ(name.size(), std::string("sample-job-").size() + 5) << name;
  EXPECT_EQ(name.rfind("sample-job-", 0), 0u) << name;
  EXPECT_EQ(Body(r)["spec"]["template"]["metadata"]["labels"]["batch.kubernetes.io/job-name"], name);
  EXPECT_EQ(Do("GET", "/apis/batch/v1/namespaces/default/jobs/" + name).status, 200);

  // Two more from the same prefix get names of their own.
  HttpResponse r2 = Do("POST", "/apis/batch/v1/namespaces/default/jobs", job);
  ASSERT_EQ(r2.status, 201) << r2.body;
  EXPECT_NE(Body(r2)["metadata"]["name"], name);

  // A prefix longer than 58 characters is cut, so the name stays a valid 63-character one.
  const std::string long_prefix(70, 'a');
  r = Do("POST", "/api/v1/namespaces/default/configmaps",
         R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":")" + long_prefix + R"("}})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Body(r)["metadata"]["name"].get<std::string>().size(), 63u);

  r = Do("POST", "/api/v1/namespaces/default/configmaps", R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{}})");
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(Body(r)["details"]["causes"][0]["field"], "metadata.name");
  EXPECT_EQ(Body(r)["details"]["causes"][0]["message"], "Required value: name or generateName is required");
}

// Foreground and namespace deletion leave the object Terminating for the
// garbage collector (not running here).
TEST_F(ApiServerTest, ForegroundAndNamespaceDeletionMarkTheObject) {
  ASSERT_EQ(Do("POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues", kLocalQueue).status, 201);
  HttpResponse r = Do("DELETE", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues/lq",
                      R"({"propagationPolicy":"Foreground"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(Body(r)["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ(Body(r)["metadata"]["finalizers"], json::parse(R"(["foregroundDeletion"])"));

  ASSERT_EQ(Do("POST", "/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}})")
                .status,
            201);
  r = Do("DELETE", "/api/v1/namespaces/team-a");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["status"]["phase"], "Terminating");
  // No new content in a terminating namespace.
  r = Do("POST", "/api/v1/namespaces/team-a/configmaps",
         R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"late"}})");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(Body(r)["message"],
            "configmaps \"late\" is forbidden: unable to create new content in namespace team-a because it is being "
            "terminated");
}

// A watch from a resourceVersion replays what happened after it, then follows.
TEST_F(ApiServerTest, WatchResumesFromAResourceVersion) {
  HttpResponse created = Do("POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues", kLocalQueue);
  ASSERT_EQ(created.status, 201);
  const std::string rv1 = Body(created)["metadata"]["resourceVersion"];
  HttpResponse labelled = Do("PATCH", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues/lq",
                             R"({"metadata":{"labels":{"a":"b"}}})", "application/merge-patch+json");
  ASSERT_EQ(labelled.status, 200);
  const std::string rv2 = Body(labelled)["metadata"]["resourceVersion"];

  auto stream = Watch("/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues?watch=true&resourceVersion=" + rv1);
  std::vector<json> events = stream->Wait(1);
  ASSERT_GE(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "MODIFIED");
  EXPECT_EQ(events[0]["object"]["metadata"]["resourceVersion"], rv2);
  EXPECT_EQ(events[0]["object"]["metadata"]["labels"]["a"], "b");

  ASSERT_EQ(Do("DELETE", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues/lq").status, 200);
  events = stream->Wait(2);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1]["type"], "DELETED");
  EXPECT_EQ(events[1]["object"]["metadata"]["name"], "lq");
  stream->Close();
}

// Every resourceVersion that parses to 0 ("0", "00") starts the watch with the
// current objects, then their changes, as no resourceVersion does (upstream's
// storage parses the value); a non-zero one replays from there.
TEST_F(ApiServerTest, AWatchFromAResourceVersionThatParsesToZeroStartsWithTheCurrentObjects) {
  ASSERT_EQ(Do("POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues", kLocalQueue).status, 201);
  ASSERT_EQ(Do("PATCH", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues/lq",
               R"({"metadata":{"labels":{"a":"b"}}})", "application/merge-patch+json")
                .status,
            200);
  for (const std::string rv : {"", "&resourceVersion=0", "&resourceVersion=00", "&resourceVersion=000"}) {
    SCOPED_TRACE(rv);
    auto stream = Watch("/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues?watch=true" + rv);
    std::vector<json> events = stream->Wait(1);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0]["type"], "ADDED");
    EXPECT_EQ(events[0]["object"]["metadata"]["name"], "lq");
    EXPECT_EQ(events[0]["object"]["metadata"]["labels"]["a"], "b") << "the current object, not the history";
    stream->Close();
  }
}

// Watches share one encoding per event, API version and event type
// (EncodingCache): each watch still gets its own version, and a write that
// enters one watch's selection is ADDED there and MODIFIED in another.
TEST_F(ApiServerTest, WatchesOfOneEventGetTheirOwnVersionAndType) {
  const std::string v1beta1 = "/apis/kueue.x-k8s.io/v1beta1/namespaces/default/localqueues?watch=true";
  const std::string v1beta2 = "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues?watch=true";
  auto old_version = Watch(v1beta1);
  auto all_a = Watch(v1beta2);
  auto all_b = Watch(v1beta2);
  auto labelled = Watch(v1beta2 + "&labelSelector=a%3Db");
  ASSERT_EQ(Do("POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues", kLocalQueue).status, 201);
  ASSERT_EQ(Do("PATCH", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues/lq",
               R"({"metadata":{"labels":{"a":"b"}}})", "application/merge-patch+json")
                .status,
            200);

  for (const auto& stream : {old_version, all_a, all_b}) {
    std::vector<json> events = stream->Wait(2);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0]["type"], "ADDED");
    EXPECT_EQ(events[1]["type"], "MODIFIED");
    EXPECT_EQ(events[1]["object"]["metadata"]["labels"]["a"], "b");
  }
  EXPECT_EQ(old_version->Wait(2)[1]["object"]["apiVersion"], "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(all_a->Wait(2)[1]["object"]["apiVersion"], "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(all_a->Wait(2), all_b->Wait(2));
  std::vector<json> selected = labelled->Wait(1);
  ASSERT_EQ(selected.size(), 1u);
  EXPECT_EQ(selected[0]["type"], "ADDED");  // the label write brought it into the selection
  EXPECT_EQ(selected[0]["object"]["apiVersion"], "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(selected[0]["object"]["metadata"]["resourceVersion"],
            all_a->Wait(2)[1]["object"]["metadata"]["resourceVersion"]);
  for (const auto& stream : {old_version, all_a, all_b, labelled}) stream->Close();
}

// A resourceVersion older than the history: 200 with one ERROR event (410
// Expired), then the end of the stream, as upstream.
TEST_F(ApiServerTest, WatchFromACompactedResourceVersionGetsExpired) {
  for (int i = 0; i < 60; ++i) {
    json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "cm" + std::to_string(i)}}}};
    ASSERT_EQ(Do("POST", "/api/v1/namespaces/default/configmaps", cm.dump()).status, 201);
  }
  auto stream = Watch("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1");
  std::vector<json> events = stream->Wait(1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "ERROR");
  EXPECT_EQ(events[0]["object"]["code"], 410);
  EXPECT_EQ(events[0]["object"]["reason"], "Expired");
  EXPECT_TRUE(stream->Done());
}

// Registered non-resource handlers take whole path segments, the longest
// prefix first, before any built-in route; other paths are untouched.
TEST_F(ApiServerTest, NonResourceHandlersServeTheirPrefixByWholeSegments) {
  auto answer = [](std::string text) {
    return [text](const HttpRequest& req) -> HandlerResult {
      HttpResponse r;
      r.content_type = "text/plain";
      r.body = text + " " + req.target;
      return r;
    };
  };
  api_.server.RegisterNonResourceHandler("/metrics", answer("metrics"));
  api_.server.RegisterNonResourceHandler("/apis/diag.berth.dev/", answer("diag"));
  api_.server.RegisterNonResourceHandler("/apis/diag.berth.dev/v1/explain", answer("explain"));

  EXPECT_EQ(Do("GET", "/metrics").body, "metrics /metrics");
  EXPECT_EQ(Do("GET", "/metrics?x=1").body, "metrics /metrics?x=1");
  EXPECT_EQ(Do("GET", "/apis/diag.berth.dev/v1").body, "diag /apis/diag.berth.dev/v1");
  EXPECT_EQ(Do("GET", "/apis/diag.berth.dev/v1/explain/ns/a/b").body, "explain /apis/diag.berth.dev/v1/explain/ns/a/b");
  EXPECT_EQ(Do("GET", "/metricsx").status, 404);
  EXPECT_EQ(Do("GET", "/version").status, 200);
  EXPECT_EQ(Do("GET", "/api/v1/namespaces/default").status, 200);
}

// events.k8s.io/v1 Event is a view of the core Events (resources/events.k8s.io/events.yaml):
// one stored object, created, read, listed by field selector, patched, tabled and watched
// in either group with that group's field names.
TEST_F(ApiServerTest, EventsAreOneStoredObjectServedInBothGroups) {
  const char* kEventsV1 = R"({"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e1"},
    "eventTime":"2026-01-01T00:00:00.000000Z","reportingController":"example.com/c","reportingInstance":"i1",
    "action":"Check","reason":"Checked","note":"via events api","type":"Normal",
    "regarding":{"apiVersion":"batch/v1","kind":"Job","name":"j","namespace":"default","uid":"u1"}})";
  auto core_watch = Watch("/api/v1/namespaces/default/events?watch=true&resourceVersion=1");
  auto v1_watch = Watch("/apis/events.k8s.io/v1/namespaces/default/events?watch=true&resourceVersion=1");
  HttpResponse created = Do("POST", "/apis/events.k8s.io/v1/namespaces/default/events", kEventsV1);
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(Body(created)["note"], "via events api");
  EXPECT_EQ(Body(created)["apiVersion"], "events.k8s.io/v1");

  json core = Body(Do("GET", "/api/v1/namespaces/default/events/e1"));
  EXPECT_EQ(core["apiVersion"], "v1");
  EXPECT_EQ(core["message"], "via events api");
  EXPECT_EQ(core["involvedObject"]["name"], "j");
  EXPECT_EQ(core["reportingComponent"], "example.com/c");
  EXPECT_FALSE(core.contains("note"));

  const char* kCore = R"({"apiVersion":"v1","kind":"Event","metadata":{"name":"e2"},
    "involvedObject":{"apiVersion":"v1","kind":"Pod","name":"p","namespace":"default"},
    "reason":"Started","message":"Started container c","type":"Normal","count":3,
    "source":{"component":"kubelet","host":"node-0"},"firstTimestamp":"2026-01-01T00:00:00Z",
    "lastTimestamp":"2026-01-01T00:00:00Z"})";
  ASSERT_EQ(Do("POST", "/api/v1/namespaces/default/events", kCore).status, 201);
  json listed = Body(Do("GET", "/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=regarding.kind%3DPod"));
  ASSERT_EQ(listed["items"].size(), 1u) << listed;
  EXPECT_EQ(listed["kind"], "EventList");
  EXPECT_EQ(listed["items"][0]["deprecatedCount"], 3);
  EXPECT_EQ(listed["items"][0]["deprecatedSource"]["host"], "node-0");
  EXPECT_EQ(listed["items"][0]["regarding"]["name"], "p");
  EXPECT_EQ(
      Body(Do("GET", "/api/v1/namespaces/default/events?fieldSelector=involvedObject.kind%3DJob"))["items"].size(), 1u);
  EXPECT_EQ(
      Do("GET", "/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=involvedObject.kind%3DJob").status,
      400);

  // A patch through the view lands on the one object; through events.k8s.io/v1 only the series
  // and metadata may change (ValidateEventUpdate), so a deprecated field is refused by its core
  // name, and through core/v1 it may change.
  HttpResponse refused = Do("PATCH", "/apis/events.k8s.io/v1/namespaces/default/events/e2", R"({"deprecatedCount":4})",
                            "application/merge-patch+json");
  EXPECT_EQ(refused.status, 422) << refused.body;
  EXPECT_EQ(Body(refused)["details"]["causes"][0]["field"], "count");
  HttpResponse labelled = Do("PATCH", "/apis/events.k8s.io/v1/namespaces/default/events/e2",
                             R"({"metadata":{"labels":{"team":"a"}}})", "application/merge-patch+json");
  ASSERT_EQ(labelled.status, 200) << labelled.body;
  EXPECT_EQ(Body(Do("GET", "/api/v1/namespaces/default/events/e2"))["metadata"]["labels"]["team"], "a");
  HttpResponse patched =
      Do("PATCH", "/api/v1/namespaces/default/events/e2", R"({"count":4})", "application/merge-patch+json");
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(Body(Do("GET", "/apis/events.k8s.io/v1/namespaces/default/events/e2"))["deprecatedCount"], 4);

  // The table is kubectl's Event table in both groups.
  HttpResponse table = WithAccept(api_.server, "GET", "/apis/events.k8s.io/v1/namespaces/default/events/e2",
                                  "application/json;as=Table;v=v1;g=meta.k8s.io");
  json cells = Body(table)["rows"][0]["cells"];
  EXPECT_EQ(cells[1], "Normal");
  EXPECT_EQ(cells[2], "Started");
  EXPECT_EQ(cells[3], "pod/p");
  EXPECT_EQ(cells[5], "kubelet, node-0");
  EXPECT_EQ(cells[6], "Started container c");
  EXPECT_EQ(cells[8], 4);

  // Two creates, the label and the count: the refused patch wrote nothing.
  std::vector<json> core_events = core_watch->Wait(4);
  std::vector<json> v1_events = v1_watch->Wait(4);
  ASSERT_EQ(core_events.size(), 4u);
  ASSERT_EQ(v1_events.size(), 4u);
  EXPECT_EQ(core_events[0]["object"]["message"], "via events api");
  EXPECT_EQ(v1_events[0]["object"]["note"], "via events api");
  EXPECT_EQ(v1_events[3]["type"], "MODIFIED");
  EXPECT_EQ(v1_events[3]["object"]["deprecatedCount"], 4);

  // Deleted through the view, gone from both.
  EXPECT_EQ(Do("DELETE", "/apis/events.k8s.io/v1/namespaces/default/events/e1").status, 200);
  EXPECT_EQ(Do("GET", "/api/v1/namespaces/default/events/e1").status, 404);
  HttpResponse missing = Do("GET", "/apis/events.k8s.io/v1/namespaces/default/events/e1");
  EXPECT_EQ(Body(missing)["message"], "events.events.k8s.io \"e1\" not found");
}

}  // namespace
}  // namespace berth::apiserver

namespace berth::apiserver {
namespace {

// Warnings are bounded as kube-apiserver's recorder bounds them: past 4 Ki runes
// in total each is cut to 256 runes, and those past the total are dropped, so
// one request cannot make a response header the transport refuses.
TEST_F(ApiServerTest, WarningsAreTruncatedAsUpstreamBoundsThem) {
  json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "warned"}}}};
  for (int i = 0; i < 100; ++i) cm[std::string(1000, static_cast<char>('a' + i % 26)) + std::to_string(i)] = 1;
  HttpResponse r = Do("POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Warn", cm.dump());
  ASSERT_EQ(r.status, 201) << r.body;
  std::size_t warnings = 0, bytes = 0;
  for (const auto& [name, value] : r.headers) {
    if (name != "Warning") continue;
    ++warnings;
    bytes += value.size();
    EXPECT_LE(value.size(), 256u + 16u) << value.substr(0, 80);
  }
  EXPECT_EQ(warnings, 16u);  // 16 x 256 runes = 4 Ki
  EXPECT_LE(bytes, 4096u + 16u * 16u);
  // A few short warnings are kept whole.
  json small = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "small"}}}, {"extra", 1}};
  HttpResponse s = Do("POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Warn", small.dump());
  ASSERT_EQ(s.status, 201);
  ASSERT_EQ(std::count_if(s.headers.begin(), s.headers.end(), [](const auto& h) { return h.first == "Warning"; }), 1);
}

}  // namespace
}  // namespace berth::apiserver
