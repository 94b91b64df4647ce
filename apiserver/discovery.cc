#include "apiserver/discovery.h"

#include <algorithm>

namespace berth::apiserver {

using nlohmann::json;

namespace {

const json& Verbs() {
  static const json kVerbs = {"create", "delete", "deletecollection", "get",
                              "list",   "patch",  "update",           "watch"};
  return kVerbs;
}
const json& StatusVerbs() {
  static const json kVerbs = {"get", "patch", "update"};
  return kVerbs;
}

json GroupVersionJson(const std::string& group, const std::string& version) {
  return {{"groupVersion", group.empty() ? version : group + "/" + version}, {"version", version}};
}

json AggregatedResource(const api::ResourceDefinition& def, const std::string& version) {
  json kind = {{"group", def.group}, {"version", version}, {"kind", def.names.kind}};
  json r = {{"resource", def.names.plural},
            {"responseKind", kind},
            {"scope", def.namespaced() ? "Namespaced" : "Cluster"},
            {"singularResource", def.names.singular},
            {"verbs", Verbs()}};
  if (!def.names.short_names.empty()) r["shortNames"] = def.names.short_names;
  if (!def.names.categories.empty()) r["categories"] = def.names.categories;
  const api::DefinitionVersion* v = def.FindVersion(version);
  if (v != nullptr && v->status_subresource) {
    r["subresources"] = json::array({{{"subresource", "status"}, {"responseKind", kind}, {"verbs", StatusVerbs()}}});
  }
  return r;
}

json ServiceResourceList(const api::ApiServiceDescription* service, std::string_view version) {
  if (service == nullptr) return nullptr;
  json resources = json::array();
  for (const auto& r : service->resources) {
    resources.push_back({{"name", r.name},
                         {"singularName", r.singular},
                         {"namespaced", r.namespaced},
                         {"kind", r.kind},
                         {"verbs", r.verbs}});
  }
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", service->group + "/" + std::string(version)},
          {"resources", std::move(resources)}};
}

}  // namespace

