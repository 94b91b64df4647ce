// Kueue pkg/workload/resources.go and kube-scheduler agree: requests count (limits only as
// defaults), init containers as a max,
// sidecars added to the running sum, plus pod overhead; the same formula for
// Kueue quota and kube-scheduler node fit.
#include "scheduling/pod_requests.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "core/quantity.h"

namespace berth::scheduling {
namespace {

// The smallest List the templates accept: resource name -> Quantity.
class Resources {
 public:
  Resources() = default;
  Resources(std::initializer_list<std::pair<const std::string, std::string_view>> items) {
    for (const auto& [name, text] : items) items_[name] = Quantity::MustParse(text);
  }
  const std::map<std::string, Quantity>& items() const { return items_; }
  bool Has(const std::string& name) const { return items_.count(name) > 0; }
  void Set(const std::string& name, Quantity q) { items_[name] = q; }
  void AddAll(const Resources& o) {
    for (const auto& [name, q] : o.items_) items_[name] += q;
  }
  void MaxWith(const Resources& o) {
    for (const auto& [name, q] : o.items_) {
      auto [it, inserted] = items_.try_emplace(name, q);
      if (!inserted && q > it->second) it->second = q;
    }
  }
  bool operator==(const Resources&) const = default;
  friend void PrintTo(const Resources& r, std::ostream* os) {
    for (const auto& [name, q] : r.items_) *os << name << "=" << q << " ";
  }

 private:
  std::map<std::string, Quantity> items_;
};

using Pod = PodResources<Resources>;

TEST(PodRequestsTest, RequestsDefaultToLimitsAndLimitsAreOtherwiseIgnored) {
  Pod pod;
  // kueue#11931: requests 12 cpu / 24Gi, limits 12 cpu / 26Gi -> 12 / 24Gi.
  pod.containers.push_back({{{"cpu", "12"}, {"memory", "24Gi"}}, {{"cpu", "12"}, {"memory", "26Gi"}}});
  EXPECT_EQ(PodRequests(pod), (Resources{{"cpu", "12"}, {"memory", "24Gi"}}));
  // A container with only limits is charged its limits (Kueue PR #317).
  Pod limits_only;
  limits_only.containers.push_back({{}, {{"cpu", "2"}, {"memory", "1Gi"}}});
  limits_only.containers.push_back({{{"cpu", "500m"}}, {{"cpu", "1"}, {"memory", "512Mi"}}});
  EXPECT_EQ(PodRequests(limits_only), (Resources{{"cpu", "2500m"}, {"memory", "1536Mi"}}));
}

TEST(PodRequestsTest, InitContainersCountAsMaxNotSum) {
  Pod pod;
  pod.containers.push_back({{{"cpu", "1"}}, {}});
  pod.containers.push_back({{{"cpu", "1"}}, {}});
  pod.init_containers.push_back({{{"cpu", "3"}, {"memory", "1Gi"}}, {}});
  pod.init_containers.push_back({{{"cpu", "1"}}, {}});
  // cpu: max(1+1, 3) = 3; memory: max(0, 1Gi) = 1Gi.
  EXPECT_EQ(PodRequests(pod), (Resources{{"cpu", "3"}, {"memory", "1Gi"}}));
}

TEST(PodRequestsTest, SidecarsAddToRunningSumAndToLaterInitContainers) {
  // kubernetes/website PR #57373: sidecar 100m, init 200m, app 100m -> 300m.
  Pod pod;
  pod.init_containers.push_back({{{"cpu", "100m"}}, {}, /*restart_always=*/true});
  pod.init_containers.push_back({{{"cpu", "200m"}}, {}});
  pod.containers.push_back({{{"cpu", "100m"}}, {}});
  EXPECT_EQ(PodRequests(pod), (Resources{{"cpu", "300m"}}));
  // An init container declared before the sidecar runs without it.
  Pod before;
  before.init_containers.push_back({{{"cpu", "200m"}}, {}});
  before.init_containers.push_back({{{"cpu", "100m"}}, {}, true});
  before.containers.push_back({{{"cpu", "100m"}}, {}});
  EXPECT_EQ(PodRequests(before), (Resources{{"cpu", "200m"}}));
  // Sidecars alone: running sum = app + sidecars.
  Pod sidecars;
  sidecars.init_containers.push_back({{{"cpu", "1"}}, {}, true});
  sidecars.containers.push_back({{{"cpu", "2"}}, {}});
  EXPECT_EQ(PodRequests(sidecars), (Resources{{"cpu", "3"}}));
}

TEST(PodRequestsTest, OverheadIsAdded) {
  Pod pod;
  pod.containers.push_back({{{"cpu", "1"}}, {}});
  pod.overhead = {{"cpu", "250m"}, {"memory", "120Mi"}};
  EXPECT_EQ(PodRequests(pod), (Resources{{"cpu", "1250m"}, {"memory", "120Mi"}}));
}

// Everything at once, as kube-scheduler's NodeResourcesFit counts a pod.
TEST(PodRequestsTest, FollowsKubeSchedulerPodRequests) {
  Pod pod;
  pod.init_containers.push_back({{{"cpu", "100m"}}, {}, true});
  pod.init_containers.push_back({{{"cpu", "200m"}}, {}, false});
  pod.containers.push_back({{{"cpu", "100m"}}, {{"cpu", "4"}, {"memory", "1Gi"}}, false});
  pod.overhead = {{"cpu", "10m"}};
  // cpu: max(100m app + 100m sidecar, 200m init + 100m sidecar) + 10m = 310m;
  // memory: the limit stands in for the missing request.
  EXPECT_EQ(PodRequests(pod), (Resources{{"cpu", "310m"}, {"memory", "1Gi"}}));

  Pod inits;
  inits.init_containers.push_back({{{"cpu", "3"}}, {}, false});
  inits.containers.push_back({{{"cpu", "1"}}, {}, false});
  inits.containers.push_back({{{"cpu", "1"}}, {}, false});
  EXPECT_EQ(PodRequests(inits), (Resources{{"cpu", "3"}}));
}

}  // namespace
}  // namespace berth::scheduling
