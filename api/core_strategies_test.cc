#include "api/core_strategies.h"

#include <gtest/gtest.h>

#include "api/admission_pipeline.h"
#include "api/registry.h"

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

}  // namespace
}  // namespace berth::api
