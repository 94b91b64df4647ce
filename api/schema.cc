#include "api/schema.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "api/regexp.h"
#include "api/schema_pattern.h"
#include "core/clock.h"
#include "core/quantity.h"

namespace berth::api {
namespace schema_internal {

using Json = nlohmann::json;
using NodePtr = std::shared_ptr<const Node>;

enum class AdditionalProperties { kUnset, kAllowAny, kForbidden, kSchema };

struct Node {
  // Allowed JSON types; empty = any. int-or-string is {"integer", "string"}.
  std::vector<std::string> types;
  bool nullable = false;
  bool preserve_unknown_fields = false;
  bool embedded_resource = false;

  std::map<std::string, NodePtr, std::less<>> properties;
  std::vector<std::string> required;
  AdditionalProperties additional = AdditionalProperties::kUnset;
  NodePtr additional_schema;
  NodePtr items;

  std::optional<std::vector<Json>> enum_values;
  std::optional<Json> default_value;

  std::optional<Json> minimum, maximum;  // JSON numbers as written
  bool exclusive_minimum = false, exclusive_maximum = false;
  std::optional<int64_t> min_length, max_length;
  std::optional<int64_t> min_items, max_items;
  std::optional<int64_t> min_properties, max_properties;
  std::optional<SchemaPattern> pattern;
  std::string format;

  std::string list_type;  // "", "atomic", "set", "map"
  bool builtin_duplicates = false;  // x-berth-builtin-allows-duplicates
  bool empty_is_default = false;    // x-berth-empty-is-default
  std::vector<std::string> list_map_keys;

  std::vector<NodePtr> all_of, any_of, one_of;

  bool quantity = false;
  std::optional<Quantity> quantity_minimum;
};

}  // namespace schema_internal

using schema_internal::AdditionalProperties;
using schema_internal::Json;
using schema_internal::Node;
using schema_internal::NodePtr;

namespace {

constexpr std::string_view kRefPrefix = "#/components/schemas/";

// ObjectMeta's fields: what survives pruning of a resource's metadata.
const std::set<std::string, std::less<>>& ObjectMetaFields() {
  static const std::set<std::string, std::less<>> kFields = {
      "annotations", "creationTimestamp", "deletionGracePeriodSeconds", "deletionTimestamp",
      "finalizers",  "generateName",      "generation",                 "labels",
      "managedFields", "name",            "namespace",                  "ownerReferences",
      "resourceVersion", "selfLink",      "uid"};
  return kFields;
}

// ---------------------------------------------------------------------------------------
// Data type names, as kube-openapi's typeValidator infers them.

std::string_view JsonTypeName(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "integer";
    case Json::value_t::number_float: return "number";
    case Json::value_t::string: return "string";
    case Json::value_t::array: return "array";
    case Json::value_t::object: return "object";
    default: return "null";
  }
}

bool IsWholeFloat(const Json& v) {
  if (!v.is_number_float()) return false;
  double d = v.get<double>();
  return std::isfinite(d) && std::trunc(d) == d && std::fabs(d) < 9.007199254740992e15;
}

bool HasType(const Node& n, std::string_view t) {
  return std::find(n.types.begin(), n.types.end(), t) != n.types.end();
}

bool TypeMatches(const Node& n, const Json& v, bool builtin_kind) {
  if (n.types.empty()) return true;
  std::string_view t = JsonTypeName(v);
  if (HasType(n, t)) return true;
  // isFloatInt, for CRDs only.
  if (t == "number" && !builtin_kind && IsWholeFloat(v) && HasType(n, "integer")) return true;
  if (t == "number" && builtin_kind && n.quantity) return true;                 // resource.Quantity.UnmarshalJSON
  if (t == "integer" && HasType(n, "number")) return true;                      // isIntFloat
  return false;
}

std::string JoinTypes(const Node& n) {
  std::string out;
  for (const auto& t : n.types) {
    if (!out.empty()) out += ',';
    out += t;
  }
  return out;
}

bool IntegerValue(const Json& v, int64_t* out) {
  if (v.is_number_integer() && !v.is_number_unsigned()) {
    *out = v.get<int64_t>();
    return true;
  }
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    *out = static_cast<int64_t>(u);
    return true;
  }
  return false;
}

double DoubleValue(const Json& v) { return v.get<double>(); }

