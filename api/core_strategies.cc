#include "api/core_strategies.h"

#include <memory>

#include "api/priority_admission.h"

namespace berth::api {

namespace {

class NamespaceStrategy : public Strategy {
 public:
  void PrepareForCreate(Object* obj) const override {
    (*obj)["status"] = Object{{"phase", "Active"}};
    // As upstream's namespaceStrategy: the "kubernetes" finalizer is appended
    // when missing; finalizers the user listed are kept. A value of the wrong
    // type is left for schema validation to reject (upstream's decoder would).
    Object& spec = (*obj)["spec"];
    if (spec.is_null()) spec = Object::object();
    if (!spec.is_object()) return;
    auto finalizers = spec.find("finalizers");
    if (finalizers == spec.end() || finalizers->is_null()) {
      spec["finalizers"] = Object::array({"kubernetes"});
    } else if (finalizers->is_array()) {
      bool has = false;
      for (const auto& f : *finalizers) has = has || f == "kubernetes";
      if (!has) finalizers->push_back("kubernetes");
    }
  }
  void PrepareForUpdate(Object* obj, const Object& old) const override {
    auto spec = old.find("spec");
    if (spec != old.end() && spec->is_object() && spec->contains("finalizers")) {
      (*obj)["spec"]["finalizers"] = (*spec)["finalizers"];
    } else if (obj->contains("spec") && (*obj)["spec"].is_object()) {
      (*obj)["spec"].erase("finalizers");
    }
  }
  std::vector<std::string> ValidateName(std::string_view name, bool prefix) const override {
    return NameIsDNSLabel(name, prefix);
  }
};

class PodStrategy : public Strategy {
 public:
  void PrepareForCreate(Object* obj) const override { (*obj)["status"] = Object{{"phase", "Pending"}}; }
  Status Admit(const AdmissionAttributes& attrs, Object* obj) const override { return AdmitPodPriority(attrs, obj); }
};

}  // namespace

void RegisterCoreStrategies(StrategyRegistry* registry) {
  registry->Register("", "Namespace", std::make_unique<NamespaceStrategy>());
  registry->Register("", "Pod", std::make_unique<PodStrategy>());
}

}  // namespace berth::api
