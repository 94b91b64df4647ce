// The input limits (api/limits.h) through the REST handler, one test per kind of attack,
// each over every way a request can carry it: JSON and YAML bodies, the four patch
// formats, DeleteOptions. Each asserts the HTTP code and the whole message, and that the
// server still answers afterwards.
#include "api/limits.h"

#include <arpa/inet.h>
#include <chrono>
#include <functional>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string>
#include <sys/resource.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <variant>

#include "api/priority_admission.h"
#include "api/yaml_codec.h"
#include "apiserver/api_server.h"
#include "apiserver/testing/test_api_server.h"

namespace berth::apiserver {
namespace {

using nlohmann::json;

std::string Nested(char open, char close, int depth, const std::string& inner = "") {
  return std::string(depth, open) + inner + std::string(depth, close);
}

// Runs fn on a thread whose stack is `bytes` (the I/O threads of the HTTP server have
// the process default, 8 MiB here; this shows what the pipeline needs).
void RunOnStack(size_t bytes, const std::function<void()>& fn) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, bytes);
  pthread_t thread;
  auto call = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, call, const_cast<std::function<void()>*>(&fn)), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

long MaxRssKib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

class LimitsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(api_.server.EnsureSystemNamespaces().ok()); }

  HttpResponse Do(const std::string& method, const std::string& target, const std::string& body = "",
                  const std::string& content_type = "application/json") {
    return testing::Respond(api_.server, method, target, body, content_type);
  }
  static json Body(const HttpResponse& r) { return json::parse(r.body); }
  static std::string Message(const HttpResponse& r) { return Body(r).value("message", ""); }

  // The server still serves: a read and a write.
  void ExpectServing() {
    EXPECT_EQ(Do("GET", "/api/v1/namespaces/default").status, 200);
    HttpResponse w = Do("POST", "/api/v1/namespaces/default/configmaps?dryRun=All",
                        R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"canary"}})");
    EXPECT_EQ(w.status, 201) << w.body;
  }

  static constexpr const char* kPod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
    "spec":{"containers":[{"name":"c","image":"busybox"}]}})";

  testing::TestApiServer api_;
};

// ---------------------------------------------------------------------------
// Nesting depth

// 200,000 nested '[' in a ConfigMap's data killed the server (SIGSEGV in schema
// pruning); any JSON body nested deeper than 10000 is now a 400 naming the reason.
TEST_F(LimitsTest, DeeplyNestedJsonBodiesAre400) {
  const std::string prefix = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":{"a":)";
  for (int depth : {10001, 200000}) {
    const std::string body = prefix + Nested('[', ']', depth) + "}}";
    for (const char* target :
         {"/api/v1/namespaces/default/configmaps?dryRun=All", "/api/v1/namespaces/default/configmaps"}) {
      HttpResponse r = Do("POST", target, body);
      EXPECT_EQ(r.status, 400) << target;
      // The column of the '[' that opens level 10001 (the body's '{' and data's are two).
      EXPECT_EQ(Message(r), "json: line 1, column " + std::to_string(prefix.size() + 9999) + ": exceeded max depth");
      EXPECT_EQ(Body(r).value("reason", ""), "BadRequest");
    }
    // Objects count as levels too, and an update is bounded as a create.
    std::string nested_objects = prefix;
    for (int i = 0; i < depth; ++i) nested_objects += R"({"k":)";
    nested_objects += "1" + std::string(depth, '}') + "}}";
    HttpResponse put = Do("PUT", "/api/v1/namespaces/default/configmaps/deep", nested_objects);
    EXPECT_EQ(put.status, 400);
    EXPECT_EQ(Message(put),
              "json: line 1, column " + std::to_string(prefix.size() + 5 * 9998 + 1) + ": exceeded max depth");
  }
  ExpectServing();
}

// Brackets inside strings are text, not nesting: a value with 20,000 '[' characters in a
// string is stored as any string.
TEST_F(LimitsTest, BracketsInStringsAreNotNesting) {
  const std::string body = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"text"},"data":{"a":")" +
                           std::string(20000, '[') + R"(\"[{"}})";
  HttpResponse r = Do("POST", "/api/v1/namespaces/default/configmaps", body);
  EXPECT_EQ(r.status, 201) << r.body.substr(0, 300);
}

