#include "client/api_status.h"

#include <gtest/gtest.h>

namespace berth::client {
namespace {

TEST(ApiStatusTest, DecodesReasonMessageAndCauses) {
  const char* body = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
    "message":"ClusterQueue.kueue.x-k8s.io \"cq\" is invalid: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: \"-1\": must be greater than or equal to 0",
    "reason":"Invalid",
    "details":{"name":"cq","group":"kueue.x-k8s.io","kind":"ClusterQueue","causes":[
      {"reason":"FieldValueInvalid","message":"Invalid value: \"-1\": must be greater than or equal to 0",
       "field":"spec.resourceGroups[0].flavors[0].resources[0].nominalQuota"}]},
    "code":422})";
  Status s = StatusFromResponse(422, body, "post", "clusterqueues.kueue.x-k8s.io", "cq");
  EXPECT_EQ(s.code(), Code::kInvalid);
  EXPECT_EQ(s.message(),
            "ClusterQueue.kueue.x-k8s.io \"cq\" is invalid: spec.resourceGroups[0].flavors[0].resources[0]."
            "nominalQuota: Invalid value: \"-1\": must be greater than or equal to 0");
  ASSERT_EQ(s.causes().size(), 1u);
  EXPECT_EQ(s.causes()[0], (StatusCause{"FieldValueInvalid", "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
                                        "Invalid value: \"-1\": must be greater than or equal to 0"}));
}

TEST(ApiStatusTest, FailureStatusObjectIsKubeApiserversDocumentAndDecodesBack) {
  const Status s = NotFoundError("pods \"x\" not found");
  const api::Object obj = FailureStatusObject(s);
  EXPECT_EQ(obj, api::Object::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
    "message":"pods \"x\" not found","reason":"NotFound","code":404})"));
  EXPECT_EQ(StatusFromObject(obj), s);
}

struct ReasonCase {
  const char* reason;
  int code;
  Code want;
};

TEST(ApiStatusTest, ReasonTable) {
  const ReasonCase cases[] = {
      {"NotFound", 404, Code::kNotFound},
      {"AlreadyExists", 409, Code::kAlreadyExists},
      {"Conflict", 409, Code::kConflict},
      {"Expired", 410, Code::kGone},
      {"Gone", 410, Code::kGone},
      {"BadRequest", 400, Code::kBadRequest},
      {"Forbidden", 403, Code::kForbidden},
      {"Unauthorized", 401, Code::kUnauthorized},
      {"MethodNotAllowed", 405, Code::kMethodNotAllowed},
      {"RequestEntityTooLarge", 413, Code::kTooLarge},
      {"UnsupportedMediaType", 415, Code::kUnsupportedMedia},
      {"Timeout", 504, Code::kTimeout},
      {"ServerTimeout", 500, Code::kTimeout},
      {"TooManyRequests", 429, Code::kUnavailable},
      {"ServiceUnavailable", 503, Code::kUnavailable},
      {"InternalError", 500, Code::kInternal},
      // No or unknown reason: the HTTP code decides.
      {"", 404, Code::kNotFound},
      {"SomethingNew", 409, Code::kConflict},
      {"", 410, Code::kGone},
      {"", 502, Code::kInternal},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(CodeFromReason(c.reason, c.code), c.want) << c.reason << " " << c.code;
    // Every Code's own reason decodes back to it (core/status.h's table).
  }
  for (Code code : {Code::kInvalid, Code::kBadRequest, Code::kNotFound, Code::kAlreadyExists, Code::kConflict,
                    Code::kGone, Code::kMethodNotAllowed, Code::kForbidden, Code::kUnauthorized, Code::kTooLarge,
                    Code::kUnsupportedMedia, Code::kTimeout, Code::kUnavailable, Code::kInternal}) {
    EXPECT_EQ(CodeFromReason(CodeReason(code), CodeHttpStatus(code)), code) << CodeReason(code);
  }
}

TEST(ApiStatusTest, WatchErrorObjectForExpiredResourceVersion) {
  api::Object obj = api::Object::parse(
      R"js({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
          "message":"too old resource version: 5 (120)","reason":"Expired","code":410})js");
  Status s = StatusFromObject(obj);
  EXPECT_EQ(s.code(), Code::kGone);
  EXPECT_EQ(s.message(), "too old resource version: 5 (120)");
  EXPECT_TRUE(StatusFromObject(api::Object::parse(R"({"kind":"Status","status":"Success"})")).ok());
}

TEST(ApiStatusTest, NonStatusBodiesGetClientGoGenericTexts) {
  Status s = StatusFromResponse(500, "plain text failure\n", "post", "pods");
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_EQ(s.message(),
            "an error on the server (\"plain text failure\") has prevented the request from succeeding (post pods)");
  s = StatusFromResponse(404, "<html>nope</html>", "get", "pods", "p1");
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_EQ(s.message(), "the server could not find the requested resource (get pods p1)");
  s = StatusFromResponse(409, "", "post", "pods", "p1");
  EXPECT_EQ(s.code(), Code::kAlreadyExists);
  EXPECT_EQ(s.message(), "the server reported a conflict (post pods p1)");
  s = StatusFromResponse(409, "", "put", "pods", "p1");
  EXPECT_EQ(s.code(), Code::kConflict);
  s = StatusFromResponse(418, "", "get", "");
  EXPECT_EQ(s.code(), Code::kBadRequest);
  EXPECT_EQ(s.message(), "the server responded with the status code 418 but did not return more information");
}

}  // namespace
}  // namespace berth::client
