// kube-apiserver 1.32's answers, body for body, where the authentication and
// authorization paths meet the edges: the review APIs' strict decoding and
// validation, trailing-slash health and version paths, OPTIONS, PUT of an
// absent object of a kind that allows create-on-update, bindings to a missing
// role, the order of the impersonation checks and watch timeouts.
#include <chrono>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "apiserver/testing/test_api_server.h"

namespace berth::apiserver {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

ApiServerOptions Secured() {
  return testing::SecuredWithTokens(
      "admin-token,admin,u-0,system:masters\n"
      "alice-token,alice,u-1,team-a\n"
      "bob-token,bob,u-2\n");
}

class AuthorizationConformanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api_.server.Start().ok());
    ASSERT_EQ(As("admin", "POST", "/api/v1/namespaces", R"({"metadata": {"name": "team-a"}})").status, 201);
  }
  void TearDown() override { api_.server.Stop(); }

  // The answer to a request with the token "<user>-token" ("" = anonymous).
  HandlerResult Raw(const std::string& user, const std::string& method, const std::string& target,
                    const std::string& body = "", HttpHeaders headers = {}) {
    HttpRequest req = testing::Request(method, target, body);
    if (!user.empty()) req.headers.emplace_back("Authorization", "Bearer " + user + "-token");
    for (auto& h : headers) req.headers.push_back(std::move(h));
    return api_.server.Handle(req);
  }
  HttpResponse As(const std::string& user, const std::string& method, const std::string& target,
                  const std::string& body = "", HttpHeaders headers = {}) {
    HandlerResult r = Raw(user, method, target, body, std::move(headers));
    EXPECT_TRUE(std::holds_alternative<HttpResponse>(r)) << method << " " << target;
    return std::holds_alternative<HttpResponse>(r) ? std::get<HttpResponse>(r) : HttpResponse{};
  }
  static json Body(const HttpResponse& r) { return json::parse(r.body); }
  static std::string Message(const HttpResponse& r) { return Body(r).value("message", ""); }

  testing::TestApiServer api_{Secured()};
};

constexpr char kSsar[] = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
constexpr char kSar[] = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
constexpr char kLocalSar[] = "/apis/authorization.k8s.io/v1/namespaces/team-a/localsubjectaccessreviews";

TEST_F(AuthorizationConformanceTest, AReviewFieldOfTheWrongJsonTypeIs400NamingTheField) {
  HttpResponse r = As("alice", "POST", kSsar, R"({"spec": {"resourceAttributes": {"verb": 5, "resource": "pods"}}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Body(r)["reason"], "BadRequest");
  EXPECT_EQ(Message(r),
            "SelfSubjectAccessReview in version \"v1\" cannot be handled as a SelfSubjectAccessReview: json: cannot "
            "unmarshal number into Go struct field ResourceAttributes.spec.resourceAttributes.verb of type string");
  r = As("admin", "POST", kSar, R"({"spec": {"user": "x", "groups": ["a", true], "resourceAttributes": {}}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Message(r),
            "SubjectAccessReview in version \"v1\" cannot be handled as a SubjectAccessReview: json: cannot unmarshal "
            "bool into Go struct field SubjectAccessReviewSpec.spec.groups of type string");
  r = As("alice", "POST", kSsar, R"({"spec": "pods"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(Message(r), HasSubstr("json: cannot unmarshal string into Go struct field SelfSubjectAccessReview.spec "
                                    "of type v1.SelfSubjectAccessReviewSpec"));
  r = As("alice", "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", R"({"spec": {"namespace": ["a"]}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_THAT(Message(r), HasSubstr("cannot unmarshal array into Go struct field "
                                    "SelfSubjectRulesReviewSpec.spec.namespace of type string"));
  // null reads as absent, as Go leaves the zero value.
  r = As("alice", "POST", kSsar,
         R"({"spec": {"resourceAttributes": {"namespace": "team-a", "verb": "list", "resource": "pods",
                                             "name": null}}})");
  EXPECT_EQ(r.status, 201) << r.body;
}

