// Kubernetes protobuf request bodies: bytes built by a tiny encoder here, and
// bodies captured from the real kubectl 1.32 (`kubectl create ...` against a
// logging server), decoded into the JSON the JSON path would carry; then the
// same bodies through ApiServer::Handle.
#include "apiserver/protobuf_codec.h"

#include <gtest/gtest.h>

#include <variant>

#include "apiserver/api_server.h"
#include "apiserver/testing/test_api_server.h"

namespace berth::apiserver {
namespace {

using nlohmann::json;

// --- a tiny protobuf encoder -----------------------------------------------

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string Tag(int number, int wire_type) { return Varint((static_cast<uint64_t>(number) << 3) | wire_type); }
std::string VarintField(int number, int64_t v) { return Tag(number, 0) + Varint(static_cast<uint64_t>(v)); }
std::string Bytes(int number, std::string_view b) { return Tag(number, 2) + Varint(b.size()) + std::string(b); }
// A map<string,string> entry.
std::string Entry(int number, std::string_view key, std::string_view value) {
  return Bytes(number, Bytes(1, key) + Bytes(2, value));
}
std::string Envelope(std::string_view api_version, std::string_view kind, std::string_view raw) {
  return std::string("k8s\0", 4) + Bytes(1, Bytes(1, api_version) + Bytes(2, kind)) + Bytes(2, raw) +
         Bytes(3, "") + Bytes(4, "");
}
// ObjectMeta as Go's marshaler writes it: every non-pointer field, zero or not.
std::string Meta(std::string_view name, std::string extra = "") {
  return Bytes(1, name) + Bytes(2, "") + Bytes(3, "") + Bytes(4, "") + Bytes(5, "") + Bytes(6, "") +
         VarintField(7, 0) + Bytes(8, "") + extra;
}
std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

// --- bodies captured from kubectl v1.32.4 ------------------------------------

// kubectl create namespace team-b
constexpr std::string_view kCreateNamespace =
    "6b3873000a0f0a02763112094e616d657370616365121e0a160a067465616d2d6212001a0022002a0032003800420012001a020a001a"
    "002200";
// kubectl create priorityclass high --value=1000 --preemption-policy=Never --description="for training"
constexpr std::string_view kCreatePriorityClass =
    "6b3873000a250a147363686564756c696e672e6b38732e696f2f7631120d5072696f72697479436c61737312300a140a04686967681200"
    "1a0022002a0032003800420010e8071800220c666f7220747261696e696e672a054e657665721a002200";
// kubectl create configmap cfg --from-literal=a=b --from-literal=c=d
constexpr std::string_view kCreateConfigMap =
    "6b3873000a0f0a0276311209436f6e6669674d617012250a130a0363666712001a0022002a0032003800420012060a016112016212060a"
    "01631201641a002200";
// kubectl create secret generic s1 --from-literal=password=hunter2
constexpr std::string_view kCreateSecret =
    "6b3873000a0c0a0276311206536563726574122b0a120a02733112001a0022002a0032003800420012130a0870617373776f7264120768"
    "756e746572321a001a002200";
// kubectl create job j1 --image=busybox -- echo hi
constexpr std::string_view kCreateJob =
    "6b3873000a0f0a0862617463682f763112034a6f621284010a120a026a3112001a0022002a00320038004200126432620a100a0012001a"
    "0022002a00320038004200124e122b0a026a31120762757379626f781a046563686f1a0268692a0042006a007200800100880100900100"
    "a201001a054e65766572320042004a0052005800600068008201008a01009a0100c201001a082000280030003a001a002200";
// kubectl create serviceaccount sa1
constexpr std::string_view kCreateServiceAccount =
    "6b3873000a140a027631120e536572766963654163636f756e7412150a130a0373613112001a0022002a003200380042001a002200";
// kubectl create service clusterip svc1 --tcp=80:8080
constexpr std::string_view kCreateService =
    "6b3873000a0d0a027631120753657276696365126c0a210a047376633112001a0022002a003200380042005a0b0a036170701204737663"
    "3112430a1b0a0738302d38303830120354435018502207080010903f1a002800120b0a036170701204737663311a002209436c7573746572"
    "49503a00420052005a00600068001a020a001a002200";

json Decode(std::string_view body) {
  auto r = DecodeProtobufObject(body);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : json();
}

TEST(ProtobufCodecTest, CapturedKubectlCreateNamespace) {
  EXPECT_EQ(Decode(FromHex(kCreateNamespace)),
            json::parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-b"}})"));
}

TEST(ProtobufCodecTest, CapturedKubectlCreatePriorityClass) {
  EXPECT_EQ(Decode(FromHex(kCreatePriorityClass)),
            json::parse(R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"high"},
                           "value":1000,"description":"for training","preemptionPolicy":"Never"})"));
}

