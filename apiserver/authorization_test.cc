// Authentication, RBAC authorization, impersonation, escalation checks and the
// review APIs through ApiServer::Handle, with tokens: what kube-apiserver
// answers each request, body for body.
#include "apiserver/authorization.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mutex>
#include <tuple>

#include "apiserver/testing/test_api_server.h"

namespace berth::apiserver {
namespace {

using ::testing::ElementsAre;
using json = nlohmann::json;

ApiServerOptions Secured() {
  return testing::SecuredWithTokens(
      "admin-token,admin,u-0,system:masters\n"
      "alice-token,alice,u-1,team-a\n"
      "node0-token,system:node:node-0,u-2,system:nodes\n");
}

class AuthorizationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api_.server.Start().ok());
    for (const char* ns : {"team-a", "team-b"}) {
      ASSERT_EQ(As("admin", "POST", "/api/v1/namespaces",
                   json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}}.dump())
                    .status,
                201);
    }
    // team-a may manage Jobs and RoleBindings in team-a.
    ASSERT_EQ(As("admin", "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", R"({
      "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "job-editor"},
      "rules": [{"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["*"]},
                {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["rolebindings"], "verbs": ["create"]}]})")
                  .status,
              201);
    ASSERT_EQ(As("admin", "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings", R"({
      "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "team-a-jobs"},
      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "job-editor"},
      "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "team-a"}]})")
                  .status,
              201);
  }
  void TearDown() override { api_.server.Stop(); }

  // A request with the token "<user>-token" ("" = none) and extra headers.
  HttpResponse As(const std::string& user, const std::string& method, const std::string& target,
                  const std::string& body = "", HttpHeaders headers = {},
                  std::string_view content_type = "application/json") {
    HttpRequest req = testing::Request(method, target, body, content_type);
    if (!user.empty()) req.headers.emplace_back("Authorization", "Bearer " + user + "-token");
    for (auto& h : headers) req.headers.push_back(std::move(h));
    HandlerResult r = api_.server.Handle(req);
    EXPECT_TRUE(std::holds_alternative<HttpResponse>(r)) << method << " " << target;
    return std::holds_alternative<HttpResponse>(r) ? std::get<HttpResponse>(r) : HttpResponse{};
  }
  static json Body(const HttpResponse& r) { return json::parse(r.body); }

  static constexpr const char* kJob = R"({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
    "spec": {"template": {"spec": {"restartPolicy": "Never",
      "containers": [{"name": "main", "image": "busybox", "command": ["true"]}]}}}})";

  testing::TestApiServer api_{Secured()};
};

TEST_F(AuthorizationTest, NoCredentialIs401ExceptOnThePublicHealthPaths) {
  HttpResponse r = As("", "GET", "/api/v1/namespaces/team-b/pods");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(Body(r), json::parse(R"({"apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure",
    "message": "Unauthorized", "reason": "Unauthorized", "code": 401})"));
  EXPECT_EQ(As("", "GET", "/healthz").status, 200);  // system:public-info-viewer
  EXPECT_EQ(As("", "GET", "/version").status, 200);
  EXPECT_EQ(As("wrong", "GET", "/healthz").status, 401);
  // Anonymous reaches /metrics nowhere: 401 before any handler.
  EXPECT_EQ(As("", "GET", "/metrics").status, 401);
}

TEST_F(AuthorizationTest, ADeniedRequestIs403WithUpstreamsMessageAndDetails) {
  ASSERT_EQ(As("admin", "POST", "/apis/batch/v1/namespaces/team-b/jobs", kJob).status, 201);
  HttpResponse list = As("alice", "GET", "/apis/batch/v1/namespaces/team-b/jobs");
  EXPECT_EQ(list.status, 403);
  EXPECT_EQ(Body(list)["message"],
            "jobs.batch is forbidden: User \"alice\" cannot list resource \"jobs\" in API group \"batch\" in the "
            "namespace \"team-b\"");
  EXPECT_EQ(Body(list)["reason"], "Forbidden");
  EXPECT_EQ(Body(list)["details"], json::parse(R"({"group": "batch", "kind": "jobs"})"));
  HttpResponse del = As("alice", "DELETE", "/apis/batch/v1/namespaces/team-b/jobs/j");
  EXPECT_EQ(del.status, 403);
  EXPECT_EQ(Body(del)["message"],
            "jobs.batch \"j\" is forbidden: User \"alice\" cannot delete resource \"jobs\" in API group \"batch\" in "
            "the namespace \"team-b\"");
  EXPECT_EQ(Body(del)["details"], json::parse(R"({"name": "j", "group": "batch", "kind": "jobs"})"));
  EXPECT_EQ(As("admin", "GET", "/apis/batch/v1/namespaces/team-b/jobs/j").status, 200);  // still there
  HttpResponse cq =
      As("alice", "POST", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues",
         R"({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "x"}})");
  EXPECT_EQ(cq.status, 403);
  EXPECT_EQ(Body(cq)["message"],
            "clusterqueues.kueue.x-k8s.io is forbidden: User \"alice\" cannot create resource \"clusterqueues\" in "
            "API group \"kueue.x-k8s.io\" at the cluster scope");
  HttpResponse metrics = As("alice", "GET", "/metrics");
  EXPECT_EQ(metrics.status, 403);
  EXPECT_EQ(Body(metrics)["message"], "forbidden: User \"alice\" cannot get path \"/metrics\"");
  // What the binding grants works.
  EXPECT_EQ(As("alice", "POST", "/apis/batch/v1/namespaces/team-a/jobs", kJob).status, 201);
  EXPECT_EQ(As("alice", "GET", "/apis/batch/v1/namespaces/team-a/jobs/j").status, 200);
}

