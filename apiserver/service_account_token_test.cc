// TokenRequest and ServiceAccount token authentication through ApiServer::Handle:
// upstream's errors for each bad request, and a bound token that works until its pod,
// its ServiceAccount or its lifetime is gone (pkg/registry/core/serviceaccount/storage/
// token.go, pkg/serviceaccount/claims.go).
#include "apiserver/service_account_token.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "apiserver/testing/test_api_server.h"
#include "pki/certificates.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

ApiServerOptions Secured() {
  ApiServerOptions o = testing::SecuredWithTokens(
      "admin-token,admin,u-0,system:masters\n"
      "alice-token,alice,u-1,team-a\n"
      "node0-token,system:node:node-0,u-2,system:nodes\n"
      "node1-token,system:node:node-1,u-3,system:nodes\n");
  auto key = pki::CreateSigningKey();
  EXPECT_TRUE(key.ok());
  o.service_account_tokens.signing_key_pem = key->private_key_pem;
  o.service_account_tokens.public_key_pem = key->public_key_pem;
  return o;
}

class ServiceAccountTokenApiTest : public ::testing::Test {
 protected:
  // Start creates the default RBAC policy (system:basic-user's selfsubjectreviews).
  void SetUp() override {
    ASSERT_TRUE(api_.server.Start().ok());
    for (const char* ns : {"team-a", "team-b"}) {
      ASSERT_EQ(Admin("POST", "/api/v1/namespaces",
                      json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}})
                    .status,
                201);
      ASSERT_EQ(Admin("POST", std::string("/api/v1/namespaces/") + ns + "/serviceaccounts",
                      json{{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", "default"}}}})
                    .status,
                201);
    }
    pod_uid_ = CreatePod("p");
  }
  void TearDown() override { api_.server.Stop(); }

  HttpResponse Send(const std::string& bearer, const std::string& method, const std::string& target,
                    const json& body = nullptr) {
    HttpRequest req = testing::Request(method, target, body.is_null() ? "" : body.dump());
    if (!bearer.empty()) req.headers.emplace_back("Authorization", "Bearer " + bearer);
    HandlerResult r = api_.server.Handle(req);
    EXPECT_TRUE(std::holds_alternative<HttpResponse>(r)) << method << " " << target;
    return std::holds_alternative<HttpResponse>(r) ? std::get<HttpResponse>(r) : HttpResponse{};
  }
  HttpResponse Admin(const std::string& method, const std::string& target, const json& body = nullptr) {
    return Send("admin-token", method, target, body);
  }
  std::string CreatePod(const std::string& name) {
    HttpResponse r = Admin("POST", "/api/v1/namespaces/team-a/pods", json::parse(R"({"apiVersion":"v1","kind":"Pod",
      "metadata":{"name":")" + name + R"("},"spec":{"containers":[{"name":"c","image":"busybox"}]}})"));
    EXPECT_EQ(r.status, 201) << r.body;
    return json::parse(r.body)["metadata"]["uid"];
  }
  static json TokenRequest(json spec) {
    return json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"}, {"spec", std::move(spec)}};
  }
  // A token for team-a/default bound to pod p.
  std::string PodToken() {
    HttpResponse r = Admin("POST", "/api/v1/namespaces/team-a/serviceaccounts/default/token",
                           TokenRequest({{"boundObjectRef", {{"kind", "Pod"}, {"apiVersion", "v1"}, {"name", "p"}}}}));
    EXPECT_EQ(r.status, 201) << r.body;
    return json::parse(r.body)["status"]["token"];
  }
  static std::string Message(const HttpResponse& r) { return json::parse(r.body).value("message", ""); }

  testing::TestApiServer api_{Secured()};
  std::string pod_uid_;
};

TEST_F(ServiceAccountTokenApiTest, TokenRequestAnswersAsUpstream) {
  HttpResponse r = Admin("POST", "/api/v1/namespaces/team-a/serviceaccounts/default/token",
                         TokenRequest({{"boundObjectRef", {{"kind", "Pod"}, {"apiVersion", "v1"}, {"name", "p"}}}}));
  ASSERT_EQ(r.status, 201) << r.body;
  json body = json::parse(r.body);
  EXPECT_EQ(body["kind"], "TokenRequest");
  EXPECT_EQ(body["metadata"]["name"], "default");
  EXPECT_EQ(body["spec"]["expirationSeconds"], 3600);
  EXPECT_EQ(body["spec"]["audiences"], json::array({authn::kDefaultServiceAccountIssuer}));
  EXPECT_EQ(body["status"]["expirationTimestamp"], FormatRfc3339(api_.clock.Now() + 3600s));

  auto post = [&](const std::string& sa, json spec) {
    return Admin("POST", "/api/v1/namespaces/team-a/serviceaccounts/" + sa + "/token", TokenRequest(std::move(spec)));
  };
  HttpResponse short_lived = post("default", {{"expirationSeconds", 60}});
  EXPECT_EQ(short_lived.status, 422);
  EXPECT_EQ(Message(short_lived),
            "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 60: may not "
            "specify a duration less than 10 minutes");
  HttpResponse no_sa = post("robot", json::object());
  EXPECT_EQ(no_sa.status, 404);
  EXPECT_EQ(Message(no_sa), "serviceaccounts \"robot\" not found");
  HttpResponse no_pod = post("default", {{"boundObjectRef", {{"kind", "Pod"}, {"apiVersion", "v1"}, {"name", "q"}}}});
  EXPECT_EQ(no_pod.status, 404);
  EXPECT_EQ(Message(no_pod), "pods \"q\" not found");
  HttpResponse stale =
      post("default", {{"boundObjectRef", {{"kind", "Pod"}, {"apiVersion", "v1"}, {"name", "p"}, {"uid", "old"}}}});
  EXPECT_EQ(stale.status, 409);
  EXPECT_EQ(Message(stale),
            "Operation cannot be fulfilled on Pod \"p\": the UID in the bound object reference (old) does not match "
            "the UID in record. The object might have been deleted and then recreated");
  HttpResponse kind =
      post("default", {{"boundObjectRef", {{"kind", "ConfigMap"}, {"apiVersion", "v1"}, {"name", "p"}}}});
  EXPECT_EQ(kind.status, 400);
  EXPECT_EQ(Message(kind), "cannot bind token to object of type /v1, Kind=ConfigMap");
  ASSERT_EQ(Admin("POST", "/api/v1/namespaces/team-a/serviceaccounts",
                  json{{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", "robot"}}}})
                .status,
            201);
  HttpResponse other_sa = post("robot", {{"boundObjectRef", {{"kind", "Pod"}, {"apiVersion", "v1"}, {"name", "p"}}}});
  EXPECT_EQ(other_sa.status, 400);
  EXPECT_EQ(Message(other_sa),
            "cannot bind token for serviceaccount \"robot\" to pod running with different serviceaccount name.");
  EXPECT_EQ(Admin("GET", "/api/v1/namespaces/team-a/serviceaccounts/default/token").status, 405);
  // serviceaccounts/token is its own permission.
  HttpResponse alice = Send("alice-token", "POST", "/api/v1/namespaces/team-a/serviceaccounts/default/token",
                            TokenRequest(json::object()));
  EXPECT_EQ(alice.status, 403);
  EXPECT_EQ(Message(alice),
            "serviceaccounts \"default\" is forbidden: User \"alice\" cannot create resource \"serviceaccounts/token\" "
            "in API group \"\" in the namespace \"team-a\"");
}

// A body that is not a TokenRequest, or names another namespace, is 400 and
// issues nothing (a null spec is an empty one, as Go decodes it).
TEST_F(ServiceAccountTokenApiTest, ABodyThatIsNotATokenRequestForThisNamespaceIs400) {
  const std::string url = "/api/v1/namespaces/team-a/serviceaccounts/default/token";
  for (const json& body : {json::array({1, 2, 3}), json("x"), json{{"spec", json::array()}}, json{{"spec", 5}}}) {
    HttpResponse r = Admin("POST", url, body);
    EXPECT_EQ(r.status, 400) << body.dump();
    EXPECT_FALSE(json::parse(r.body).contains("status") && json::parse(r.body)["status"].contains("token"));
  }
  json other = TokenRequest(json::object());
  other["metadata"]["namespace"] = "team-b";
  HttpResponse r = Admin("POST", url, other);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Message(r), "the namespace of the provided object does not match the namespace sent on the request");
  EXPECT_EQ(Admin("POST", url, json{{"spec", nullptr}}).status, 201);
}

TEST_F(ServiceAccountTokenApiTest, ABoundTokenIsItsServiceAccountWithNoRightsByDefault) {
  const std::string token = PodToken();
  HttpResponse r = Send(token, "GET", "/api/v1/namespaces/team-b/pods");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(Message(r),
            "pods is forbidden: User \"system:serviceaccount:team-a:default\" cannot list resource \"pods\" in API "
            "group \"\" in the namespace \"team-b\"");
  HttpResponse who = Send(token, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                          json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}});
  ASSERT_EQ(who.status, 201) << who.body;
  json info = json::parse(who.body)["status"]["userInfo"];
  EXPECT_EQ(info["username"], "system:serviceaccount:team-a:default");
  EXPECT_EQ(info["groups"],
            json::parse(R"(["system:serviceaccounts","system:serviceaccounts:team-a","system:authenticated"])"));
  EXPECT_EQ(info["extra"]["authentication.kubernetes.io/pod-name"], json::array({"p"}));
  EXPECT_EQ(info["extra"]["authentication.kubernetes.io/pod-uid"], json::array({pod_uid_}));
  EXPECT_THAT(info["extra"]["authentication.kubernetes.io/credential-id"][0].get<std::string>(),
              ::testing::StartsWith("JTI="));
  // A RoleBinding in team-a of view's rules (system:aggregate-to-view: no aggregation
  // controller runs here) opens team-a's pods, not team-b's, nor Secrets.
  ASSERT_EQ(Admin("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings", json::parse(R"({
      "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "sa-view"},
      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:aggregate-to-view"},
      "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "team-a"}]})"))
                .status,
            201);
  EXPECT_EQ(Send(token, "GET", "/api/v1/namespaces/team-a/pods").status, 200);
  EXPECT_EQ(Send(token, "GET", "/api/v1/namespaces/team-b/pods").status, 403);
  EXPECT_EQ(Send(token, "GET", "/api/v1/namespaces/team-a/secrets").status, 403);  // view excludes secrets
}

TEST_F(ServiceAccountTokenApiTest, ATokenStopsWorkingWithItsPodServiceAccountOrLifetime) {
  const std::string token = PodToken();
  auto whoami = [&](const std::string& t) {
    return Send(t, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}})
        .status;
  };
  EXPECT_EQ(whoami(token), 201);
  // Expired: one hour plus the leeway.
  api_.clock.Advance(3600s + authn::kTokenLeeway + 1s);
  EXPECT_EQ(whoami(token), 401);
  const std::string fresh = PodToken();
  EXPECT_EQ(whoami(fresh), 201);
  // Another audience is not the API server's.
  HttpResponse vault = Admin("POST", "/api/v1/namespaces/team-a/serviceaccounts/default/token",
                             TokenRequest({{"audiences", {"https://vault.example"}}}));
  ASSERT_EQ(vault.status, 201);
  EXPECT_EQ(whoami(json::parse(vault.body)["status"]["token"]), 401);
  // The pod deleted, then re-created under the same name with a new uid.
  ASSERT_EQ(Admin("DELETE", "/api/v1/namespaces/team-a/pods/p?gracePeriodSeconds=0").status, 200);
  EXPECT_EQ(whoami(fresh), 401);
  CreatePod("p");
  EXPECT_EQ(whoami(fresh), 401);
  // A token of the new pod works until its ServiceAccount is deleted (and re-created).
  const std::string third = PodToken();
  EXPECT_EQ(whoami(third), 201);
  ASSERT_EQ(Admin("DELETE", "/api/v1/namespaces/team-a/serviceaccounts/default").status, 200);
  EXPECT_EQ(whoami(third), 401);
  ASSERT_EQ(Admin("POST", "/api/v1/namespaces/team-a/serviceaccounts",
                  json{{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", "default"}}}})
                .status,
            201);
  EXPECT_EQ(whoami(third), 401);
  // Garbage that is no token of this issuer.
  EXPECT_EQ(whoami("a.b.c"), 401);
}

// The node authorizer's graph for Secrets, ConfigMaps, ServiceAccounts and tokens
// (plugin/pkg/auth/authorizer/node) and NodeRestriction's TokenRequest rules.
TEST_F(ServiceAccountTokenApiTest, ANodeGetsWhatItsPodsReferenceAndTokensOnlyBoundToThem) {
  for (const char* name : {"s1", "s2"}) {
    ASSERT_EQ(Admin("POST", "/api/v1/namespaces/team-a/secrets",
                    json{{"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", {{"name", name}}}})
                  .status,
              201);
  }
  ASSERT_EQ(Admin("POST", "/api/v1/namespaces/team-a/configmaps",
                  json{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "c1"}}}})
                .status,
            201);
  ASSERT_EQ(Admin("POST", "/api/v1/namespaces/team-a/serviceaccounts",
                  json{{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", "robot"}}}})
                .status,
            201);
  auto pod = [&](const std::string& name, const std::string& node) {
    HttpResponse r = Admin("POST", "/api/v1/namespaces/team-a/pods", json::parse(R"({"apiVersion":"v1","kind":"Pod",
      "metadata":{"name":")" + name + R"("},"spec":{"nodeName":")" + node + R"(","serviceAccountName":"robot",
      "containers":[{"name":"c","image":"busybox","env":[{"name":"P","valueFrom":{"secretKeyRef":{"name":"s1","key":"k"}}}],
      "envFrom":[{"configMapRef":{"name":"c1"}}]}]}})"));
    EXPECT_EQ(r.status, 201) << r.body;
    return json::parse(r.body)["metadata"]["uid"].get<std::string>();
  };
  const std::string uid0 = pod("np", "node-0");
  const std::string uid1 = pod("other", "node-1");
  EXPECT_EQ(Send("node0-token", "GET", "/api/v1/namespaces/team-a/secrets/s1").status, 200);
  EXPECT_EQ(Send("node0-token", "GET", "/api/v1/namespaces/team-a/secrets/s2").status, 403);
  EXPECT_EQ(Send("node0-token", "GET", "/api/v1/namespaces/team-a/configmaps/c1").status, 200);
  EXPECT_EQ(Send("node0-token", "GET", "/api/v1/namespaces/team-a/serviceaccounts/robot").status, 200);
  EXPECT_EQ(Send("node0-token", "GET", "/api/v1/namespaces/team-a/serviceaccounts/default").status, 403);
  EXPECT_EQ(Send("node0-token", "GET", "/api/v1/namespaces/team-a/secrets").status, 403);
  EXPECT_EQ(Send("node0-token", "GET", "/api/v1/namespaces/team-b/secrets/s1").status, 403);

  auto token = [&](const std::string& node, json ref) {
    json spec = json::object();
    if (!ref.is_null()) spec["boundObjectRef"] = std::move(ref);
    return Send(node + "-token", "POST", "/api/v1/namespaces/team-a/serviceaccounts/robot/token",
                TokenRequest(std::move(spec)));
  };
  const json bound0 = {{"kind", "Pod"}, {"apiVersion", "v1"}, {"name", "np"}, {"uid", uid0}};
  EXPECT_EQ(token("node0", bound0).status, 201);
  HttpResponse unbound = token("node0", nullptr);
  EXPECT_EQ(unbound.status, 403);
  EXPECT_EQ(Message(unbound), "serviceaccounts \"robot\" is forbidden: node requested token not bound to a pod");
  HttpResponse no_uid = token("node0", {{"kind", "Pod"}, {"apiVersion", "v1"}, {"name", "np"}});
  EXPECT_EQ(Message(no_uid),
            "serviceaccounts \"robot\" is forbidden: node requested token with a pod binding without a uid");
  HttpResponse elsewhere = token("node0", {{"kind", "Pod"}, {"apiVersion", "v1"}, {"name", "other"}, {"uid", uid1}});
  EXPECT_EQ(elsewhere.status, 403);
  EXPECT_EQ(Message(elsewhere),
            "serviceaccounts \"robot\""
            " is forbidden: node requested token bound to a pod scheduled on a different node");
  // team-a's default ServiceAccount is no pod's of node-0: the authorizer refuses.
  HttpResponse not_its = Send(
      "node0-token", "POST", "/api/v1/namespaces/team-a/serviceaccounts/default/token",
      TokenRequest({{"boundObjectRef", {{"kind", "Pod"}, {"apiVersion", "v1"}, {"name", "p"}, {"uid", pod_uid_}}}}));
  EXPECT_EQ(not_its.status, 403);
}

}  // namespace
}  // namespace berth::apiserver
