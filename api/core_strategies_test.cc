#include "api/core_strategies.h"

#include <gtest/gtest.h>

#include "api/admission_pipeline.h"
#include "api/registry.h"
#include "api/testing/admission.h"
#include "core/base64.h"

namespace berth::api {
namespace {

using nlohmann::json;

StatusOr<AdmittedWrite> Create(json obj) {
  AdmissionPipeline pipeline(Registry::Default(), StrategyRegistry::Default());
  WriteRequest wr;
  wr.object = std::move(obj);
  return pipeline.Admit(std::move(wr));
}

// pkg/registry/core/namespace/strategy.go: a new namespace is Active and
// carries the "kubernetes" finalizer in spec.
TEST(CoreStrategiesTest, NamespaceIsActiveOnCreate) {
  auto admitted = Create(json::parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"},
                                         "status":{"phase":"Terminating"}})"));
  ASSERT_TRUE(admitted.ok()) << admitted.status().ToString();
  EXPECT_EQ(admitted->object["status"], json::parse(R"({"phase":"Active"})"));
  EXPECT_EQ(admitted->object["spec"]["finalizers"], json::parse(R"(["kubernetes"])"));
  auto listed = Create(json::parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-b"},
                                      "spec":{"finalizers":["example.com/keep"]}})"));
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(listed->object["spec"]["finalizers"], json::parse(R"(["example.com/keep","kubernetes"])"));
  auto wrong_type = Create(json::parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-c"},
                                          "spec":{"finalizers":"kubernetes"}})"));
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_EQ(wrong_type.status().code(), Code::kInvalid);
  auto bad = Create(json::parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a.b"}})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kInvalid);
}

// pkg/registry/core/pod/strategy.go: a created pod starts Pending whatever
// status the client sent.
TEST(CoreStrategiesTest, PodStartsPending) {
  auto admitted = Create(json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},
      "spec":{"containers":[{"name":"c","image":"busybox"}]},"status":{"phase":"Running","podIP":"10.0.0.1"}})"));
  ASSERT_TRUE(admitted.ok()) << admitted.status().ToString();
  EXPECT_EQ(admitted->object["status"], json::parse(R"({"phase":"Pending"})"));
}

StatusOr<AdmittedWrite> Update(json obj, const json& old) {
  AdmissionPipeline pipeline(Registry::Default(), StrategyRegistry::Default());
  WriteRequest wr;
  wr.operation = Operation::kUpdate;
  wr.object = std::move(obj);
  wr.old = &old;
  return pipeline.Admit(std::move(wr));
}