Discovery::Discovery(const api::Registry& registry, std::vector<api::ApiServiceDescription> services)
    : services_(std::move(services)) {
  // Group the definitions by group (registry order), then by served version.
  std::vector<std::string> groups;
  std::map<std::string, std::vector<const api::ResourceDefinition*>> by_group;
  for (const api::ResourceDefinition* def : registry.Definitions()) {
    if (by_group.find(def->group) == by_group.end()) groups.push_back(def->group);
    by_group[def->group].push_back(def);
  }
  aggregated_core_ = {{"kind", "APIGroupDiscoveryList"},
                      {"apiVersion", "apidiscovery.k8s.io/v2"},
                      {"metadata", json::object()},
                      {"items", json::array()}};
  aggregated_groups_ = aggregated_core_;
  group_list_ = {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", json::array()}};
  for (const std::string& group : groups) {
    std::vector<std::string> versions;
    for (const auto* def : by_group[group]) {
      for (const auto* v : def->ServedVersions()) {
        if (std::find(versions.begin(), versions.end(), v->name) == versions.end()) {
          versions.push_back(v->name);
        }
      }
    }
    std::sort(versions.begin(), versions.end(), [](const std::string& a, const std::string& b) {
      int c = api::CompareKubeAwareVersions(a, b);
      return c != 0 ? c < 0 : a < b;
    });
    json item = {{"metadata", {{"name", group}}}, {"versions", json::array()}};
    json legacy = {{"name", group}, {"versions", json::array()}};
    for (const std::string& version : versions) {
      ServedGroupVersion gv{group, version, {}};
      json resources = json::array();
      for (const auto* def : by_group[group]) {
        const api::DefinitionVersion* v = def->FindVersion(version);
        if (v == nullptr || !v->served) continue;
        gv.definitions.push_back(def);
        resources.push_back(AggregatedResource(*def, version));
      }
      item["versions"].push_back({{"version", version}, {"freshness", "Current"}, {"resources", std::move(resources)}});
      legacy["versions"].push_back(GroupVersionJson(group, version));
      group_versions_.push_back(std::move(gv));
    }
    if (versions.empty()) continue;
    legacy["preferredVersion"] = GroupVersionJson(group, versions.front());
    if (group.empty()) {
      aggregated_core_["items"].push_back(std::move(item));
    } else {
      aggregated_groups_["items"].push_back(std::move(item));
      group_list_["groups"].push_back(std::move(legacy));
    }
  }
  for (const auto& service : services_) AddService(service);
}

void Discovery::AddService(const api::ApiServiceDescription& service) {
  if (service.versions.empty()) return;
  json item = {{"metadata", {{"name", service.group}}}, {"versions", json::array()}};
  json legacy = {{"name", service.group}, {"versions", json::array()}};
  for (const std::string& version : service.versions) {
    json resources = json::array();
    for (const auto& r : service.resources) {
      if (r.name.find('/') != std::string::npos) continue;
      json entry = {{"resource", r.name},
                    {"responseKind", {{"group", service.group}, {"version", version}, {"kind", r.kind}}},
                    {"scope", r.namespaced ? "Namespaced" : "Cluster"},
                    {"singularResource", r.singular},
                    {"verbs", r.verbs}};
      json subresources = json::array();
      for (const auto& sub : service.resources) {
        if (!sub.name.starts_with(r.name + "/")) continue;
        subresources.push_back({{"subresource", sub.name.substr(r.name.size() + 1)},
                                {"responseKind", {{"group", service.group}, {"version", version}, {"kind", sub.kind}}},
                                {"verbs", sub.verbs}});
      }
      if (!subresources.empty()) entry["subresources"] = std::move(subresources);
      resources.push_back(std::move(entry));
    }
    item["versions"].push_back({{"version", version}, {"freshness", "Current"}, {"resources", std::move(resources)}});
    legacy["versions"].push_back(GroupVersionJson(service.group, version));
  }
  legacy["preferredVersion"] = GroupVersionJson(service.group, service.versions.front());
  aggregated_groups_["items"].push_back(std::move(item));
  group_list_["groups"].push_back(std::move(legacy));
}

const ServedGroupVersion* Discovery::Find(std::string_view group, std::string_view version) const {
  for (const auto& gv : group_versions_) {
    if (gv.group == group && gv.version == version) return &gv;
  }
  return nullptr;
}

const api::ApiServiceDescription* Discovery::FindService(std::string_view group, std::string_view version) const {
  for (const auto& s : services_) {
    if (s.group == group && std::find(s.versions.begin(), s.versions.end(), version) != s.versions.end()) return &s;
  }
  return nullptr;
}

json Discovery::LegacyApiVersions(std::string_view server_address) const {
  json versions = json::array();
  for (const auto& gv : group_versions_) {
    if (gv.group.empty()) versions.push_back(gv.version);
  }
  return {{"kind", "APIVersions"},
          {"versions", std::move(versions)},
          {"serverAddressByClientCIDRs",
           json::array({{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", std::string(server_address)}}})}};
}

json Discovery::LegacyGroup(std::string_view group) const {
  for (const auto& g : group_list_["groups"]) {
    if (g["name"] == group) {
      json out = g;
      out["kind"] = "APIGroup";
      out["apiVersion"] = "v1";
      return out;
    }
  }
  return nullptr;
}

json Discovery::ResourceList(std::string_view group, std::string_view version) const {
  const ServedGroupVersion* gv = Find(group, version);
  if (gv == nullptr) return ServiceResourceList(FindService(group, version), version);
  json resources = json::array();
  for (const auto* def : gv->definitions) {
    json r = {{"name", def->names.plural},
              {"singularName", def->names.singular},
              {"namespaced", def->namespaced()},
              {"kind", def->names.kind},
              {"verbs", Verbs()}};
    if (!def->names.short_names.empty()) r["shortNames"] = def->names.short_names;
    if (!def->names.categories.empty()) r["categories"] = def->names.categories;
    resources.push_back(std::move(r));
    const api::DefinitionVersion* v = def->FindVersion(version);
    if (v != nullptr && v->status_subresource) {
      resources.push_back({{"name", def->names.plural + "/status"},
                           {"singularName", ""},
                           {"namespaced", def->namespaced()},
                           {"kind", def->names.kind},
                           {"verbs", StatusVerbs()}});
    }
  }
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", gv->GroupVersion()},
          {"resources", std::move(resources)}};
}

bool Discovery::WantsAggregated(std::string_view accept) {
  // Any media range of the Accept list that names apidiscovery.k8s.io v2 (or
  // v2beta1, which carries the same body for our purposes) as APIGroupDiscoveryList.
  size_t start = 0;
  while (start <= accept.size()) {
    size_t end = accept.find(',', start);
    if (end == std::string_view::npos) end = accept.size();
    std::string_view range = accept.substr(start, end - start);
    if (range.find("g=apidiscovery.k8s.io") != std::string_view::npos &&
        range.find("as=APIGroupDiscoveryList") != std::string_view::npos &&
        range.find("v=v2") != std::string_view::npos && range.find("v=v2beta1") == std::string_view::npos) {
      return true;
    }
    start = end + 1;
  }
  return false;
}

}  // namespace berth::apiserver
