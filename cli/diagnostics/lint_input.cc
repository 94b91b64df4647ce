#include "cli/diagnostics/lint_input.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <tuple>

#include "api/conversion.h"
#include "api/registry.h"
#include "api/unstructured.h"

namespace berth::cli::diagnostics {

namespace {

// Fills apiVersion/kind of list items (the wire form of built-in kinds omits them).
void FillTypeMeta(const client::GroupVersionResource& gvr, std::vector<api::Object>* items) {
  const api::ResourceDefinition* def = api::Registry::Default().Find(gvr.GroupResource());
  if (def == nullptr) return;
  const std::string api_version = gvr.group.empty() ? gvr.version : gvr.group + "/" + gvr.version;
  for (api::Object& obj : *items) {
    if (!obj.is_object()) continue;
    if (!obj.contains("apiVersion")) obj["apiVersion"] = api_version;
    if (!obj.contains("kind")) obj["kind"] = def->names.kind;
  }
}

void IndexNode(const YAML::Node& node, const std::string& path, std::map<std::string, int>* lines) {
  if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar()) continue;
      std::string child = FieldChild(path, it->first.Scalar());
      lines->emplace(child, it->first.Mark().line + 1);
      IndexNode(it->second, child, lines);
    }
  } else if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) {
      std::string child = FieldIndex(path, i);
      lines->emplace(child, node[i].Mark().line + 1);
      IndexNode(node[i], child, lines);
    }
  }
}

std::map<std::string, int> IndexObject(const YAML::Node& node) {
  std::map<std::string, int> lines;
  lines[""] = node.Mark().line + 1;
  IndexNode(node, "", &lines);
  return lines;
}

bool IsListDocument(const YAML::Node& doc) {
  if (!doc.IsMap() || !doc["kind"] || !doc["kind"].IsScalar()) return false;
  const std::string kind = doc["kind"].Scalar();
  return kind.size() >= 4 && kind.compare(kind.size() - 4, 4, "List") == 0 && doc["items"] &&
         doc["items"].IsSequence();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::vector<std::map<std::string, int>> LineIndex(std::string_view yaml_text) {
  std::vector<std::map<std::string, int>> out;
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(yaml_text));
  } catch (const YAML::Exception&) {
    return {};
  }
  for (const YAML::Node& doc : docs) {
    if (!doc.IsDefined() || doc.IsNull()) continue;  // empty documents, as the manifest reader skips them
    if (IsListDocument(doc)) {
      for (const YAML::Node& item : doc["items"]) out.push_back(IndexObject(item));
    } else {
      out.push_back(IndexObject(doc));
    }
  }
  return out;
}

StatusOr<ObjectsByResource> FetchLintObjects(client::Client& client) {
  BERTH_ASSIGN_OR_RETURN(ClusterView view, ClusterView::Fetch(client));
  ObjectsByResource out;
  for (const client::GroupVersionResource& gvr : resources::All()) {
    if (!view.Covers(gvr)) continue;  // not served
    std::vector<api::Object> items = view.Objects(gvr);
    FillTypeMeta(gvr, &items);
    out[gvr.GroupResource()] = std::move(items);  // kept when empty: the view Covers() it
  }
  for (const client::GroupVersionResource& gvr :
       {resources::kClusterTrainingRuntimes, resources::kTrainingRuntimes}) {
    auto list = client.List(gvr.Namespace(""));
    if (!list.ok()) {
      if (list.status().code() == Code::kNotFound) continue;  // Trainer not served
      return list.status();
    }
    FillTypeMeta(gvr, &list->items);
    out[gvr.GroupResource()] = std::move(list->items);
  }
  return out;
}

StatusOr<LintInput> BuildLintInput(ObjectsByResource live, const std::vector<ManifestObject>& manifests,
                                   const std::string& default_namespace) {
  const api::Registry& registry = api::Registry::Default();
  LintInput input;
  ObjectsByResource objects = std::move(live);
  // Line indexes, one per file, built on first use.
  std::map<std::string, std::vector<std::map<std::string, int>>> line_index;
  std::map<std::string, size_t> next_in_source;
  for (const ManifestObject& m : manifests) {
    const size_t position = next_in_source[m.source]++;
    const std::string api_version = api::StringAt(m.object, "apiVersion");
    const std::string kind = api::StringAt(m.object, "kind");
    auto def = registry.ForKind(api_version, kind);
    if (!def.ok()) continue;  // a kind lint has no rule for
    const api::ResourceDefinition& d = **def;
    const std::string storage = d.group.empty() ? d.StorageVersion().name : d.group + "/" + d.StorageVersion().name;
    BERTH_ASSIGN_OR_RETURN(api::Object obj, api::ConvertObject(m.object, storage));
    if (d.namespaced() && api::Namespace(obj).empty()) obj["metadata"]["namespace"] = default_namespace;

    ObjectOrigin origin;
    origin.source = m.source;
    origin.api_version = api_version;
    origin.written = m.object;
    if (m.source != "STDIN") {
      auto idx = line_index.find(m.source);
      if (idx == line_index.end()) idx = line_index.emplace(m.source, LineIndex(ReadFile(m.source))).first;
      if (position < idx->second.size()) origin.lines = idx->second[position];
    }
    input.provenance[ObjectKey{kind, api::Namespace(obj), api::Name(obj)}] = std::move(origin);

    std::vector<api::Object>& list = objects[api::GroupResource{d.group, d.names.plural}];
    auto same = std::find_if(list.begin(), list.end(), [&](const api::Object& o) {
      return api::Name(o) == api::Name(obj) && api::Namespace(o) == api::Namespace(obj);
    });
    if (same != list.end()) {
      *same = std::move(obj);
    } else {
      list.push_back(std::move(obj));
    }
  }
  for (auto& [gr, list] : objects) {
    std::stable_sort(list.begin(), list.end(), [](const api::Object& a, const api::Object& b) {
      return std::tie(api::Namespace(a), api::Name(a)) < std::tie(api::Namespace(b), api::Name(b));
    });
  }
  input.view = ClusterView::FromObjects(std::move(objects));
  return input;
}

}  // namespace berth::cli::diagnostics
