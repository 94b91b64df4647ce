#include "controllers/kueue/job_integration.h"

#include <algorithm>

#include "api/conditions.h"

namespace berth::controllers::kueue {

void InjectPodSetInfo(const PodSetInfo& info, api::Object* pod_spec) {
  if (!info.node_selector.empty()) {
    api::Object& ns = (*pod_spec)["nodeSelector"];
    if (!ns.is_object()) ns = api::Object::object();
    for (const auto& [k, v] : info.node_selector) ns[k] = v;
  }
  if (!info.tolerations.empty()) {
    api::Object& tols = (*pod_spec)["tolerations"];
    if (!tols.is_array()) tols = api::Object::array();
    for (const api::Object& t : info.tolerations) {
      if (std::find(tols.begin(), tols.end(), t) == tols.end()) tols.push_back(t);
    }
  }
}

bool RestorePodSetInfo(const PodSetInfo& info, api::Object* pod_spec) {
  const api::Object before = *pod_spec;
  if (info.node_selector.empty()) {
    pod_spec->erase("nodeSelector");
  } else {
    (*pod_spec)["nodeSelector"] = info.node_selector;
  }
  if (info.tolerations.empty()) {
    pod_spec->erase("tolerations");
  } else {
    (*pod_spec)["tolerations"] = info.tolerations;
  }
  return *pod_spec != before;
}

Status InjectPodSetsInfo(const std::vector<PodSetInfo>& infos, size_t pod_sets, const PodSpecAt& spec_at) {
  if (infos.size() != pod_sets) {
    return InvalidError("invalid podset infos: expecting " + std::to_string(pod_sets) + " podset, got " +
                        std::to_string(infos.size()));
  }
  for (size_t i = 0; i < pod_sets; ++i) InjectPodSetInfo(infos[i], spec_at(i));
  return Status::Ok();
}

bool RestorePodSetsInfo(const std::vector<PodSetInfo>& infos, size_t pod_sets, const PodSpecAt& spec_at) {
  if (infos.size() != pod_sets) return false;
  bool changed = false;
  for (size_t i = 0; i < pod_sets; ++i) changed = RestorePodSetInfo(infos[i], spec_at(i)) || changed;
  return changed;
}

std::optional<JobFinishedState> FinishedByConditions(const api::Object& job, std::string_view succeeded_type,
                                                     std::string_view failed_default) {
  if (api::IsConditionTrue(job, succeeded_type)) {
    return JobFinishedState{true, api::ConditionField(job, succeeded_type, "message")};
  }
  if (api::IsConditionTrue(job, "Failed")) {
    std::string message = api::ConditionField(job, "Failed", "message");
    return JobFinishedState{false, message.empty() ? std::string(failed_default) : message};
  }
  return std::nullopt;
}

}  // namespace berth::controllers::kueue
