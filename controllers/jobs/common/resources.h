// The resources the job-kind controllers read and write besides their own kind
// (core/v1 Pods, Services, ConfigMaps; batch/v1 Jobs, which JobSets own).
//
// Thread-safety: constants.
#pragma once

#include "client/client.h"

namespace berth::controllers::jobs {

inline const client::GroupVersionResource kPodsResource{"", "v1", "pods"};
inline const client::GroupVersionResource kServicesResource{"", "v1", "services"};
inline const client::GroupVersionResource kConfigMapsResource{"", "v1", "configmaps"};
inline const client::GroupVersionResource kJobsResource{"batch", "v1", "jobs"};

}  // namespace berth::controllers::jobs