TEST(ProtobufCodecTest, CapturedKubectlCreateConfigMapAndSecret) {
  EXPECT_EQ(Decode(FromHex(kCreateConfigMap)),
            json::parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg"},
                           "data":{"a":"b","c":"d"}})"));
  // Secret data is bytes: base64 in JSON ("hunter2").
  EXPECT_EQ(Decode(FromHex(kCreateSecret)),
            json::parse(R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s1"},
                           "data":{"password":"aHVudGVyMg=="}})"));
}

TEST(ProtobufCodecTest, CapturedKubectlCreateJobDropsOnlyZeroFields) {
  // Job.status (an all-zero JobStatus) and PodSpec/Container zero fields are
  // not part of the JSON.
  EXPECT_EQ(Decode(FromHex(kCreateJob)),
            json::parse(R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j1"},
                           "spec":{"template":{"spec":{"containers":[{"name":"j1","image":"busybox",
                                   "command":["echo","hi"]}],"restartPolicy":"Never"}}}})"));
}

TEST(ProtobufCodecTest, CapturedKubectlCreateServiceAccountAndService) {
  EXPECT_EQ(Decode(FromHex(kCreateServiceAccount)),
            json::parse(R"({"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa1"}})"));
  EXPECT_EQ(Decode(FromHex(kCreateService)),
            json::parse(R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"svc1","labels":{"app":"svc1"}},
                           "spec":{"ports":[{"name":"80-8080","protocol":"TCP","port":80,"targetPort":8080}],
                                   "selector":{"app":"svc1"},"type":"ClusterIP"}})"));
}

TEST(ProtobufCodecTest, ScalarsMapsTimesQuantitiesAndPointers) {
  // A Pod with a negative int32 (10-byte varint), an int64 pointer kept at
  // zero, a Time, Quantity maps, an inlined LocalObjectReference, owner
  // references and zero values dropped (hostNetwork false).
  const std::string container =
      Bytes(1, "c") + Bytes(2, "img") +
      Bytes(8, Bytes(1, Bytes(1, "nvidia.com/gpu") + Bytes(2, Bytes(1, "2"))) +
                   Bytes(2, Bytes(1, "cpu") + Bytes(2, Bytes(1, "500m")))) +
      Bytes(7, Bytes(1, "A") + Bytes(2, "1")) +
      Bytes(7, Bytes(1, "B") + Bytes(3, Bytes(3, Bytes(1, Bytes(1, "cm")) + Bytes(2, "k") + VarintField(3, 1))));
  const std::string spec = Bytes(2, container) + VarintField(4, 0) + VarintField(25, -5) + Bytes(24, "low") +
                           VarintField(11, 0) + Bytes(7, Bytes(1, "pool") + Bytes(2, "gpu"));
  const std::string meta = Meta("p", Bytes(8, VarintField(1, 1767225600)) + Entry(11, "app", "x") +
                                         Bytes(13, Bytes(1, "Job") + Bytes(3, "j") + Bytes(4, "u-1") +
                                                   Bytes(5, "batch/v1") + VarintField(6, 1)) +
                                         Bytes(14, "example.com/f"));
  json got = Decode(Envelope("v1", "Pod", Bytes(1, meta) + Bytes(2, spec)));
  EXPECT_EQ(got, json::parse(R"({"apiVersion":"v1","kind":"Pod",
      "metadata":{"name":"p","creationTimestamp":"2026-01-01T00:00:00Z","labels":{"app":"x"},
                  "ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"j","uid":"u-1","controller":true}],
                  "finalizers":["example.com/f"]},
      "spec":{"containers":[{"name":"c","image":"img","resources":{"limits":{"nvidia.com/gpu":"2"},"requests":{"cpu":"500m"}},
                             "env":[{"name":"A","value":"1"},
                                    {"name":"B","valueFrom":{"configMapKeyRef":{"name":"cm","key":"k","optional":true}}}]}],
              "terminationGracePeriodSeconds":0,"priority":-5,"priorityClassName":"low",
              "nodeSelector":{"pool":"gpu"}}})"));
}

