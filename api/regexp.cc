#include "api/regexp.h"

#include <re2/re2.h>
#include <utility>

namespace berth::api {
namespace {

// Go's regexp/syntax ErrorCode text for RE2's codes (Go's package mirrors RE2's).
std::string_view GoErrorCode(RE2::ErrorCode code) {
  switch (code) {
    case RE2::ErrorBadEscape:
      return "invalid escape sequence";
    case RE2::ErrorBadCharClass:
      return "invalid character class";
    case RE2::ErrorBadCharRange:
      return "invalid character class range";
    case RE2::ErrorMissingBracket:
      return "missing closing ]";
    case RE2::ErrorMissingParen:
      return "missing closing )";
    case RE2::ErrorUnexpectedParen:
      return "unexpected )";
    case RE2::ErrorTrailingBackslash:
      return "trailing backslash at end of expression";
    case RE2::ErrorRepeatArgument:
      return "missing argument to repetition operator";
    case RE2::ErrorRepeatSize:
      return "invalid repeat count";
    case RE2::ErrorRepeatOp:
      return "invalid nested repetition operator";
    case RE2::ErrorBadPerlOp:
      return "invalid or unsupported Perl syntax";
    case RE2::ErrorBadUTF8:
      return "invalid UTF-8";
    case RE2::ErrorBadNamedCapture:
      return "invalid named capture";
    case RE2::ErrorPatternTooLarge:
      return "expression too large";
    default:
      return "regexp/syntax: internal error";
  }
}

}  // namespace

StatusOr<Regexp> Regexp::Compile(std::string_view pattern) {
  RE2::Options options;
  options.set_log_errors(false);  // the error is returned, not logged
  auto re = std::make_shared<const RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re->ok()) {
    // The offending text, as Go's Error.Expr; Go gives none for a trailing backslash.
    const std::string arg = re->error_code() == RE2::ErrorTrailingBackslash ? "" : re->error_arg();
    return InvalidError("error parsing regexp: " + std::string(GoErrorCode(re->error_code())) + ": `" + arg + "`");
  }
  Regexp r;
  r.pattern_ = std::string(pattern);
  r.re_ = std::move(re);
  return r;
}

bool Regexp::Search(std::string_view s) const { return RE2::PartialMatch(re2::StringPiece(s.data(), s.size()), *re_); }

bool Regexp::FullMatch(std::string_view s) const { return RE2::FullMatch(re2::StringPiece(s.data(), s.size()), *re_); }

}  // namespace berth::api