int64_t RuneCount(std::string_view s) {
  int64_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

// ---------------------------------------------------------------------------------------
// String formats (the subset of kube-openapi's strfmt registry berth's schemas use).

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool IsDate(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  if (!IsDigits(s.substr(0, 4)) || !IsDigits(s.substr(5, 2)) || !IsDigits(s.substr(8, 2))) return false;
  int month = std::stoi(std::string(s.substr(5, 2)));
  int day = std::stoi(std::string(s.substr(8, 2)));
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

bool IsDuration(std::string_view s) {
  // Go's time.ParseDuration syntax plus strfmt's d/w units, e.g. "1h30m", "-1.5s", "3d".
  // RE2 (api/regexp.h): linear in the input, however long.
  static const Regexp kRe =
      Regexp::Compile(R"(^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h|d|w))+$|^0$)").value();
  return kRe.FullMatch(s);
}

bool IsUuid(std::string_view s) {
  static const Regexp kRe =
      Regexp::Compile("^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$").value();
  return kRe.FullMatch(s);
}

bool IsBase64(std::string_view s) {
  if (s.size() % 4 != 0) return false;
  size_t pad = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 c == '+' || c == '/';
    if (c == '=') {
      ++pad;
      if (i + 2 < s.size()) return false;
    } else if (!alnum || pad > 0) {
      return false;
    }
  }
  return pad <= 2;
}

bool IsIPv4(std::string_view s) {
  in_addr a;
  return inet_pton(AF_INET, std::string(s).c_str(), &a) == 1;
}

bool IsIPv6(std::string_view s) {
  in6_addr a;
  return inet_pton(AF_INET6, std::string(s).c_str(), &a) == 1;
}

bool IsCidr(std::string_view s) {
  auto slash = s.find('/');
  if (slash == std::string_view::npos) return false;
  std::string_view ip = s.substr(0, slash), bits = s.substr(slash + 1);
  if (!IsDigits(bits) || bits.size() > 3) return false;
  int n = std::stoi(std::string(bits));
  if (IsIPv4(ip)) return n <= 32;
  if (IsIPv6(ip)) return n <= 128;
  return false;
}

bool IsHostname(std::string_view s) {
  static const Regexp kRe =
      Regexp::Compile(
          R"(^([a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*\.?$)")
          .value();
  return s.size() <= 255 && kRe.FullMatch(s);
}

// nullopt: the format is not a string format berth checks (accepted).
std::optional<bool> CheckStringFormat(std::string_view format, const std::string& s) {
  if (format == "date-time" || format == "datetime") {
    Time t;
    return ParseRfc3339(s, &t);
  }
  if (format == "date") return IsDate(s);
  if (format == "duration") return IsDuration(s);
  if (format == "uuid") return IsUuid(s);
  if (format == "byte") return IsBase64(s);
  if (format == "ipv4") return IsIPv4(s);
  if (format == "ipv6") return IsIPv6(s);
  if (format == "cidr") return IsCidr(s);
  if (format == "hostname") return IsHostname(s);
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------
// Validation.

class Validator {
 public:
  explicit Validator(const ValidateOptions& options) : options_(options) {}

  FieldErrorList Take() { return std::move(errors_); }

  void Validate(const Node& n, const Json& v, const FieldPath& path) {
    const std::string& name = path.String();
    if (v.is_null()) {
      if (!n.types.empty() && !n.nullable) {
        errors_.push_back(TypeInvalid(path, "null", InBody(name) + " must be of type " +
                                                        JoinTypes(n) + ": \"null\""));
      }
      return;
    }
    if (!TypeMatches(n, v, options_.builtin_kind)) {
      std::string actual(JsonTypeName(v));
      errors_.push_back(TypeInvalid(path, actual, InBody(name) + " must be of type " +
                                                      JoinTypes(n) + ": " + GoQuote(actual)));
      return;
    }
    ValidateCombinators(n, v, path);
    if (v.is_string()) ValidateString(n, v, path);
    if (v.is_number()) ValidateNumber(n, v, path);
    if (v.is_array()) ValidateArray(n, v, path);
    if (n.enum_values) ValidateEnum(n, v, path);
    if (n.quantity) ValidateQuantity(n, v, path);
    if (v.is_object()) ValidateObject(n, v, path);
  }

 private:
  static std::string InBody(const std::string& name) { return name + " in body"; }

  FieldPath MapKey(const FieldPath& path, const std::string& key) const {
    return options_.map_keys == MapKeyStyle::kBracket ? path.Key(key) : path.Child(key);
  }

  // Runs a sub-validation into a fresh list (for anyOf/oneOf/allOf branches).
  FieldErrorList Branch(const Node& n, const Json& v, const FieldPath& path) {
    Validator sub(options_);
    sub.Validate(n, v, path);
    return sub.Take();
  }

  void Append(FieldErrorList errs) {
    for (auto& e : errs) errors_.push_back(std::move(e));
  }

  void ValidateCombinators(const Node& n, const Json& v, const FieldPath& path) {
    const std::string& name = path.String();
    if (!n.all_of.empty()) {
      size_t valid = 0;
      FieldErrorList all;
      for (const auto& b : n.all_of) {
        FieldErrorList errs = Branch(*b, v, path);
        if (errs.empty()) ++valid;
        for (auto& e : errs) all.push_back(std::move(e));
      }
      if (valid != n.all_of.size()) {
        Append(std::move(all));
        errors_.push_back(Invalid(path, v,
                                  name + " must validate all the schemas (allOf)" +
                                      (valid == 0 ? ". None validated" : "")));
      }
    }
    if (!n.any_of.empty()) {
      std::optional<FieldErrorList> first_failure;
      bool ok = false;
      for (const auto& b : n.any_of) {
        FieldErrorList errs = Branch(*b, v, path);
        if (errs.empty()) {
          ok = true;
          break;
        }
        if (!first_failure) first_failure = std::move(errs);
      }
      if (!ok) {
        errors_.push_back(Invalid(path, v, name + " must validate at least one schema (anyOf)"));
        if (first_failure) Append(std::move(*first_failure));
      }
    }
    if (!n.one_of.empty()) {
      size_t valid = 0;
      std::optional<FieldErrorList> first_failure;
      for (const auto& b : n.one_of) {
        FieldErrorList errs = Branch(*b, v, path);
        if (errs.empty()) {
          ++valid;
        } else if (!first_failure) {
          first_failure = std::move(errs);
        }
      }
      if (valid == 0) {
        errors_.push_back(
            Invalid(path, v, name + " must validate one and only one schema (oneOf)"));
        if (first_failure) Append(std::move(*first_failure));
      } else if (valid > 1) {
        errors_.push_back(Invalid(path, v,
                                  name + " must validate one and only one schema (oneOf). Found " +
                                      std::to_string(valid) + " valid alternatives"));
      }
    }
  }

  void ValidateString(const Node& n, const Json& v, const FieldPath& path) {
    const std::string& s = v.get_ref<const std::string&>();
    const std::string& name = path.String();
    // kube-openapi's stringValidator: maxLength, then minLength, then pattern, stopping
    // at the first failure, so a string over its length limit never reaches the
    // pattern matcher.
    int64_t len = -1;
    if (n.max_length || n.min_length) len = RuneCount(s);
    if (n.max_length && len > *n.max_length) {
      errors_.push_back(TooLong(path, *n.max_length));
    } else if (n.min_length && len < *n.min_length) {
      errors_.push_back(Invalid(path, v, InBody(name) + " should be at least " +
                                             std::to_string(*n.min_length) + " chars long"));
    } else if (n.pattern && !n.pattern->Search(s)) {
      errors_.push_back(Invalid(path, v, InBody(name) + " should match '" + n.pattern->pattern() + "'"));
    }
    if (!n.format.empty() && !HasType(n, "integer") && !HasType(n, "number")) {
      std::optional<bool> ok = CheckStringFormat(n.format, s);
      if (ok && !*ok) {
        errors_.push_back(TypeInvalid(
            path, v, InBody(name) + " must be of type " + n.format + ": " + GoQuote(s)));
      }
    }
  }

  void ValidateNumber(const Node& n, const Json& v, const FieldPath& path) {
    const std::string& name = path.String();
    int64_t iv = 0;
    const bool is_int = IntegerValue(v, &iv);
    // Range of the declared format (kube-openapi IsValueValidAgainstRange).
    if (!n.format.empty()) {
      bool out_of_range = false;
      if (n.format == "int32") {
        out_of_range = !is_int || iv < std::numeric_limits<int32_t>::min() ||
                       iv > std::numeric_limits<int32_t>::max();
        if (!is_int && IsWholeFloat(v)) {
          double d = DoubleValue(v);
          out_of_range = d < std::numeric_limits<int32_t>::min() ||
                         d > std::numeric_limits<int32_t>::max();
        }
      } else if (n.format == "int64") {
        out_of_range = !is_int && !IsWholeFloat(v);
      } else if (n.format == "float") {
        out_of_range = std::fabs(DoubleValue(v)) > std::numeric_limits<float>::max();
      }
      if (out_of_range) {
        std::string type = HasType(n, "integer") ? "integer" : "number";
        // kube-openapi reports this at the root with an empty value; berth names the field
        // and shows the value, keeping the text.
        errors_.push_back(Invalid(path, v,
                                  "Checked value must be of type " + type + " with format " +
                                      n.format + " in " + name));
      }
    }
    auto check = [&](const Json& bound, bool exclusive, bool is_max) {
      bool fail;
      std::string bound_text;
      if (is_int) {
        // MaximumInt/MinimumInt: the bound is truncated to int64, as Go's int64(max).
        int64_t b = static_cast<int64_t>(DoubleValue(bound));
        fail = is_max ? (exclusive ? iv >= b : iv > b) : (exclusive ? iv <= b : iv < b);
        bound_text = std::to_string(b);
      } else {
        double d = DoubleValue(v), b = DoubleValue(bound);
        fail = is_max ? (exclusive ? d >= b : d > b) : (exclusive ? d <= b : d < b);
        bound_text = RenderFieldValue(Json(b));
      }
      if (!fail) return;
      std::string rel = is_max ? (exclusive ? " should be less than " : " should be less than or equal to ")
                               : (exclusive ? " should be greater than " : " should be greater than or equal to ");
      errors_.push_back(Invalid(path, v, InBody(name) + rel + bound_text));
    };
    if (n.maximum) check(*n.maximum, n.exclusive_maximum, true);
    if (n.minimum) check(*n.minimum, n.exclusive_minimum, false);
  }

  void ValidateArray(const Node& n, const Json& v, const FieldPath& path) {
    const std::string& name = path.String();
    if (n.items) {
      for (size_t i = 0; i < v.size(); ++i) Validate(*n.items, v[i], path.Index(i));
    }
    const auto size = static_cast<int64_t>(v.size());
    if (n.min_items && size < *n.min_items) {
      errors_.push_back(Invalid(path, size, InBody(name) + " should have at least " +
                                                std::to_string(*n.min_items) + " items"));
    }
    if (n.max_items && size > *n.max_items) {
      errors_.push_back(TooMany(path, size, *n.max_items));
    }
    if (n.list_type == "set") {
      // An item equal to an earlier one is a duplicate: one ordered set, not a pairwise
      // comparison (quadratic in a list whose length the request chooses).
      auto less = [](const Json* a, const Json* b) { return *a < *b; };
      std::set<const Json*, decltype(less)> seen(less);
      for (size_t i = 0; i < v.size(); ++i) {
        if (!seen.insert(&v[i]).second) errors_.push_back(Duplicate(path.Index(i), v[i]));
      }
    } else if (n.list_type == "map" && !n.list_map_keys.empty() && !(options_.builtin_kind && n.builtin_duplicates)) {
      std::map<Json, size_t> seen;
      for (size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_object()) continue;
        Json key = Json::object();
        Json key_tuple = Json::array();
        for (const auto& k : n.list_map_keys) {
          auto it = v[i].find(k);
          if (it != v[i].end()) {
            key[k] = *it;
            key_tuple.push_back(*it);
          } else {
            // A missing key reads as its default, else as absent.
            const Json* def = nullptr;
            if (n.items) {
              auto p = n.items->properties.find(k);
              if (p != n.items->properties.end() && p->second->default_value) {
                def = &*p->second->default_value;
              }
            }
            key_tuple.push_back(def ? *def : Json());
          }
        }
        if (!seen.emplace(key_tuple, i).second) {
          errors_.push_back(Duplicate(path.Index(i), key));
        }
      }
    }
  }

  void ValidateEnum(const Node& n, const Json& v, const FieldPath& path) {
    if (n.empty_is_default && v.is_string() && v.get_ref<const std::string&>().empty()) return;
    for (const auto& e : *n.enum_values) {
      if (e == v) return;
    }
    std::vector<std::string> supported;
    for (const auto& e : *n.enum_values) {
      supported.push_back(e.is_string() ? e.get<std::string>() : e.dump());
    }
    errors_.push_back(NotSupported(path, v, supported));
  }

  void ValidateQuantity(const Node& n, const Json& v, const FieldPath& path) {
    std::string text;
    if (v.is_string()) {
      text = v.get<std::string>();
    } else if (v.is_number()) {
      text = v.is_number_float() ? RenderFieldValue(v) : v.dump();
    } else {
      return;  // the type check reports it
    }
    StatusOr<Quantity> q = Quantity::Parse(text);
    if (!q.ok()) {
      errors_.push_back(Invalid(path, v, q.status().message()));
      return;
    }
    // Quantity holds int64 milli-units: a larger amount would saturate and compute as
    // "unlimited" (a 100Pi nominalQuota admitting any Workload), so it is refused.
    // Upstream's resource.Quantity holds any magnitude.
    if (q->milli() == std::numeric_limits<int64_t>::max() || q->milli() == std::numeric_limits<int64_t>::min()) {
      errors_.push_back(Invalid(path, v, std::string(kQuantityRangeMessage)));
      return;
    }
    if (n.quantity_minimum && *q < *n.quantity_minimum) {
      errors_.push_back(Invalid(path, v, "must be greater than or equal to " +
                                             n.quantity_minimum->String()));
    }
  }

  void ValidateObject(const Node& n, const Json& v, const FieldPath& path) {
    const std::string& name = path.String();
    const auto count = static_cast<int64_t>(v.size());
    if (n.min_properties && count < *n.min_properties) {
      errors_.push_back(Invalid(path, count, InBody(name) + " should have at least " +
                                                 std::to_string(*n.min_properties) +
                                                 " properties"));
      return;
    }
    if (n.max_properties && count > *n.max_properties) {
      errors_.push_back(TooMany(path, count, *n.max_properties));
      return;
    }
    if (n.embedded_resource) ValidateEmbeddedResource(v, path);
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (n.properties.count(it.key())) continue;
      if (n.additional == AdditionalProperties::kSchema) {
        Validate(*n.additional_schema, it.value(), MapKey(path, it.key()));
      } else if (n.additional == AdditionalProperties::kForbidden) {
        errors_.push_back(Invalid(path, it.key(),
                                  (name.empty() ? "" : name + ".") + it.key() +
                                      " in body is a forbidden property"));
      }
    }
    // The known properties present, in the schema's (sorted) order: the
    // object's keys are sorted the same way, so walking them finds each one
    // without a lookup per property the schema declares.
    for (auto it = v.begin(); it != v.end(); ++it) {
      auto p = n.properties.find(it.key());
      if (p != n.properties.end()) Validate(*p->second, it.value(), path.Child(p->first));
    }
    for (const auto& r : n.required) {
      if (!v.contains(r)) errors_.push_back(Required(path.Child(r)));
    }
  }

  // apiextensions' validateEmbeddedResource.
  void ValidateEmbeddedResource(const Json& v, const FieldPath& path) {
    for (const char* field : {"apiVersion", "kind"}) {
      auto it = v.find(field);
      if (it == v.end()) {
        errors_.push_back(Required(path.Child(field), "must not be empty"));
      } else if (!it->is_string()) {
        errors_.push_back(Invalid(path.Child(field), *it, "must be a string"));
      } else if (it->get_ref<const std::string&>().empty()) {
        errors_.push_back(Invalid(path.Child(field), *it, "must not be empty"));
      }
    }
  }

  const ValidateOptions& options_;
  FieldErrorList errors_;
};