TEST(ProtobufCodecTest, IntOrStringAndBinaryData) {
  const std::string port = Bytes(1, "http") + VarintField(3, 80) + Bytes(4, VarintField(1, 1) + Bytes(3, "web"));
  EXPECT_EQ(Decode(Envelope("v1", "Service", Bytes(1, Meta("s")) + Bytes(2, Bytes(1, port))))["spec"],
            json::parse(R"({"ports":[{"name":"http","port":80,"targetPort":"web"}]})"));
  // binaryData values are bytes: base64 with padding.
  const std::string cm = Bytes(1, Meta("c")) + Bytes(3, Bytes(1, "b") + Bytes(2, std::string("\x00\xff\x10\x01", 4))) +
                         VarintField(4, 0);
  EXPECT_EQ(Decode(Envelope("v1", "ConfigMap", cm)),
            json::parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},
                           "binaryData":{"b":"AP8QAQ=="},"immutable":false})"));
}

TEST(ProtobufCodecTest, DeleteOptionsKeepPointerZeros) {
  const std::string raw = VarintField(1, 0) + Bytes(2, Bytes(1, "uid-1")) + Bytes(4, "Foreground") + Bytes(5, "All");
  auto got = DecodeProtobufMessage("meta.k8s.io/v1", "DeleteOptions", raw);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, json::parse(R"({"gracePeriodSeconds":0,"preconditions":{"uid":"uid-1"},
                                 "propagationPolicy":"Foreground","dryRun":["All"]})"));
  // Any group version carries DeleteOptions.
  EXPECT_TRUE(DecodeProtobufMessage("v1", "DeleteOptions", raw).ok());
}

TEST(ProtobufCodecTest, LastValueWinsAndZeroOverridesEarlierValue) {
  const std::string raw =
      Bytes(1, Meta("a")) + Bytes(4, "first") + Bytes(4, "second") + VarintField(3, 1) + VarintField(3, 0);
  auto got = DecodeProtobufMessage("scheduling.k8s.io/v1", "PriorityClass", raw);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["description"], "second");
  EXPECT_FALSE(got->contains("globalDefault"));
}