TEST_F(AuthorizationConformanceTest, SubjectAccessReviewValidationErrorsAreAll422Together) {
  HttpResponse r = As("admin", "POST", kSar, R"({"spec": {}})");
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(Message(r),
            "SubjectAccessReview.authorization.k8s.io \"\" is invalid: [spec.resourceAttributes: Invalid value: "
            "\"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: "
            "Invalid value: \"\": at least one of user or group must be specified]");
  EXPECT_EQ(Body(r)["details"]["causes"].size(), 2u);
  r = As(
      "alice", "POST", kSsar,
      R"({"spec": {"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"path": "/x", "verb": "get"}}})");
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(Message(r),
            "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: spec.nonResourceAttributes: Invalid value: "
            "{\"path\":\"/x\",\"verb\":\"get\"}: cannot be specified in combination with resourceAttributes");
}

TEST_F(AuthorizationConformanceTest, ALocalSubjectAccessReviewAsksAboutTheNamespaceOfItsUrlOnly) {
  // The reviewed namespace must be written, and be the URL's.
  HttpResponse r = As("admin", "POST", kLocalSar,
                      R"({"spec": {"user": "alice", "resourceAttributes": {"verb": "get", "resource": "pods"}}})");
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(Message(r),
            "LocalSubjectAccessReview.authorization.k8s.io \"\" is invalid: spec.resourceAttributes.namespace: "
            "Invalid value: \"\": must match metadata.namespace");
  r = As("admin", "POST", kLocalSar,
         R"({"spec": {"user": "alice", "resourceAttributes": {"namespace": "team-b", "verb": "get"}}})");
  EXPECT_EQ(r.status, 422);
  EXPECT_THAT(Message(r), HasSubstr("Invalid value: \"team-b\": must match metadata.namespace"));
  r = As("admin", "POST", kLocalSar, R"({"spec": {"user": "alice", "nonResourceAttributes": {"path": "/x"}}})");
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(Message(r),
            "LocalSubjectAccessReview.authorization.k8s.io \"\" is invalid: spec.nonResourceAttributes: Invalid "
            "value: {\"path\":\"/x\"}: disallowed on this kind of request");
  r = As("admin", "POST", kLocalSar,
         R"({"metadata": {"namespace": "team-b"},
             "spec": {"user": "alice", "resourceAttributes": {"namespace": "team-a", "verb": "get"}}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Message(r), "the namespace of the provided object does not match the namespace sent on the request");
  r = As("admin", "POST", kLocalSar,
         R"({"spec": {"user": "alice", "resourceAttributes": {"namespace": "team-a", "verb": "get"}}})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Body(r)["metadata"]["namespace"], "team-a");
  EXPECT_EQ(Body(r)["status"]["allowed"], false);
}

// /version/ is the version route too (go-restful matches it) and anonymous may read it
// (system:public-info-viewer lists "/version/"); /healthz/ is no path (the healthz mux
// registers exact paths): the admin gets 404, and anonymous, which berth admits on the
// listed paths only (AuthenticationOptions::anonymous_paths), 401.
TEST_F(AuthorizationConformanceTest, TrailingSlashVersionIsServedAndTrailingSlashHealthzIsNot) {
  HttpResponse v = As("", "GET", "/version/");
  EXPECT_EQ(v.status, 200);
  EXPECT_TRUE(Body(v).contains("gitVersion"));
  for (const char* path : {"/healthz/", "/livez/", "/readyz/", "/healthz/ping/"}) {
    EXPECT_EQ(As("", "GET", path).status, 401) << path;
    HttpResponse admin = As("admin", "GET", path);
    EXPECT_EQ(admin.status, 404) << path;
    EXPECT_EQ(Body(admin)["reason"], "NotFound") << path;
  }
  EXPECT_EQ(As("admin", "GET", "/healthz/ping").body, "ok");
}

// OPTIONS: RequestInfoFactory gives a resource request the verb "" (its method switch has
// no case for it) and a non-resource request the lower-cased method; RBAC grants neither
// to a user without "*", so the 403 says so; an allowed OPTIONS reaches go-restful, which
// has no route for the method: 405.
TEST_F(AuthorizationConformanceTest, OptionsIsAuthorizedWithUpstreamsVerbsThen405) {
  HttpResponse r = As("alice", "OPTIONS", "/api/v1/namespaces/team-a/pods");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(Message(r),
            "pods is forbidden: User \"alice\" cannot  resource \"pods\" in API group \"\" in the "
            "namespace \"team-a\"");
  r = As("", "OPTIONS", "/healthz");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(Message(r), "forbidden: User \"system:anonymous\" cannot options path \"/healthz\"");
  r = As("admin", "OPTIONS", "/api/v1/namespaces/team-a/pods");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(Body(r)["reason"], "MethodNotAllowed");
}

// AllowCreateOnUpdate() is true for Role, ClusterRole, RoleBinding, ClusterRoleBinding,
// Lease, Event and Service (pkg/registry/.../strategy.go), false for the others: a PUT of
// an absent one is a create (201) that needs the "create" permission as well.
TEST_F(AuthorizationConformanceTest, PutOfAnAbsentObjectCreatesItWhereTheKindAllowsIt) {
  const std::string role = R"({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
    "metadata": {"name": "reader", "resourceVersion": "12345"},
    "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]})";
  const std::string roles = "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles/";
  HttpResponse r = As("admin", "PUT", roles + "reader", role);
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Body(r)["rules"][0]["verbs"], json::array({"get"}));
  EXPECT_EQ(As("admin", "PUT", roles + "reader", role).status, 409);  // now it exists: the precondition holds
  EXPECT_EQ(As("admin", "PUT", "/apis/rbac.authorization.k8s.io/v1/clusterroles/c",
               R"({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "c"}})")
                .status,
            201);
  EXPECT_EQ(As("admin", "PUT", "/apis/coordination.k8s.io/v1/namespaces/team-a/leases/l",
               R"({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"}})")
                .status,
            201);
  HttpResponse cm = As("admin", "PUT", "/api/v1/namespaces/team-a/configmaps/x",
                       R"({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})");
  EXPECT_EQ(cm.status, 404);
  EXPECT_EQ(Message(cm), "configmaps \"x\" not found");
  // alice may update roles in team-a but not create them.
  ASSERT_EQ(As("admin", "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles",
               R"({"metadata": {"name": "role-updater"},
                   "rules": [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"],
                              "verbs": ["update", "escalate"]}]})")
                .status,
            201);
  ASSERT_EQ(As("admin", "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings",
               R"({"metadata": {"name": "alice-role-updater"},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "role-updater"},
                   "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]})")
                .status,
            201);
  HttpResponse denied = As("alice", "PUT", roles + "other",
                           R"({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                               "metadata": {"name": "other"}})");
  EXPECT_EQ(denied.status, 403);
  EXPECT_EQ(Message(denied), "roles.rbac.authorization.k8s.io \"other\" is forbidden: ");
  EXPECT_EQ(As("admin", "GET", roles + "other").status, 404);
}