// ---------------------------------------------------------------------------------------
// Defaulting.

bool IsNonNullableNull(const Json& v, const Node* n) { return v.is_null() && n && !n->nullable; }

void DefaultValue(Json* x, const Node* n) {
  if (!n) return;
  if (x->is_object()) {
    for (const auto& [k, prop] : n->properties) {
      if (!prop->default_value) continue;
      auto it = x->find(k);
      if (it == x->end() || IsNonNullableNull(*it, prop.get())) (*x)[k] = *prop->default_value;
    }
    std::vector<std::string> drop;
    for (auto it = x->begin(); it != x->end(); ++it) {
      auto p = n->properties.find(it.key());
      const Node* child = nullptr;
      if (p != n->properties.end()) {
        child = p->second.get();
      } else if (n->additional == AdditionalProperties::kSchema) {
        child = n->additional_schema.get();
        if (IsNonNullableNull(it.value(), child) && child->default_value) {
          it.value() = *child->default_value;
        }
      }
      if (!child) continue;
      DefaultValue(&it.value(), child);
      // PruneNonNullableNullsWithoutDefaults.
      if (IsNonNullableNull(it.value(), child) && !child->default_value) drop.push_back(it.key());
    }
    for (const auto& k : drop) x->erase(k);
  } else if (x->is_array()) {
    const Node* items = n->items.get();
    if (!items) return;
    for (auto& item : *x) {
      if (IsNonNullableNull(item, items) && items->default_value) item = *items->default_value;
      DefaultValue(&item, items);
    }
  }
}