TEST(ProtobufCodecTest, MalformedBodiesAreBadRequests) {
  const std::string ns = Envelope("v1", "Namespace", Bytes(1, Meta("n")));
  struct Case {
    const char* name;
    std::string body;
    const char* message_part;
  };
  const Case cases[] = {
      {"no magic", ns.substr(4), "missing the \"k8s\\x00\" prefix"},
      {"truncated", ns.substr(0, ns.size() - 3), "truncated varint"},
      {"length past the end", std::string("k8s\0", 4) + Tag(2, 2) + Varint(10) + "abc", "runs past the end"},
      {"truncated varint", std::string("k8s\0", 4) + "\x08\x80", "truncated varint"},
      {"no kind", std::string("k8s\0", 4) + Bytes(2, ""), "Object 'Kind' is missing"},
      {"content encoding", std::string("k8s\0", 4) + Bytes(1, Bytes(2, "Namespace")) + Bytes(3, "gzip"),
       "unsupported content encoding"},
      {"wrong wire type", Envelope("v1", "Namespace", VarintField(1, 7)), "wrong wire type for metadata"},
      {"bad utf-8", Envelope("v1", "Namespace", Bytes(1, Bytes(1, "\xc3\x28"))), "metadata.name is not valid UTF-8"},
      {"group", Envelope("v1", "Namespace", std::string("\x4b", 1)), "unsupported wire type 3"},
  };
  for (const Case& c : cases) {
    auto r = DecodeProtobufObject(c.body);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.status().code(), Code::kBadRequest) << c.name;
    EXPECT_NE(r.status().message().find(c.message_part), std::string::npos) << c.name << ": " << r.status().message();
  }
}

TEST(ProtobufCodecTest, UndecodedKindsAndFieldsAreRefusedNotDropped) {
  // A custom resource has no protobuf form upstream either.
  auto cr = DecodeProtobufObject(Envelope("kueue.x-k8s.io/v1beta2", "ClusterQueue", Bytes(1, Meta("cq"))));
  ASSERT_FALSE(cr.ok());
  EXPECT_EQ(cr.status().code(), Code::kUnsupportedMedia);
  EXPECT_NE(cr.status().message().find("accepted media types include"), std::string::npos);
  // PodSpec.affinity (18) with content: refused with the path.
  const std::string pod_spec = Bytes(2, Bytes(1, "c")) + Bytes(18, Bytes(1, Bytes(1, "x")));
  const std::string job = Bytes(1, Meta("j")) + Bytes(2, Bytes(6, Bytes(2, pod_spec)));
  auto r = DecodeProtobufObject(Envelope("batch/v1", "Job", job));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnsupportedMedia);
  EXPECT_EQ(r.status().message(),
            "berth does not decode field 18 of the protobuf PodSpec at spec.template.spec; send the object as JSON "
            "or YAML (kubectl create -f / apply -f)");
  // The same field empty (what Go writes for a zero struct) is skipped.
  const std::string zero_spec = Bytes(2, Bytes(1, "c")) + Bytes(18, Bytes(1, Bytes(1, "")) + VarintField(2, 0));
  auto ok = DecodeProtobufObject(Envelope("batch/v1", "Job", Bytes(1, Meta("j")) + Bytes(2, Bytes(6, Bytes(2, zero_spec)))));
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ((*ok)["spec"], json::parse(R"({"template":{"spec":{"containers":[{"name":"c"}]}}})"));
}

TEST(ProtobufCodecTest, ContentType) {
  EXPECT_TRUE(IsProtobufContentType("application/vnd.kubernetes.protobuf"));
  EXPECT_TRUE(IsProtobufContentType("application/vnd.kubernetes.protobuf; charset=utf-8"));
  EXPECT_FALSE(IsProtobufContentType("application/json"));
  EXPECT_TRUE(IsProtobufContentType("application/vnd.kubernetes.protobuf;stream=watch"));
}

// --- through the API server ----------------------------------------------------

class ProtobufApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(api_.server.EnsureSystemNamespaces().ok()); }

  HttpResponse Do(const std::string& method, const std::string& target, const std::string& body,
                  const std::string& content_type = std::string(kProtobufMediaType)) {
    HttpRequest req = testing::Request(method, target, body, content_type);
    req.headers.emplace_back("Accept", "application/vnd.kubernetes.protobuf,application/json");
    HandlerResult r = api_.server.Handle(req);
    EXPECT_TRUE(std::holds_alternative<HttpResponse>(r));
    return std::holds_alternative<HttpResponse>(r) ? std::get<HttpResponse>(r) : HttpResponse{};
  }

  testing::TestApiServer api_;
};