// ValidateContainerStateTransition / ValidateInitContainerStateTransition: a terminated
// container that may not run again stays terminated, whoever writes the status (a node agent
// that lies included); every restartPolicy, exit code and container kind.
TEST(CoreStrategiesTest, ATerminatedContainerThatMayNotRestartStaysTerminated) {
  auto pod = [](const std::string& policy, int exit_code, const json& state_now, bool init, bool sidecar) {
    json p = json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default",
        "resourceVersion":"5"},"spec":{"containers":[{"name":"c","image":"busybox"}]}})");
    p["spec"]["restartPolicy"] = policy;
    const char* list = init ? "initContainerStatuses" : "containerStatuses";
    if (init) {
      p["spec"]["initContainers"] = json::array({{{"name", "i"}, {"image", "busybox"}}});
      if (sidecar) p["spec"]["initContainers"][0]["restartPolicy"] = "Always";
    }
    json old = p;
    old["status"] = {
        {"phase", "Running"},
        {list, json::array({{{"name", init ? "i" : "c"}, {"state", {{"terminated", {{"exitCode", exit_code}}}}}}})}};
    json now = old;
    now["status"][list][0]["state"] = state_now;
    return std::make_pair(now, old);
  };
  const json running = {{"running", {{"startedAt", "2026-01-01T00:00:00Z"}}}};
  const json waiting = {{"waiting", {{"reason", "CrashLoopBackOff"}}}};
  const json terminated = {{"terminated", {{"exitCode", 2}}}};
  struct Case {
    std::string policy;
    int exit_code;
    json state;
    bool init, sidecar, refused;
  };
  const std::vector<Case> cases = {
      {"Never", 0, running, false, false, true},      {"Never", 1, waiting, false, false, true},
      {"Never", 0, terminated, false, false, false},  {"OnFailure", 0, running, false, false, true},
      {"OnFailure", 1, running, false, false, false}, {"Always", 0, running, false, false, false},
      {"", 0, running, false, false, false},          {"Never", 0, running, true, false, true},
      {"OnFailure", 0, waiting, true, false, true},   {"Never", 0, running, true, true, false},
      {"OnFailure", 1, waiting, true, false, false},
  };
  for (const Case& c : cases) {
    auto [now, old] = pod(c.policy, c.exit_code, c.state, c.init, c.sidecar);
    auto admitted = testing::AdmitUpdate(old, now, Operation::kUpdateStatus);
    const std::string what = c.policy + " exit " + std::to_string(c.exit_code) + " -> " + c.state.dump() +
                             (c.init ? (c.sidecar ? " (sidecar)" : " (init)") : "");
    if (!c.refused) {
      EXPECT_TRUE(admitted.ok()) << what << ": " << admitted.status();
      continue;
    }
    ASSERT_FALSE(admitted.ok()) << what;
    EXPECT_EQ(admitted.status().code(), Code::kInvalid) << what;
    EXPECT_NE(admitted.status().message().find(std::string("status.") +
                                               (c.init ? "initContainerStatuses" : "containerStatuses") +
                                               "[0].state: Forbidden: may not be transitioned to non-terminated state"),
              std::string::npos)
        << what << ": " << admitted.status();
  }
  // A container the stored status does not show terminated may take any state.
  auto [now, old] = pod("Never", 0, running, false, false);
  old["status"]["containerStatuses"][0]["state"] = waiting;
  EXPECT_TRUE(testing::AdmitUpdate(old, now, Operation::kUpdateStatus).ok());
}

json ConfigMap(json data, json binary = nullptr) {
  json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "cm"}, {"namespace", "default"}}}};
  if (!data.is_null()) cm["data"] = std::move(data);
  if (!binary.is_null()) cm["binaryData"] = std::move(binary);
  return cm;
}

// ValidateConfigMap: data and binaryData hold at most 1 MiB together (binaryData
// counted decoded), keys are config keys, a key is in one of the two only.
TEST(CoreStrategiesTest, ConfigMapDataIsAtMostOneMib) {
  EXPECT_TRUE(Create(ConfigMap({{"a", std::string(1024 * 1024, 'x')}})).ok());
  auto over = Create(ConfigMap({{"a", std::string(512 * 1024, 'x')}, {"b", std::string(512 * 1024 + 1, 'x')}}));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), Code::kInvalid);
  EXPECT_EQ(over.status().message(), "ConfigMap \"cm\" is invalid: : Too long: may not be more than 1048576 bytes");
  // 4 base64 characters are 3 bytes: 1 MiB of data plus "AAAA" (3 bytes) is over.
  auto binary = Create(ConfigMap({{"a", std::string(1024 * 1024 - 2, 'x')}}, {{"b", "AAAA"}}));
  ASSERT_FALSE(binary.ok());
  EXPECT_EQ(binary.status().message(), "ConfigMap \"cm\" is invalid: : Too long: may not be more than 1048576 bytes");
  EXPECT_TRUE(Create(ConfigMap({{"a", std::string(1024 * 1024 - 3, 'x')}}, {{"b", "AAAA"}})).ok());
}

