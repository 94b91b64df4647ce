// ServiceAccountsController through FakeClient: `default` appears in every active
// namespace, comes back (with a new uid) when deleted, and is not created in a namespace
// being deleted.
#include "controllers/serviceaccount/serviceaccounts_controller.h"

#include <gtest/gtest.h>

#include "api/unstructured.h"
#include "client/testing/fake_client.h"
#include "client/testing/informer_sync.h"
#include "core/clock.h"

namespace berth::controllers::serviceaccount {
namespace {

using namespace std::chrono_literals;

class ServiceAccountsControllerTest : public ::testing::Test {
 protected:
  ServiceAccountsControllerTest()
      : client_(clock_),
        factory_(client_, clock_, client::testing::FastInformerOptions()),
        namespaces_(factory_.ForResource(kNamespaces)),
        sas_(factory_.ForResource(kServiceAccounts)),
        ctl_(client_, namespaces_, sas_) {
    factory_.Start();
    EXPECT_TRUE(factory_.WaitForCacheSync(10s));
  }
  ~ServiceAccountsControllerTest() override { factory_.Shutdown(); }

  void CreateNamespace(const std::string& name, const std::string& phase = "Active") {
    api::Object ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
    auto created = client_.Create(kNamespaces, ns);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    api::Object with_status = *created;
    with_status["status"] = {{"phase", phase}};
    ASSERT_TRUE(client_.UpdateStatus(kNamespaces, with_status).ok());
  }
  void Sync() { ASSERT_TRUE(client::testing::WaitForCachesToMatch(client_, {&namespaces_, &sas_})); }

  FakeClock clock_;
  client::testing::FakeClient client_;
  client::SharedInformerFactory factory_;
  client::Informer& namespaces_;
  client::Informer& sas_;
  ServiceAccountsController ctl_;
};

TEST_F(ServiceAccountsControllerTest, EveryActiveNamespaceGetsDefaultAgainAfterADelete) {
  CreateNamespace("team-a");
  Sync();
  ASSERT_TRUE(ctl_.Reconcile("team-a").ok());
  auto sa = client_.Get(kServiceAccounts.Namespace("team-a"), "default");
  ASSERT_TRUE(sa.ok()) << sa.status().ToString();
  const std::string first_uid = api::NestedString(*sa, {"metadata", "uid"});
  EXPECT_FALSE(first_uid.empty());
  EXPECT_FALSE(sa->contains("secrets"));  // no legacy token Secret

  Sync();
  ASSERT_TRUE(ctl_.Reconcile("team-a").ok());  // present: nothing to do
  EXPECT_EQ(
      api::NestedString(client_.Get(kServiceAccounts.Namespace("team-a"), "default").value(), {"metadata", "uid"}),
      first_uid);

  ASSERT_TRUE(client_.Delete(kServiceAccounts.Namespace("team-a"), "default").ok());
  Sync();
  ASSERT_TRUE(ctl_.Reconcile("team-a").ok());
  auto again = client_.Get(kServiceAccounts.Namespace("team-a"), "default");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_NE(api::NestedString(*again, {"metadata", "uid"}), first_uid);
}

TEST_F(ServiceAccountsControllerTest, TerminatingAndMissingNamespacesAreLeftAlone) {
  CreateNamespace("going", "Terminating");
  Sync();
  ASSERT_TRUE(ctl_.Reconcile("going").ok());
  EXPECT_EQ(client_.Get(kServiceAccounts.Namespace("going"), "default").status().code(), Code::kNotFound);
  ASSERT_TRUE(ctl_.Reconcile("never-created").ok());
  EXPECT_EQ(client_.Get(kServiceAccounts.Namespace("never-created"), "default").status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace berth::controllers::serviceaccount
