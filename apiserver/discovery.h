// Discovery documents, generated from the Registry (every served version of
// every definition), exactly as kubectl 1.32 reads them (client-go discovery/
// discovery_client.go, aggregated_discovery.go):
//
//   GET /api   with Accept ...;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList
//              -> aggregated APIGroupDiscoveryList with the core group (name "")
//   GET /apis  (same Accept) -> aggregated list of every other group
//   Both must be answered with the exact Content-Type kAggregatedDiscoveryContentType:
//   kubectl decides the format from the response's Content-Type, not the body.
//   Without that Accept (older clients, curl): legacy APIVersions (/api),
//   APIGroupList (/apis) and one APIResourceList per group-version
//   (/api/v1, /apis/{g}/{v}), plus APIGroup (/apis/{g}).
//
// Per resource: plural, responseKind, scope, singularResource, verbs (all eight
// REST verbs), shortNames, categories, and the status subresource (get, patch,
// update) when the version has one. A group's versions are ordered by
// preference (api::CompareKubeAwareVersions), the preferred one first; groups
// follow the Registry's order, so name resolution in kubectl matches
// api::Registry::Resolve.
//
// Groups served by a delegate (api/api_service.h) follow every group of the
// Registry, with the resources and verbs their description lists.
//
// Thread-safety: immutable after construction.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/api_service.h"
#include "api/registry.h"

namespace berth::apiserver {

inline constexpr std::string_view kAggregatedDiscoveryContentType =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

// One served group-version and the definitions it serves, in registry order.
struct ServedGroupVersion {
  std::string group;
  std::string version;
  std::vector<const api::ResourceDefinition*> definitions;

  std::string GroupVersion() const { return group.empty() ? version : group + "/" + version; }
};

class Discovery {
 public:
  explicit Discovery(const api::Registry& registry, std::vector<api::ApiServiceDescription> services = {});

  // Every served group-version: core first, then groups in registry order, each
  // group's versions most preferred first.
  const std::vector<ServedGroupVersion>& GroupVersions() const { return group_versions_; }
  // nullptr when the group-version is not served.
  const ServedGroupVersion* Find(std::string_view group, std::string_view version) const;
  // The delegated group serving this group-version; nullptr when none.
  const api::ApiServiceDescription* FindService(std::string_view group, std::string_view version) const;

  // Aggregated discovery (apidiscovery.k8s.io/v2) for /api (core) or /apis.
  const nlohmann::json& Aggregated(bool core) const { return core ? aggregated_core_ : aggregated_groups_; }
  // {"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[...]}
  nlohmann::json LegacyApiVersions(std::string_view server_address) const;
  // {"kind":"APIGroupList","apiVersion":"v1","groups":[...]}
  const nlohmann::json& LegacyGroupList() const { return group_list_; }
  // APIGroup for /apis/{group}; null json when not served.
  nlohmann::json LegacyGroup(std::string_view group) const;
  // APIResourceList for /api/v1 or /apis/{g}/{v}; null json when not served.
  nlohmann::json ResourceList(std::string_view group, std::string_view version) const;

  // True when an Accept header asks for aggregated discovery v2.
  static bool WantsAggregated(std::string_view accept);

 private:
  void AddService(const api::ApiServiceDescription& service);

  std::vector<ServedGroupVersion> group_versions_;
  std::vector<api::ApiServiceDescription> services_;
  nlohmann::json aggregated_core_;
  nlohmann::json aggregated_groups_;
  nlohmann::json group_list_;
};

}  // namespace berth::apiserver
