#include "apiserver/table_convertor.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <utility>

#include "api/conversion.h"
#include "api/selectors.h"
#include "api/unstructured.h"
#include "rbac/policy_rule.h"

namespace berth::apiserver {

using nlohmann::json;

// ---------------------------------------------------------------------------
// Ages

std::string HumanDuration(Duration d) { return berth::HumanDuration(d); }

std::string AgeOf(const json& timestamp, Time now) {
  if (!timestamp.is_string()) return "<unknown>";
  Time t;
  if (!ParseRfc3339(timestamp.get<std::string>(), &t)) return "<unknown>";
  return HumanDuration(std::chrono::duration_cast<Duration>(now - t));
}

// ---------------------------------------------------------------------------
// JSONPath subset

namespace {

// Parses a literal in a filter: 'x', "x", a number, true/false.
std::optional<json> ParseLiteral(std::string_view s) {
  if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front()) {
    return json(std::string(s.substr(1, s.size() - 2)));
  }
  if (s == "true") return json(true);
  if (s == "false") return json(false);
  auto j = json::parse(s, nullptr, false);
  if (!j.is_discarded() && j.is_number()) return j;
  return std::nullopt;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

bool JsonEqualLoose(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  return a == b;
}

// Evaluates a bracket expression against every node.
bool ApplyBracket(std::string_view expr, const std::vector<const json*>& in, std::vector<const json*>* out) {
  expr = Trim(expr);
  if (expr == "*") {
    for (const json* n : in) {
      if (n->is_array() || n->is_object()) {
        for (const auto& e : *n) out->push_back(&e);
      }
    }
    return true;
  }
  if (!expr.empty() && expr.front() == '?') {
    // ?(@.path op literal) or ?(@.path)
    std::string_view body = Trim(expr.substr(1));
    if (body.size() < 2 || body.front() != '(' || body.back() != ')') return false;
    body = Trim(body.substr(1, body.size() - 2));
    std::string_view lhs = body, rhs;
    std::string op;
    for (const char* candidate : {"==", "!="}) {
      size_t p = body.find(candidate);
      if (p != std::string_view::npos) {
        lhs = Trim(body.substr(0, p));
        rhs = Trim(body.substr(p + 2));
        op = candidate;
        break;
      }
    }
    if (lhs.empty() || lhs.front() != '@') return false;
    std::string sub(lhs.substr(1));
    std::optional<json> literal;
    if (!op.empty()) {
      literal = ParseLiteral(rhs);
      if (!literal) return false;
    }
    for (const json* n : in) {
      if (!n->is_array()) continue;
      for (const auto& e : *n) {
        auto found = EvalJsonPath(e, sub);
        bool match;
        if (op.empty()) {
          match = !found.empty();
        } else {
          bool eq = !found.empty() && JsonEqualLoose(found.front(), *literal);
          match = op == "==" ? eq : (!found.empty() && !eq);
        }
        if (match) out->push_back(&e);
      }
    }
    return true;
  }
  if (expr.size() >= 2 && (expr.front() == '\'' || expr.front() == '"') && expr.back() == expr.front()) {
    std::string key(expr.substr(1, expr.size() - 2));
    for (const json* n : in) {
      if (n->is_object()) {
        auto it = n->find(key);
        if (it != n->end()) out->push_back(&*it);
      }
    }
    return true;
  }
  auto parse_int = [](std::string_view s, int64_t* v) {
    s = Trim(s);
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
    return ec == std::errc() && p == s.data() + s.size();
  };
  size_t colon = expr.find(':');
  if (colon == std::string_view::npos) {
    int64_t idx;
    if (!parse_int(expr, &idx)) return false;
    for (const json* n : in) {
      if (!n->is_array()) continue;
      int64_t size = static_cast<int64_t>(n->size());
      int64_t i = idx < 0 ? size + idx : idx;
      if (i >= 0 && i < size) out->push_back(&(*n)[static_cast<size_t>(i)]);
    }
    return true;
  }
  std::string_view a = Trim(expr.substr(0, colon)), b = Trim(expr.substr(colon + 1));
  if (b.find(':') != std::string_view::npos) b = Trim(b.substr(0, b.find(':')));  // step ignored
  for (const json* n : in) {
    if (!n->is_array()) continue;
    int64_t size = static_cast<int64_t>(n->size());
    int64_t start = 0, end = size;
    if (!a.empty() && !parse_int(a, &start)) return false;
    if (!b.empty() && !parse_int(b, &end)) return false;
    if (start < 0) start = std::max<int64_t>(0, size + start);
    if (end < 0) end = std::max<int64_t>(0, size + end);
    end = std::min(end, size);
    for (int64_t i = start; i < end; ++i) out->push_back(&(*n)[static_cast<size_t>(i)]);
  }
  return true;
}

}  // namespace

std::vector<json> EvalJsonPath(const json& doc, std::string_view path) {
  path = Trim(path);
  if (path.size() >= 2 && path.front() == '{' && path.back() == '}') {
    path = Trim(path.substr(1, path.size() - 2));
  }
  std::vector<const json*> nodes{&doc};
  size_t i = 0;
  if (!path.empty() && path[0] == '$') i = 1;
  while (i < path.size() && !nodes.empty()) {
    char c = path[i];
    if (c == '.') {
      ++i;
      size_t j = i;
      while (j < path.size() && path[j] != '.' && path[j] != '[') ++j;
      std::string key(path.substr(i, j - i));
      i = j;
      if (key.empty()) continue;  // ".[0]" style
      std::vector<const json*> next;
      for (const json* n : nodes) {
        if (n->is_object()) {
          auto it = n->find(key);
          if (it != n->end()) next.push_back(&*it);
        }
      }
      nodes = std::move(next);
    } else if (c == '[') {
      // Find the matching ']' (quotes and parentheses may contain ']').
      size_t j = i + 1;
      int depth = 0;
      char quote = 0;
      for (; j < path.size(); ++j) {
        char d = path[j];
        if (quote) {
          if (d == quote) quote = 0;
        } else if (d == '\'' || d == '"') {
          quote = d;
        } else if (d == '(') {
          ++depth;
        } else if (d == ')') {
          --depth;
        } else if (d == ']' && depth == 0) {
          break;
        }
      }
      if (j >= path.size()) return {};
      std::vector<const json*> next;
      if (!ApplyBracket(path.substr(i + 1, j - i - 1), nodes, &next)) return {};
      nodes = std::move(next);
      i = j + 1;
    } else {
      // A leading bare field name ("metadata.name").
      size_t j = i;
      while (j < path.size() && path[j] != '.' && path[j] != '[') ++j;
      std::string key(path.substr(i, j - i));
      i = j;
      std::vector<const json*> next;
      for (const json* n : nodes) {
        if (n->is_object()) {
          auto it = n->find(key);
          if (it != n->end()) next.push_back(&*it);
        }
      }
      nodes = std::move(next);
    }
  }
  std::vector<json> out;
  out.reserve(nodes.size());
  for (const json* n : nodes) out.push_back(*n);
  return out;
}

// ---------------------------------------------------------------------------
// Columns and rows

namespace {

constexpr const char* kNameDescription =
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
constexpr const char* kAgeDescription =
    "CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate "
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

json Column(std::string name, std::string type, std::string format, std::string description, int priority = 0) {
  return json{{"name", std::move(name)},
              {"type", std::move(type)},
              {"format", std::move(format)},
              {"description", std::move(description)},
              {"priority", priority}};
}

int64_t Int(const json& v) { return v.is_number() ? v.get<int64_t>() : 0; }

std::string OrNone(std::string s, const char* none = "<none>") { return s.empty() ? std::string(none) : s; }

// Text of a JSONPath result for a string column (kubectl's jsonpath printing).
std::string ValueText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "<nil>";
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

json CellForType(const std::string& type, const json& value, Time now) {
  if (type == "string") return ValueText(value);
  if (type == "integer") {
    if (value.is_number_integer()) return value;
    if (value.is_number_float()) {
      double d = value.get<double>();
      if (std::floor(d) == d) return static_cast<int64_t>(d);
    }
    return nullptr;
  }
  if (type == "number") return value.is_number() ? value : json(nullptr);
  if (type == "boolean") return value.is_boolean() ? value : json(nullptr);
  if (type == "date") {
    if (!value.is_string()) return nullptr;
    Time t;
    if (!ParseRfc3339(value.get<std::string>(), &t)) return nullptr;
    return HumanDuration(std::chrono::duration_cast<Duration>(now - t));
  }
  return nullptr;
}

Time MaxTime(Time a, const json& ts) {
  Time t;
  if (ts.is_string() && ParseRfc3339(ts.get<std::string>(), &t) && t > a) return t;
  return a;
}

// printPod (pkg/printers/internalversion/printers.go).
std::vector<json> PodCells(const json& pod, Time now) {
  const json& spec = api::NestedField(pod, {"spec"});
  const json& status = api::NestedField(pod, {"status"});
  std::map<std::string, bool> restartable_init;
  int64_t total = api::NestedField(spec, {"containers"}).is_array() ? api::NestedField(spec, {"containers"}).size() : 0;
  if (api::NestedField(spec, {"initContainers"}).is_array()) {
    for (const auto& c : api::NestedField(spec, {"initContainers"})) {
      bool r = api::AsString(api::NestedField(c, {"restartPolicy"})) == "Always";
      restartable_init[api::AsString(api::NestedField(c, {"name"}))] = r;
      if (r) ++total;
    }
  }
  int64_t restarts = 0, restartable_restarts = 0, ready = 0;
  Time last_restart{}, last_restartable_restart{};
  std::string reason = api::AsString(api::NestedField(status, {"phase"}));
  if (!api::AsString(api::NestedField(status, {"reason"})).empty())
    reason = api::AsString(api::NestedField(status, {"reason"}));
  const json& conditions = api::NestedField(status, {"conditions"});
  if (conditions.is_array()) {
    for (const auto& c : conditions) {
      if (api::AsString(api::NestedField(c, {"type"})) == "PodScheduled" &&
          api::AsString(api::NestedField(c, {"reason"})) == "SchedulingGated") {
        reason = "SchedulingGated";
      }
    }
  }
  bool initializing = false;
  const json& init_statuses = api::NestedField(status, {"initContainerStatuses"});
  const int64_t n_init =
      api::NestedField(spec, {"initContainers"}).is_array() ? api::NestedField(spec, {"initContainers"}).size() : 0;
  if (init_statuses.is_array()) {
    for (size_t i = 0; i < init_statuses.size(); ++i) {
      const json& c = init_statuses[i];
      restarts += Int(api::NestedField(c, {"restartCount"}));
      const json& last_term = api::NestedField(c, {"lastState", "terminated"});
      if (last_term.is_object()) last_restart = MaxTime(last_restart, api::NestedField(last_term, {"finishedAt"}));
      bool restartable = restartable_init[api::AsString(api::NestedField(c, {"name"}))];
      if (restartable) {
        restartable_restarts += Int(api::NestedField(c, {"restartCount"}));
        if (last_term.is_object()) {
          last_restartable_restart = MaxTime(last_restartable_restart, api::NestedField(last_term, {"finishedAt"}));
        }
      }
      const json& term = api::NestedField(c, {"state", "terminated"});
      const json& waiting = api::NestedField(c, {"state", "waiting"});
      if (term.is_object() && Int(api::NestedField(term, {"exitCode"})) == 0) continue;
      if (restartable && api::NestedField(c, {"started"}) == true) {
        if (api::NestedField(c, {"ready"}) == true) ++ready;
        continue;
      }
      if (term.is_object()) {
        std::string r = api::AsString(api::NestedField(term, {"reason"}));
        if (r.empty()) {
          int64_t sig = Int(api::NestedField(term, {"signal"}));
          reason = sig != 0 ? "Init:Signal:" + std::to_string(sig)
                            : "Init:ExitCode:" + std::to_string(Int(api::NestedField(term, {"exitCode"})));
        } else {
          reason = "Init:" + r;
        }
      } else if (waiting.is_object() && !api::AsString(api::NestedField(waiting, {"reason"})).empty() &&
                 api::AsString(api::NestedField(waiting, {"reason"})) != "PodInitializing") {
        reason = "Init:" + api::AsString(api::NestedField(waiting, {"reason"}));
      } else {
        reason = "Init:" + std::to_string(i) + "/" + std::to_string(n_init);
      }
      initializing = true;
      break;
    }
  }
  bool initialized_true = false;
  bool ready_condition = false;
  if (conditions.is_array()) {
    for (const auto& c : conditions) {
      if (api::AsString(api::NestedField(c, {"type"})) == "Initialized" &&
          api::AsString(api::NestedField(c, {"status"})) == "True")
        initialized_true = true;
      if (api::AsString(api::NestedField(c, {"type"})) == "Ready" &&
          api::AsString(api::NestedField(c, {"status"})) == "True")
        ready_condition = true;
    }
  }
  if (!initializing || initialized_true) {
    restarts = restartable_restarts;
    last_restart = last_restartable_restart;
    bool has_running = false;
    const json& statuses = api::NestedField(status, {"containerStatuses"});
    if (statuses.is_array()) {
      for (size_t k = statuses.size(); k-- > 0;) {
        const json& c = statuses[k];
        restarts += Int(api::NestedField(c, {"restartCount"}));
        const json& last_term = api::NestedField(c, {"lastState", "terminated"});
        if (last_term.is_object()) last_restart = MaxTime(last_restart, api::NestedField(last_term, {"finishedAt"}));
        const json& term = api::NestedField(c, {"state", "terminated"});
        const json& waiting = api::NestedField(c, {"state", "waiting"});
        if (waiting.is_object() && !api::AsString(api::NestedField(waiting, {"reason"})).empty()) {
          reason = api::AsString(api::NestedField(waiting, {"reason"}));
        } else if (term.is_object() && !api::AsString(api::NestedField(term, {"reason"})).empty()) {
          reason = api::AsString(api::NestedField(term, {"reason"}));
        } else if (term.is_object()) {
          int64_t sig = Int(api::NestedField(term, {"signal"}));
          reason = sig != 0 ? "Signal:" + std::to_string(sig)
                            : "ExitCode:" + std::to_string(Int(api::NestedField(term, {"exitCode"})));
        } else if (api::NestedField(c, {"ready"}) == true && api::NestedField(c, {"state", "running"}).is_object()) {
          has_running = true;
          ++ready;
        }
      }
    }
    if (reason == "Completed" && has_running) reason = ready_condition ? "Running" : "NotReady";
  }
  const bool deleting = api::NestedField(pod, {"metadata", "deletionTimestamp"}).is_string();
  const std::string phase = api::AsString(api::NestedField(status, {"phase"}));
  if (deleting && api::AsString(api::NestedField(status, {"reason"})) == "NodeLost") {
    reason = "Unknown";
  } else if (deleting && phase != "Succeeded" && phase != "Failed") {
    reason = "Terminating";
  }
  std::string restarts_text = std::to_string(restarts);
  if (restarts != 0 && last_restart != Time{}) {
    restarts_text += " (" + HumanDuration(std::chrono::duration_cast<Duration>(now - last_restart)) + " ago)";
  }
  std::string ip = api::AsString(api::NestedField(status, {"podIP"}));
  if (api::NestedField(status, {"podIPs"}).is_array() && !api::NestedField(status, {"podIPs"}).empty()) {
    ip = api::AsString(api::NestedField(api::NestedField(status, {"podIPs"})[0], {"ip"}));
  }
  std::string gates = "<none>";
  const json& readiness_gates = api::NestedField(spec, {"readinessGates"});
  if (readiness_gates.is_array() && !readiness_gates.empty()) {
    int trues = 0;
    for (const auto& g : readiness_gates) {
      std::string type = api::AsString(api::NestedField(g, {"conditionType"}));
      if (conditions.is_array()) {
        for (const auto& c : conditions) {
          if (api::AsString(api::NestedField(c, {"type"})) == type &&
              api::AsString(api::NestedField(c, {"status"})) == "True")
            ++trues;
        }
      }
    }
    gates = std::to_string(trues) + "/" + std::to_string(readiness_gates.size());
  }
  return {api::Name(pod),
          std::to_string(ready) + "/" + std::to_string(total),
          reason,
          restarts_text,
          AgeOf(api::NestedField(pod, {"metadata", "creationTimestamp"}), now),
          OrNone(ip),
          OrNone(api::AsString(api::NestedField(spec, {"nodeName"}))),
          OrNone(api::AsString(api::NestedField(status, {"nominatedNodeName"}))),
          gates};
}

std::vector<json> NodeCells(const json& node, Time now) {
  std::string status = "Unknown";
  const json& conditions = api::NestedField(node, {"status", "conditions"});
  if (conditions.is_array()) {
    for (const auto& c : conditions) {
      if (api::AsString(api::NestedField(c, {"type"})) == "Ready") {
        status = api::AsString(api::NestedField(c, {"status"})) == "True" ? "Ready" : "NotReady";
      }
    }
  }
  if (api::NestedField(node, {"spec", "unschedulable"}) == true) status += ",SchedulingDisabled";
  std::vector<std::string> roles;
  const json& labels = api::NestedField(node, {"metadata", "labels"});
  if (labels.is_object()) {
    static constexpr std::string_view kPrefix = "node-role.kubernetes.io/";
    for (const auto& [k, v] : labels.items()) {
      if (k.rfind(kPrefix, 0) == 0 && k.size() > kPrefix.size()) {
        roles.push_back(k.substr(kPrefix.size()));
      } else if (k == "kubernetes.io/role" && v.is_string() && !v.get<std::string>().empty()) {
        roles.push_back(v.get<std::string>());
      }
    }
  }
  std::sort(roles.begin(), roles.end());
  roles.erase(std::unique(roles.begin(), roles.end()), roles.end());
  std::string roles_text;
  for (const auto& r : roles) roles_text += (roles_text.empty() ? "" : ",") + r;
  auto address = [&](const char* type) {
    const json& addrs = api::NestedField(node, {"status", "addresses"});
    if (addrs.is_array()) {
      for (const auto& a : addrs) {
        if (api::AsString(api::NestedField(a, {"type"})) == type)
          return api::AsString(api::NestedField(a, {"address"}));
      }
    }
    return std::string();
  };
  const json& info = api::NestedField(node, {"status", "nodeInfo"});
  return {api::Name(node),
          status,
          OrNone(roles_text),
          AgeOf(api::NestedField(node, {"metadata", "creationTimestamp"}), now),
          api::AsString(api::NestedField(info, {"kubeletVersion"})),
          OrNone(address("InternalIP")),
          OrNone(address("ExternalIP")),
          OrNone(api::AsString(api::NestedField(info, {"osImage"})), "<unknown>"),
          OrNone(api::AsString(api::NestedField(info, {"kernelVersion"})), "<unknown>"),
          OrNone(api::AsString(api::NestedField(info, {"containerRuntimeVersion"})), "<unknown>")};
}

std::vector<json> NamespaceCells(const json& ns, Time now) {
  return {api::Name(ns), api::AsString(api::NestedField(ns, {"status", "phase"})),
          AgeOf(api::NestedField(ns, {"metadata", "creationTimestamp"}), now)};
}

// printers.go printPriorityClass: globalDefault false when absent.
std::vector<json> PriorityClassCells(const json& pc, Time now) {
  json value = api::NestedField(pc, {"value"});
  json global = api::NestedField(pc, {"globalDefault"});
  return {api::Name(pc), value.is_number() ? value : json(0), global.is_boolean() ? global : json(false),
          AgeOf(api::NestedField(pc, {"metadata", "creationTimestamp"}), now),
          api::AsString(api::NestedField(pc, {"preemptionPolicy"}))};
}

// printers.go printConfigMap: len(data) + len(binaryData).
std::vector<json> ConfigMapCells(const json& cm, Time now) {
  auto count = [](const json& m) { return m.is_object() ? static_cast<int64_t>(m.size()) : int64_t{0}; };
  return {api::Name(cm), count(api::NestedField(cm, {"data"})) + count(api::NestedField(cm, {"binaryData"})),
          AgeOf(api::NestedField(cm, {"metadata", "creationTimestamp"}), now)};
}

// printers.go printSecret: type, len(data).
std::vector<json> SecretCells(const json& secret, Time now) {
  const json& data = api::NestedField(secret, {"data"});
  return {api::Name(secret), api::AsString(api::NestedField(secret, {"type"})),
          data.is_object() ? static_cast<int64_t>(data.size()) : int64_t{0},
          AgeOf(api::NestedField(secret, {"metadata", "creationTimestamp"}), now)};
}

// printers.go printServiceAccount: len(secrets).
std::vector<json> ServiceAccountCells(const json& sa, Time now) {
  const json& secrets = api::NestedField(sa, {"secrets"});
  return {api::Name(sa), secrets.is_array() ? static_cast<int64_t>(secrets.size()) : int64_t{0},
          AgeOf(api::NestedField(sa, {"metadata", "creationTimestamp"}), now)};
}

std::string EventSource(const json& ev) {
  std::string component = api::AsString(api::NestedField(ev, {"source", "component"}));
  std::string host = api::AsString(api::NestedField(ev, {"source", "host"}));
  if (component.empty() && host.empty()) {
    component = api::AsString(api::NestedField(ev, {"reportingComponent"}));
    host = api::AsString(api::NestedField(ev, {"reportingInstance"}));
  }
  if (host.empty()) return component;
  return component + ", " + host;
}

std::vector<json> EventCells(const json& ev, Time now) {
  std::string first = AgeOf(api::NestedField(ev, {"firstTimestamp"}), now);
  if (!api::NestedField(ev, {"firstTimestamp"}).is_string()) first = AgeOf(api::NestedField(ev, {"eventTime"}), now);
  std::string last =
      api::NestedField(ev, {"lastTimestamp"}).is_string() ? AgeOf(api::NestedField(ev, {"lastTimestamp"}), now) : first;
  int64_t count = Int(api::NestedField(ev, {"count"}));
  if (api::NestedField(ev, {"series"}).is_object()) {
    last = AgeOf(api::NestedField(ev, {"series", "lastObservedTime"}), now);
    count = Int(api::NestedField(ev, {"series", "count"}));
  } else if (count == 0) {
    count = 1;
  }
  std::string kind = api::AsString(api::NestedField(ev, {"involvedObject", "kind"}));
  std::transform(kind.begin(), kind.end(), kind.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string name = api::AsString(api::NestedField(ev, {"involvedObject", "name"}));
  std::string target = name.empty() ? kind : kind + "/" + name;
  std::string message = api::AsString(api::NestedField(ev, {"message"}));
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  message.erase(message.begin(), std::find_if(message.begin(), message.end(), not_space));
  message.erase(std::find_if(message.rbegin(), message.rend(), not_space).base(), message.end());
  return {last,
          api::AsString(api::NestedField(ev, {"type"})),
          api::AsString(api::NestedField(ev, {"reason"})),
          target,
          api::AsString(api::NestedField(ev, {"involvedObject", "fieldPath"})),
          EventSource(ev),
          message,
          first,
          count,
          api::Name(ev)};
}

// layoutContainerCells: container names and images, each comma-separated.
std::pair<std::string, std::string> ContainerCells(const json& pod_spec) {
  std::string names, images;
  const json& containers = api::NestedField(pod_spec, {"containers"});
  if (containers.is_array()) {
    for (size_t i = 0; i < containers.size(); ++i) {
      if (i > 0) {
        names += ',';
        images += ',';
      }
      names += api::AsString(api::NestedField(containers[i], {"name"}));
      images += api::AsString(api::NestedField(containers[i], {"image"}));
    }
  }
  return {names, images};
}

// metav1.FormatLabelSelector: the selector's string form; "<none>" for a
// null or empty selector, "<error>" for one that does not convert.
std::string FormatLabelSelector(const json& selector) {
  auto parsed = api::LabelSelector::FromJson(selector);
  if (!parsed.ok()) return "<error>";
  return OrNone(parsed->String());
}

// labels.FormatLabels: k=v pairs sorted by key (nlohmann::json objects
// iterate in key order), "<none>" when empty.
std::string FormatLabels(const json& labels) {
  std::string out;
  if (labels.is_object()) {
    for (const auto& [k, v] : labels.items()) out += (out.empty() ? "" : ",") + k + "=" + api::AsString(v);
  }
  return OrNone(out);
}

// hasJobCondition: the first condition of `type` decides, True or not.
bool HasJobCondition(const json& conditions, std::string_view type) {
  if (!conditions.is_array()) return false;
  for (const auto& c : conditions) {
    if (api::AsString(api::NestedField(c, {"type"})) == type)
      return api::AsString(api::NestedField(c, {"status"})) == "True";
  }
  return false;
}

// printJob of Kubernetes 1.32. SuccessCriteriaMet is not a status there
// (kubernetes#132832 added it in 1.34: a 1.32 Job with only that condition
// prints Running), and Terminating comes from metadata.deletionTimestamp,
// not from status.terminating.
std::string JobStatus(const json& job) {
  const json& conditions = api::NestedField(job, {"status", "conditions"});
  if (HasJobCondition(conditions, "Complete")) return "Complete";
  if (HasJobCondition(conditions, "Failed")) return "Failed";
  if (api::NestedField(job, {"metadata", "deletionTimestamp"}).is_string()) return "Terminating";
  if (HasJobCondition(conditions, "Suspended")) return "Suspended";
  if (HasJobCondition(conditions, "FailureTarget")) return "FailureTarget";
  return "Running";
}

std::vector<json> JobCells(const json& job, Time now) {
  const json& spec = api::NestedField(job, {"spec"});
  const std::string succeeded = std::to_string(Int(api::NestedField(job, {"status", "succeeded"})));
  std::string completions;
  if (api::NestedField(spec, {"completions"}).is_number()) {
    completions = succeeded + "/" + std::to_string(Int(api::NestedField(spec, {"completions"})));
  } else if (Int(api::NestedField(spec, {"parallelism"})) > 1) {
    completions = succeeded + "/1 of " + std::to_string(Int(api::NestedField(spec, {"parallelism"})));
  } else {
    completions = succeeded + "/1";
  }
  // Empty before startTime; now - startTime while running; completionTime -
  // startTime once complete. An unparsable completionTime counts as absent.
  std::string duration;
  Time start, end = now;
  const json& start_ts = api::NestedField(job, {"status", "startTime"});
  if (start_ts.is_string() && ParseRfc3339(start_ts.get<std::string>(), &start)) {
    const json& end_ts = api::NestedField(job, {"status", "completionTime"});
    Time completion;
    if (end_ts.is_string() && ParseRfc3339(end_ts.get<std::string>(), &completion)) end = completion;
    duration = HumanDuration(std::chrono::duration_cast<Duration>(end - start));
  }
  auto [names, images] = ContainerCells(api::NestedField(spec, {"template", "spec"}));
  return {api::Name(job),
          JobStatus(job),
          completions,
          duration,
          AgeOf(api::NestedField(job, {"metadata", "creationTimestamp"}), now),
          names,
          images,
          FormatLabelSelector(api::NestedField(spec, {"selector"}))};
}

// loadBalancerStatusStringer (wide: the API server renders tables with
// GenerateOptions{Wide: true}, so no 16-character clipping): ingress IPs,
// else hostnames, sorted and de-duplicated.
std::vector<std::string> LoadBalancerIngress(const json& svc) {
  std::vector<std::string> out;
  const json& ingress = api::NestedField(svc, {"status", "loadBalancer", "ingress"});
  if (ingress.is_array()) {
    for (const auto& i : ingress) {
      std::string v = api::AsString(api::NestedField(i, {"ip"}));
      if (v.empty()) v = api::AsString(api::NestedField(i, {"hostname"}));
      if (!v.empty()) out.push_back(v);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep = ",") {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : std::string(sep)) + p;
  return out;
}

// getServiceExternalIP.
std::string ServiceExternalIP(const json& svc) {
  const std::string type = api::AsString(api::NestedField(svc, {"spec", "type"}));
  std::vector<std::string> external;
  const json& ips = api::NestedField(svc, {"spec", "externalIPs"});
  if (ips.is_array()) {
    for (const auto& ip : ips) external.push_back(api::AsString(ip));
  }
  if (type == "ClusterIP" || type == "NodePort") return external.empty() ? "<none>" : Join(external);
  if (type == "LoadBalancer") {
    std::vector<std::string> all = LoadBalancerIngress(svc);
    if (!external.empty()) {
      all.insert(all.end(), external.begin(), external.end());
      return Join(all);
    }
    return all.empty() ? "<pending>" : Join(all);
  }
  if (type == "ExternalName") return api::AsString(api::NestedField(svc, {"spec", "externalName"}));
  return "<unknown>";
}

// printService. Cluster-IP is spec.clusterIPs[0]; upstream's Service strategy
// always fills clusterIPs from clusterIP (normalizeClusterIPs), berth's does
// not, so spec.clusterIP stands in for it here ("None" for headless).
std::vector<json> ServiceCells(const json& svc, Time now) {
  const json& spec = api::NestedField(svc, {"spec"});
  std::string cluster_ip;
  if (api::NestedField(spec, {"clusterIPs"}).is_array() && !api::NestedField(spec, {"clusterIPs"}).empty()) {
    cluster_ip = api::AsString(api::NestedField(spec, {"clusterIPs"})[0]);
  } else {
    cluster_ip = api::AsString(api::NestedField(spec, {"clusterIP"}));
  }
  std::vector<std::string> ports;  // makePortString
  if (api::NestedField(spec, {"ports"}).is_array()) {
    for (const auto& p : api::NestedField(spec, {"ports"})) {
      std::string piece = std::to_string(Int(api::NestedField(p, {"port"})));
      if (Int(api::NestedField(p, {"nodePort"})) > 0)
        piece += ":" + std::to_string(Int(api::NestedField(p, {"nodePort"})));
      ports.push_back(piece + "/" + api::AsString(api::NestedField(p, {"protocol"})));
    }
  }
  return {api::Name(svc),
          api::AsString(api::NestedField(spec, {"type"})),
          OrNone(cluster_ip),
          ServiceExternalIP(svc),
          OrNone(Join(ports)),
          AgeOf(api::NestedField(svc, {"metadata", "creationTimestamp"}), now),
          FormatLabels(api::NestedField(spec, {"selector"}))};
}

}  // namespace

json PartialObjectMetadata(const api::Object& obj, std::string_view meta_version) {
  json meta = obj.contains("metadata") ? obj["metadata"] : json::object();
  return json{{"kind", "PartialObjectMetadata"},
              {"apiVersion", "meta.k8s.io/" + std::string(meta_version)},
              {"metadata", std::move(meta)}};
}

TableConvertor TableConvertor::FromColumns(const std::vector<PrinterColumn>& columns, bool name_included) {
  auto defs = std::make_shared<json>(json::array());
  std::vector<PrinterColumn> cols = columns;
  if (cols.empty()) {
    name_included = false;
    cols.push_back(PrinterColumn{"Age", "date", "", kAgeDescription, 0, ".metadata.creationTimestamp"});
  }
  if (!name_included) defs->push_back(Column("Name", "string", "name", kNameDescription));
  for (const auto& c : cols) {
    const bool name = name_included && c.json_path == ".metadata.name";
    defs->push_back(Column(c.name, c.type, name ? "name" : c.format, c.description, c.priority));
  }
  RowFunction row = [cols, name_included](const api::Object& obj, Time now) {
    std::vector<json> cells;
    cells.reserve(cols.size() + 1);
    if (!name_included) cells.push_back(api::Name(obj));
    for (const auto& c : cols) {
      auto results = EvalJsonPath(obj, c.json_path);
      cells.push_back(results.empty() ? json(nullptr) : CellForType(c.type, results.front(), now));
    }
    return cells;
  };
  return TableConvertor(std::move(defs), std::move(row));
}

namespace {

// One built-in printer: upstream's column definitions and cell function for a
// kind (pkg/printers/internalversion/printers.go AddHandlers).
struct BuiltinPrinter {
  std::string_view group;
  std::string_view kind;
  json (*columns)();
  std::vector<json> (*cells)(const json&, Time);
};

json PriorityClassColumns() {
  return {Column("Name", "string", "name", kNameDescription),
          Column("Value", "integer", "", "value is the integer value of this priority class."),
          Column("Global-Default", "boolean", "",
                 "globalDefault specifies whether this PriorityClass should be considered as the default priority for "
                 "pods that do not have any priority class."),
          Column("Age", "string", "", kAgeDescription),
          Column("PreemptionPolicy", "string", "",
                 "preemptionPolicy is the Policy for preempting pods with lower priority.")};
}

json ConfigMapColumns() {
  return {Column("Name", "string", "name", kNameDescription),
          Column("Data", "integer", "", "Data contains the configuration data."),
          Column("Age", "string", "", kAgeDescription)};
}

json SecretColumns() {
  return {Column("Name", "string", "name", kNameDescription), Column("Type", "string", "", "The type of the secret"),
          Column("Data", "string", "", "The number of entries in the secret data"),
          Column("Age", "string", "", kAgeDescription)};
}

json ServiceAccountColumns() {
  return {Column("Name", "string", "name", kNameDescription),
          Column("Secrets", "string", "", "Secrets is a list of the secret objects in this service account"),
          Column("Age", "string", "", kAgeDescription)};
}

json PodColumns() {
  return {
      Column("Name", "string", "name", kNameDescription),
      Column("Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic."),
      Column("Status", "string", "", "The aggregate status of the containers in this pod."),
      Column("Restarts", "string", "",
             "The number of times the containers in this pod have been restarted and when the "
             "last container in this pod has restarted."),
      Column("Age", "string", "", kAgeDescription),
      Column("IP", "string", "",
             "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.", 1),
      Column("Node", "string", "", "NodeName is a request to schedule this pod onto a specific node.", 1),
      Column("Nominated Node", "string", "",
             "nominatedNodeName is set only when this pod preempts other pods on the node.", 1),
      Column("Readiness Gates", "string", "", "If specified, all readiness gates will be evaluated for pod readiness.",
             1)};
}

json NodeColumns() {
  return {
      Column("Name", "string", "name", kNameDescription),
      Column("Status", "string", "", "The status of the node"),
      Column("Roles", "string", "", "The roles of the node"),
      Column("Age", "string", "", kAgeDescription),
      Column("Version", "string", "", "Kubelet Version reported by the node."),
      Column("Internal-IP", "string", "",
             "List of addresses reachable to the node. Queried from cloud provider, if available.", 1),
      Column("External-IP", "string", "",
             "List of addresses reachable to the node. Queried from cloud provider, if available.", 1),
      Column("OS-Image", "string", "",
             "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).", 1),
      Column("Kernel-Version", "string", "",
             "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", 1),
      Column("Container-Runtime", "string", "",
             "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).", 1)};
}

json NamespaceColumns() {
  return {Column("Name", "string", "name", kNameDescription),
          Column("Status", "string", "", "The status of the namespace"), Column("Age", "string", "", kAgeDescription)};
}

json EventColumns() {
  return {Column("Last Seen", "string", "", "The last time the event was seen"),
          Column("Type", "string", "", "Type of this event (Normal, Warning), new types could be added in the future."),
          Column("Reason", "string", "",
                 "This should be a short, machine understandable string that gives the reason for the transition into "
                 "the object's current status."),
          Column("Object", "string", "", "The object this Event is about."),
          Column("Subobject", "string", "", "The sub-object (e.g. a container) this event is about.", 1),
          Column("Source", "string", "",
                 "The component reporting this event. Should be a short machine understandable string.", 1),
          Column("Message", "string", "", "A human-readable description of the status of this operation."),
          Column("First Seen", "string", "", "The first time the event was seen", 1),
          Column("Count", "string", "", "The number of times this event has occurred.", 1),
          Column("Name", "string", "name", kNameDescription, 1)};
}

// jobColumnDefinitions (Kubernetes 1.30+).
json JobColumns() {
  return {Column("Name", "string", "name", kNameDescription),
          Column("Status", "string", "", "Status of the job."),
          Column("Completions", "string", "", "The number of pods which reached phase Succeeded."),
          Column("Duration", "string", "", "Time required to complete the job."),
          Column("Age", "string", "", kAgeDescription),
          Column("Containers", "string", "", "Names of each container in the template.", 1),
          Column("Images", "string", "", "Images referenced by each container in the template.", 1),
          Column("Selector", "string", "", "A label query over pods that should match the pod count.", 1)};
}

// serviceColumnDefinitions.
json ServiceColumns() {
  return {Column("Name", "string", "name", kNameDescription),
          Column("Type", "string", "", "type determines how the Service is exposed."),
          Column("Cluster-IP", "string", "",
                 "clusterIP is the IP address of the service and is usually assigned randomly."),
          Column("External-IP", "string", "",
                 "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for "
                 "this service."),
          Column("Port(s)", "string", "", "The list of ports that are exposed by this service."),
          Column("Age", "string", "", kAgeDescription),
          Column("Selector", "string", "",
                 "Route service traffic to pods with label keys and values matching this selector.", 1)};
}

// printRoleBinding / printClusterRoleBinding (pkg/printers/internalversion/printers.go):
// the role as <kind>/<name>, and in -o wide the subjects by kind, comma-separated.
json RoleBindingColumns() {
  return {Column("Name", "string", "name", kNameDescription),
          Column("Role", "string", "",
                 "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If "
                 "the RoleRef cannot be resolved, the Authorizer must return an error."),
          Column("Age", "string", "", kAgeDescription),
          Column("Users", "string", "", "Users in the roleBinding", 1),
          Column("Groups", "string", "", "Groups in the roleBinding", 1),
          Column("ServiceAccounts", "string", "", "ServiceAccounts in the roleBinding", 1)};
}

std::vector<json> RoleBindingCells(const json& binding, Time now) {
  const rbac::SubjectStrings subjects = rbac::SubjectsStrings(api::NestedField(binding, {"subjects"}));
  auto joined = [](const std::vector<std::string>& v) { return Join(v, ", "); };
  return {api::Name(binding),
          api::NestedString(binding, {"roleRef", "kind"}) + "/" + api::NestedString(binding, {"roleRef", "name"}),
          AgeOf(api::NestedField(binding, {"metadata", "creationTimestamp"}), now),
          joined(subjects.users),
          joined(subjects.groups),
          joined(subjects.service_accounts)};
}

// events.k8s.io/v1 Event: kube-apiserver prints it with the same printEvent (one
// internal type), so the cells are the core Event's of its core/v1 form.
std::vector<json> EventsV1Cells(const json& ev, Time now) {
  auto core = api::ConvertObject(ev, "v1");
  return EventCells(core.ok() ? *core : ev, now);
}

constexpr BuiltinPrinter kBuiltinPrinters[] = {
    {"", "ConfigMap", ConfigMapColumns, ConfigMapCells},
    {"", "Event", EventColumns, EventCells},
    {"", "Namespace", NamespaceColumns, NamespaceCells},
    {"", "Node", NodeColumns, NodeCells},
    {"", "Pod", PodColumns, PodCells},
    {"", "Secret", SecretColumns, SecretCells},
    {"", "ServiceAccount", ServiceAccountColumns, ServiceAccountCells},
    {"", "Service", ServiceColumns, ServiceCells},
    {"batch", "Job", JobColumns, JobCells},
    {"events.k8s.io", "Event", EventColumns, EventsV1Cells},
    {"scheduling.k8s.io", "PriorityClass", PriorityClassColumns, PriorityClassCells},
    {"rbac.authorization.k8s.io", "RoleBinding", RoleBindingColumns, RoleBindingCells},
    {"rbac.authorization.k8s.io", "ClusterRoleBinding", RoleBindingColumns, RoleBindingCells},
};

}  // namespace

std::optional<TableConvertor> TableConvertor::Builtin(std::string_view group, std::string_view kind) {
  for (const BuiltinPrinter& p : kBuiltinPrinters) {
    if (p.group == group && p.kind == kind) {
      return TableConvertor(std::make_shared<const json>(p.columns()), p.cells);
    }
  }
  return std::nullopt;
}

json TableConvertor::Row(const api::Object& obj, Time now, IncludeObject include, std::string_view meta_version) const {
  json row = {{"cells", row_(obj, now)}};
  if (include == IncludeObject::kMetadata) {
    row["object"] = PartialObjectMetadata(obj, meta_version);
  } else if (include == IncludeObject::kObject) {
    row["object"] = obj;
  }
  return row;
}

json TableConvertor::Table(const std::vector<const api::Object*>& items, Time now, IncludeObject include,
                           const std::string& resource_version, const std::string& continue_token,
                           std::string_view meta_version, bool with_columns) const {
  json meta = json::object();
  if (!resource_version.empty()) meta["resourceVersion"] = resource_version;
  if (!continue_token.empty()) meta["continue"] = continue_token;
  json rows = json::array();
  for (const api::Object* obj : items) rows.push_back(Row(*obj, now, include, meta_version));
  return json{{"kind", "Table"},
              {"apiVersion", "meta.k8s.io/" + std::string(meta_version)},
              {"metadata", std::move(meta)},
              {"columnDefinitions", with_columns ? ColumnDefinitions() : json(nullptr)},
              {"rows", std::move(rows)}};
}

}  // namespace berth::apiserver
