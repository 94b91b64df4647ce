#include "apiserver/authentication.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::apiserver {
namespace {

using ::testing::ElementsAre;

AuthenticationOptions Enabled() {
  AuthenticationOptions o;
  o.enabled = true;
  auto tokens = authn::TokenFile::Parse("alice-token,alice,u-1,\"team-a,ml\"\n");
  EXPECT_TRUE(tokens.ok());
  o.token_file = std::make_shared<const authn::TokenFile>(std::move(tokens).value());
  return o;
}

HttpRequest Get(std::string target) {
  HttpRequest r;
  r.method = "GET";
  r.target = std::move(target);
  return r;
}

ClientCertificate Cert(bool verified, std::string cn, std::vector<std::string> orgs) {
  ClientCertificate c;
  c.verified = verified;
  c.error = verified ? "" : "certificate signed by unknown authority";
  c.common_name = std::move(cn);
  c.organizations = std::move(orgs);
  return c;
}

TEST(AuthenticationTest, AVerifiedClientCertificateIsItsCommonNameInItsOrganizations) {
  HttpRequest r = Get("/api/v1/pods");
  r.client_certificate = Cert(true, "bob", {"team-b", "system:masters"});
  auto user = AuthenticateRequest(r, Enabled());
  ASSERT_TRUE(user.ok()) << user.status().ToString();
  EXPECT_EQ(user->name, "bob");
  EXPECT_THAT(user->groups, ElementsAre("team-b", "system:masters", "system:authenticated"));
}

TEST(AuthenticationTest, ABearerTokenFromTheFileIsItsUser) {
  HttpRequest r = Get("/api/v1/pods");
  r.headers.emplace_back("authorization", "bEaReR alice-token");
  auto user = AuthenticateRequest(r, Enabled());
  ASSERT_TRUE(user.ok()) << user.status().ToString();
  EXPECT_EQ(user->name, "alice");
  EXPECT_EQ(user->uid, "u-1");
  EXPECT_THAT(user->groups, ElementsAre("team-a", "ml", "system:authenticated"));
}

TEST(AuthenticationTest, ABadCredentialIsUnauthorizedEvenWhereAnonymousIsAllowed) {
  for (const std::string& path : {"/api/v1/pods", "/healthz"}) {
    HttpRequest token = Get(path);
    token.headers.emplace_back("Authorization", "Bearer not-a-token");
    auto u1 = AuthenticateRequest(token, Enabled());
    ASSERT_FALSE(u1.ok());
    EXPECT_EQ(u1.status().code(), Code::kUnauthorized);
    EXPECT_EQ(u1.status().message(), "Unauthorized");

    HttpRequest cert = Get(path);
    cert.client_certificate = Cert(false, "mallory", {"system:masters"});
    auto u2 = AuthenticateRequest(cert, Enabled());
    ASSERT_FALSE(u2.ok());
    EXPECT_EQ(u2.status().code(), Code::kUnauthorized);
  }
}

TEST(AuthenticationTest, AnUnverifiedCertificateFallsThroughToAValidToken) {
  HttpRequest r = Get("/api/v1/pods");
  r.client_certificate = Cert(false, "mallory", {"system:masters"});
  r.headers.emplace_back("Authorization", "Bearer alice-token");
  auto user = AuthenticateRequest(r, Enabled());
  ASSERT_TRUE(user.ok());
  EXPECT_EQ(user->name, "alice");
}

TEST(AuthenticationTest, NoCredentialIsAnonymousOnlyOnThePublicPaths) {
  for (const std::string& path : {"/healthz", "/livez", "/readyz", "/version", "/readyz?verbose"}) {
    auto user = AuthenticateRequest(Get(path), Enabled());
    ASSERT_TRUE(user.ok()) << path;
    EXPECT_EQ(user->name, "system:anonymous");
    EXPECT_THAT(user->groups, ElementsAre("system:unauthenticated"));
  }
  for (const std::string& path : {"/api/v1/namespaces/team-b/pods/canary", "/metrics", "/healthzx", "/apis", "/"}) {
    auto user = AuthenticateRequest(Get(path), Enabled());
    ASSERT_FALSE(user.ok()) << path;
    EXPECT_EQ(user.status().code(), Code::kUnauthorized) << path;
  }
  // A scheme other than Bearer, or an empty token, is no credential at all.
  HttpRequest basic = Get("/api/v1/pods");
  basic.headers.emplace_back("Authorization", "Basic YWxpY2U6cGFzcw==");
  EXPECT_EQ(AuthenticateRequest(basic, Enabled()).status().code(), Code::kUnauthorized);
  HttpRequest empty = Get("/healthz");
  empty.headers.emplace_back("Authorization", "Bearer ");
  EXPECT_TRUE(AuthenticateRequest(empty, Enabled()).ok());
}

TEST(AuthenticationTest, InProcessRequestsAreTheLoopbackUserAndOffMeansUnsecured) {
  HttpRequest r = Get("/api/v1/pods");
  r.in_process = true;
  auto loopback = AuthenticateRequest(r, Enabled());
  ASSERT_TRUE(loopback.ok());
  EXPECT_EQ(loopback->name, "system:apiserver");
  EXPECT_THAT(loopback->groups, ElementsAre("system:masters", "system:authenticated"));
  auto unsecured = AuthenticateRequest(Get("/api/v1/pods"), AuthenticationOptions{});
  ASSERT_TRUE(unsecured.ok());
  EXPECT_EQ(unsecured->name, "system:unsecured");
  EXPECT_THAT(unsecured->groups, ElementsAre("system:masters", "system:authenticated"));
}

TEST(ImpersonationTest, EachStepIsAuthorizedAndTheImpersonatedUserGetsImplicitGroups) {
  HttpRequest r = Get("/api/v1/pods");
  r.headers.emplace_back("Impersonate-User", "system:serviceaccount:team-a:trainer");
  r.headers.emplace_back("Impersonate-Group", "extra-group");
  r.headers.emplace_back("Impersonate-Extra-Scopes", "view");
  authn::UserInfo admin;
  admin.name = "admin";
  std::vector<std::string> asked;
  auto user = Impersonate(r, admin, [&](const rbac::RequestAttributes& a) {
    EXPECT_EQ(a.verb, "impersonate");
    EXPECT_EQ(a.user.name, "admin");
    asked.push_back(a.api_group + "/" + a.resource + (a.subresource.empty() ? "" : "/" + a.subresource) + " " + a.ns +
                    "/" + a.name);
    return rbac::Decision{true, ""};
  });
  ASSERT_TRUE(user.ok()) << user.status().ToString();
  EXPECT_THAT(asked, ElementsAre("/serviceaccounts team-a/trainer", "/groups /extra-group",
                                 "authentication.k8s.io/userextras/scopes /view"));
  EXPECT_EQ(user->name, "system:serviceaccount:team-a:trainer");
  EXPECT_THAT(user->groups, ElementsAre("extra-group", "system:serviceaccounts", "system:serviceaccounts:team-a",
                                        "system:authenticated"));
  EXPECT_THAT(user->extra.at("scopes"), ElementsAre("view"));
}

TEST(ImpersonationTest, ADeniedStepIsForbiddenWithUpstreamsMessageAndGroupsNeedAUser) {
  HttpRequest r = Get("/api/v1/pods");
  r.headers.emplace_back("Impersonate-User", "bob");
  authn::UserInfo alice;
  alice.name = "alice";
  auto denied = Impersonate(r, alice, [](const rbac::RequestAttributes&) { return rbac::Decision{false, ""}; });
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().code(), Code::kForbidden);
  EXPECT_EQ(denied.status().message(),
            "users \"bob\" is forbidden: User \"alice\" cannot impersonate resource \"users\" in API group \"\" at "
            "the cluster scope");
  HttpRequest groups_only = Get("/api/v1/pods");
  groups_only.headers.emplace_back("Impersonate-Group", "system:masters");
  auto bad = Impersonate(groups_only, alice, [](const rbac::RequestAttributes&) { return rbac::Decision{true, ""}; });
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kBadRequest);
  EXPECT_TRUE(HasImpersonationHeaders(groups_only));
  EXPECT_FALSE(HasImpersonationHeaders(Get("/")));
}

}  // namespace
}  // namespace berth::apiserver