// YAML bodies: yaml-cpp's own bound (a node 500 deep), reported with the reason at the
// collection that holds the node one too deep, in flow and in block style.
TEST_F(LimitsTest, DeeplyNestedYamlBodiesAre400) {
  const std::string head = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n  a: ";
  for (int depth : {498, 200000}) {
    HttpResponse r = Do("POST", "/api/v1/namespaces/default/configmaps?dryRun=All",
                        head + Nested('[', ']', depth) + "\n", "application/yaml");
    EXPECT_EQ(r.status, 400);
    // The document's mapping and data's are depths 1 and 2: the 497th '[' (column
    // 6 + 496) opens depth 499, and what it holds is one too deep.
    EXPECT_EQ(Message(r),
              "document 1: error converting YAML to JSON: yaml: line 6, column 502: exceeded max depth "
              "of 499");
  }
  // 497 nested sequences under the two mappings: 499 nodes deep, accepted by the parser
  // (and refused by the schema: data values are strings).
  HttpResponse ok = Do("POST", "/api/v1/namespaces/default/configmaps?dryRun=All", head + Nested('[', ']', 497) + "\n",
                       "application/yaml");
  EXPECT_EQ(ok.status, 422) << ok.body.substr(0, 300);

  // Block style: one mapping per line, each indented one more space.
  std::string block = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\n";
  for (int i = 0; i < 600; ++i) block += std::string(i, ' ') + "k:\n";
  HttpResponse b = Do("POST", "/api/v1/namespaces/default/configmaps?dryRun=All", block, "application/yaml");
  EXPECT_EQ(b.status, 400);
  // Line 5 + j holds the mapping of depth j + 1 (indented j): depth 499 is line 503.
  EXPECT_EQ(Message(b),
            "document 1: error converting YAML to JSON: yaml: line 503, column 499: exceeded max depth of 499");
  ExpectServing();
}

// Patch bodies, in all four formats, and a DeleteOptions body.
TEST_F(LimitsTest, DeeplyNestedPatchAndDeleteBodiesAre400) {
  ASSERT_EQ(Do("POST", "/api/v1/namespaces/default/pods", kPod).status, 201);
  const std::string deep = Nested('[', ']', 200000);
  const std::string merge = R"({"metadata":{"labels":)" + deep + "}}";
  const int merge_column = static_cast<int>(std::string(R"({"metadata":{"labels":)").size()) + 9999;
  struct Case {
    const char* content_type;
    std::string body;
    std::string want;
  };
  const Case cases[] = {
      {"application/merge-patch+json", merge,
       "error decoding patch: json: line 1, column " + std::to_string(merge_column) + ": exceeded max depth"},
      {"application/strategic-merge-patch+json", merge,
       "error decoding patch: json: line 1, column " + std::to_string(merge_column) + ": exceeded max depth"},
      {"application/json-patch+json", R"([{"op":"add","path":"/metadata/labels","value":)" + deep + "}]",
       "error decoding patch: json: line 1, column " +
           std::to_string(std::string(R"([{"op":"add","path":"/metadata/labels","value":)").size() + 9999) +
           ": exceeded max depth"},
      {"application/apply-patch+yaml",
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":)" + deep + "}}",
       "json: line 1, column " +
           std::to_string(std::string(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":)").size() +
                          10001 - 2) +
           ": exceeded max depth"},
      {"application/apply-patch+yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: " + deep + "\n",
       // Depths 1 and 2 are the document and metadata; the 497th '[' is at column 11 + 496.
       "document 1: error converting YAML to JSON: yaml: line 5, column 507: exceeded max depth of 499"},
  };
  for (const Case& c : cases) {
    HttpResponse r = Do("PATCH", "/api/v1/namespaces/default/pods/p?fieldManager=m", c.body, c.content_type);
    EXPECT_EQ(r.status, 400) << c.content_type;
    EXPECT_EQ(Message(r), c.want) << c.content_type;
  }
  HttpResponse d = Do("DELETE", "/api/v1/namespaces/default/pods/p", R"({"kind":"DeleteOptions","x":)" + deep + "}");
  EXPECT_EQ(d.status, 400);
  EXPECT_EQ(Message(d),
            "the body of the request was in an unknown format - accepted media types include: application/json, "
            "application/yaml");
  ExpectServing();
}

