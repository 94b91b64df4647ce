#include "controllers/podgc/terminated_pod_gc.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "api/object.h"
#include "api/unstructured.h"
#include "core/logging.h"

namespace berth::controllers::podgc {
namespace {

const client::GroupVersionResource kPods{"", "v1", "pods"};
// Terminal pods not being deleted, under "true".
constexpr char kCollectableIndex[] = "podgc-collectable";

bool Terminal(const api::Object& pod) {
  const std::string phase = api::NestedString(pod, {"status", "phase"});
  return phase == "Succeeded" || phase == "Failed";
}

}  // namespace

TerminatedPodGC::TerminatedPodGC(client::Client& client, client::Informer& pods, int64_t threshold)
    : client_(client), pods_(pods), threshold_(threshold) {
  // The pods Collect may delete, kept as they change: a check reads a count, not every pod.
  (void)pods_.AddIndexer(kCollectableIndex, [](const api::Object& pod) -> std::vector<std::string> {
    if (!Terminal(pod) || api::HasField(api::ObjectAt(pod, "metadata"), "deletionTimestamp")) return {};
    return {"true"};
  });
}

StatusOr<int64_t> TerminatedPodGC::Collect() {
  if (threshold_ <= 0) return int64_t{0};
  const client::Indexer& cache = pods_.GetIndexer();
  BERTH_ASSIGN_OR_RETURN(const size_t collectable, cache.IndexCount(kCollectableIndex, "true"));
  if (static_cast<int64_t>(collectable) <= threshold_) return int64_t{0};
  // (creationTimestamp, namespace, name) of every terminal pod not already being deleted.
  BERTH_ASSIGN_OR_RETURN(const std::vector<client::ObjectPtr> pods, cache.ByIndex(kCollectableIndex, "true"));
  std::vector<std::tuple<std::string, std::string, std::string>> terminal;
  terminal.reserve(pods.size());
  for (const client::ObjectPtr& pod : pods) {
    terminal.emplace_back(api::NestedString(*pod, {"metadata", "creationTimestamp"}), api::Namespace(*pod),
                          api::Name(*pod));
  }
  const int64_t excess = static_cast<int64_t>(terminal.size()) - threshold_;
  if (excess <= 0) return int64_t{0};
  // RFC 3339 timestamps in UTC ("...Z", as the API server stamps them) sort as text.
  std::partial_sort(terminal.begin(), terminal.begin() + excess, terminal.end());
  spdlog::info("podgc: {} terminated pods exceed the threshold {}: deleting the {} oldest", terminal.size(),
               threshold_, excess);
  int64_t deleted = 0;
  for (int64_t i = 0; i < excess; ++i) {
    const auto& [created, ns, name] = terminal[i];
    client::DeleteOptions options;
    options.grace_period_seconds = 0;  // as upstream's force deletion: nothing runs any more
    Status s = client_.Delete(kPods.Namespace(ns), name, options);
    if (!s.ok() && s.code() != Code::kNotFound) return s;
    if (s.ok()) ++deleted;
  }
  return deleted;
}

}  // namespace berth::controllers::podgc