// Whole floats in integer-only fields become integers (the apiserver's float64 1000
// serializes as 1000).
void NormalizeIntegerValues(Json* x, const Node* n) {
  if (!n) return;
  if (x->is_number_float()) {
    if (n->types.size() == 1 && n->types[0] == "integer" && IsWholeFloat(*x)) {
      *x = static_cast<int64_t>(x->get<double>());
    } else if (n->quantity) {
      if (StatusOr<Quantity> q = Quantity::Parse(RenderFieldValue(*x)); q.ok()) *x = q->String();
    }
    return;
  }
  if (x->is_object()) {
    for (auto it = x->begin(); it != x->end(); ++it) {
      auto p = n->properties.find(it.key());
      if (p != n->properties.end()) {
        NormalizeIntegerValues(&it.value(), p->second.get());
      } else if (n->additional == AdditionalProperties::kSchema) {
        NormalizeIntegerValues(&it.value(), n->additional_schema.get());
      }
    }
  } else if (x->is_array()) {
    for (auto& item : *x) NormalizeIntegerValues(&item, n->items.get());
  }
}

// ---------------------------------------------------------------------------------------
// Pruning.

class Pruner {
 public:
  explicit Pruner(bool apply) : apply_(apply) {}

  std::vector<std::string> Take() { return std::move(pruned_); }

