// ClusterRoleAggregationController through FakeClient: the bootstrap policy's
// view -> edit -> admin chain settles to upstream's union, and a new role that
// carries an aggregate-to label reaches every role above it.
#include "controllers/rbac/cluster_role_aggregation.h"

#include <gtest/gtest.h>

#include "api/unstructured.h"
#include "client/testing/fake_client.h"
#include "client/testing/informer_sync.h"
#include "core/clock.h"
#include "rbac/bootstrap_policy.h"

namespace berth::controllers::rbac {
namespace {

using namespace std::chrono_literals;

class ClusterRoleAggregationTest : public ::testing::Test {
 protected:
  ClusterRoleAggregationTest()
      : client_(clock_),
        factory_(client_, clock_, client::testing::FastInformerOptions()),
        roles_(factory_.ForResource(kClusterRoles)),
        ctl_(client_, roles_) {
    for (const api::Object& o : berth::rbac::BootstrapPolicy()) {
      if (api::StringAt(o, "kind") != "ClusterRole") continue;
      auto res = client_.Create(kClusterRoles, o);
      EXPECT_TRUE(res.ok()) << res.status().ToString();
    }
    factory_.Start();
    EXPECT_TRUE(factory_.WaitForCacheSync(10s));
  }
  ~ClusterRoleAggregationTest() override { factory_.Shutdown(); }

  // Reconciles every aggregated role until a pass changes nothing; returns the passes.
  int Settle() {
    for (int pass = 1; pass <= 10; ++pass) {
      EXPECT_TRUE(client::testing::WaitForCachesToMatch(client_, {&roles_}));
      const std::string before = Versions();
      for (const std::string& name : ctl_.AggregatedRoleNames()) {
        Status s = ctl_.Reconcile(name);
        EXPECT_TRUE(s.ok()) << name << ": " << s.ToString();
      }
      if (Versions() == before) return pass;
    }
    ADD_FAILURE() << "aggregation did not settle";
    return 0;
  }
  // Every ClusterRole's rules: what a pass may change.
  std::string Versions() {
    const client::ObjectList list = client_.List(kClusterRoles).value();
    std::string out;
    for (const auto& r : list.items) out += api::ArrayAt(r, "rules").dump();
    return out;
  }
  bool Grants(const std::string& role, const std::string& group, const std::string& resource, const std::string& verb) {
    api::Object r = client_.Get(kClusterRoles, role).value();
    for (const api::Object& rule : api::ArrayAt(r, "rules")) {
      auto has = [&](const char* field, const std::string& v) {
        for (const api::Object& x : api::ArrayAt(rule, field)) {
          if (x == v || x == "*") return true;
        }
        return false;
      };
      if (has("apiGroups", group) && has("resources", resource) && has("verbs", verb)) return true;
    }
    return false;
  }

  FakeClock clock_;
  client::testing::FakeClient client_;
  client::SharedInformerFactory factory_;
  client::Informer& roles_;
  ClusterRoleAggregationController ctl_;
};

TEST_F(ClusterRoleAggregationTest, TheViewEditAdminChainSettlesToTheUnion) {
  EXPECT_FALSE(Grants("view", "", "pods", "list"));  // the bootstrap objects carry no aggregated rules
  EXPECT_GE(Settle(), 2);
  EXPECT_TRUE(Grants("view", "", "pods", "list"));
  EXPECT_FALSE(Grants("view", "", "pods", "create"));
  EXPECT_TRUE(Grants("edit", "", "pods", "list"));  // view's, through aggregate-to-edit
  EXPECT_TRUE(Grants("edit", "batch", "jobs", "create"));
  EXPECT_TRUE(Grants("admin", "", "pods", "list"));  // view's, two levels up
  EXPECT_TRUE(Grants("admin", "batch", "jobs", "delete"));
  EXPECT_TRUE(Grants("admin", "rbac.authorization.k8s.io", "rolebindings", "create"));
  EXPECT_FALSE(Grants("edit", "rbac.authorization.k8s.io", "rolebindings", "create"));
  EXPECT_FALSE(Grants("admin", "kueue.x-k8s.io", "clusterqueues", "create"));
  EXPECT_EQ(Settle(), 1);  // settled: another pass writes nothing
}

TEST_F(ClusterRoleAggregationTest, ARoleLabelledAggregateToViewReachesEditAndAdmin) {
  Settle();
  api::Object extra = {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "ClusterRole"},
      {"metadata", {{"name", "widgets-viewer"}, {"labels", {{"rbac.authorization.k8s.io/aggregate-to-view", "true"}}}}},
      {"rules", {{{"apiGroups", {"example.com"}}, {"resources", {"widgets"}}, {"verbs", {"get"}}}}}};
  ASSERT_TRUE(client_.Create(kClusterRoles, extra).ok());
  Settle();
  EXPECT_TRUE(Grants("view", "example.com", "widgets", "get"));
  EXPECT_TRUE(Grants("edit", "example.com", "widgets", "get"));
  EXPECT_TRUE(Grants("admin", "example.com", "widgets", "get"));
  // Removing it takes it out of all three.
  ASSERT_TRUE(client_.Delete(kClusterRoles, "widgets-viewer").ok());
  Settle();
  EXPECT_FALSE(Grants("admin", "example.com", "widgets", "get"));
}

}  // namespace
}  // namespace berth::controllers::rbac
