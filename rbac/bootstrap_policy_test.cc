// The bootstrap policy after aggregation, for the seeds' team user: bound in team-a to
// Kubernetes' `edit` (and, to submit JobSets/TrainJobs/PyTorchJobs, to Kueue's batch user
// role), never to anything cluster-wide.
#include "rbac/bootstrap_policy.h"

#include <gtest/gtest.h>
#include <set>

#include "rbac/authorizer.h"
#include "rbac/static_policy.h"

namespace berth::rbac {
namespace {

api::Object TeamBinding(const std::string& name, const std::string& role) {
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "RoleBinding"},
          {"metadata", {{"name", name}, {"namespace", "team-a"}}},
          {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", role}}},
          {"subjects", {{{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Group"}, {"name", "team-a"}}}}};
}

std::vector<api::Object> PolicyWith(std::vector<api::Object> extra) {
  std::vector<api::Object> objects = BootstrapPolicy();
  for (auto& e : extra) objects.push_back(std::move(e));
  return objects;
}

const authn::UserInfo kTeamUser{"alice", "", {"team-a", "system:authenticated"}, {}};

bool Can(const Authorizer& a, const authn::UserInfo& user, const std::string& verb, const std::string& group,
         const std::string& resource, const std::string& ns, const std::string& subresource = "") {
  RequestAttributes r;
  r.user = user;
  r.verb = verb;
  r.api_group = group;
  r.resource = resource;
  r.subresource = subresource;
  r.ns = ns;
  return a.Authorize(r).allowed;
}

bool CanPath(const Authorizer& a, const authn::UserInfo& user, const std::string& verb, const std::string& path) {
  RequestAttributes r;
  r.user = user;
  r.resource_request = false;
  r.verb = verb;
  r.path = path;
  return a.Authorize(r).allowed;
}

constexpr char kKueue[] = "kueue.x-k8s.io";
const std::vector<std::string> kWriteVerbs = {"create", "update", "patch", "delete"};
const std::vector<std::string> kReadVerbs = {"get", "list", "watch"};

// What no namespace binding can grant the team user: Kueue's cluster-scoped kinds.
void ExpectNoClusterScopedKueue(const Authorizer& a) {
  for (const char* resource : {"clusterqueues", "resourceflavors", "workloadpriorityclasses", "cohorts"}) {
    for (const auto& verb : kWriteVerbs) {
      EXPECT_FALSE(Can(a, kTeamUser, verb, kKueue, resource, "")) << verb << " " << resource;
    }
    EXPECT_FALSE(Can(a, kTeamUser, "get", kKueue, resource, "")) << resource;
  }
}

TEST(BootstrapPolicyTest, EditInTeamNamespace) {
  StaticPolicySource policy(PolicyWith({TeamBinding("team-a-edit", "edit")}));
  Authorizer a(&policy);
  for (const auto& verb : {"create", "get", "list", "watch", "update", "patch", "delete", "deletecollection"}) {
    EXPECT_TRUE(Can(a, kTeamUser, verb, "batch", "jobs", "team-a")) << verb;
  }
  for (const auto& verb : kReadVerbs) {
    EXPECT_TRUE(Can(a, kTeamUser, verb, kKueue, "localqueues", "team-a")) << verb;
    EXPECT_TRUE(Can(a, kTeamUser, verb, kKueue, "workloads", "team-a")) << verb;
    EXPECT_TRUE(Can(a, kTeamUser, verb, "jobset.x-k8s.io", "jobsets", "team-a")) << verb;
    EXPECT_TRUE(Can(a, kTeamUser, verb, "trainer.kubeflow.org", "trainjobs", "team-a")) << verb;
    EXPECT_TRUE(Can(a, kTeamUser, verb, "kubeflow.org", "pytorchjobs", "team-a")) << verb;
    EXPECT_TRUE(Can(a, kTeamUser, verb, "", "pods", "team-a")) << verb;
  }
  EXPECT_TRUE(Can(a, kTeamUser, "get", "", "pods", "team-a", "log"));
  EXPECT_TRUE(Can(a, kTeamUser, "get", kKueue, "workloads", "team-a", "status"));
  EXPECT_TRUE(Can(a, kTeamUser, "create", "", "configmaps", "team-a"));
  EXPECT_TRUE(Can(a, kTeamUser, "get", "", "secrets", "team-a"));
  // Upstream's edit does not include Kueue's editor roles, nor JobSet's or Trainer's.
  for (const auto& verb : kWriteVerbs) {
    EXPECT_FALSE(Can(a, kTeamUser, verb, "jobset.x-k8s.io", "jobsets", "team-a")) << verb;
    EXPECT_FALSE(Can(a, kTeamUser, verb, "trainer.kubeflow.org", "trainjobs", "team-a")) << verb;
    EXPECT_FALSE(Can(a, kTeamUser, verb, "kubeflow.org", "pytorchjobs", "team-a")) << verb;
    EXPECT_FALSE(Can(a, kTeamUser, verb, kKueue, "localqueues", "team-a")) << verb;
    EXPECT_FALSE(Can(a, kTeamUser, verb, kKueue, "workloads", "team-a")) << verb;
  }
  // Not the quota: edit aggregates no ClusterQueue/ResourceFlavor role, in any scope.
  EXPECT_FALSE(Can(a, kTeamUser, "get", kKueue, "clusterqueues", "team-a"));
  EXPECT_FALSE(Can(a, kTeamUser, "update", "", "pods", "team-a", "status"));
  EXPECT_FALSE(Can(a, kTeamUser, "create", "rbac.authorization.k8s.io", "rolebindings", "team-a"));
  ExpectNoClusterScopedKueue(a);
  // Nothing in team-b.
  for (const auto& verb : {"get", "list", "delete"}) {
    EXPECT_FALSE(Can(a, kTeamUser, verb, "batch", "jobs", "team-b")) << verb;
    EXPECT_FALSE(Can(a, kTeamUser, verb, "trainer.kubeflow.org", "trainjobs", "team-b")) << verb;
    EXPECT_FALSE(Can(a, kTeamUser, verb, "", "pods", "team-b")) << verb;
  }
}

TEST(BootstrapPolicyTest, TeamRoleBindingsSubmitEveryJobKind) {
  StaticPolicySource policy(
      PolicyWith({TeamBinding("team-a-edit", "edit"), TeamBinding("team-a-batch-user", "kueue-batch-user-role")}));
  Authorizer a(&policy);
  for (const auto& [group, resource] :
       std::vector<std::pair<std::string, std::string>>{{"batch", "jobs"},
                                                        {"jobset.x-k8s.io", "jobsets"},
                                                        {"trainer.kubeflow.org", "trainjobs"},
                                                        {"kubeflow.org", "pytorchjobs"}}) {
    for (const auto& verb : {"create", "get", "list", "watch", "update", "patch", "delete"}) {
      EXPECT_TRUE(Can(a, kTeamUser, verb, group, resource, "team-a")) << verb << " " << resource;
    }
    EXPECT_FALSE(Can(a, kTeamUser, "create", group, resource, "team-b")) << resource;
  }
  EXPECT_TRUE(Can(a, kTeamUser, "list", kKueue, "localqueues", "team-a"));
  EXPECT_TRUE(Can(a, kTeamUser, "watch", kKueue, "workloads", "team-a"));
  EXPECT_FALSE(Can(a, kTeamUser, "create", kKueue, "localqueues", "team-a"));
  EXPECT_FALSE(Can(a, kTeamUser, "delete", kKueue, "workloads", "team-a"));
  ExpectNoClusterScopedKueue(a);
}

// Kueue's visibility API: a team sees the pending workloads of its own
// LocalQueues (pending-workloads-lq-viewer, in batch-user and view/edit), not
// another team's and not a ClusterQueue's (a batch admin's: KueueBatchAdminManagesQueues).
TEST(BootstrapPolicyTest, PendingWorkloadsVisibility) {
  const std::string kVisibility = "visibility.kueue.x-k8s.io";
  for (const char* role : {"kueue-batch-user-role", "view", "edit"}) {
    StaticPolicySource policy(PolicyWith({TeamBinding("team-a-binding", role)}));
    Authorizer a(&policy);
    EXPECT_TRUE(Can(a, kTeamUser, "get", kVisibility, "localqueues", "team-a", "pendingworkloads")) << role;
    EXPECT_FALSE(Can(a, kTeamUser, "get", kVisibility, "localqueues", "team-b", "pendingworkloads")) << role;
    EXPECT_FALSE(Can(a, kTeamUser, "get", kVisibility, "clusterqueues", "", "pendingworkloads")) << role;
  }
}

TEST(BootstrapPolicyTest, ViewAndAdmin) {
  StaticPolicySource policy(PolicyWith({TeamBinding("team-a-view", "view")}));
  Authorizer view(&policy);
  EXPECT_TRUE(Can(view, kTeamUser, "list", "batch", "jobs", "team-a"));
  EXPECT_TRUE(Can(view, kTeamUser, "get", kKueue, "localqueues", "team-a"));
  EXPECT_FALSE(Can(view, kTeamUser, "create", "batch", "jobs", "team-a"));
  EXPECT_FALSE(Can(view, kTeamUser, "get", "", "secrets", "team-a"));
  ExpectNoClusterScopedKueue(view);

  StaticPolicySource admin_policy(PolicyWith({TeamBinding("team-a-admin", "admin")}));
  Authorizer admin(&admin_policy);
  EXPECT_TRUE(Can(admin, kTeamUser, "create", "rbac.authorization.k8s.io", "rolebindings", "team-a"));
  EXPECT_TRUE(Can(admin, kTeamUser, "create", "authorization.k8s.io", "localsubjectaccessreviews", "team-a"));
  EXPECT_TRUE(Can(admin, kTeamUser, "delete", "batch", "jobs", "team-a"));
  EXPECT_TRUE(Can(admin, kTeamUser, "get", "", "secrets", "team-a"));
  EXPECT_FALSE(Can(admin, kTeamUser, "create", "rbac.authorization.k8s.io", "rolebindings", "team-b"));
  ExpectNoClusterScopedKueue(admin);
}

TEST(BootstrapPolicyTest, KueueBatchAdminManagesQueues) {
  api::Object crb = {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "ClusterRoleBinding"},
      {"metadata", {{"name", "batch-admins"}}},
      {"roleRef",
       {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", "kueue-batch-admin-role"}}},
      {"subjects", {{{"kind", "User"}, {"name", "carol"}}}}};
  StaticPolicySource policy(PolicyWith({crb}));
  Authorizer a(&policy);
  authn::UserInfo carol{"carol", "", {"system:authenticated"}, {}};
  for (const char* resource : {"clusterqueues", "resourceflavors", "cohorts", "localqueues", "workloads"}) {
    EXPECT_TRUE(Can(a, carol, "create", kKueue, resource, "")) << resource;
    EXPECT_TRUE(Can(a, carol, "delete", kKueue, resource, "")) << resource;
  }
  EXPECT_TRUE(Can(a, carol, "create", "trainer.kubeflow.org", "trainjobs", "team-b"));
  EXPECT_TRUE(Can(a, carol, "get", "visibility.kueue.x-k8s.io", "clusterqueues", "", "pendingworkloads"));
  EXPECT_TRUE(Can(a, carol, "get", "visibility.kueue.x-k8s.io", "localqueues", "team-b", "pendingworkloads"));
  // Kueue ships no WorkloadPriorityClass role.
  EXPECT_FALSE(Can(a, carol, "create", kKueue, "workloadpriorityclasses", ""));
  EXPECT_FALSE(Can(a, carol, "create", "", "pods", "team-b"));
}

TEST(BootstrapPolicyTest, DefaultBindings) {
  StaticPolicySource policy(BootstrapPolicy());
  Authorizer a(&policy);
  authn::UserInfo admin{"kubernetes-admin", "", {"system:masters", "system:authenticated"}, {}};
  EXPECT_TRUE(Can(a, admin, "delete", kKueue, "clusterqueues", ""));
  EXPECT_TRUE(CanPath(a, admin, "get", "/metrics"));
  RequestAttributes r;
  r.user = admin;
  r.verb = "delete";
  r.resource = "pods";
  r.ns = "x";
  EXPECT_EQ(
      a.Authorize(r).reason,
      R"(RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" to Group "system:masters")");

  authn::UserInfo user{"bob", "", {"system:authenticated"}, {}};
  EXPECT_TRUE(Can(a, user, "create", "authorization.k8s.io", "selfsubjectaccessreviews", ""));
  EXPECT_TRUE(Can(a, user, "create", "authorization.k8s.io", "selfsubjectrulesreviews", ""));
  EXPECT_TRUE(Can(a, user, "create", "authentication.k8s.io", "selfsubjectreviews", ""));
  EXPECT_FALSE(Can(a, user, "create", "authorization.k8s.io", "subjectaccessreviews", ""));
  for (const char* path : {"/api", "/api/v1", "/apis", "/apis/kueue.x-k8s.io/v1beta1", "/openapi/v2", "/version",
                           "/healthz", "/livez", "/readyz"}) {
    EXPECT_TRUE(CanPath(a, user, "get", path)) << path;
  }
  EXPECT_FALSE(CanPath(a, user, "get", "/metrics"));
  EXPECT_FALSE(Can(a, user, "list", "", "pods", "default"));

  authn::UserInfo anonymous{"system:anonymous", "", {"system:unauthenticated"}, {}};
  for (const char* path : {"/healthz", "/livez", "/readyz", "/version", "/version/"}) {
    EXPECT_TRUE(CanPath(a, anonymous, "get", path)) << path;
  }
  EXPECT_FALSE(CanPath(a, anonymous, "get", "/api"));
  EXPECT_FALSE(CanPath(a, anonymous, "post", "/healthz"));
  EXPECT_FALSE(Can(a, anonymous, "create", "authorization.k8s.io", "selfsubjectaccessreviews", ""));
}

TEST(BootstrapPolicyTest, MetadataAndShapes) {
  std::set<std::string> names;
  for (const auto& obj : BootstrapPolicy()) {
    const std::string& name = api::Name(obj);
    EXPECT_TRUE(names.insert(obj["kind"].get<std::string>() + "/" + name).second) << name;
    EXPECT_EQ(obj["apiVersion"], "rbac.authorization.k8s.io/v1");
    if (name.starts_with("kueue-")) {
      EXPECT_FALSE(obj["metadata"].contains("annotations")) << name;
      continue;
    }
    EXPECT_EQ(obj["metadata"]["labels"]["kubernetes.io/bootstrapping"], "rbac-defaults") << name;
    EXPECT_EQ(obj["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"], "true") << name;
  }
  for (const char* n : {"ClusterRole/cluster-admin", "ClusterRole/admin", "ClusterRole/edit", "ClusterRole/view",
                        "ClusterRole/system:basic-user", "ClusterRole/system:discovery",
                        "ClusterRole/system:public-info-viewer", "ClusterRole/kueue-batch-admin-role",
                        "ClusterRole/kueue-batch-user-role", "ClusterRole/kueue-workload-viewer-role",
                        "ClusterRoleBinding/cluster-admin", "ClusterRoleBinding/system:basic-user",
                        "ClusterRoleBinding/system:discovery", "ClusterRoleBinding/system:public-info-viewer"}) {
    EXPECT_TRUE(names.count(n)) << n;
  }
  // Upstream's rule builder sorts every list.
  for (const auto& obj : BootstrapPolicy()) {
    if (!obj.contains("rules")) continue;
    for (const auto& rule : obj["rules"]) {
      for (const auto& [key, list] : rule.items()) {
        std::vector<std::string> v = list.get<std::vector<std::string>>();
        EXPECT_TRUE(std::is_sorted(v.begin(), v.end())) << api::Name(obj) << " " << key;
      }
    }
  }
}

}  // namespace
}  // namespace berth::rbac