TEST_F(ProtobufApiServerTest, KubectlCreateBodiesAreStoredAndAnsweredInJson) {
  HttpResponse ns = Do("POST", "/api/v1/namespaces?fieldManager=kubectl-create&fieldValidation=Strict",
                       FromHex(kCreateNamespace));
  ASSERT_EQ(ns.status, 201) << ns.body;
  EXPECT_EQ(ns.content_type, "application/json");
  EXPECT_EQ(json::parse(ns.body)["metadata"]["name"], "team-b");

  HttpResponse pc = Do("POST", "/apis/scheduling.k8s.io/v1/priorityclasses?fieldManager=kubectl-create&fieldValidation=Strict",
                       FromHex(kCreatePriorityClass));
  ASSERT_EQ(pc.status, 201) << pc.body;
  EXPECT_EQ(json::parse(pc.body)["value"], 1000);
  EXPECT_EQ(json::parse(pc.body)["preemptionPolicy"], "Never");

  HttpResponse cm = Do("POST", "/api/v1/namespaces/team-b/configmaps?fieldManager=kubectl-create&fieldValidation=Strict",
                       FromHex(kCreateConfigMap));
  ASSERT_EQ(cm.status, 201) << cm.body;
  EXPECT_EQ(json::parse(cm.body)["metadata"]["namespace"], "team-b");
  EXPECT_EQ(json::parse(cm.body)["data"], json::parse(R"({"a":"b","c":"d"})"));

  HttpResponse job = Do("POST", "/apis/batch/v1/namespaces/default/jobs?fieldManager=kubectl-create&fieldValidation=Strict",
                        FromHex(kCreateJob));
  ASSERT_EQ(job.status, 201) << job.body;
  EXPECT_EQ(json::parse(job.body)["spec"]["template"]["spec"]["containers"][0]["command"], json::parse(R"(["echo","hi"])"));
}

TEST_F(ProtobufApiServerTest, BodyOfAnotherKindAndCustomResourcesAreRefused) {
  // A ConfigMap body posted to namespaces: the JSON path's kind check applies.
  HttpResponse wrong = Do("POST", "/api/v1/namespaces", FromHex(kCreateConfigMap));
  EXPECT_EQ(wrong.status, 400) << wrong.body;
  HttpResponse cr = Do("POST", "/apis/kueue.x-k8s.io/v1beta2/resourceflavors",
                       Envelope("kueue.x-k8s.io/v1beta2", "ResourceFlavor", Bytes(1, Meta("rf"))));
  EXPECT_EQ(cr.status, 415) << cr.body;
  HttpResponse garbage = Do("POST", "/api/v1/namespaces", "not protobuf");
  EXPECT_EQ(garbage.status, 400) << garbage.body;
  EXPECT_EQ(json::parse(garbage.body)["reason"], "BadRequest");
}

TEST_F(ProtobufApiServerTest, ProtobufDeleteOptions) {
  ASSERT_EQ(Do("POST", "/api/v1/namespaces/default/configmaps", FromHex(kCreateConfigMap)).status, 201);
  // A precondition on a wrong uid: 409, so the options were read.
  const std::string wrong_uid = Envelope("v1", "DeleteOptions", Bytes(2, Bytes(1, "not-the-uid")));
  HttpResponse conflict = Do("DELETE", "/api/v1/namespaces/default/configmaps/cfg", wrong_uid);
  EXPECT_EQ(conflict.status, 409) << conflict.body;
  HttpResponse ok = Do("DELETE", "/api/v1/namespaces/default/configmaps/cfg",
                       Envelope("v1", "DeleteOptions", VarintField(1, 0) + Bytes(4, "Background")));
  EXPECT_EQ(ok.status, 200) << ok.body;
  HttpResponse not_options = Do("DELETE", "/api/v1/namespaces/default/configmaps/cfg", FromHex(kCreateConfigMap));
  EXPECT_EQ(not_options.status, 400) << not_options.body;
}

}  // namespace
}  // namespace berth::apiserver