// A document at the limit goes through the whole pipeline -- create (schema validation,
// defaulting, pruning of the preserved field), get, the table printer, list, watch,
// every patch format and delete -- on a thread with half the default stack.
TEST_F(LimitsTest, DocumentAtTheDepthLimitGoesThroughEveryPathOnHalfTheStack) {
  // Five levels above the value: the object, spec, volumes, the volume, csi.
  const std::string deep = Nested('[', ']', api::kMaxJsonNestingDepth - 5);
  const std::string pod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"deep"},"spec":{"containers":)"
                          R"([{"name":"c","image":"x"}],"volumes":[{"name":"v","csi":{"driver":"d","x":)" +
                          deep + "}}]}}";
  ASSERT_EQ(api::ExcessiveNestingOffset(pod, api::kMaxJsonNestingDepth), std::string::npos);
  ASSERT_NE(api::ExcessiveNestingOffset(pod, api::kMaxJsonNestingDepth - 1), std::string::npos);
  RunOnStack(4 << 20, [&] {
    HttpResponse c = Do("POST", "/api/v1/namespaces/default/pods", pod);
    ASSERT_EQ(c.status, 201) << c.body.substr(0, 300);
    EXPECT_EQ(Do("GET", "/api/v1/namespaces/default/pods/deep").status, 200);
    HandlerResult table = api_.server.Handle([] {
      HttpRequest req = testing::Request("GET", "/api/v1/namespaces/default/pods/deep");
      req.headers.emplace_back("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io");
      return req;
    }());
    EXPECT_EQ(std::get<HttpResponse>(table).status, 200);
    EXPECT_EQ(Do("GET", "/api/v1/namespaces/default/pods").status, 200);
    EXPECT_EQ(Do("GET", "/api/v1/pods?labelSelector=a%3Db").status, 200);
    EXPECT_EQ(Do("PATCH", "/api/v1/namespaces/default/pods/deep", R"({"metadata":{"labels":{"a":"b"}}})",
                 "application/merge-patch+json")
                  .status,
              200);
    // A pod's volumes are immutable: each patch is decoded, applied and compared with the
    // stored spec (ValidatePodSpecUpdate) at full depth, then refused.
    const std::string vol = R"({"spec":{"volumes":[{"name":"v","csi":{"y":)" + deep + "}}]}}";
    EXPECT_EQ(Do("PATCH", "/api/v1/namespaces/default/pods/deep", vol, "application/strategic-merge-patch+json").status,
              422);
    EXPECT_EQ(Do("PATCH", "/api/v1/namespaces/default/pods/deep",
                 R"([{"op":"add","path":"/spec/volumes/0/csi/z","value":)" + deep + "}]", "application/json-patch+json")
                  .status,
              422);
    EXPECT_EQ(Do("PATCH", "/api/v1/namespaces/default/pods/deep", vol, "application/merge-patch+json").status, 422);
    HttpResponse del = Do("DELETE", "/api/v1/namespaces/default/pods/deep?gracePeriodSeconds=0");
    EXPECT_EQ(del.status, 200) << del.body.substr(0, 300);
  });
  ExpectServing();
}

// ---------------------------------------------------------------------------
// YAML aliases

// 200,000 aliases of one 64 KiB anchor: 3 MB of YAML that expanded to 13 GB (the
// server's RSS reached 10 GB and it never answered). Now a 400 before anything large is
// copied, and the process does not grow.
TEST_F(LimitsTest, YamlAliasExpansionIsBoundedInBytes) {
  std::string yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: laughs\n  annotations:\n    a: &a " +
                     std::string(64 * 1024, 'x') + "\ndata:\n  items: [";
  for (int i = 0; i < 200000; ++i) yaml += i == 0 ? "*a" : ", *a";
  yaml += "]\n";
  ASSERT_LT(yaml.size(), api::kMaxRequestBodyBytes);
  const long rss_before = MaxRssKib();
  const auto start = std::chrono::steady_clock::now();
  HttpResponse r = Do("POST", "/api/v1/namespaces/default/configmaps", yaml, "application/yaml");
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.status, 400);
  // The 48th alias is the first to take the expansion past 3 MiB (64 KiB + 2 each).
  EXPECT_EQ(Message(r), "document 1: error converting YAML to JSON: yaml: line 8, column " +
                            std::to_string(11 + 4 * 47) + ": document contains excessive aliasing");
  EXPECT_LT(MaxRssKib() - rss_before, 256 * 1024) << "KiB";
  RecordProperty("alias_bomb_ms",
                 static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
  ExpectServing();
}

// ---------------------------------------------------------------------------
// Strings over their length limit, and patterns