// A binding to a missing role: system:masters and a user with `bind` on it skip the
// lookup (201); anyone else gets the role storage's 404, which the policy-based
// storage returns unchanged (rolebinding/policybased/storage.go).
TEST_F(AuthorizationConformanceTest, ABindingToAMissingRoleIs404UnlessTheRequesterMayBindIt) {
  auto binding = [](const std::string& name, const std::string& kind, const std::string& role,
                    const std::string& user = "bob") {
    return json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                {"kind", "RoleBinding"},
                {"metadata", {{"name", name}}},
                {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", kind}, {"name", role}}},
                {"subjects", {{{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "User"}, {"name", user}}}}}
        .dump();
  };
  const std::string bindings = "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings";
  ASSERT_EQ(As("admin", "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles",
               R"({"metadata": {"name": "binder"},
                   "rules": [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["rolebindings"],
                              "verbs": ["create"]},
                             {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"],
                              "verbs": ["bind"], "resourceNames": ["later"]}]})")
                .status,
            201);
  ASSERT_EQ(As("admin", "POST", bindings, binding("alice-binder", "Role", "binder", "alice")).status, 201);
  HttpResponse r = As("alice", "POST", bindings, binding("b1", "ClusterRole", "missing"));
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Message(r), "clusterroles.rbac.authorization.k8s.io \"missing\" not found");
  EXPECT_EQ(Body(r)["reason"], "NotFound");
  r = As("alice", "POST", bindings, binding("b2", "Role", "missing"));
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Message(r), "roles.rbac.authorization.k8s.io \"missing\" not found");
  EXPECT_EQ(As("alice", "POST", bindings, binding("b3", "ClusterRole", "later")).status, 201);  // bind on it
  EXPECT_EQ(As("admin", "POST", bindings, binding("b4", "ClusterRole", "missing")).status, 201);
  EXPECT_EQ(As("admin", "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
               json{{"metadata", {{"name", "crb"}}},
                    {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", "nope"}}},
                    {"subjects", {{{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "User"}, {"name", "bob"}}}}}
                   .dump())
                .status,
            201);
}