  void Prune(Json* x, const Node* n, const std::string& path, bool resource_root) {
    if (n == nullptr) {
      PruneSchemaless(x, path);
      return;
    }
    if (n->preserve_unknown_fields) {
      SkipPrune(x, n, path);
      return;
    }
    if (x->is_object()) {
      std::vector<std::string> drop;
      for (auto it = x->begin(); it != x->end(); ++it) {
        const std::string& k = it.key();
        // A resource (the root, or an embedded resource) keeps apiVersion and kind when
        // they are strings and its metadata, pruned to ObjectMeta's fields.
        if (resource_root || n->embedded_resource) {
          if ((k == "apiVersion" || k == "kind") && it.value().is_string()) continue;
          if (k == "metadata" && it.value().is_object()) {
            PruneObjectMeta(&it.value(), Join(path, k));
            continue;
          }
        }
        auto p = n->properties.find(k);
        if (p != n->properties.end()) {
          Prune(&it.value(), p->second.get(), Join(path, k), false);
        } else if (n->additional == AdditionalProperties::kSchema) {
          Prune(&it.value(), n->additional_schema.get(), Join(path, k), false);
        } else if (n->additional == AdditionalProperties::kAllowAny) {
          continue;
        } else {
          pruned_.push_back(Join(path, k));
          drop.push_back(k);
        }
      }
      if (apply_) {
        for (const auto& k : drop) x->erase(k);
      }
    } else if (x->is_array()) {
      for (size_t i = 0; i < x->size(); ++i) {
        Prune(&(*x)[i], n->items.get(), path + "[" + std::to_string(i) + "]", false);
      }
    }
  }

 private:
  static std::string Join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  // A value without a schema (upstream's prune(x, nil)): every object in it loses all its
  // fields; arrays are walked into. The walk follows the input, not a schema, so it is a
  // loop over an explicit stack with one path buffer: its depth and the paths' total
  // length cost no stack and no quadratic memory, however deep the value.
  void PruneSchemaless(Json* x, const std::string& path) {
    if (x->is_object()) {
      PruneAllFields(x, path);
      return;
    }
    if (!x->is_array()) return;
    struct Level {
      Json* array;
      size_t next;
      size_t path_length;
    };
    std::string p = path;
    std::vector<Level> stack{{x, 0, p.size()}};
    while (!stack.empty()) {
      Level& level = stack.back();
      if (level.next == level.array->size()) {
        stack.pop_back();
        continue;
      }
      const size_t i = level.next++;
      Json& item = (*level.array)[i];
      p.resize(level.path_length);
      p += "[" + std::to_string(i) + "]";
      if (item.is_object()) {
        PruneAllFields(&item, p);
      } else if (item.is_array()) {
        stack.push_back({&item, 0, p.size()});  // `level` is not used after this
      }
    }
  }

