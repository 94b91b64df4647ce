// Regexp: a compiled regular expression with Go's regexp syntax and guarantees, for
// every pattern a request or an object supplies (CRD schema `pattern`s, string
// formats, JobSet's onJobFailureMessagePatterns).
//
// Kubernetes evaluates these with Go's regexp package (kube-openapi's validate.Pattern,
// JobSet's failure policy), which is RE2: the syntax is RE2's (no backreferences or
// lookaround; `$` is the end of the text) and matching takes time linear in the input,
// with no recursion. berth uses RE2 itself (Debian's libre2), so a long input can
// neither take the server's stack (std::regex recurses once per character matched)
// nor its CPU (no backtracking).
//
// Errors: Compile returns kInvalid with Go's regexp.Compile message,
//   "error parsing regexp: missing closing ): `(a`"
// (regexp/syntax's error codes, which are RE2's, and the offending text RE2 names).
//
// Thread-safety: a compiled Regexp is immutable; copies share it; Search and FullMatch
// may be called from any number of threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace re2 {
class RE2;
}

namespace berth::api {

class Regexp {
 public:
  static StatusOr<Regexp> Compile(std::string_view pattern);

  // True when `s` contains a match (Go's MatchString, std::regex_search).
  bool Search(std::string_view s) const;
  // True when all of `s` matches.
  bool FullMatch(std::string_view s) const;

  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  std::shared_ptr<const re2::RE2> re_;
};

}  // namespace berth::api
