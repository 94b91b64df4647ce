// The ServiceAccount admission plugin through the admission pipeline, with the cluster
// state as a StaticObjectLookup (upstream: plugin/pkg/admission/serviceaccount).
#include "api/service_account_admission.h"

#include <gtest/gtest.h>

#include "api/admission_pipeline.h"
#include "api/registry.h"

namespace berth::api {
namespace {

using nlohmann::json;

json Pod(json spec_extra = json::object(), const std::string& ns = "team-a") {
  json spec = {{"containers", json::array({{{"name", "c"}, {"image", "busybox"}}})}};
  spec.update(spec_extra);
  return json{{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "p"}, {"namespace", ns}}}, {"spec", spec}};
}

json Sa(const std::string& ns, const std::string& name, json extra = json::object()) {
  json sa = {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", name}, {"namespace", ns}}}};
  sa.update(extra);
  return sa;
}

class ServiceAccountAdmissionTest : public ::testing::Test {
 protected:
  StatusOr<AdmittedWrite> Create(json obj) {
    WriteRequest wr;
    wr.object = std::move(obj);
    wr.lookup = &lookup_;
    return pipeline_.Admit(std::move(wr));
  }
  StaticObjectLookup lookup_;
  AdmissionPipeline pipeline_{Registry::Default(), StrategyRegistry::Default()};
};

TEST_F(ServiceAccountAdmissionTest, DefaultsToDefaultAndKeepsTheDeprecatedAliasEqual) {
  lookup_.Add({"", "serviceaccounts"}, Sa("team-a", "default"));
  auto r = Create(Pod());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->object["spec"]["serviceAccountName"], "default");
  EXPECT_EQ(r->object["spec"]["serviceAccount"], "default");
  lookup_.Add({"", "serviceaccounts"}, Sa("team-a", "robot", {{"imagePullSecrets", {{{"name", "reg"}}}}}));
  auto alias = Create(Pod({{"serviceAccount", "robot"}}));
  ASSERT_TRUE(alias.ok()) << alias.status().ToString();
  EXPECT_EQ(alias->object["spec"]["serviceAccountName"], "robot");
  EXPECT_EQ(alias->object["spec"]["serviceAccount"], "robot");
  EXPECT_EQ(alias->object["spec"]["imagePullSecrets"], json::parse(R"([{"name":"reg"}])"));
}

// Upstream refuses any missing ServiceAccount; berth admits a missing `default` (the
// header says why) and refuses a missing named one with upstream's message.
TEST_F(ServiceAccountAdmissionTest, AMissingNamedServiceAccountIsRefusedAMissingDefaultIsNot) {
  lookup_.Add({"", "serviceaccounts"}, Sa("team-b", "robot"));
  auto missing = Create(Pod({{"serviceAccountName", "robot"}}));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kForbidden);
  EXPECT_EQ(missing.status().message(),
            "pods \"p\" is forbidden: error looking up service account team-a/robot: serviceaccount \"robot\" not "
            "found");
  auto no_default = Create(Pod());
  ASSERT_TRUE(no_default.ok()) << no_default.status().ToString();
  EXPECT_EQ(no_default->object["spec"]["serviceAccountName"], "default");
}

}  // namespace
}  // namespace berth::api
