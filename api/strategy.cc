#include "api/strategy.h"

#include "api/core_strategies.h"
#include "api/job_strategy.h"
#include "api/kueue_job_webhook.h"
#include "api/kueue_strategies.h"
#include "api/priority_admission.h"
#include "api/rbac_strategies.h"
#include "api/trainer_strategies.h"
#include "core/status.h"

namespace berth::api {

void StrategyRegistry::Register(std::string group, std::string kind, std::unique_ptr<Strategy> strategy) {
  BERTH_CHECK(strategy != nullptr);
  std::string key = group + "/" + kind;
  auto [it, inserted] = strategies_.emplace(key, std::move(strategy));
  BERTH_CHECK_MSG(inserted, "a strategy for " + key + " is already registered");
}

const Strategy* StrategyRegistry::Find(std::string_view group, std::string_view kind) const {
  std::string key;
  key.reserve(group.size() + kind.size() + 1);
  key.append(group).append("/").append(kind);
  auto it = strategies_.find(key);
  return it == strategies_.end() ? nullptr : it->second.get();
}

const StrategyRegistry& StrategyRegistry::Default() {
  static const StrategyRegistry* registry = [] {
    auto* r = new StrategyRegistry();
    InstallDefaultStrategies(r);
    return r;
  }();
  return *registry;
}

void InstallDefaultStrategies(StrategyRegistry* registry) { InstallDefaultStrategies(registry, {}); }

void InstallDefaultStrategies(StrategyRegistry* registry, const KueueJobWebhookOptions& kueue) {
  // One line per area.
  RegisterCoreStrategies(registry);
  RegisterKueueStrategies(registry);
  RegisterJobStrategies(registry, kueue);
  RegisterKueueJobStrategies(registry, kueue);
  RegisterTrainerStrategies(registry, kueue);
  RegisterSchedulingStrategies(registry);
  RegisterRbacStrategies(registry);
}

}  // namespace berth::api