// A LocalQueue status condition whose reason is 1 MB of 'a' killed the server
// (std::regex recursion, run even after the 1024-byte check failed). Now the length
// check alone answers (kube-openapi stops at the first string error) and patterns run
// on RE2.
TEST_F(LimitsTest, OverlongConditionReasonIsTooLongAndNeverMatched) {
  ASSERT_EQ(Do("POST", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues",
               R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"LocalQueue","metadata":{"name":"lq"},
                   "spec":{"clusterQueue":"cq"}})")
                .status,
            201);
  json status = {{"conditions",
                  {{{"type", "Active"},
                    {"status", "True"},
                    {"reason", std::string(1 << 20, 'a')},
                    {"message", "m"},
                    {"lastTransitionTime", "2026-01-01T00:00:00Z"}}}}};
  json patch = {{"status", status}};
  HttpResponse r = Do("PATCH", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues/lq/status", patch.dump(),
                      "application/merge-patch+json");
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(Message(r),
            "LocalQueue.kueue.x-k8s.io \"lq\" is invalid: status.conditions[0].reason: Too long: may not be more "
            "than 1024 bytes");
  // A reason within the limit that the pattern refuses, however it is shaped.
  status["conditions"][0]["reason"] = std::string(1000, 'a') + "!";
  patch = {{"status", status}};
  HttpResponse p = Do("PATCH", "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/localqueues/lq/status", patch.dump(),
                      "application/merge-patch+json");
  EXPECT_EQ(p.status, 422);
  EXPECT_NE(Message(p).find("status.conditions[0].reason: Invalid value: \"" + std::string(1000, 'a') +
                            "!\": status.conditions[0].reason in body should match "
                            "'^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$'"),
            std::string::npos)
      << Message(p).substr(0, 200);
  ExpectServing();
}

// ---------------------------------------------------------------------------
// Sizes

// A body over 3 MiB is refused by the HTTP server itself with 413.
TEST_F(LimitsTest, BodyOverThreeMibIs413) {
  ASSERT_TRUE(api_.server.Start().ok());
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(api_.server.port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string body(api::kMaxRequestBodyBytes + 1, ' ');
  const std::string head =
      "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
      "Content-Type: application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n";
  ASSERT_EQ(send(fd, head.data(), head.size(), MSG_NOSIGNAL), static_cast<ssize_t>(head.size()));
  (void)send(fd, body.data(), body.size(), MSG_NOSIGNAL);  // the server may close early
  std::string response;
  char buf[4096];
  for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) response.append(buf, static_cast<size_t>(n));
  close(fd);
  ASSERT_EQ(response.rfind("HTTP/1.1 413", 0), 0u) << response.substr(0, 200);
  const json status = json::parse(response.substr(response.find("\r\n\r\n") + 4));
  EXPECT_EQ(status["message"], "Request entity too large: limit is 3145728");
  EXPECT_EQ(status["reason"], "RequestEntityTooLarge");
  api_.server.Stop();
}

// etcd's request limit: no create, update or patch may store more than 1.5 MiB, however
// the object grows (a patch that copies a large value into itself included).
TEST_F(LimitsTest, StoredObjectsOverOneAndAHalfMibAreRefused) {
  auto pod_with = [](const std::string& name, size_t bytes) {
    json pod = json::parse(kPod);
    pod["metadata"]["name"] = name;
    pod["spec"]["volumes"] = {{{"name", "v"}, {"csi", {{"driver", "d"}, {"blob", std::string(bytes, 'x')}}}}};
    return pod.dump();
  };
  auto expect_too_large = [&](const HttpResponse& r) {
    EXPECT_EQ(r.status, 500);
    const json s = Body(r);
    EXPECT_EQ(s["message"], "etcdserver: request is too large");
    EXPECT_FALSE(s.contains("reason")) << r.body;  // StatusReasonUnknown
    EXPECT_EQ(s["status"], "Failure");
  };
  expect_too_large(Do("POST", "/api/v1/namespaces/default/pods", pod_with("big", api::kMaxStoredObjectBytes)));
  ASSERT_EQ(Do("POST", "/api/v1/namespaces/default/pods", pod_with("p", 1024 * 1024)).status, 201);
  // The growth goes where a pod update may write: annotations and a container's image.
  // Merge patch: another 600 KiB.
  expect_too_large(Do("PATCH", "/api/v1/namespaces/default/pods/p",
                      json{{"metadata", {{"annotations", {{"a", std::string(200 * 1024, 'y')}}}}},
                           {"spec", {{"containers", {{{"name", "c"}, {"image", std::string(600 * 1024, 'z')}}}}}}}
                          .dump(),
                      "application/strategic-merge-patch+json"));
  // JSON patch copying the 1 MiB value once more.
  expect_too_large(Do("PATCH", "/api/v1/namespaces/default/pods/p",
                      R"([{"op":"copy","from":"/spec/volumes/0/csi/blob","path":"/spec/containers/0/image"}])",
                      "application/json-patch+json"));
  // PUT of the whole object, grown.
  json current = Body(Do("GET", "/api/v1/namespaces/default/pods/p"));
  current["spec"]["containers"][0]["image"] = std::string(600 * 1024, 'w');
  expect_too_large(Do("PUT", "/api/v1/namespaces/default/pods/p", current.dump()));
  // Nothing was written.
  EXPECT_EQ(Body(Do("GET", "/api/v1/namespaces/default/pods/p"))["spec"]["containers"][0]["image"], "busybox");
  ExpectServing();
}