  void PruneAllFields(Json* x, const std::string& path) {
    for (auto it = x->begin(); it != x->end(); ++it) pruned_.push_back(Join(path, it.key()));
    if (apply_) *x = Json::object();
  }

  // Under x-kubernetes-preserve-unknown-fields: keep unknown fields, prune known ones by
  // their schema.
  void SkipPrune(Json* x, const Node* n, const std::string& path) {
    if (x->is_object()) {
      for (auto it = x->begin(); it != x->end(); ++it) {
        const std::string& k = it.key();
        if (n->embedded_resource && k == "metadata" && it.value().is_object()) {
          PruneObjectMeta(&it.value(), Join(path, k));
          continue;
        }
        auto p = n->properties.find(k);
        if (p != n->properties.end()) {
          Prune(&it.value(), p->second.get(), Join(path, k), false);
        } else if (n->additional == AdditionalProperties::kSchema) {
          Prune(&it.value(), n->additional_schema.get(), Join(path, k), false);
        }
      }
    } else if (x->is_array() && n->items) {
      for (size_t i = 0; i < x->size(); ++i) {
        Prune(&(*x)[i], n->items.get(), path + "[" + std::to_string(i) + "]", false);
      }
    }
  }

  void PruneObjectMeta(Json* meta, const std::string& path) {
    std::vector<std::string> drop;
    for (auto it = meta->begin(); it != meta->end(); ++it) {
      if (!ObjectMetaFields().count(it.key())) {
        pruned_.push_back(Join(path, it.key()));
        drop.push_back(it.key());
      }
    }
    if (apply_) {
      for (const auto& k : drop) meta->erase(k);
    }
  }

  bool apply_;
  std::vector<std::string> pruned_;
};

}  // namespace

// -----------------------------------------------------------------------------------------
// Schema

FieldErrorList Schema::Validate(const nlohmann::json& value, const ValidateOptions& options) const {
  if (!root_) return {};
  Validator v(options);
  v.Validate(*root_, value, FieldPath());
  return v.Take();
}

void Schema::Default(nlohmann::json* value) const {
  if (!root_) return;
  if (value->is_null() && root_->default_value) *value = *root_->default_value;
  DefaultValue(value, root_.get());
}

void Schema::NormalizeIntegers(nlohmann::json* value) const { NormalizeIntegerValues(value, root_.get()); }

std::vector<std::string> Schema::Prune(nlohmann::json* value, bool resource_root) const {
  if (!root_) return {};
  Pruner p(/*apply=*/true);
  p.Prune(value, root_.get(), "", resource_root);
  return p.Take();
}

std::vector<std::string> Schema::UnknownFields(const nlohmann::json& value, bool resource_root) const {
  if (!root_) return {};
  Pruner p(/*apply=*/false);
  // The pruner does not modify the value when apply is false.
  p.Prune(const_cast<nlohmann::json*>(&value), root_.get(), "", resource_root);
  return p.Take();
}

// -----------------------------------------------------------------------------------------
// SchemaCompiler

struct SchemaCompiler::Impl {
  SchemaDefinitions definitions;
  std::map<std::string, NodePtr, std::less<>> compiled;
  std::vector<std::string> in_progress;  // the ref chain being compiled, for cycles

  StatusOr<NodePtr> CompileNode(const Json& s, const std::string& where);
  StatusOr<NodePtr> CompileRef(const std::string& ref, const std::string& where);
};

namespace {

Status CompileError(const std::string& where, const std::string& what) {
  return InvalidError(where + ": " + what);
}

std::string Sub(const std::string& where, std::string_view key) {
  return where.empty() ? std::string(key) : where + "." + std::string(key);
}

StatusOr<std::optional<int64_t>> NonNegativeInt(const Json& s, const char* key, const std::string& where) {
  auto it = s.find(key);
  if (it == s.end()) return std::optional<int64_t>();
  int64_t v;
  if (!IntegerValue(*it, &v) && !IsWholeFloat(*it)) {
    return CompileError(Sub(where, key), "must be an integer");
  }
  if (!IntegerValue(*it, &v)) v = static_cast<int64_t>(it->get<double>());
  if (v < 0) return CompileError(Sub(where, key), "must not be negative");
  return std::optional<int64_t>(v);
}

StatusOr<bool> Bool(const Json& s, const char* key, const std::string& where) {
  auto it = s.find(key);
  if (it == s.end()) return false;
  if (!it->is_boolean()) return CompileError(Sub(where, key), "must be a boolean");
  return it->get<bool>();
}

}  // namespace

StatusOr<NodePtr> SchemaCompiler::Impl::CompileRef(const std::string& ref, const std::string& where) {
  if (ref.rfind(kRefPrefix, 0) != 0) {
    return CompileError(where, "$ref \"" + ref + "\" must start with \"" + std::string(kRefPrefix) + "\"");
  }
  std::string name = ref.substr(kRefPrefix.size());
  if (auto c = compiled.find(name); c != compiled.end()) return c->second;
  if (std::find(in_progress.begin(), in_progress.end(), name) != in_progress.end()) {
    std::string chain;
    bool started = false;
    for (const auto& n : in_progress) {
      if (n == name) started = true;
      if (started) chain += n + " -> ";
    }
    return CompileError(where, "$ref cycle: " + chain + name);
  }
  auto def = definitions.find(name);
  if (def == definitions.end()) return CompileError(where, "$ref \"" + ref + "\" not found");
  in_progress.push_back(name);
  StatusOr<NodePtr> node = CompileNode(def->second, "definition " + name);
  in_progress.pop_back();
  if (!node.ok()) return node.status();
  compiled.emplace(name, *node);
  return node;
}