TEST(CoreStrategiesTest, ConfigMapKeys) {
  auto bad = Create(ConfigMap({{"a b", "1"}, {"..x", "1"}, {"dup", "1"}}, {{"dup", "AAAA"}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "ConfigMap \"cm\" is invalid: ["
            "data[..x]: Invalid value: \"..x\": must not start with '..', "
            "data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' "
            "or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
            "'[-._a-zA-Z0-9]+'), "
            "data[dup]: Invalid value: \"dup\": duplicate of key present in binaryData]");
}

TEST(CoreStrategiesTest, ImmutableConfigMapKeepsItsData) {
  json old = ConfigMap({{"a", "1"}});
  old["immutable"] = true;
  json changed = old;
  changed["data"]["a"] = "2";
  changed["immutable"] = false;
  auto r = Update(changed, old);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "ConfigMap \"cm\" is invalid: [immutable: Forbidden: field is immutable when `immutable` is set, "
            "data: Forbidden: field is immutable when `immutable` is set]");
  json labelled = old;
  labelled["metadata"]["labels"] = {{"x", "y"}};
  EXPECT_TRUE(Update(labelled, old).ok());
}

json Secret(json data, json string_data = nullptr) {
  json s = {{"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", {{"name", "s"}, {"namespace", "default"}}}};
  if (!data.is_null()) s["data"] = std::move(data);
  if (!string_data.is_null()) s["stringData"] = std::move(string_data);
  return s;
}

// SetDefaults_Secret and the v1 conversion: type Opaque, stringData base64-encoded into
// data (winning over a data key of the same name) and never stored.
TEST(CoreStrategiesTest, SecretStringDataIsMergedIntoDataAndTypeDefaultsToOpaque) {
  auto r = Create(Secret({{"a", "YQ=="}, {"b", "Yg=="}}, {{"b", "two"}, {"c", "three"}}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->object["type"], "Opaque");
  EXPECT_FALSE(r->object.contains("stringData"));
  EXPECT_EQ(r->object["data"], json::parse(R"({"a":"YQ==","b":"dHdv","c":"dGhyZWU="})"));
  json old = r->object;
  json upd = old;
  upd["stringData"] = {{"a", "x"}};
  upd.erase("type");
  auto u = Update(upd, old);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->object["data"]["a"], "eA==");
  EXPECT_EQ(u->object["type"], "Opaque");
  EXPECT_FALSE(u->object.contains("stringData"));
}

// Data values must be base64; the error never carries the value (upstream's decoder
// answers `illegal base64 data at input byte N`).
TEST(CoreStrategiesTest, SecretDataMustBeBase64AndErrorsDoNotEchoValues) {
  auto bad = Create(Secret({{"pw", "hunter2!"}, {"short", "YQ="}, {"a b", "YQ=="}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kInvalid);
  const std::string msg = bad.status().message();
  EXPECT_EQ(msg,
            "Secret \"s\" is invalid: ["
            "data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' "
            "or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
            "'[-._a-zA-Z0-9]+'), "
            "data[pw]: Invalid value: \"<secret contents redacted>\": illegal base64 data at input byte 7, "
            "data[short]: Invalid value: \"<secret contents redacted>\": illegal base64 data at input byte 2]");
  EXPECT_EQ(msg.find("hunter2"), std::string::npos);
  // 1 MiB decoded at most.
  const std::string mib = Base64Encode(std::string(1024 * 1024, 'x'));
  EXPECT_TRUE(Create(Secret({{"a", mib}})).ok());
  auto over = Create(Secret({{"a", mib}, {"b", "YQ=="}}));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().message(), "Secret \"s\" is invalid: data: Too long: may not be more than 1048576 bytes");
  json tls = Secret({{"tls.crt", "YQ=="}});
  tls["type"] = "kubernetes.io/tls";
  auto t = Create(tls);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "Secret \"s\" is invalid: data[tls.key]: Required value");
}

TEST(CoreStrategiesTest, SecretTypeIsImmutableAndImmutableSecretsKeepTheirData) {
  json old = Secret({{"a", "YQ=="}});
  old["type"] = "Opaque";
  json retyped = old;
  retyped["type"] = "example.com/x";
  auto r = Update(retyped, old);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "Secret \"s\" is invalid: type: Invalid value: \"example.com/x\": field is immutable");
  old["immutable"] = true;
  json changed = old;
  changed["stringData"] = {{"a", "b"}};
  auto i = Update(changed, old);
  ASSERT_FALSE(i.ok());
  EXPECT_EQ(i.status().message(),
            "Secret \"s\" is invalid: data: Forbidden: field is immutable when `immutable` is set");
  json labelled = old;
  labelled["metadata"]["labels"] = {{"x", "y"}};
  EXPECT_TRUE(Update(labelled, old).ok());
}

}  // namespace
}  // namespace berth::api