TEST_F(AuthorizationTest, BindingARoleTheUserDoesNotHoldIsRefused) {
  HttpResponse r = As("alice", "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings", R"({
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "root"},
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]})");
  EXPECT_EQ(r.status, 403);
  EXPECT_THAT(Body(r)["message"].get<std::string>(),
              ::testing::StartsWith("rolebindings.rbac.authorization.k8s.io \"root\" is forbidden: user \"alice\" "
                                    "(groups=[\"team-a\" \"system:authenticated\"]) is attempting to grant RBAC "
                                    "permissions not currently held:"));
  EXPECT_EQ(As("admin", "GET", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings/root").status, 404);
  // Binding what she holds is allowed.
  EXPECT_EQ(As("alice", "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings", R"({
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "bob-jobs"},
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "job-editor"},
    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}]})")
                .status,
            201);
}

TEST_F(AuthorizationTest, ImpersonationNeedsTheRightAndActsAsTheUser) {
  HttpResponse denied =
      As("alice", "GET", "/apis/batch/v1/namespaces/team-a/jobs", "", {{"Impersonate-User", "admin"}});
  EXPECT_EQ(denied.status, 403);
  EXPECT_EQ(Body(denied)["message"],
            "users \"admin\" is forbidden: User \"alice\" cannot impersonate resource \"users\" in API group \"\" at "
            "the cluster scope");
  HttpResponse as_alice = As("admin", "GET", "/apis/batch/v1/namespaces/team-b/jobs", "",
                             {{"Impersonate-User", "alice"}, {"Impersonate-Group", "team-a"}});
  EXPECT_EQ(as_alice.status, 403);
  EXPECT_THAT(Body(as_alice)["message"].get<std::string>(), ::testing::HasSubstr("User \"alice\" cannot list"));
  HttpResponse who = As("admin", "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                        R"({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})",
                        {{"Impersonate-User", "alice"}, {"Impersonate-Group", "team-a"}});
  ASSERT_EQ(who.status, 201);
  EXPECT_EQ(Body(who)["status"]["userInfo"],
            json::parse(R"({"username": "alice", "groups": ["team-a", "system:authenticated"]})"));
}

// A namespace's uid/gid block (api/namespace_security.h) is written by the control plane
// (the in-process client) only: not by cluster-admin, nor by one impersonating the
// loopback user, nor through a new namespace.
TEST_F(AuthorizationTest, OnlyTheControlPlaneSetsANamespacesIdBlock) {
  const std::string set = R"({"metadata":{"annotations":{"openshift.io/sa.scc.uid-range":"1000010000/10000"}}})";
  HttpRequest own = testing::Request("PATCH", "/api/v1/namespaces/team-a", set, "application/merge-patch+json");
  own.in_process = true;
  HandlerResult r = api_.server.Handle(own);
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(r));
  ASSERT_EQ(std::get<HttpResponse>(r).status, 200) << std::get<HttpResponse>(r).body;

  const std::string forbidden =
      "namespaces \"team-a\" is forbidden: the annotation openshift.io/sa.scc.uid-range is set by the control plane "
      "and cannot be changed";
  const std::string steal = R"({"metadata":{"annotations":{"openshift.io/sa.scc.uid-range":"1000000000/10000"}}})";
  HttpResponse changed = As("admin", "PATCH", "/api/v1/namespaces/team-a", steal, {}, "application/merge-patch+json");
  EXPECT_EQ(changed.status, 403);
  EXPECT_EQ(Body(changed)["message"], forbidden);
  HttpResponse removed =
      As("admin", "PATCH", "/api/v1/namespaces/team-a",
         R"({"metadata":{"annotations":{"openshift.io/sa.scc.uid-range":null}}})", {}, "application/merge-patch+json");
  EXPECT_EQ(removed.status, 403);
  HttpResponse impersonated = As("admin", "PATCH", "/api/v1/namespaces/team-a", steal,
                                 {{"Impersonate-User", "system:apiserver"}, {"Impersonate-Group", "system:masters"}},
                                 "application/merge-patch+json");
  EXPECT_EQ(impersonated.status, 403);
  HttpResponse created = As("admin", "POST", "/api/v1/namespaces",
                            R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-c",
                                "annotations":{"openshift.io/sa.scc.supplemental-groups":"0/1"}}})");
  EXPECT_EQ(created.status, 403);
  // Other edits of the namespace keep working, and the block is unchanged.
  HttpResponse labeled =
      As("admin", "PATCH", "/api/v1/namespaces/team-a",
         R"({"metadata":{"labels":{"team":"a"},"annotations":{"note":"x"}}})", {}, "application/merge-patch+json");
  ASSERT_EQ(labeled.status, 200) << labeled.body;
  EXPECT_EQ(Body(labeled)["metadata"]["annotations"]["openshift.io/sa.scc.uid-range"], "1000010000/10000");
}

