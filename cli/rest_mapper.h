// RestMapper: resolves what a user types (`cq`, `clusterqueue`, `ClusterQueue`,
// `clusterqueues.kueue.x-k8s.io`, `clusterqueues.v1beta1.kueue.x-k8s.io`) and
// what a manifest says (apiVersion + kind) to a served resource, from the
// server's discovery documents, as kubectl's shortcut expander and
// DeferredDiscoveryRESTMapper do. Nothing about the kinds is compiled in.
//
// Discovery sources (client-go discovery/discovery_client.go, aggregated_discovery.go):
//   - aggregated (apidiscovery.k8s.io/v2 APIGroupDiscoveryList) for /api and
//     /apis: used only when both answered in that format (decided by the
//     response Content-Type, as client-go does);
//   - otherwise legacy: APIVersions (/api) + APIGroupList (/apis) and one
//     APIResourceList per advertised group-version.
// Order: the core group first, then groups in /apis order; within a group
// the versions as listed (preferred first). When two groups serve the same
// name, the first wins, as in kubectl.
//
// Resolution of a typed name (case-insensitive):
//   1. a short name expands to its resource in the first group that declares it;
//   2. "<name>.<version>.<group>" when <version> is served by <group>, else
//      "<name>.<group>", else "<name>": the name matches a plural or singular
//      resource name (the lower-case kind is the singular) or a kind; the
//      group must match exactly; without a version, the group's preferred
//      version that serves the resource.
//   Unknown: kNotFound `the server doesn't have a resource type "<name>"`.
// Resolution of a manifest's apiVersion + kind: the exact group, version and
// kind; otherwise kNotFound `no matches for kind "<kind>" in version "<apiVersion>"`.
//
// Thread-safety: immutable after construction.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "client/client.h"
#include "client/http_client.h"
#include "core/status.h"

namespace berth::cli {

// One served resource of one group-version, from discovery.
struct ApiResource {
  std::string group;
  std::string version;
  std::string resource;   // plural, e.g. "clusterqueues"
  std::string singular;   // e.g. "clusterqueue" ("" when discovery leaves it out)
  std::string kind;       // e.g. "ClusterQueue"
  bool namespaced = false;
  std::vector<std::string> short_names;
  std::vector<std::string> verbs;
  std::vector<std::string> subresources;  // e.g. "status", "log"

  client::GroupVersionResource Gvr() const { return {group, version, resource}; }
  // "clusterqueue.kueue.x-k8s.io", or "pod" for the core group: how kubectl
  // names objects in `created`/`deleted` lines and in `-o name`.
  std::string KindGroup() const;
  // "clusterqueues.kueue.x-k8s.io", or "pods": the qualified resource of
  // error texts.
  std::string GroupResource() const { return group.empty() ? resource : resource + "." + group; }
  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
};

class RestMapper {
 public:
  RestMapper() = default;
  explicit RestMapper(std::vector<ApiResource> resources) : resources_(std::move(resources)) {}

  // From the aggregated documents of /api and /apis (either may be null).
  static StatusOr<RestMapper> FromAggregated(const nlohmann::json& core, const nlohmann::json& groups);
  // From APIResourceList documents, in discovery order (core first).
  static StatusOr<RestMapper> FromResourceLists(const std::vector<nlohmann::json>& lists);

  // A typed resource name (see the file comment).
  StatusOr<ApiResource> ResourceFor(std::string_view name) const;
  // A manifest's apiVersion ("v1", "kueue.x-k8s.io/v1beta2") and kind.
  StatusOr<ApiResource> KindFor(std::string_view api_version, std::string_view kind) const;

  // Every resource, in discovery order.
  const std::vector<ApiResource>& resources() const { return resources_; }

 private:
  std::vector<ApiResource> resources_;
};

// Fetches discovery from the server (the requests kubectl 1.32 sends) and
// builds the mapper. Errors: transport failures, or a failing /apis (its
// Status decoded as client/api_status.h does).
StatusOr<RestMapper> Discover(client::HttpClient& http);

}  // namespace berth::cli
