#include "apiserver/status_response.h"

#include <gtest/gtest.h>

#include "api/field_errors.h"

namespace berth::apiserver {
namespace {

using nlohmann::json;

TEST(StatusResponseTest, NotFoundCarriesPluralKindAndGroup) {
  Status s = NotFoundError("clusterqueues.kueue.x-k8s.io \"nope\" not found");
  HttpResponse r = StatusResponse(s, DetailsFor(s, {"kueue.x-k8s.io", "clusterqueues"}, "ClusterQueue", "nope"));
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(json::parse(r.body), json::parse(R"({
    "kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
    "message":"clusterqueues.kueue.x-k8s.io \"nope\" not found","reason":"NotFound",
    "details":{"name":"nope","group":"kueue.x-k8s.io","kind":"clusterqueues"},"code":404})"));
}

// NewGenericServerResponse's 404 for a path nothing serves has an empty details object,
// which kubectl debug reads (details.name == "": ephemeral containers not served).
TEST(StatusResponseTest, ObjectScopedReasonsAlwaysCarryDetails) {
  EXPECT_EQ(StatusToJson(NotFoundError("the server could not find the requested resource")), json::parse(R"({
    "kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
    "message":"the server could not find the requested resource","reason":"NotFound",
    "details":{},"code":404})"));
  for (const Status& s : {AlreadyExistsError("x"), ConflictError("x"), ForbiddenError("x"), InvalidError("x"),
                          MethodNotAllowedError("x"), InternalError("x")}) {
    EXPECT_EQ(StatusToJson(s).value("details", json()), json::object()) << s.message();
  }
  for (const Status& s : {BadRequestError("x"), UnavailableError("x")}) {
    EXPECT_FALSE(StatusToJson(s).contains("details")) << s.message();
  }
}

TEST(StatusResponseTest, CoreGroupHasNoGroupDetail) {
  Status s = AlreadyExistsError("pods \"p1\" already exists");
  json j = StatusToJson(s, DetailsFor(s, {"", "pods"}, "Pod", "p1"));
  EXPECT_EQ(j["code"], 409);
  EXPECT_EQ(j["reason"], "AlreadyExists");
  EXPECT_EQ(j["details"], json::parse(R"({"name":"p1","kind":"pods"})"));
}

TEST(StatusResponseTest, InvalidUsesKindAndCauses) {
  api::FieldErrorList errs = {
      api::Invalid(api::FieldPath("spec").Child("replicas"), -1, "must be greater than or equal to 0"),
      api::Required(api::FieldPath("spec").Child("podSets"))};
  Status s = api::InvalidStatus("ClusterQueue.kueue.x-k8s.io", "cq", errs);
  json j = StatusToJson(s, DetailsFor(s, {"kueue.x-k8s.io", "clusterqueues"}, "ClusterQueue", "cq"));
  EXPECT_EQ(j["code"], 422);
  EXPECT_EQ(j["reason"], "Invalid");
  EXPECT_EQ(j["details"]["kind"], "ClusterQueue");  // kubectl prints `The ClusterQueue "cq" is invalid`
  EXPECT_EQ(j["details"]["name"], "cq");
  ASSERT_EQ(j["details"]["causes"].size(), 2u);
  EXPECT_EQ(j["details"]["causes"][0], json::parse(R"({"reason":"FieldValueInvalid",
      "message":"Invalid value: -1: must be greater than or equal to 0","field":"spec.replicas"})"));
  EXPECT_EQ(j["details"]["causes"][1]["reason"], "FieldValueRequired");
  EXPECT_EQ(j["details"]["causes"][1]["field"], "spec.podSets");
}

TEST(StatusResponseTest, BadRequestWithoutDetails) {
  json j = StatusToJson(BadRequestError("bad"));
  EXPECT_FALSE(j.contains("details"));
  EXPECT_EQ(j["code"], 400);
  EXPECT_EQ(j["reason"], "BadRequest");
  EXPECT_EQ(StatusResponse(TooLargeError("too big")).status, 413);
}

TEST(StatusResponseTest, Success) {
  json j = SuccessStatusJson({"p1", "", "pods", "u-1"});
  EXPECT_EQ(j["status"], "Success");
  EXPECT_EQ(j["details"], json::parse(R"({"name":"p1","kind":"pods","uid":"u-1"})"));
}

}  // namespace
}  // namespace berth::apiserver
