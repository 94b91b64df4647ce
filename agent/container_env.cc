#include "agent/container_env.h"

#include <algorithm>
#include <map>

#include "api/unstructured.h"

namespace berth::agent {
namespace {

using VarMap = std::map<std::string, std::string, std::less<>>;

// "metadata.labels['k']" → ("metadata.labels", "k"); no subscript → (path, nullopt).
bool SplitSubscript(std::string_view path, std::string_view* base, std::optional<std::string>* key) {
  auto open = path.find("['");
  if (open == std::string_view::npos) {
    *base = path;
    key->reset();
    return true;
  }
  if (path.size() < open + 4 || path.substr(path.size() - 2) != "']") return false;
  *base = path.substr(0, open);
  *key = std::string(path.substr(open + 2, path.size() - open - 4));
  return true;
}

}  // namespace

StatusOr<std::string> FieldRefValue(const api::Object& pod, std::string_view field_path, const NodeFacts& node) {
  std::string_view base;
  std::optional<std::string> key;
  if (!SplitSubscript(field_path, &base, &key)) {
    return InvalidError("unsupported fieldPath: " + std::string(field_path));
  }
  if (key) {
    const char* map_name = base == "metadata.labels"        ? "labels"
                           : base == "metadata.annotations" ? "annotations"
                                                            : nullptr;
    if (map_name == nullptr) return InvalidError("unsupported fieldPath: " + std::string(field_path));
    return api::NestedString(pod, {"metadata", map_name, key->c_str()});
  }
  if (base == "metadata.name") return api::Name(pod);
  if (base == "metadata.namespace") return api::Namespace(pod);
  if (base == "metadata.uid") return api::Uid(pod);
  if (base == "spec.nodeName") return api::NestedString(pod, {"spec", "nodeName"});
  if (base == "spec.serviceAccountName") return api::NestedString(pod, {"spec", "serviceAccountName"});
  if (base == "status.podIP" || base == "status.podIPs") return node.pod_ip;
  if (base == "status.hostIP" || base == "status.hostIPs") return node.host_ip;
  return InvalidError("unsupported fieldPath: " + std::string(field_path));
}

StatusOr<std::string> ResourceFieldRefValue(const api::Object& pod, const api::Object& own_container,
                                            const api::Object& ref, const NodeFacts& node) {
  const api::Object* container = &own_container;
  if (auto it = ref.find("containerName");
      it != ref.end() && it->is_string() && !it->get_ref<const std::string&>().empty()) {
    container = FindContainer(pod, it->get_ref<const std::string&>());
    if (container == nullptr) {
      return InvalidError("container " + it->get<std::string>() + " not found");
    }
  }
  const std::string& resource = api::NestedString(ref, {"resource"});
  auto dot = resource.find('.');
  std::string kind = dot == std::string::npos ? "" : resource.substr(0, dot);
  std::string name = dot == std::string::npos ? "" : resource.substr(dot + 1);
  if ((kind != "requests" && kind != "limits") || (name != "cpu" && name != "memory" && name != "ephemeral-storage")) {
    return InvalidError("unsupported container resource: " + resource);
  }
  Quantity divisor = Quantity::FromUnits(1);
  if (auto it = ref.find("divisor"); it != ref.end() && !it->is_null()) {
    std::string text = it->is_string() ? it->get<std::string>() : it->dump();
    BERTH_ASSIGN_OR_RETURN(divisor, Quantity::Parse(text));
  }
  if (divisor.milli() <= 0) return InvalidError("invalid divisor: " + divisor.String());

  Quantity amount;
  bool found = false;
  const std::string& text = api::NestedString(*container, {"resources", kind.c_str(), name.c_str()});
  if (!text.empty()) {
    BERTH_ASSIGN_OR_RETURN(amount, Quantity::Parse(text));
    found = true;
  } else if (auto res = container->find("resources"); res != container->end() && res->is_object()) {
    // Numbers written without quotes ("cpu: 2") arrive as JSON numbers.
    auto k = res->find(kind);
    if (k != res->end() && k->is_object()) {
      auto v = k->find(name);
      if (v != k->end() && v->is_number()) {
        BERTH_ASSIGN_OR_RETURN(amount, Quantity::Parse(v->dump()));
        found = true;
      }
    }
  }
  if (!found && kind == "requests") {
    // kubelet: an unset request defaults to the limit (API defaulting), else 0.
    const std::string& limit = api::NestedString(*container, {"resources", "limits", name.c_str()});
    if (!limit.empty()) {
      BERTH_ASSIGN_OR_RETURN(amount, Quantity::Parse(limit));
    }
  }
  if (!found && kind == "limits") {
    auto it = node.allocatable.find(name);
    if (it != node.allocatable.end()) amount = it->second;
  }
  int64_t num, den;
  if (name == "cpu") {
    num = amount.milli();
    den = divisor.milli();
  } else {
    num = amount.Value();
    den = divisor.Value();
  }
  if (den <= 0) return InvalidError("invalid divisor: " + divisor.String());
  int64_t q = num / den;
  if (num % den != 0 && num > 0) ++q;  // ceil for positive amounts
  return std::to_string(q);
}


const api::Object* FindContainer(const api::Object& pod, std::string_view name) {
  auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return nullptr;
  for (const char* list : {"containers", "initContainers"}) {
    auto it = spec->find(list);
    if (it == spec->end() || !it->is_array()) continue;
    for (const auto& c : *it) {
      if (c.is_object() && api::NestedString(c, {"name"}) == name) return &c;
    }
  }
  return nullptr;
}

std::string ExpandVars(std::string_view text, const VarMap& vars) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c != '$' || i + 1 >= text.size()) {
      out += c;
      continue;
    }
    char next = text[i + 1];
    if (next == '$') {  // "$$" escapes a "$"
      out += '$';
      ++i;
    } else if (next == '(') {
      auto close = text.find(')', i + 2);
      if (close == std::string_view::npos) {  // unterminated: keep the rest verbatim
        out.append(text.substr(i));
        break;
      }
      std::string_view name = text.substr(i + 2, close - i - 2);
      auto it = vars.find(name);
      if (it != vars.end()) {
        out += it->second;
      } else {
        out.append(text.substr(i, close - i + 1));
      }
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

StatusOr<std::vector<EnvVar>> ResolveEnv(const api::Object& pod, std::string_view container_name,
                                         const NodeFacts& node) {
  const api::Object* container = FindContainer(pod, container_name);
  if (container == nullptr) {
    return NotFoundError("container \"" + std::string(container_name) + "\" not found in pod \"" + api::Name(pod) +
                         "\"");
  }
  std::vector<EnvVar> out;
  VarMap defined;
  std::map<std::string, size_t, std::less<>> position;  // name → its entry in out: a repeat replaces it
  auto set = [&](const std::string& name, std::string value) {
    defined[name] = value;
    auto [it, added] = position.try_emplace(name, out.size());
    if (added) {
      out.push_back({name, std::move(value)});
    } else {
      out[it->second].value = std::move(value);
    }
  };
  if (container->contains("envFrom")) {
    return InvalidError("envFrom is not supported by berth's node agent");
  }
  if (auto env = container->find("env"); env != container->end() && env->is_array()) {
    for (const auto& e : *env) {
      const std::string& name = api::NestedString(e, {"name"});
      auto from = e.find("valueFrom");
      if (from == e.end() || !from->is_object()) {
        set(name, ExpandVars(api::NestedString(e, {"value"}), defined));
        continue;
      }
      if (auto f = from->find("fieldRef"); f != from->end()) {
        BERTH_ASSIGN_OR_RETURN(std::string v, FieldRefValue(pod, api::NestedString(*f, {"fieldPath"}), node));
        set(name, std::move(v));
      } else if (auto r = from->find("resourceFieldRef"); r != from->end()) {
        BERTH_ASSIGN_OR_RETURN(std::string v, ResourceFieldRefValue(pod, *container, *r, node));
        set(name, std::move(v));
      } else if (from->contains("configMapKeyRef")) {
        return InvalidError("env " + name + ": configMapKeyRef is not supported by berth's node agent");
      } else if (from->contains("secretKeyRef")) {
        return InvalidError("env " + name + ": secretKeyRef is not supported by berth's node agent");
      } else {
        return InvalidError("env " + name + ": valueFrom has no supported source");
      }
    }
  }
  if (!defined.contains("HOSTNAME")) {
    const std::string& hostname = api::NestedString(pod, {"spec", "hostname"});
    set("HOSTNAME", hostname.empty() ? api::Name(pod) : hostname);
  }
  if (!defined.contains("PATH")) set("PATH", std::string(kDefaultPath));
  return out;
}

StatusOr<ContainerCommand> ResolveCommand(const api::Object& pod, std::string_view container_name,
                                          const NodeFacts& node) {
  BERTH_ASSIGN_OR_RETURN(std::vector<EnvVar> env, ResolveEnv(pod, container_name, node));
  const api::Object& container = *FindContainer(pod, container_name);
  VarMap vars;
  for (const auto& v : env) vars[v.name] = v.value;
  ContainerCommand out;
  auto command = container.find("command");
  if (command != container.end() && command->is_array() && !command->empty()) {
    for (const char* list : {"command", "args"}) {
      auto it = container.find(list);
      if (it == container.end() || !it->is_array()) continue;
      for (const auto& a : *it) {
        out.argv.push_back(ExpandVars(a.is_string() ? a.get<std::string>() : a.dump(), vars));
      }
    }
  }
  out.env = std::move(env);
  out.working_dir = api::NestedString(container, {"workingDir"});
  return out;
}

}  // namespace berth::agent