StatusOr<NodePtr> SchemaCompiler::Impl::CompileNode(const Json& s, const std::string& where) {
  if (!s.is_object()) return CompileError(where, "a schema must be an object");
  if (auto ref = s.find("$ref"); ref != s.end()) {
    if (!ref->is_string()) return CompileError(Sub(where, "$ref"), "must be a string");
    BERTH_ASSIGN_OR_RETURN(NodePtr target, CompileRef(ref->get<std::string>(), where));
    // Siblings that change the referring site: default and nullable.
    auto def = s.find("default");
    auto nullable = s.find("nullable");
    if (def == s.end() && nullable == s.end()) return target;
    auto copy = std::make_shared<Node>(*target);
    if (def != s.end()) copy->default_value = *def;
    if (nullable != s.end()) {
      if (!nullable->is_boolean()) return CompileError(Sub(where, "nullable"), "must be a boolean");
      copy->nullable = nullable->get<bool>();
    }
    return NodePtr(std::move(copy));
  }

  auto n = std::make_shared<Node>();
  if (auto t = s.find("type"); t != s.end()) {
    if (!t->is_string()) return CompileError(Sub(where, "type"), "must be a string");
    const std::string& type = t->get_ref<const std::string&>();
    static const std::set<std::string, std::less<>> kTypes = {"object", "array", "string",
                                                              "integer", "number", "boolean"};
    if (!kTypes.count(type)) {
      return CompileError(Sub(where, "type"), "unsupported type \"" + type + "\"");
    }
    n->types = {type};
  }
  BERTH_ASSIGN_OR_RETURN(bool int_or_string, Bool(s, "x-kubernetes-int-or-string", where));
  if (int_or_string) n->types = {"integer", "string"};
  BERTH_ASSIGN_OR_RETURN(n->nullable, Bool(s, "nullable", where));
  BERTH_ASSIGN_OR_RETURN(n->preserve_unknown_fields, Bool(s, "x-kubernetes-preserve-unknown-fields", where));
  BERTH_ASSIGN_OR_RETURN(n->embedded_resource, Bool(s, "x-kubernetes-embedded-resource", where));
  BERTH_ASSIGN_OR_RETURN(n->quantity, Bool(s, "x-berth-quantity", where));

  if (auto p = s.find("properties"); p != s.end()) {
    if (!p->is_object()) return CompileError(Sub(where, "properties"), "must be a map");
    for (auto it = p->begin(); it != p->end(); ++it) {
      BERTH_ASSIGN_OR_RETURN(NodePtr child,
                             CompileNode(it.value(), Sub(Sub(where, "properties"), it.key())));
      n->properties.emplace(it.key(), std::move(child));
    }
  }
  if (auto r = s.find("required"); r != s.end()) {
    if (!r->is_array()) return CompileError(Sub(where, "required"), "must be a list of strings");
    for (const auto& name : *r) {
      if (!name.is_string()) return CompileError(Sub(where, "required"), "must be a list of strings");
      n->required.push_back(name.get<std::string>());
    }
  }
  if (auto a = s.find("additionalProperties"); a != s.end()) {
    if (a->is_boolean()) {
      n->additional = a->get<bool>() ? AdditionalProperties::kAllowAny : AdditionalProperties::kForbidden;
    } else {
      BERTH_ASSIGN_OR_RETURN(n->additional_schema, CompileNode(*a, Sub(where, "additionalProperties")));
      n->additional = AdditionalProperties::kSchema;
    }
  }
  if (auto i = s.find("items"); i != s.end()) {
    BERTH_ASSIGN_OR_RETURN(n->items, CompileNode(*i, Sub(where, "items")));
  }
  if (auto e = s.find("enum"); e != s.end()) {
    if (!e->is_array()) return CompileError(Sub(where, "enum"), "must be a list");
    n->enum_values = std::vector<Json>(e->begin(), e->end());
  }
  if (auto d = s.find("default"); d != s.end()) n->default_value = *d;
  for (const char* key : {"minimum", "maximum"}) {
    if (auto m = s.find(key); m != s.end()) {
      if (!m->is_number()) return CompileError(Sub(where, key), "must be a number");
      (std::string_view(key) == "minimum" ? n->minimum : n->maximum) = *m;
    }
  }
  BERTH_ASSIGN_OR_RETURN(n->exclusive_minimum, Bool(s, "exclusiveMinimum", where));
  BERTH_ASSIGN_OR_RETURN(n->exclusive_maximum, Bool(s, "exclusiveMaximum", where));
  BERTH_ASSIGN_OR_RETURN(n->min_length, NonNegativeInt(s, "minLength", where));
  BERTH_ASSIGN_OR_RETURN(n->max_length, NonNegativeInt(s, "maxLength", where));
  BERTH_ASSIGN_OR_RETURN(n->min_items, NonNegativeInt(s, "minItems", where));
  BERTH_ASSIGN_OR_RETURN(n->max_items, NonNegativeInt(s, "maxItems", where));
  BERTH_ASSIGN_OR_RETURN(n->min_properties, NonNegativeInt(s, "minProperties", where));
  BERTH_ASSIGN_OR_RETURN(n->max_properties, NonNegativeInt(s, "maxProperties", where));
  if (auto p = s.find("pattern"); p != s.end()) {
    if (!p->is_string()) return CompileError(Sub(where, "pattern"), "must be a string");
    auto compiled = SchemaPattern::Compile(p->get<std::string>());
    if (!compiled.ok()) {
      return CompileError(Sub(where, "pattern"), "invalid regular expression \"" + p->get<std::string>() +
                                                     "\": " + compiled.status().message());
    }
    n->pattern = std::move(compiled).value();
  }
  if (auto f = s.find("format"); f != s.end()) {
    if (!f->is_string()) return CompileError(Sub(where, "format"), "must be a string");
    n->format = f->get<std::string>();
  }
  BERTH_ASSIGN_OR_RETURN(n->builtin_duplicates, Bool(s, "x-berth-builtin-allows-duplicates", where));
  BERTH_ASSIGN_OR_RETURN(n->empty_is_default, Bool(s, "x-berth-empty-is-default", where));
  if (auto l = s.find("x-kubernetes-list-type"); l != s.end()) {
    if (!l->is_string()) return CompileError(Sub(where, "x-kubernetes-list-type"), "must be a string");
    n->list_type = l->get<std::string>();
    if (n->list_type != "atomic" && n->list_type != "set" && n->list_type != "map") {
      return CompileError(Sub(where, "x-kubernetes-list-type"),
                          "must be one of \"atomic\", \"set\", \"map\", not \"" + n->list_type + "\"");
    }
  }
  if (auto k = s.find("x-kubernetes-list-map-keys"); k != s.end()) {
    if (!k->is_array()) return CompileError(Sub(where, "x-kubernetes-list-map-keys"), "must be a list of strings");
    for (const auto& key : *k) {
      if (!key.is_string()) return CompileError(Sub(where, "x-kubernetes-list-map-keys"), "must be a list of strings");
      n->list_map_keys.push_back(key.get<std::string>());
    }
  }
  if (n->list_type == "map" && n->list_map_keys.empty()) {
    return CompileError(where, "x-kubernetes-list-type map requires x-kubernetes-list-map-keys");
  }
  if (!n->list_map_keys.empty() && n->list_type != "map") {
    return CompileError(where, "x-kubernetes-list-map-keys requires x-kubernetes-list-type map");
  }
  if (auto m = s.find("x-kubernetes-map-type"); m != s.end()) {
    if (!m->is_string() || (*m != "atomic" && *m != "granular")) {
      return CompileError(Sub(where, "x-kubernetes-map-type"), "must be \"atomic\" or \"granular\"");
    }
  }
  for (const char* key : {"allOf", "anyOf", "oneOf"}) {
    auto c = s.find(key);
    if (c == s.end()) continue;
    if (!c->is_array()) return CompileError(Sub(where, key), "must be a list of schemas");
    auto& out = std::string_view(key) == "allOf" ? n->all_of
                : std::string_view(key) == "anyOf" ? n->any_of
                                                   : n->one_of;
    for (size_t i = 0; i < c->size(); ++i) {
      BERTH_ASSIGN_OR_RETURN(NodePtr b, CompileNode((*c)[i], Sub(where, key) + "[" + std::to_string(i) + "]"));
      out.push_back(std::move(b));
    }
  }
  if (auto q = s.find("x-berth-quantity-minimum"); q != s.end()) {
    if (!q->is_string()) return CompileError(Sub(where, "x-berth-quantity-minimum"), "must be a quantity string");
    StatusOr<Quantity> min = Quantity::Parse(q->get<std::string>());
    if (!min.ok()) return CompileError(Sub(where, "x-berth-quantity-minimum"), min.status().message());
    n->quantity_minimum = *min;
  }
  return NodePtr(std::move(n));
}

SchemaCompiler::SchemaCompiler(SchemaDefinitions definitions) : impl_(std::make_unique<Impl>()) {
  impl_->definitions = std::move(definitions);
}
SchemaCompiler::~SchemaCompiler() = default;
SchemaCompiler::SchemaCompiler(SchemaCompiler&&) noexcept = default;
SchemaCompiler& SchemaCompiler::operator=(SchemaCompiler&&) noexcept = default;

StatusOr<Schema> SchemaCompiler::Compile(const nlohmann::json& schema, std::string_view context) {
  impl_->in_progress.clear();
  BERTH_ASSIGN_OR_RETURN(NodePtr root, impl_->CompileNode(schema, std::string(context)));
  return Schema(std::move(root));
}

Status SchemaCompiler::CompileAllDefinitions(std::string_view context) {
  for (const auto& [name, _] : impl_->definitions) {
    impl_->in_progress.clear();
    StatusOr<NodePtr> n = impl_->CompileRef(std::string(kRefPrefix) + name, "definition " + name);
    if (!n.ok()) return n.status().WithContext(context);
  }
  return Status::Ok();
}

const SchemaDefinitions& SchemaCompiler::definitions() const { return impl_->definitions; }

}  // namespace berth::api