// A JSON patch of more than 10000 operations is refused before it is applied.
TEST_F(LimitsTest, JsonPatchOfMoreThanTenThousandOperationsIs413) {
  ASSERT_EQ(Do("POST", "/api/v1/namespaces/default/pods", kPod).status, 201);
  json ops = json::array();
  for (int i = 0; i < 10001; ++i) ops.push_back({{"op", "test"}, {"path", "/metadata/name"}, {"value", "p"}});
  HttpResponse r = Do("PATCH", "/api/v1/namespaces/default/pods/p", ops.dump(), "application/json-patch+json");
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(Message(r), "The allowed maximum operations in a JSON patch is 10000, got 10001");
  ops.erase(ops.begin());
  EXPECT_EQ(Do("PATCH", "/api/v1/namespaces/default/pods/p", ops.dump(), "application/json-patch+json").status, 200);
}

// ---------------------------------------------------------------------------
// System namespaces

TEST_F(LimitsTest, SystemNamespacesCannotBeDeleted) {
  for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    for (const char* query : {"", "?dryRun=All"}) {
      HttpResponse r = Do("DELETE", std::string("/api/v1/namespaces/") + ns + query);
      EXPECT_EQ(r.status, 403) << ns;
      const json s = Body(r);
      EXPECT_EQ(s["message"], std::string("namespaces \"") + ns + "\" is forbidden: this namespace may not be deleted");
      EXPECT_EQ(s["reason"], "Forbidden");
      EXPECT_EQ(s["details"]["name"], ns);
      EXPECT_EQ(s["details"]["kind"], "namespaces");
    }
    EXPECT_EQ(Do("GET", std::string("/api/v1/namespaces/") + ns).status, 200) << ns;
  }
  // A collection delete stops at the first one, and a namespace of the user still goes.
  ASSERT_EQ(
      Do("POST", "/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}})").status,
      201);
  EXPECT_EQ(Do("DELETE", "/api/v1/namespaces").status, 403);
  EXPECT_EQ(Do("DELETE", "/api/v1/namespaces/team").status, 200);
}

// The system PriorityClasses the server creates at start cannot be deleted one by one.
TEST_F(LimitsTest, SystemPriorityClassesCannotBeDeleted) {
  ASSERT_TRUE(api_.server.Start().ok());  // creates them
  for (const char* pc : {"system-node-critical", "system-cluster-critical"}) {
    HttpResponse r = Do("DELETE", std::string("/apis/scheduling.k8s.io/v1/priorityclasses/") + pc);
    EXPECT_EQ(r.status, 403) << pc;
    EXPECT_EQ(Message(r), std::string("priorityclasses.scheduling.k8s.io \"") + pc +
                              "\" is forbidden: this is a system priority class and cannot be deleted");
    EXPECT_EQ(Do("GET", std::string("/apis/scheduling.k8s.io/v1/priorityclasses/") + pc).status, 200);
  }
  api_.server.Stop();
}

// Deletes through the API are refused; a system object lost some other way (an
// edit of the store itself) is back within a minute of Clock time, as kube-apiserver's
// system namespaces controller checks every minute.
TEST_F(LimitsTest, SystemObjectsLostWhileTheServerRunsAreCreatedAgain) {
  ASSERT_TRUE(api_.server.Start().ok());
  const store::ObjectKey ns{api::GroupResource{"", "namespaces"}, "", "kube-node-lease"};
  const store::ObjectKey pc{api::kPriorityClassesResource, "", "system-node-critical"};
  ASSERT_TRUE(api_.store.Delete(ns).ok());
  ASSERT_TRUE(api_.store.Delete(pc).ok());
  api_.clock.Advance(std::chrono::seconds(59));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the loop looks every second
  EXPECT_EQ(Do("GET", "/api/v1/namespaces/kube-node-lease").status, 404);
  api_.clock.Advance(std::chrono::seconds(1));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto restored = [&] {
    return Do("GET", "/api/v1/namespaces/kube-node-lease").status == 200 &&
           Do("GET", "/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical").status == 200;
  };
  while (!restored() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(Do("GET", "/api/v1/namespaces/kube-node-lease").status, 200);
  EXPECT_EQ(Do("GET", "/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical").status, 200);
  api_.server.Stop();
}

}  // namespace
}  // namespace berth::apiserver
