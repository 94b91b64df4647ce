#include "api/core_strategies.h"

#include <memory>

namespace berth::api {

namespace {

class NamespaceStrategy : public Strategy {
 public:
  void PrepareForCreate(Object* obj) const override {
    (*obj)["status"] = Object{{"phase", "Active"}};
    (*obj)["spec"]["finalizers"] = Object::array({"kubernetes"});
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
};

}  // namespace

void RegisterCoreStrategies(StrategyRegistry* registry) {
  registry->Register("", "Namespace", std::make_unique<NamespaceStrategy>());
  registry->Register("", "Pod", std::make_unique<PodStrategy>());
}

}  // namespace berth::api
