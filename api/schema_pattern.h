// SchemaPattern: an OpenAPI `pattern` (an ECMA-262 regular expression that a
// string must contain, kube-openapi's validate.Pattern: an unanchored search,
// so patterns anchor themselves with ^ and $).
//
// The schemas berth serves use a handful of patterns over and over: the
// Kubernetes quantity, DNS-1123 subdomain and DNS-1123 label shapes. Those are
// matched by hand-written functions that accept exactly the strings the
// regular expression accepts (schema_pattern_test.cc checks them against the
// general engine over every string of a small alphabet up to a length); any
// other pattern is compiled with RE2 (api/regexp.h), Go's regexp syntax as
// kube-openapi uses it, matching in linear time without recursion.
//
// Errors: Compile returns kInvalid with Go's regexp message for a pattern
// that does not compile. Thread-safety: a compiled SchemaPattern is
// immutable; Search may be called from any number of threads.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "api/regexp.h"
#include "core/status.h"

namespace berth::api {

class SchemaPattern {
 public:
  static StatusOr<SchemaPattern> Compile(std::string pattern);

  // True when `s` contains a match (regex_search semantics).
  bool Search(std::string_view s) const;

  const std::string& pattern() const { return pattern_; }
  // True when a hand-written matcher serves this pattern (for tests).
  bool builtin() const { return builtin_ != nullptr; }

 private:
  using Matcher = bool (*)(std::string_view);
  std::string pattern_;
  Matcher builtin_ = nullptr;
  std::optional<Regexp> regex_;  // when !builtin_
};

}  // namespace berth::api
