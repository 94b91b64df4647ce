#include "rbac/policy_rule.h"

#include <algorithm>

#include "api/field_errors.h"
#include "api/unstructured.h"

namespace berth::rbac {
namespace {

std::vector<std::string> StringList(const api::Object& rule, const char* member) {
  std::vector<std::string> out;
  auto it = rule.find(member);
  if (it == rule.end() || !it->is_array()) return out;
  for (const auto& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

bool Has(const std::vector<std::string>& set, std::string_view element) {
  return std::find(set.begin(), set.end(), element) != set.end();
}

bool HasAll(const std::vector<std::string>& set, const std::vector<std::string>& contains) {
  for (const auto& e : contains) {
    if (!Has(set, e)) return false;
  }
  return true;
}

bool ResourceCoversAll(const std::vector<std::string>& owner, const std::vector<std::string>& covers) {
  if (Has(owner, kResourceAll) || HasAll(owner, covers)) return true;
  for (const auto& path : covers) {
    if (Has(owner, path)) continue;
    auto slash = path.find('/');
    if (slash == std::string::npos) return false;
    if (!Has(owner, "*/" + path.substr(slash + 1))) return false;
  }
  return true;
}

bool NonResourceURLCovers(std::string_view owner, std::string_view sub) {
  if (owner == sub) return true;
  if (owner.empty() || owner.back() != '*') return false;
  std::string_view prefix = owner;
  while (!prefix.empty() && prefix.back() == '*') prefix.remove_suffix(1);  // TrimRight
  return sub.substr(0, prefix.size()) == prefix;
}

bool NonResourceURLsCoverAll(const std::vector<std::string>& owner, const std::vector<std::string>& covers) {
  for (const auto& path : covers) {
    bool covered = false;
    for (const auto& o : owner) {
      if (NonResourceURLCovers(o, path)) {
        covered = true;
        break;
      }
    }
    if (!covered) return false;
  }
  return true;
}

// ruleCovers: owner (any shape) covers sub (one verb/group/resource/name).
bool RuleCovers(const PolicyRule& owner, const PolicyRule& sub) {
  bool verbs = Has(owner.verbs, kVerbAll) || HasAll(owner.verbs, sub.verbs);
  bool groups = Has(owner.api_groups, kAPIGroupAll) || HasAll(owner.api_groups, sub.api_groups);
  bool resources = ResourceCoversAll(owner.resources, sub.resources);
  bool urls = NonResourceURLsCoverAll(owner.non_resource_urls, sub.non_resource_urls);
  bool names = sub.resource_names.empty()
                   ? owner.resource_names.empty()
                   : owner.resource_names.empty() || HasAll(owner.resource_names, sub.resource_names);
  return verbs && groups && resources && names && urls;
}

}  // namespace

PolicyRule RuleFromJson(const api::Object& rule) {
  PolicyRule r;
  if (!rule.is_object()) return r;
  r.verbs = StringList(rule, "verbs");
  r.api_groups = StringList(rule, "apiGroups");
  r.resources = StringList(rule, "resources");
  r.resource_names = StringList(rule, "resourceNames");
  r.non_resource_urls = StringList(rule, "nonResourceURLs");
  return r;
}

std::vector<PolicyRule> RulesFromJson(const api::Object& rules) {
  std::vector<PolicyRule> out;
  if (!rules.is_array()) return out;
  for (const auto& r : rules) out.push_back(RuleFromJson(r));
  return out;
}

api::Object RuleToJson(const PolicyRule& rule) {
  api::Object out = api::Object::object();
  out["verbs"] = rule.verbs;
  if (!rule.api_groups.empty()) out["apiGroups"] = rule.api_groups;
  if (!rule.resources.empty()) out["resources"] = rule.resources;
  if (!rule.resource_names.empty()) out["resourceNames"] = rule.resource_names;
  if (!rule.non_resource_urls.empty()) out["nonResourceURLs"] = rule.non_resource_urls;
  return out;
}

bool VerbMatches(const PolicyRule& rule, std::string_view verb) {
  for (const auto& v : rule.verbs) {
    if (v == kVerbAll || v == verb) return true;
  }
  return false;
}

bool APIGroupMatches(const PolicyRule& rule, std::string_view group) {
  for (const auto& g : rule.api_groups) {
    if (g == kAPIGroupAll || g == group) return true;
  }
  return false;
}

bool ResourceMatches(const PolicyRule& rule, std::string_view combined, std::string_view subresource) {
  for (const auto& r : rule.resources) {
    if (r == kResourceAll || r == combined) return true;
    if (subresource.empty()) continue;
    // "*/subresource"
    if (r.size() == subresource.size() + 2 && r.starts_with("*/") && r.ends_with(subresource)) return true;
  }
  return false;
}

bool ResourceNameMatches(const PolicyRule& rule, std::string_view name) {
  if (rule.resource_names.empty()) return true;
  return Has(rule.resource_names, name);
}

bool NonResourceURLMatches(const PolicyRule& rule, std::string_view path) {
  for (const auto& u : rule.non_resource_urls) {
    if (u == kNonResourceAll || u == path) return true;
    if (!u.empty() && u.back() == '*') {
      std::string_view prefix = u;
      while (!prefix.empty() && prefix.back() == '*') prefix.remove_suffix(1);
      if (path.substr(0, prefix.size()) == prefix) return true;
    }
  }
  return false;
}

std::vector<PolicyRule> BreakdownRule(const PolicyRule& rule) {
  std::vector<PolicyRule> out;
  for (const auto& group : rule.api_groups) {
    for (const auto& resource : rule.resources) {
      for (const auto& verb : rule.verbs) {
        if (!rule.resource_names.empty()) {
          for (const auto& name : rule.resource_names) {
            out.push_back(PolicyRule{{verb}, {group}, {resource}, {name}, {}});
          }
        } else {
          out.push_back(PolicyRule{{verb}, {group}, {resource}, {}, {}});
        }
      }
    }
  }
  for (const auto& url : rule.non_resource_urls) {
    for (const auto& verb : rule.verbs) out.push_back(PolicyRule{{verb}, {}, {}, {}, {url}});
  }
  return out;
}

bool Covers(const std::vector<PolicyRule>& owner, const std::vector<PolicyRule>& servant,
            std::vector<PolicyRule>* missing) {
  bool all = true;
  for (const auto& s : servant) {
    for (const auto& piece : BreakdownRule(s)) {
      bool covered = std::any_of(owner.begin(), owner.end(), [&](const PolicyRule& o) { return RuleCovers(o, piece); });
      if (covered) continue;
      all = false;
      if (missing != nullptr) missing->push_back(piece);
    }
  }
  return all;
}

SubjectStrings SubjectsStrings(const api::Object& subjects) {
  SubjectStrings out;
  if (!subjects.is_array()) return out;
  for (const auto& s : subjects) {
    std::string kind = api::StringAt(s, "kind");
    std::string name = api::StringAt(s, "name");
    std::string ns = api::StringAt(s, "namespace");
    if (kind == "ServiceAccount") {
      out.service_accounts.push_back(ns + "/" + name);
    } else if (kind == "User") {
      out.users.push_back(name);
    } else if (kind == "Group") {
      out.groups.push_back(name);
    } else {
      out.others.push_back(kind + "/" + ns + "/" + name);
    }
  }
  return out;
}

std::string GoQuoteList(const std::vector<std::string>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += " ";
    out += api::GoQuote(values[i]);
  }
  return out + "]";
}

std::string CompactString(const PolicyRule& rule) {
  std::vector<std::string> parts;
  if (!rule.api_groups.empty()) parts.push_back("APIGroups:" + GoQuoteList(rule.api_groups));
  if (!rule.resources.empty()) parts.push_back("Resources:" + GoQuoteList(rule.resources));
  if (!rule.non_resource_urls.empty()) parts.push_back("NonResourceURLs:" + GoQuoteList(rule.non_resource_urls));
  if (!rule.resource_names.empty()) parts.push_back("ResourceNames:" + GoQuoteList(rule.resource_names));
  if (!rule.verbs.empty()) parts.push_back("Verbs:" + GoQuoteList(rule.verbs));
  std::string out = "{";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += ", ";
    out += parts[i];
  }
  return out + "}";
}

}  // namespace berth::rbac