TEST_F(AuthorizationTest, ReviewsAnswerForTheRequesterOrTheNamedSubject) {
  HttpResponse who = As("alice", "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", "{}");
  ASSERT_EQ(who.status, 201);
  EXPECT_EQ(Body(who)["kind"], "SelfSubjectReview");
  EXPECT_EQ(Body(who)["status"]["userInfo"],
            json::parse(R"({"username": "alice", "uid": "u-1", "groups": ["team-a", "system:authenticated"]})"));
  auto can = [&](const std::string& user, const std::string& verb, const std::string& ns) {
    json review = {
        {"apiVersion", "authorization.k8s.io/v1"},
        {"kind", "SelfSubjectAccessReview"},
        {"spec",
         {{"resourceAttributes", {{"namespace", ns}, {"verb", verb}, {"group", "batch"}, {"resource", "jobs"}}}}}};
    HttpResponse r = As(user, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return Body(r)["status"]["allowed"].get<bool>();
  };
  EXPECT_TRUE(can("alice", "delete", "team-a"));
  EXPECT_FALSE(can("alice", "list", "team-b"));
  EXPECT_TRUE(can("admin", "list", "team-b"));
  // SubjectAccessReview: only for those who may create it (the admin), about anyone.
  const std::string sar = R"({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
    "spec": {"user": "carol", "groups": ["team-a"],
             "resourceAttributes": {"namespace": "team-a", "verb": "create", "group": "batch", "resource": "jobs"}}})";
  EXPECT_EQ(As("alice", "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar).status, 403);
  HttpResponse r = As("admin", "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", sar);
  ASSERT_EQ(r.status, 201);
  EXPECT_EQ(Body(r)["status"]["allowed"], true);
  EXPECT_THAT(Body(r)["status"]["reason"].get<std::string>(),
              ::testing::HasSubstr("RoleBinding \"team-a-jobs/team-a\" of ClusterRole \"job-editor\""));
  // The rules review lists what the binding grants.
  HttpResponse rules = As("alice", "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                          R"({"spec": {"namespace": "team-a"}})");
  ASSERT_EQ(rules.status, 201);
  EXPECT_THAT(Body(rules)["status"]["resourceRules"].dump(), ::testing::HasSubstr(R"("resources":["jobs"])"));
}

TEST_F(AuthorizationTest, TheReviewKubectlSendsAsProtobufIsDecoded) {
  // `kubectl auth can-i get pods -n x`, as kubectl 1.32 sent it.
  const std::string body(
      "k8s\x00\n2\n\x17"
      "authorization.k8s.io/v1\x12\x17SelfSubjectAccessReview\x12\x36\n\x10\n\x00\x12\x00\x1a\x00\"\x00"
      "*\x00\x32\x00\x38\x00\x42\x00\x12\x18\n\x16\n\x01x\x12\x03get\x1a\x00\"\x00*\x04pods2\x00:\x00\x1a\x08\x08\x00"
      "\x12\x00\x1a\x00 \x00\x1a\x00\"\x00",
      116);
  HttpResponse r = As("admin", "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body, {},
                      "application/vnd.kubernetes.protobuf");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Body(r)["spec"]["resourceAttributes"], json::parse(R"({"namespace": "x", "verb": "get",
    "resource": "pods"})"));
  EXPECT_EQ(Body(r)["status"]["allowed"], true);
}

TEST_F(AuthorizationTest, BodiesOfOtherMediaTypesAre415) {
  HttpResponse r = As("admin", "POST", "/api/v1/namespaces/team-a/configmaps",
                      R"({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})", {}, "text/plain");
  EXPECT_EQ(r.status, 415);
  EXPECT_EQ(Body(r)["message"],
            "the body of the request was in an unknown format - accepted media types include: application/json, "
            "application/yaml, application/vnd.kubernetes.protobuf");
  EXPECT_EQ(As("admin", "GET", "/api/v1/namespaces/team-a/configmaps/x").status, 404);
  for (const char* media : {"application/x-www-form-urlencoded", "multipart/form-data; boundary=x"}) {
    EXPECT_EQ(As("admin", "POST", "/api/v1/namespaces/team-a/configmaps",
                 R"({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})", {}, media)
                  .status,
              415)
        << media;
  }
}

// A node's credential (system:node:<name> in system:nodes) writes its own Node,
// Lease and the status of its pods, and nothing of another node's.
TEST_F(AuthorizationTest, ANodeWritesOnlyItsOwnNodeLeaseAndPods) {
  auto node = [](const std::string& name) {
    return json{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}}}.dump();
  };
  EXPECT_EQ(As("node0", "POST", "/api/v1/nodes", node("node-0")).status, 201);
  HttpResponse other = As("node0", "POST", "/api/v1/nodes", node("node-1"));
  EXPECT_EQ(other.status, 403);
  EXPECT_EQ(Body(other)["message"],
            "nodes \"node-1\" is forbidden: node \"node-0\" is not allowed to modify node \"node-1\"");
  ASSERT_EQ(As("admin", "POST", "/api/v1/nodes", node("node-1")).status, 201);
  EXPECT_EQ(As("node0", "PATCH", "/api/v1/nodes/node-0/status", R"({"status": {"phase": "Running"}})", {},
               "application/merge-patch+json")
                .status,
            200);
  EXPECT_EQ(As("node0", "PATCH", "/api/v1/nodes/node-1/status", R"({"status": {"phase": "Running"}})", {},
               "application/merge-patch+json")
                .status,
            403);
  EXPECT_EQ(As("node0", "DELETE", "/api/v1/nodes/node-1").status, 403);

  auto lease = [](const std::string& name) {
    return json{{"apiVersion", "coordination.k8s.io/v1"},
                {"kind", "Lease"},
                {"metadata", {{"name", name}}},
                {"spec", {{"holderIdentity", name}}}}
        .dump();
  };
  const std::string leases = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";
  EXPECT_EQ(As("node0", "POST", leases, lease("node-0")).status, 201);
  HttpResponse other_lease = As("node0", "POST", leases, lease("node-1"));
  EXPECT_EQ(other_lease.status, 403);
  EXPECT_EQ(Body(other_lease)["message"],
            "leases.coordination.k8s.io \"node-1\" is forbidden: can only access node lease with the same name as "
            "the requesting node");
  EXPECT_EQ(As("node0", "GET", leases + "/node-0").status, 200);

  for (const auto& [name, bound_to] : {std::pair<const char*, const char*>{"mine", "node-0"}, {"theirs", "node-1"}}) {
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}}},
                {"spec", {{"nodeName", bound_to}, {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
    ASSERT_EQ(As("admin", "POST", "/api/v1/namespaces/team-b/pods", pod.dump()).status, 201);
  }
  const std::string running = R"({"status": {"phase": "Running"}})";
  EXPECT_EQ(
      As("node0", "PATCH", "/api/v1/namespaces/team-b/pods/mine/status", running, {}, "application/merge-patch+json")
          .status,
      200);
  HttpResponse theirs =
      As("node0", "PATCH", "/api/v1/namespaces/team-b/pods/theirs/status", running, {}, "application/merge-patch+json");
  EXPECT_EQ(theirs.status, 403);
  EXPECT_EQ(As("node0", "DELETE", "/api/v1/namespaces/team-b/pods/theirs").status, 403);
  EXPECT_EQ(As("node0", "DELETE", "/api/v1/namespaces/team-b/pods/mine").status, 200);
  // A pod that is gone is NotFound, as NodeRestriction answers (not a 403 for the agent's log).
  EXPECT_EQ(As("node0", "DELETE", "/api/v1/namespaces/team-b/pods/gone").status, 404);
  EXPECT_EQ(
      As("node0", "PATCH", "/api/v1/namespaces/team-b/pods/gone/status", running, {}, "application/merge-patch+json")
          .status,
      404);
  // A node changes no pod spec, creates no pod, and reads nothing beyond what its pods need.
  EXPECT_EQ(As("node0", "POST", "/api/v1/namespaces/team-b/pods",
               R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
                   "spec": {"nodeName": "node-0", "containers": [{"name": "c", "image": "busybox"}]}})")
                .status,
            403);
  EXPECT_EQ(As("node0", "GET", "/api/v1/namespaces/team-b/configmaps").status, 403);
  EXPECT_EQ(As("node0", "GET", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues").status, 403);
  EXPECT_EQ(As("node0", "GET", "/api/v1/namespaces/team-b/pods").status, 200);
}

// NodeRestriction's admitNode (plugin/pkg/admission/noderestriction/admission.go) and the
// Node authorizer's authorizeNode (plugin/pkg/auth/authorizer/node/node_authorizer.go) on a
// node's own Node: what it may register with, change and delete.
class NodeRestrictionTest : public AuthorizationTest {
 protected:
  // The Node berth's agent registers (agent/node_agent.cc RegisterNode), with `extra` merged in.
  static json AgentNode(const std::string& name, const json& extra = json::object()) {
    json node = {{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata",
                  {{"name", name},
                   {"labels",
                    {{"kubernetes.io/hostname", name},
                     {"kubernetes.io/os", "linux"},
                     {"kubernetes.io/arch", "amd64"},
                     {"beta.kubernetes.io/os", "linux"},
                     {"beta.kubernetes.io/arch", "amd64"}}},
                   {"annotations",
                    {{"berth.dev/kubelet-serving-ca", "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n"},
                     {"berth.dev/host-images", "busybox"}}}}},
                 {"spec", json::object()}};
    node.merge_patch(extra);
    return node;
  }
  static json AgentStatus() {
    return {{"capacity", {{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}}},
            {"allocatable", {{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}}},
            {"conditions",
             {{{"type", "Ready"},
               {"status", "True"},
               {"reason", "KubeletReady"},
               {"message", "kubelet is posting ready status"},
               {"lastHeartbeatTime", "2026-01-01T00:00:00Z"},
               {"lastTransitionTime", "2026-01-01T00:00:00Z"}}}},
            {"addresses", {{{"type", "InternalIP"}, {"address", "10.0.0.1"}}}}};
  }
  HttpResponse Merge(const std::string& user, const std::string& target, const json& patch) {
    return As(user, "PATCH", target, patch.dump(), {}, "application/merge-patch+json");
  }
  HttpResponse Strategic(const std::string& user, const std::string& target, const json& patch) {
    return As(user, "PATCH", target, patch.dump(), {}, "application/strategic-merge-patch+json");
  }
  json Stored(const std::string& name) {
    HttpResponse r = As("admin", "GET", "/api/v1/nodes/" + name);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? Body(r) : json();
  }
  // `r` is NodeRestriction's 403 for node-0 with `reason`, as kube-apiserver's admission.NewForbidden.
  static void ExpectForbidden(const HttpResponse& r, const std::string& reason, const std::string& what) {
    EXPECT_EQ(r.status, 403) << what << ": " << r.body;
    if (r.status != 403) return;
    EXPECT_EQ(Body(r), json({{"apiVersion", "v1"},
                             {"kind", "Status"},
                             {"metadata", json::object()},
                             {"status", "Failure"},
                             {"message", "nodes \"node-0\" is forbidden: " + reason},
                             {"reason", "Forbidden"},
                             {"details", {{"name", "node-0"}, {"kind", "nodes"}}},
                             {"code", 403}}))
        << what;
  }
};

TEST_F(NodeRestrictionTest, ANodeRegistersWithNoForbiddenLabelNorConfigSource) {
  // Every form of forbidden label (getForbiddenLabels), alone: refused, nothing stored.
  for (const char* key : {"node-restriction.kubernetes.io/team", "team.node-restriction.kubernetes.io/x",
                          "node-role.kubernetes.io/control-plane", "kubernetes.io/role", "kubernetes.io/hostname-x",
                          "topology.kubernetes.io/rack", "beta.kubernetes.io/fluentd-ds-ready",
                          "example.kubernetes.io/x", "k8s.io/x", "sub.k8s.io/x"}) {
    HttpResponse r =
        As("node0", "POST", "/api/v1/nodes", AgentNode("node-0", {{"metadata", {{"labels", {{key, "v"}}}}}}).dump());
    ExpectForbidden(r, std::string("node \"node-0\" is not allowed to set the following labels: ") + key, key);
    EXPECT_EQ(As("admin", "GET", "/api/v1/nodes/node-0").status, 404) << key;
  }
  // Several: all named, sorted (sets.String.List), joined with ", "; the empty value counts.
  HttpResponse several = As("node0", "POST", "/api/v1/nodes",
                            AgentNode("node-0", {{"metadata",
                                                  {{"labels",
                                                    {{"node-role.kubernetes.io/control-plane", ""},
                                                     {"node-restriction.kubernetes.io/team", "team-b"},
                                                     {"example.com/team", "b"}}}}}})
                                .dump());
  ExpectForbidden(several,
                  "node \"node-0\" is not allowed to set the following labels: node-restriction.kubernetes.io/team, "
                  "node-role.kubernetes.io/control-plane",
                  "several");
  // spec.configSource, with upstream's wording.
  HttpResponse config = As(
      "node0", "POST", "/api/v1/nodes",
      AgentNode("node-0",
                {{"spec",
                  {{"configSource",
                    {{"configMap", {{"namespace", "kube-system"}, {"name", "k"}, {"kubeletConfigKey", "kubelet"}}}}}}}})
          .dump());
  ExpectForbidden(config, "node \"node-0\" is not allowed to create pods with a non-nil configSource", "configSource");
  EXPECT_EQ(As("admin", "GET", "/api/v1/nodes/node-0").status, 404);

  // The kubelet's labels, any value (IsKubeletLabel), labels outside kubernetes.io and k8s.io,
  // and taints (--register-with-taints) are allowed.
  const json allowed = {{"kubernetes.io/hostname", "n2"},
                        {"kubernetes.io/os", "linux"},
                        {"kubernetes.io/arch", "arm64"},
                        {"beta.kubernetes.io/os", "linux"},
                        {"beta.kubernetes.io/arch", "arm64"},
                        {"beta.kubernetes.io/instance-type", "m5.large"},
                        {"node.kubernetes.io/instance-type", "m5.large"},
                        {"failure-domain.beta.kubernetes.io/region", "r"},
                        {"failure-domain.beta.kubernetes.io/zone", "z"},
                        {"topology.kubernetes.io/region", "r"},
                        {"topology.kubernetes.io/zone", "z"},
                        {"kubelet.kubernetes.io/x", "1"},
                        {"a.kubelet.kubernetes.io/x", "1"},
                        {"node.kubernetes.io/pool", "gpu"},
                        {"b.node.kubernetes.io/x", "1"},
                        {"example.com/team", "b"},
                        {"mykubernetes.io/x", "1"},
                        {"team", "b"}};
  const json taints = json::array({{{"key", "gpu"}, {"value", "true"}, {"effect", "NoSchedule"}}});
  HttpResponse created =
      As("node0", "POST", "/api/v1/nodes",
         AgentNode("node-0", {{"metadata", {{"labels", allowed}}}, {"spec", {{"taints", taints}}}}).dump());
  ASSERT_EQ(created.status, 201) << created.body;
  const json stored = Stored("node-0");
  EXPECT_EQ(stored["metadata"]["labels"], allowed);
  EXPECT_EQ(stored["spec"]["taints"], taints);
}

TEST_F(NodeRestrictionTest, ANodeChangesNoTaintNorForbiddenLabelOfItsNode) {
  ASSERT_EQ(As("node0", "POST", "/api/v1/nodes", AgentNode("node-0").dump()).status, 201);
  // The admin dedicates node-0 to team-a.
  ASSERT_EQ(
      Merge(
          "admin", "/api/v1/nodes/node-0",
          {{"metadata",
            {{"labels", {{"node-restriction.kubernetes.io/team", "team-a"}, {"node-role.kubernetes.io/worker", ""}}}}},
           {"spec",
            {{"taints",
              {{{"key", "dedicated"}, {"value", "team-a"}, {"effect", "NoSchedule"}},
               {{"key", "gpu"}, {"effect", "NoExecute"}, {"timeAdded", "2026-01-01T00:00:00Z"}}}}}}})
          .status,
      200);
  const json before = Stored("node-0");
  const std::string self = "/api/v1/nodes/node-0";
  auto unchanged = [&](const std::string& what) { EXPECT_EQ(Stored("node-0"), before) << what; };

  // Labels: adding, changing or removing a forbidden one, by merge patch.
  const std::vector<std::pair<json, std::string>> label_patches = {
      {{{"node-restriction.kubernetes.io/team", "team-b"}}, "node-restriction.kubernetes.io/team"},
      {{{"node-restriction.kubernetes.io/team", nullptr}}, "node-restriction.kubernetes.io/team"},
      {{{"node-restriction.kubernetes.io/other", "x"}}, "node-restriction.kubernetes.io/other"},
      {{{"x.node-restriction.kubernetes.io/team", "team-b"}}, "x.node-restriction.kubernetes.io/team"},
      {{{"node-role.kubernetes.io/control-plane", ""}}, "node-role.kubernetes.io/control-plane"},
      {{{"node-role.kubernetes.io/worker", "x"}}, "node-role.kubernetes.io/worker"},
      {{{"node-role.kubernetes.io/worker", nullptr}}, "node-role.kubernetes.io/worker"},
      {{{"kubernetes.io/role", "master"}}, "kubernetes.io/role"},
      {{{"topology.kubernetes.io/rack", "r1"}}, "topology.kubernetes.io/rack"},
      {{{"k8s.io/x", "1"}}, "k8s.io/x"},
      {{{"sub.k8s.io/x", "1"}}, "sub.k8s.io/x"},
      {{{"node-restriction.kubernetes.io/team", nullptr}, {"node-role.kubernetes.io/worker", nullptr}, {"team", "b"}},
       "node-restriction.kubernetes.io/team, node-role.kubernetes.io/worker"},
  };
  for (const auto& [labels, named] : label_patches) {
    HttpResponse r = Merge("node0", self, {{"metadata", {{"labels", labels}}}});
    ExpectForbidden(r, "is not allowed to modify labels: " + named, labels.dump());
    unchanged(labels.dump());
  }
  // By PUT and by strategic merge patch (kubectl label), the same.
  json put = before;
  put["metadata"]["labels"]["node-restriction.kubernetes.io/team"] = "team-b";
  ExpectForbidden(As("node0", "PUT", self, put.dump()),
                  "is not allowed to modify labels: node-restriction.kubernetes.io/team", "PUT label");
  unchanged("PUT label");
  ExpectForbidden(
      Strategic("node0", self, {{"metadata", {{"labels", {{"node-restriction.kubernetes.io/team", "team-b"}}}}}}),
      "is not allowed to modify labels: node-restriction.kubernetes.io/team", "kubectl label");
  unchanged("kubectl label");

  // Taints: none added, removed, changed or reordered, however sent.
  const std::string taints_refused = "node \"node-0\" is not allowed to modify taints";
  const json dedicated = before["spec"]["taints"][0];
  const json gpu = before["spec"]["taints"][1];
  const std::vector<std::pair<json, std::string>> taint_lists = {
      {json::array({dedicated, gpu, {{"key", "mine"}, {"effect", "NoSchedule"}}}), "add"},
      {json::array({gpu}), "remove one"},
      {json::array(), "remove all ([])"},
      {nullptr, "remove all (null)"},
      {json::array({{{"key", "dedicated"}, {"value", "team-b"}, {"effect", "NoSchedule"}}, gpu}), "change value"},
      {json::array({{{"key", "dedicated"}, {"value", "team-a"}, {"effect", "PreferNoSchedule"}}, gpu}),
       "change effect"},
      {json::array({dedicated, {{"key", "gpu"}, {"effect", "NoExecute"}, {"timeAdded", "2026-01-02T00:00:00Z"}}}),
       "change timeAdded"},
      {json::array({dedicated, {{"key", "gpu"}, {"effect", "NoExecute"}}}), "drop timeAdded"},
      {json::array({gpu, dedicated}), "reorder"},
  };
  for (const auto& [taints, what] : taint_lists) {
    ExpectForbidden(Merge("node0", self, {{"spec", {{"taints", taints}}}}), taints_refused, "merge: " + what);
    unchanged("merge: " + what);
    ExpectForbidden(Strategic("node0", self, {{"spec", {{"taints", taints}}}}), taints_refused, "strategic: " + what);
    unchanged("strategic: " + what);
    json replaced = before;
    replaced["spec"]["taints"] = taints;
    ExpectForbidden(As("node0", "PUT", self, replaced.dump()), taints_refused, "PUT: " + what);
    unchanged("PUT: " + what);
  }
  // The first rule broken is named: taints before labels (upstream's order).
  ExpectForbidden(Merge("node0", self,
                        {{"metadata", {{"labels", {{"node-restriction.kubernetes.io/team", "team-b"}}}}},
                         {"spec", {{"taints", nullptr}}}}),
                  taints_refused, "taints and labels");
  unchanged("taints and labels");
  // A new non-nil spec.configSource.
  ExpectForbidden(
      Merge("node0", self,
            {{"spec",
              {{"configSource",
                {{"configMap", {{"namespace", "kube-system"}, {"name", "k"}, {"kubeletConfigKey", "kubelet"}}}}}}}}),
      "node \"node-0\" is not allowed to update configSource to a new non-nil configSource", "configSource");
  unchanged("configSource");

  // Allowed: the same taints written back (an explicit empty value and the same instant in
  // another form are the same taint), other labels and annotations, cordoning, status.
  json same = before;
  same["spec"]["taints"][0]["value"] = "team-a";
  same["spec"]["taints"][1]["value"] = "";
  same["spec"]["taints"][1]["timeAdded"] = "2026-01-01T00:00:00+00:00";
  same["metadata"]["annotations"]["berth.dev/host-images"] = "busybox,alpine";
  HttpResponse rewritten = As("node0", "PUT", self, same.dump());
  ASSERT_EQ(rewritten.status, 200) << rewritten.body;
  HttpResponse relabeled = Merge("node0", self,
                                 {{"metadata",
                                   {{"labels",
                                     {{"example.com/rack", "r1"},
                                      {"kubernetes.io/hostname", "other"},
                                      {"topology.kubernetes.io/zone", "z1"},
                                      {"node.kubernetes.io/instance-type", "m5.large"},
                                      {"kubelet.kubernetes.io/x", "1"},
                                      {"beta.kubernetes.io/arch", nullptr}}}}}});
  ASSERT_EQ(relabeled.status, 200) << relabeled.body;
  const json after = Stored("node-0");
  EXPECT_EQ(after["metadata"]["labels"]["node-restriction.kubernetes.io/team"], "team-a");
  EXPECT_EQ(after["metadata"]["labels"]["node-role.kubernetes.io/worker"], "");
  EXPECT_EQ(after["metadata"]["labels"]["example.com/rack"], "r1");
  EXPECT_FALSE(after["metadata"]["labels"].contains("beta.kubernetes.io/arch"));
  EXPECT_EQ(after["spec"]["taints"].size(), 2u);
  EXPECT_EQ(after["spec"]["taints"][0]["key"], "dedicated");
  // spec.unschedulable: admitNode does not look at it (kubectl cordon / uncordon).
  EXPECT_EQ(Merge("node0", self, {{"spec", {{"unschedulable", true}}}}).status, 200);
  EXPECT_EQ(Stored("node-0")["spec"]["unschedulable"], true);
  EXPECT_EQ(Merge("node0", self, {{"spec", {{"unschedulable", false}}}}).status, 200);
  EXPECT_EQ(Stored("node-0")["spec"]["unschedulable"], false);
  // Status, by PATCH and by PUT (labels and taints sent with it are the stored ones).
  EXPECT_EQ(Merge("node0", self + "/status", {{"status", AgentStatus()}}).status, 200);
  json status = Stored("node-0");
  status["status"]["conditions"][0]["lastHeartbeatTime"] = "2026-01-01T00:00:10Z";
  EXPECT_EQ(As("node0", "PUT", self + "/status", status.dump()).status, 200);
  // A Node without taints: an empty list is no change.
  EXPECT_EQ(Merge("admin", self, {{"spec", {{"taints", nullptr}}}}).status, 200);
  EXPECT_EQ(Merge("node0", self, {{"spec", {{"taints", json::array()}}}}).status, 200);
  // Nor may a node write another subresource of its Node.
  EXPECT_EQ(As("node0", "PUT", self + "/proxy", "{}").status, 403);
}

TEST_F(NodeRestrictionTest, ANodeDeletesNoNodeAndTheAgentRegistersAgain) {
  const std::string self = "/api/v1/nodes/node-0";
  // The agent's registration: create, then status (RegisterNode).
  auto register_node = [&] {
    HttpResponse created = As("node0", "POST", "/api/v1/nodes", AgentNode("node-0").dump());
    EXPECT_EQ(created.status, 201) << created.body;
    json with_status = Body(created);
    with_status["status"] = AgentStatus();
    with_status["metadata"].erase("resourceVersion");
    return As("node0", "PUT", self + "/status", with_status.dump()).status;
  };
  ASSERT_EQ(register_node(), 200);
  ASSERT_EQ(Merge("admin", self,
                  {{"metadata", {{"labels", {{"node-restriction.kubernetes.io/team", "team-a"}}}}},
                   {"spec", {{"taints", {{{"key", "dedicated"}, {"value", "team-a"}, {"effect", "NoSchedule"}}}}}}})
                .status,
            200);

  // A node may not delete its Node (nor another's): the authorizer has no opinion, RBAC refuses.
  HttpResponse own = As("node0", "DELETE", self);
  EXPECT_EQ(own.status, 403);
  EXPECT_EQ(Body(own)["message"],
            "nodes \"node-0\" is forbidden: User \"system:node:node-0\" cannot delete resource \"nodes\" in API group "
            "\"\" at the cluster scope");
  EXPECT_EQ(As("node0", "DELETE", "/api/v1/nodes").status, 403);  // deletecollection
  const json kept = Stored("node-0");
  EXPECT_EQ(kept["metadata"]["labels"]["node-restriction.kubernetes.io/team"], "team-a");
  EXPECT_EQ(kept["spec"]["taints"].size(), 1u);

  // The agent restarts with other flags: create (409), get, update its annotations, status.
  EXPECT_EQ(As("node0", "POST", "/api/v1/nodes", AgentNode("node-0").dump()).status, 409);
  json current = Body(As("node0", "GET", self));
  current["metadata"]["annotations"].erase("berth.dev/host-images");
  current["metadata"]["annotations"]["berth.dev/kubelet-serving-ca"] = "-----BEGIN CERTIFICATE-----\ny\n";
  HttpResponse updated = As("node0", "PUT", self, current.dump());
  ASSERT_EQ(updated.status, 200) << updated.body;
  json restatus = Body(updated);
  restatus["status"] = AgentStatus();
  restatus["metadata"].erase("resourceVersion");
  ASSERT_EQ(As("node0", "PUT", self + "/status", restatus.dump()).status, 200);
  const json restarted = Stored("node-0");
  EXPECT_EQ(restarted["metadata"]["labels"]["node-restriction.kubernetes.io/team"], "team-a");
  EXPECT_EQ(restarted["spec"]["taints"], kept["spec"]["taints"]);
  EXPECT_FALSE(restarted["metadata"]["annotations"].contains("berth.dev/host-images"));

  // The admin deletes it; the agent registers it again (EnsureNodeRegistered), with its own
  // labels only: the forbidden ones are refused on this create as on the first.
  ASSERT_EQ(As("admin", "DELETE", self).status, 200);
  ExpectForbidden(
      As("node0", "POST", "/api/v1/nodes",
         AgentNode("node-0", {{"metadata", {{"labels", {{"node-restriction.kubernetes.io/team", "team-b"}}}}}}).dump()),
      "node \"node-0\" is not allowed to set the following labels: node-restriction.kubernetes.io/team", "recreate");
  EXPECT_EQ(As("admin", "GET", self).status, 404);
  EXPECT_EQ(register_node(), 200);
  EXPECT_EQ(Stored("node-0")["metadata"]["labels"], AgentNode("node-0")["metadata"]["labels"]);
}

// The node agent records Events (the kubelet's recorder): a node may create, patch and
// update Events in both groups, as system:node's eventsRule allows.
TEST_F(AuthorizationTest, ANodeRecordsEventsInBothGroups) {
  const json ev = {{"apiVersion", "v1"},
                   {"kind", "Event"},
                   {"metadata", {{"name", "e1"}}},
                   {"involvedObject", {{"kind", "Pod"}, {"name", "p"}, {"namespace", "team-b"}}},
                   {"reason", "Started"},
                   {"message", "Started container c"},
                   {"count", 1}};
  ASSERT_EQ(As("node0", "POST", "/api/v1/namespaces/team-b/events", ev.dump()).status, 201);
  EXPECT_EQ(
      As("node0", "PATCH", "/api/v1/namespaces/team-b/events/e1", R"({"count": 2})", {}, "application/merge-patch+json")
          .status,
      200);
  json current = Body(As("node0", "GET", "/api/v1/namespaces/team-b/events/e1"));
  current["count"] = 3;
  EXPECT_EQ(As("node0", "PUT", "/api/v1/namespaces/team-b/events/e1", current.dump()).status, 200);
  json v1 = Body(As("node0", "GET", "/apis/events.k8s.io/v1/namespaces/team-b/events/e1"));
  EXPECT_EQ(v1["deprecatedCount"], 3);
  v1["metadata"]["labels"] = {{"seen", "again"}};  // events.k8s.io/v1 updates keep the deprecated fields
  EXPECT_EQ(As("node0", "PUT", "/apis/events.k8s.io/v1/namespaces/team-b/events/e1", v1.dump()).status, 200);
  EXPECT_EQ(As("node0", "DELETE", "/api/v1/namespaces/team-b/events/e1").status, 403);
}

}  // namespace
}  // namespace berth::apiserver