// buildImpersonationRequests' order: the user, the groups, the extras, the uid; the first
// refused one is named. Without a user, 400 lists the requests as Go prints them.
TEST_F(AuthorizationConformanceTest, ImpersonationIsCheckedUserFirstThenGroupsExtrasAndUid) {
  ASSERT_EQ(As("admin", "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
               R"({"metadata": {"name": "impersonate-groups"},
                   "rules": [{"apiGroups": [""], "resources": ["groups"], "verbs": ["impersonate"]}]})")
                .status,
            201);
  ASSERT_EQ(As("admin", "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
               R"({"metadata": {"name": "alice-impersonate-groups"},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                               "name": "impersonate-groups"},
                   "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]})")
                .status,
            201);
  // The uid and the group headers come first, yet the user is checked first.
  HttpResponse r = As("alice", "GET", "/api/v1/namespaces/team-a/pods", "",
                      {{"Impersonate-Uid", "u-9"}, {"Impersonate-Group", "g"}, {"Impersonate-User", "carol"}});
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(Message(r),
            "users \"carol\" is forbidden: User \"alice\" cannot impersonate resource \"users\" in API "
            "group \"\" at the cluster scope");
  // Without a user: 400 naming every request, groups, then extras, then the uid.
  r = As("alice", "GET", "/api/v1/namespaces/team-a/pods", "",
         {{"Impersonate-Uid", "u-9"}, {"Impersonate-Extra-Scopes", "view"}, {"Impersonate-Group", "g"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Message(r),
            "requested [{Group  g    } {UserExtra  view  authentication.k8s.io/v1  scopes} {UID  u-9  "
            "authentication.k8s.io/v1  }] without impersonating a user");
  // An empty Impersonate-User is no user.
  r = As("alice", "GET", "/api/v1/namespaces/team-a/pods", "", {{"Impersonate-User", ""}, {"Impersonate-Group", "g"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Message(r), "requested [{Group  g    }] without impersonating a user");
}

// A stream that records what it is sent.
class RecordingStream : public ResponseStreamBase {
 public:
  bool Write(std::string chunk) override {
    std::lock_guard<std::mutex> l(mu());
    if (done_locked()) return false;
    chunks.push_back(std::move(chunk));
    return true;
  }
  void Close() override {
    End([] {});
  }
  std::vector<std::string> chunks;
};

// GetTimeoutForWatch: timeoutSeconds as given, negative included (the watch ends at
// once); absent or 0: --min-request-timeout (1800 s) x [1, 2).
TEST_F(AuthorizationConformanceTest, AWatchTimesOutAsUpstreamDecides) {
  ASSERT_EQ(As("admin", "POST", "/api/v1/namespaces/team-a/configmaps", R"({"metadata": {"name": "c"}})").status, 201);
  const std::string watch = "/api/v1/namespaces/team-a/configmaps?watch=true&resourceVersion=0";
  HandlerResult r = Raw("admin", "GET", watch + "&timeoutSeconds=-1");
  ASSERT_TRUE(std::holds_alternative<StreamingResponse>(r));
  auto stream = std::make_shared<RecordingStream>();
  std::get<StreamingResponse>(r).start(stream);
  EXPECT_TRUE(stream->Done());
  EXPECT_TRUE(stream->chunks.empty());
  for (const std::string& q : {std::string(), std::string("&timeoutSeconds=0")}) {
    r = Raw("admin", "GET", watch + q);
    ASSERT_TRUE(std::holds_alternative<StreamingResponse>(r));
    const auto timeout = std::get<StreamingResponse>(r).timeout;
    EXPECT_GE(timeout, std::chrono::milliseconds(std::chrono::seconds(1800))) << q;
    EXPECT_LT(timeout, std::chrono::milliseconds(std::chrono::seconds(3600))) << q;
  }
  r = Raw("admin", "GET", watch + "&timeoutSeconds=5");
  ASSERT_TRUE(std::holds_alternative<StreamingResponse>(r));
  EXPECT_EQ(std::get<StreamingResponse>(r).timeout, std::chrono::milliseconds(5000));
}

}  // namespace
}  // namespace berth::apiserver
