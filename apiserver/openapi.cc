#include "apiserver/openapi.h"

#include <cstdint>
#include <cstdio>
#include <set>
#include <vector>

namespace berth::apiserver {

using nlohmann::json;

namespace {

std::string Fnv1aHex(std::string_view data) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llX", static_cast<unsigned long long>(h));
  return buf;
}

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string_view::npos) end = s.size();
    out.emplace_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Collects the names of "#/components/schemas/<name>" references in `node`.
void CollectRefs(const json& node, std::set<std::string>* out) {
  static constexpr std::string_view kPrefix = "#/components/schemas/";
  if (node.is_object()) {
    for (const auto& [k, v] : node.items()) {
      if (k == "$ref" && v.is_string()) {
        const std::string& ref = v.get_ref<const std::string&>();
        if (ref.rfind(kPrefix, 0) == 0) out->insert(ref.substr(kPrefix.size()));
      } else {
        CollectRefs(v, out);
      }
    }
  } else if (node.is_array()) {
    for (const auto& v : node) CollectRefs(v, out);
  }
}

json Operation(const char* action, const json& gvk, bool write, const std::string& id) {
  json op = {{"operationId", id},
             {"x-kubernetes-action", action},
             {"x-kubernetes-group-version-kind", gvk},
             {"responses", {{"200", {{"description", "OK"}}}}}};
  json params = json::array();
  if (write) {
    params.push_back({{"name", "dryRun"}, {"in", "query"},
                      {"description", "When present, indicates that modifications should not be persisted."},
                      {"schema", {{"type", "string"}, {"uniqueItems", true}}}});
    params.push_back({{"name", "fieldManager"}, {"in", "query"},
                      {"description", "a name associated with the actor or entity that is making these changes."},
                      {"schema", {{"type", "string"}, {"uniqueItems", true}}}});
    params.push_back({{"name", "fieldValidation"}, {"in", "query"},
                      {"description", "fieldValidation instructs the server on how to handle objects in the "
                                      "request containing unknown or duplicate fields: Ignore, Warn or Strict."},
                      {"schema", {{"type", "string"}, {"uniqueItems", true}}}});
  }
  if (!params.empty()) op["parameters"] = std::move(params);
  return op;
}

}  // namespace

std::string OpenApi::SchemaName(const api::ResourceDefinition& def, std::string_view version) {
  std::string v(version);
  if (def.group.empty()) return "io.k8s.api.core." + v + "." + def.names.kind;
  auto labels = Split(def.group, '.');
  if (labels.size() >= 2 && labels[labels.size() - 2] == "k8s" && labels.back() == "io") {
    // scheduling.k8s.io -> io.k8s.api.scheduling
    return "io.k8s.api." + labels.front() + "." + v + "." + def.names.kind;
  }
  if (labels.size() == 1) return "io.k8s.api." + labels.front() + "." + v + "." + def.names.kind;  // batch
  std::string reversed;
  for (size_t i = labels.size(); i-- > 0;) reversed += (reversed.empty() ? "" : ".") + labels[i];
  return reversed + "." + v + "." + def.names.kind;
}

OpenApi::OpenApi(const api::Registry& registry, const Discovery& discovery) {
  json index = {{"paths", json::object()}};
  const api::SchemaDefinitions& shared = registry.schema_definitions();
  for (const ServedGroupVersion& gv : discovery.GroupVersions()) {
    std::string key = gv.group.empty() ? "api/" + gv.version : "apis/" + gv.group + "/" + gv.version;
    std::string prefix = "/" + key;
    json paths = json::object();
    json schemas = json::object();
    std::set<std::string> refs;
    for (const api::ResourceDefinition* def : gv.definitions) {
      const api::DefinitionVersion* v = def->FindVersion(gv.version);
      json gvk = {{"group", def->group}, {"version", gv.version}, {"kind", def->names.kind}};
      const std::string& plural = def->names.plural;
      const std::string& kind = def->names.kind;
      std::string base = def->namespaced() ? prefix + "/namespaces/{namespace}/" + plural : prefix + "/" + plural;
      paths[base] = {{"get", Operation("list", gvk, false, "list" + kind)},
                     {"post", Operation("post", gvk, true, "create" + kind)},
                     {"delete", Operation("deletecollection", gvk, false, "deletecollection" + kind)}};
      paths[base + "/{name}"] = {{"get", Operation("get", gvk, false, "read" + kind)},
                                 {"put", Operation("put", gvk, true, "replace" + kind)},
                                 {"patch", Operation("patch", gvk, true, "patch" + kind)},
                                 {"delete", Operation("delete", gvk, false, "delete" + kind)}};
      if (v != nullptr && v->status_subresource) {
        paths[base + "/{name}/status"] = {{"get", Operation("get", gvk, false, "read" + kind + "Status")},
                                          {"put", Operation("put", gvk, true, "replace" + kind + "Status")},
                                          {"patch", Operation("patch", gvk, true, "patch" + kind + "Status")}};
      }
      if (def->namespaced()) {
        paths[prefix + "/" + plural] = {{"get", Operation("list", gvk, false, "list" + kind + "ForAllNamespaces")}};
      }
      if (v != nullptr) {
        json schema = v->schema.is_object() ? v->schema : json::object();
        schema["x-kubernetes-group-version-kind"] = json::array({gvk});
        CollectRefs(schema, &refs);
        schemas[SchemaName(*def, gv.version)] = std::move(schema);
      }
    }
    // Shared definitions referenced, transitively.
    std::set<std::string> done;
    while (!refs.empty()) {
      std::string name = *refs.begin();
      refs.erase(refs.begin());
      if (!done.insert(name).second) continue;
      auto it = shared.find(name);
      if (it == shared.end()) continue;
      schemas[name] = it->second;
      std::set<std::string> more;
      CollectRefs(it->second, &more);
      for (const auto& m : more) {
        if (!done.count(m)) refs.insert(m);
      }
    }
    json doc = {{"openapi", "3.0.0"},
                {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0"}}},
                {"paths", std::move(paths)},
                {"components", {{"schemas", std::move(schemas)}}}};
    std::string body = doc.dump();
    index["paths"][key] = {{"serverRelativeURL", "/openapi/v3/" + key + "?hash=" + Fnv1aHex(body)}};
    documents_.emplace(key, std::move(body));
  }
  index_ = index.dump();
}

namespace {

// A length-delimited protobuf field (tag + varint length + bytes).
std::string ProtoBytes(int number, std::string_view bytes) {
  std::string out;
  auto varint = [&out](uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  };
  varint((static_cast<uint64_t>(number) << 3) | 2);
  varint(bytes.size());
  out.append(bytes);
  return out;
}

constexpr std::string_view kV2Title = "Kubernetes";
constexpr std::string_view kV2Version = "v1.32.0";

}  // namespace

std::string OpenApi::V2Document(std::string_view accept, std::string* content_type) {
  if (accept.find(kOpenApiV2ProtobufMediaType) != std::string_view::npos) {
    *content_type = std::string(kOpenApiV2ProtobufContentType);
    return ProtoBytes(1, "2.0") + ProtoBytes(2, ProtoBytes(1, kV2Title) + ProtoBytes(2, kV2Version));
  }
  *content_type = "application/json";
  json doc = {{"swagger", "2.0"},
              {"info", {{"title", kV2Title}, {"version", kV2Version}}},
              {"paths", json::object()},
              {"definitions", json::object()}};
  return doc.dump();
}

const std::string* OpenApi::Document(std::string_view key) const {
  auto it = documents_.find(key);
  return it == documents_.end() ? nullptr : &it->second;
}

}  // namespace berth::apiserver