namespace berth::apiserver {
namespace {

// A group served by a delegate (api_server.h ApiService, kube-aggregator's
// APIService): its requests are authenticated and authorized as resource
// requests before the handler sees them, and discovery lists the group after
// every group of the Registry.
TEST(ApiServiceTest, AuthorizedAsResourcesThenServedByTheHandlerAndListedLast) {
  ApiServerOptions options = Secured();
  std::vector<std::pair<RequestInfo, std::string>> calls;
  std::mutex mu;
  api::ApiServiceDescription description{
      "example.io", {"v1"}, {{"widgets", "widget", "Widget", true, {}}, {"widgets/sub", "", "Summary", true, {"get"}}}};
  options.api_services.push_back(
      {description, [&](const HttpRequest&, const RequestInfo& info, const authn::UserInfo& user) -> HandlerResult {
         std::lock_guard<std::mutex> l(mu);
         calls.emplace_back(info, user.name);
         HttpResponse r;
         r.body = R"({"kind":"Summary"})";
         return r;
       }});
  testing::TestApiServer api(std::move(options));
  auto as = [&](const std::string& user, const std::string& target, const std::string& accept = "") {
    HttpRequest req = testing::Request("GET", target, "", "");
    req.headers.emplace_back("Authorization", "Bearer " + user + "-token");
    if (!accept.empty()) req.headers.emplace_back("Accept", accept);
    HandlerResult r = api.server.Handle(req);
    return std::holds_alternative<HttpResponse>(r) ? std::get<HttpResponse>(r) : HttpResponse{};
  };

  HttpResponse denied = as("alice", "/apis/example.io/v1/namespaces/team-a/widgets/w/sub");
  EXPECT_EQ(denied.status, 403);
  EXPECT_EQ(json::parse(denied.body)["message"],
            "widgets.example.io \"w\" is forbidden: User \"alice\" cannot get resource \"widgets/sub\" in API group "
            "\"example.io\" in the namespace \"team-a\"");
  EXPECT_TRUE(calls.empty());

  HttpResponse served = as("admin", "/apis/example.io/v1/namespaces/team-a/widgets/w/sub?limit=3");
  EXPECT_EQ(served.status, 200);
  EXPECT_EQ(served.body, R"({"kind":"Summary"})");
  ASSERT_EQ(calls.size(), 1u);
  const RequestInfo& info = calls[0].first;
  EXPECT_EQ(calls[0].second, "admin");
  EXPECT_EQ(std::make_tuple(info.verb, info.api_group, info.api_version, info.namespace_, info.resource, info.name,
                            info.subresource, info.query.Get("limit")),
            std::make_tuple(std::string("get"), std::string("example.io"), std::string("v1"), std::string("team-a"),
                            std::string("widgets"), std::string("w"), std::string("sub"), std::string("3")));

  const json groups = json::parse(as("admin", "/apis").body)["groups"];
  ASSERT_FALSE(groups.empty());
  EXPECT_EQ(groups.back()["name"], "example.io");
  EXPECT_EQ(groups.back()["preferredVersion"]["groupVersion"], "example.io/v1");
  const json list = json::parse(as("admin", "/apis/example.io/v1").body);
  EXPECT_EQ(list["groupVersion"], "example.io/v1");
  ASSERT_EQ(list["resources"].size(), 2u);
  EXPECT_EQ(list["resources"][0]["verbs"], json::array());
  EXPECT_EQ(list["resources"][1]["name"], "widgets/sub");
  EXPECT_EQ(list["resources"][1]["verbs"], json::array({"get"}));
  const json aggregated =
      json::parse(as("admin", "/apis", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList").body);
  const json& last = aggregated["items"].back();
  EXPECT_EQ(last["metadata"]["name"], "example.io");
  const json& widgets = last["versions"][0]["resources"][0];
  EXPECT_EQ(widgets["resource"], "widgets");
  EXPECT_EQ(widgets["scope"], "Namespaced");
  EXPECT_EQ(widgets["subresources"], json::parse(R"([{"subresource":"sub","verbs":["get"],
              "responseKind":{"group":"example.io","version":"v1","kind":"Summary"}}])"));
  EXPECT_EQ(as("admin", "/apis/example.io/v2/namespaces/team-a/widgets/w/sub").status, 404);
}

// pods/exec: the WebSocket GET needs `get` and `create` (kube-apiserver 1.35's
// AuthorizePodWebsocketUpgradeCreatePermission), the SPDY POST `create`.
TEST_F(AuthorizationTest, ExecOverTheWebSocketGetAlsoNeedsCreate) {
  ASSERT_EQ(As("admin", "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles", R"({
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "exec-get"},
    "rules": [{"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["get"]}]})")
                .status,
            201);
  ASSERT_EQ(As("admin", "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/rolebindings", R"({
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "exec-get"},
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "exec-get"},
    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "team-a"}]})")
                .status,
            201);
  const std::string exec = "/api/v1/namespaces/team-a/pods/p/exec?command=true&stdout=true";
  HttpResponse get = As("alice", "GET", exec, "", {{"Upgrade", "websocket"}, {"Connection", "Upgrade"}});
  EXPECT_EQ(get.status, 403);
  EXPECT_EQ(Body(get)["message"],
            "pods \"p\" is forbidden: User \"alice\" cannot create resource \"pods/exec\" in API group \"\" in the "
            "namespace \"team-a\"");
  // The admin gets past authorization: the pod does not exist.
  HttpResponse admin = As("admin", "GET", exec, "", {{"Upgrade", "websocket"}, {"Connection", "Upgrade"}});
  EXPECT_EQ(admin.status, 404);
  EXPECT_EQ(Body(admin)["message"], "pods \"p\" not found");
  HttpResponse attach = As("admin", "POST", "/api/v1/namespaces/team-a/pods/p/attach?stdout=true");
  EXPECT_EQ(attach.status, 404);
  EXPECT_EQ(Body(attach)["message"], "pods \"p\" not found");
  EXPECT_EQ(As("admin", "GET", "/api/v1/namespaces/team-a/pods/p/exec?stdout=true").status, 400);  // no command
}

}  // namespace
}  // namespace berth::apiserver
