#include "cli/rest_mapper.h"

#include <algorithm>
#include <cctype>

#include "api/unstructured.h"
#include "client/api_status.h"

namespace berth::cli {

using nlohmann::json;

namespace {

constexpr std::string_view kAggregatedAccept =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> Strings(const json& j, const char* field) {
  std::vector<std::string> out;
  auto it = j.find(field);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

// True when a Content-Type names the aggregated discovery list (parameters in
// any order, extra ones tolerated).
bool IsAggregated(std::string_view content_type) {
  std::string ct = Lower(content_type);
  ct.erase(std::remove(ct.begin(), ct.end(), ' '), ct.end());
  auto has = [&](std::string_view p) {
    size_t pos = 0;
    while ((pos = ct.find(p, pos)) != std::string::npos) {
      size_t end = pos + p.size();
      if ((pos == 0 || ct[pos - 1] == ';') && (end == ct.size() || ct[end] == ';')) return true;
      pos = end;
    }
    return false;
  };
  return ct.rfind("application/json", 0) == 0 && has("g=apidiscovery.k8s.io") &&
         (has("v=v2") || has("v=v2beta1")) && has("as=apigroupdiscoverylist");
}

bool Matches(const ApiResource& r, std::string_view lower_name) {
  return r.resource == lower_name || r.singular == lower_name || Lower(r.kind) == lower_name;
}

}  // namespace

std::string ApiResource::KindGroup() const {
  std::string k = Lower(kind);
  return group.empty() ? k : k + "." + group;
}

StatusOr<RestMapper> RestMapper::FromAggregated(const json& core, const json& groups) {
  std::vector<ApiResource> out;
  for (const json* doc : {&core, &groups}) {
    if (!doc->is_object()) continue;
    auto items = doc->find("items");
    if (items == doc->end() || !items->is_array()) continue;
    for (const auto& g : *items) {
      const std::string group = g.contains("metadata") ? api::StringAt(g["metadata"], "name") : "";
      auto versions = g.find("versions");
      if (versions == g.end() || !versions->is_array()) continue;
      for (const auto& v : *versions) {
        const std::string version = api::StringAt(v, "version");
        auto resources = v.find("resources");
        if (resources == v.end() || !resources->is_array()) continue;
        for (const auto& r : *resources) {
          ApiResource a;
          a.group = group;
          a.version = version;
          a.resource = api::StringAt(r, "resource");
          a.singular = api::StringAt(r, "singularResource");
          if (auto rk = r.find("responseKind"); rk != r.end() && rk->is_object()) a.kind = api::StringAt(*rk, "kind");
          a.namespaced = api::StringAt(r, "scope") == "Namespaced";
          a.short_names = Strings(r, "shortNames");
          a.verbs = Strings(r, "verbs");
          if (auto subs = r.find("subresources"); subs != r.end() && subs->is_array()) {
            for (const auto& s : *subs) a.subresources.push_back(api::StringAt(s, "subresource"));
          }
          if (a.singular.empty()) a.singular = Lower(a.kind);
          if (!a.resource.empty()) out.push_back(std::move(a));
        }
      }
    }
  }
  return RestMapper(std::move(out));
}

StatusOr<RestMapper> RestMapper::FromResourceLists(const std::vector<json>& lists) {
  std::vector<ApiResource> out;
  for (const auto& list : lists) {
    std::string group, version;
    api::SplitApiVersion(api::StringAt(list, "groupVersion"), &group, &version);
    auto resources = list.find("resources");
    if (resources == list.end() || !resources->is_array()) continue;
    for (const auto& r : *resources) {
      const std::string name = api::StringAt(r, "name");
      if (auto slash = name.find('/'); slash != std::string::npos) {
        // "pods/log": a subresource of a resource listed before it.
        for (auto& a : out) {
          if (a.group == group && a.version == version && a.resource == name.substr(0, slash)) {
            a.subresources.push_back(name.substr(slash + 1));
          }
        }
        continue;
      }
      ApiResource a;
      a.group = group;
      a.version = version;
      a.resource = name;
      a.singular = api::StringAt(r, "singularName");
      a.kind = api::StringAt(r, "kind");
      a.namespaced = r.value("namespaced", false);
      a.short_names = Strings(r, "shortNames");
      a.verbs = Strings(r, "verbs");
      if (a.singular.empty()) a.singular = Lower(a.kind);
      if (!a.resource.empty()) out.push_back(std::move(a));
    }
  }
  return RestMapper(std::move(out));
}

StatusOr<ApiResource> RestMapper::ResourceFor(std::string_view typed) const {
  const std::string name = Lower(typed);
  auto not_found = [&] {
    return NotFoundError("the server doesn't have a resource type \"" + std::string(typed) + "\"");
  };
  if (name.empty()) return not_found();
  // 1. Short names expand to plural + group.
  std::string resource = name;
  std::string group, version;
  bool group_given = false;
  for (const auto& r : resources_) {
    if (std::find(r.short_names.begin(), r.short_names.end(), name) != r.short_names.end()) {
      resource = r.resource;
      group = r.group;
      group_given = true;
      break;
    }
  }
  // 2. name[.version].group
  auto first_match = [&](std::string_view res, std::string_view grp, bool any_group, std::string_view ver)
      -> const ApiResource* {
    for (const auto& r : resources_) {
      if (!any_group && r.group != grp) continue;
      if (!ver.empty() && r.version != ver) continue;
      if (Matches(r, res)) return &r;
    }
    return nullptr;
  };
  if (group_given) {
    if (const ApiResource* r = first_match(resource, group, false, "")) return *r;
    return not_found();
  }
  if (auto dot = name.find('.'); dot != std::string::npos) {
    const std::string res = name.substr(0, dot);
    const std::string rest = name.substr(dot + 1);
    // Fully specified: resource.version.group.
    if (auto dot2 = rest.find('.'); dot2 != std::string::npos) {
      if (const ApiResource* r = first_match(res, rest.substr(dot2 + 1), false, rest.substr(0, dot2))) return *r;
    }
    if (const ApiResource* r = first_match(res, rest, false, "")) return *r;
  }
  if (const ApiResource* r = first_match(name, "", true, "")) return *r;
  return not_found();
}

StatusOr<ApiResource> RestMapper::KindFor(std::string_view api_version, std::string_view kind) const {
  std::string group, version;
  api::SplitApiVersion(api_version, &group, &version);
  for (const auto& r : resources_) {
    if (r.group == group && r.version == version && r.kind == kind) return r;
  }
  return NotFoundError("no matches for kind \"" + std::string(kind) + "\" in version \"" +
                       std::string(api_version) + "\"");
}

StatusOr<RestMapper> Discover(client::HttpClient& http) {
  std::vector<std::pair<std::string, std::string>> accept{{"Accept", std::string(kAggregatedAccept)}};
  BERTH_ASSIGN_OR_RETURN(client::RawResponse core, http.Do({"GET", "/api", accept, ""}));
  BERTH_ASSIGN_OR_RETURN(client::RawResponse groups, http.Do({"GET", "/apis", accept, ""}));
  if (groups.status != 200) return client::StatusFromResponse(groups.status, groups.body, "get");
  auto parse = [](const client::RawResponse& r) {
    return r.status == 200 ? json::parse(r.body, nullptr, false) : json();
  };
  const json core_doc = parse(core);
  const json groups_doc = parse(groups);
  if (groups_doc.is_discarded() || core_doc.is_discarded()) {
    return InternalError("unable to decode the server's discovery documents");
  }
  if ((core.status != 200 || IsAggregated(core.content_type)) && IsAggregated(groups.content_type)) {
    return RestMapper::FromAggregated(core_doc, groups_doc);
  }
  // Legacy: one APIResourceList per group-version.
  std::vector<std::string> group_versions;
  if (core_doc.is_object()) {
    for (const auto& v : Strings(core_doc, "versions")) group_versions.push_back(v);
  }
  if (auto gs = groups_doc.find("groups"); gs != groups_doc.end() && gs->is_array()) {
    for (const auto& g : *gs) {
      if (auto vs = g.find("versions"); vs != g.end() && vs->is_array()) {
        for (const auto& v : *vs) group_versions.push_back(api::StringAt(v, "groupVersion"));
      }
    }
  }
  std::vector<json> lists;
  for (const auto& gv : group_versions) {
    const std::string path = gv.find('/') == std::string::npos ? "/api/" + gv : "/apis/" + gv;
    BERTH_ASSIGN_OR_RETURN(client::RawResponse res, http.Do({"GET", path, {}, ""}));
    if (res.status != 200) continue;  // kubectl logs and skips a failing group-version
    json list = json::parse(res.body, nullptr, false);
    if (list.is_object()) lists.push_back(std::move(list));
  }
  return RestMapper::FromResourceLists(lists);
}

}  // namespace berth::cli
