#include "apiserver/request_info.h"

#include <gtest/gtest.h>

namespace berth::apiserver {
namespace {

struct PathCase {
  const char* method;
  const char* target;
  bool resource;
  const char* verb;
  const char* group;
  const char* version;
  const char* ns;
  const char* resource_name;
  const char* name;
  const char* sub;
};

TEST(RequestInfoTest, ParsesKubernetesPaths) {
  const PathCase cases[] = {
      {"GET", "/api/v1/namespaces/default/pods?limit=500", true, "list", "", "v1", "default", "pods", "", ""},
      {"GET", "/api/v1/pods", true, "list", "", "v1", "", "pods", "", ""},
      {"GET", "/api/v1/namespaces/default/pods/p1", true, "get", "", "v1", "default", "pods", "p1", ""},
      {"PUT", "/api/v1/namespaces/default/pods/p1/status", true, "update", "", "v1", "default", "pods", "p1", "status"},
      {"GET", "/api/v1/namespaces/team-a", true, "get", "", "v1", "", "namespaces", "team-a", ""},
      {"PUT", "/api/v1/namespaces/team-a/status", true, "update", "", "v1", "", "namespaces", "team-a", "status"},
      {"GET", "/api/v1/namespaces", true, "list", "", "v1", "", "namespaces", "", ""},
      {"POST", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues", true, "create", "kueue.x-k8s.io", "v1beta1", "", "clusterqueues", "", ""},
      {"PATCH", "/apis/kueue.x-k8s.io/v1beta2/namespaces/ns/localqueues/lq", true, "patch", "kueue.x-k8s.io", "v1beta2", "ns", "localqueues", "lq", ""},
      {"DELETE", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues/cq", true, "delete", "kueue.x-k8s.io", "v1beta2", "", "clusterqueues", "cq", ""},
      {"DELETE", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues", true, "deletecollection", "kueue.x-k8s.io", "v1beta2", "", "clusterqueues", "", ""},
      {"GET", "/api/v1/namespaces/default/pods?watch=true&resourceVersion=5", true, "watch", "", "v1", "default", "pods", "", ""},
      {"GET", "/api/v1/watch/namespaces/default/pods", true, "watch", "", "v1", "default", "pods", "", ""},
      {"GET", "/version?timeout=5s", false, "", "", "", "", "", "", ""},
      {"GET", "/api", false, "", "", "", "", "", "", ""},
      {"GET", "/apis/kueue.x-k8s.io", false, "", "kueue.x-k8s.io", "", "", "", "", ""},
      {"GET", "/apis/kueue.x-k8s.io/v1beta2", false, "", "kueue.x-k8s.io", "v1beta2", "", "", "", ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.method) + " " + c.target);
    auto info = ParseRequestInfo(c.method, c.target);
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(info->is_resource_request, c.resource);
    EXPECT_EQ(info->verb, c.verb);
    EXPECT_EQ(info->api_group, c.group);
    EXPECT_EQ(info->api_version, c.version);
    EXPECT_EQ(info->namespace_, c.ns);
    EXPECT_EQ(info->resource, c.resource_name);
    EXPECT_EQ(info->name, c.name);
    EXPECT_EQ(info->subresource, c.sub);
  }
}

TEST(RequestInfoTest, TooManySegmentsIsNotFound) {
  auto info = ParseRequestInfo("GET", "/api/v1/namespaces/default/pods/p1/status/extra");
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), Code::kNotFound);
}

TEST(RequestInfoTest, QueryIsFormDecoded) {
  // What kubectl sends for -l 'app in (a,b),!tier' --field-selector status.phase!=Failed.
  auto q = QueryParams::Parse(
      "labelSelector=app+in+%28a%2Cb%29%2C%21tier&fieldSelector=status.phase%21%3DFailed&dryRun=All&dryRun=All&x");
  EXPECT_EQ(q.Get("labelSelector"), "app in (a,b),!tier");
  EXPECT_EQ(q.Get("fieldSelector"), "status.phase!=Failed");
  EXPECT_EQ(q.GetAll("dryRun").size(), 2u);
  EXPECT_TRUE(q.Has("x"));
  EXPECT_EQ(q.Get("x"), "");
  EXPECT_EQ(q.Get("missing"), "");
  EXPECT_EQ(UrlDecode("a%2", false), "a%2");  // malformed escape kept verbatim
  EXPECT_EQ(UrlDecode("a+b", false), "a+b");  // '+' is literal in paths
}

TEST(RequestInfoTest, ListOptions) {
  auto o = ParseListOptions(QueryParams::Parse(
      "allowWatchBookmarks=true&fieldSelector=metadata.name%3Dp1&resourceVersion=42&timeoutSeconds=300&watch=true&limit=500"));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->watch);
  EXPECT_TRUE(o->allow_watch_bookmarks);
  EXPECT_EQ(o->field_selector, "metadata.name=p1");
  EXPECT_EQ(o->resource_version, "42");
  EXPECT_EQ(o->limit, 500);
  ASSERT_TRUE(o->timeout_seconds.has_value());
  EXPECT_EQ(*o->timeout_seconds, 300);

  auto bad = ParseListOptions(QueryParams::Parse("limit=abc"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kBadRequest);
  auto bad_match = ParseListOptions(QueryParams::Parse("resourceVersionMatch=Newest"));
  ASSERT_FALSE(bad_match.ok());
  EXPECT_EQ(bad_match.status().code(), Code::kBadRequest);
}

TEST(RequestInfoTest, DeleteOptionsFromBodyAndQuery) {
  auto o = ParseDeleteOptions(QueryParams::Parse(""),
                              R"({"gracePeriodSeconds":5,"propagationPolicy":"Foreground",
                                  "preconditions":{"uid":"u1"}})");
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->grace_period_seconds, 5);
  EXPECT_EQ(o->propagation_policy, "Foreground");
  EXPECT_EQ(o->precondition_uid, "u1");
  // Query parameters override the body, as upstream.
  auto q = ParseDeleteOptions(QueryParams::Parse("gracePeriodSeconds=0&propagationPolicy=Orphan"),
                              R"({"gracePeriodSeconds":5})");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->grace_period_seconds, 0);
  EXPECT_EQ(q->propagation_policy, "Orphan");
  auto bad = ParseDeleteOptions(QueryParams::Parse(""), R"({"propagationPolicy":"Sideways"})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kBadRequest);
  auto garbage = ParseDeleteOptions(QueryParams::Parse(""), "{not json");
  EXPECT_FALSE(garbage.ok());
}

TEST(RequestInfoTest, WriteOptions) {
  auto o = ParseWriteOptions(QueryParams::Parse(
      "fieldManager=kubectl-client-side-apply&fieldValidation=Strict&dryRun=All"));
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->dry_run);
  EXPECT_EQ(o->field_validation, api::FieldValidation::kStrict);
  EXPECT_EQ(o->field_manager, "kubectl-client-side-apply");
  auto d = ParseWriteOptions(QueryParams::Parse(""));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->field_validation, api::FieldValidation::kWarn);
  EXPECT_FALSE(d->dry_run);
  EXPECT_FALSE(ParseWriteOptions(QueryParams::Parse("dryRun=Some")).ok());
  EXPECT_FALSE(ParseWriteOptions(QueryParams::Parse("fieldValidation=Loud")).ok());
}

}  // namespace
}  // namespace berth::apiserver
