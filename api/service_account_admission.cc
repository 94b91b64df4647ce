#include "api/service_account_admission.h"

#include <string>

#include "api/unstructured.h"

namespace berth::api {
namespace {

const GroupResource kServiceAccountsResource{"", "serviceaccounts"};
const GroupResource kPodsResource{"", "pods"};

}  // namespace

Status AdmitPodServiceAccount(const AdmissionAttributes& attrs, Object* pod) {
  if (attrs.operation != Operation::kCreate) return Status::Ok();
  if (!NestedField(*pod, {"metadata", "annotations", "kubernetes.io/config.mirror"}).is_null()) return Status::Ok();
  Object& spec = (*pod)["spec"];
  if (!spec.is_object()) return Status::Ok();  // the schema refuses it
  std::string name = StringAt(spec, "serviceAccountName");
  if (name.empty()) name = StringAt(spec, "serviceAccount");
  if (name.empty()) name = kDefaultServiceAccountName;
  spec["serviceAccountName"] = name;
  spec["serviceAccount"] = name;
  const std::string ns = Namespace(*pod);
  BERTH_ASSIGN_OR_RETURN(auto accounts, attrs.lookup.List(kServiceAccountsResource, ns));
  const Object* found = nullptr;
  for (const auto& sa : accounts) {
    if (Name(*sa) == name) found = sa.get();
  }
  if (found == nullptr) {
    if (name == kDefaultServiceAccountName) return Status::Ok();
    return AdmissionForbidden(
        kPodsResource, Name(*pod),
        "error looking up service account " + ns + "/" + name + ": serviceaccount \"" + name + "\" not found");
  }
  const Object& pull = Field(spec, "imagePullSecrets");
  const Object& sa_pull = Field(*found, "imagePullSecrets");
  if ((pull.is_null() || pull.empty()) && sa_pull.is_array() && !sa_pull.empty()) {
    Object secrets = Object::array();
    for (const Object& ref : sa_pull) secrets.push_back({{"name", StringAt(ref, "name")}});
    spec["imagePullSecrets"] = std::move(secrets);
  }
  return Status::Ok();
}

}  // namespace berth::api
