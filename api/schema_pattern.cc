#include "api/schema_pattern.h"

#include <array>
#include <utility>

namespace berth::api {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLowerAlnum(char c) { return IsDigit(c) || (c >= 'a' && c <= 'z'); }

// ^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))  -- the number part; advances *i past the
// longest match (a suffix never starts with a digit or '.', so the longest one
// is the only one that can lead to a whole match). False when none.
bool ConsumeNumber(std::string_view s, size_t* i) {
  size_t p = *i;
  if (p < s.size() && IsDigit(s[p])) {
    while (p < s.size() && IsDigit(s[p])) ++p;
    if (p < s.size() && s[p] == '.') {
      ++p;
      while (p < s.size() && IsDigit(s[p])) ++p;
    }
  } else if (p < s.size() && s[p] == '.') {
    ++p;
    if (p >= s.size() || !IsDigit(s[p])) return false;
    while (p < s.size() && IsDigit(s[p])) ++p;
  } else {
    return false;
  }
  *i = p;
  return true;
}

void ConsumeSign(std::string_view s, size_t* i) {
  if (*i < s.size() && (s[*i] == '+' || s[*i] == '-')) ++*i;
}

// ^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$
bool IsQuantity(std::string_view s) {
  size_t i = 0;
  ConsumeSign(s, &i);
  if (!ConsumeNumber(s, &i)) return false;
  std::string_view rest = s.substr(i);
  if (rest.empty()) return true;
  if (rest.size() == 2 && rest[1] == 'i' && std::string_view("KMGTPE").find(rest[0]) != std::string_view::npos) {
    return true;
  }
  if (rest.size() == 1 && std::string_view("numkMGTPE").find(rest[0]) != std::string_view::npos) return true;
  if (rest[0] != 'e' && rest[0] != 'E') return false;
  size_t j = 1;
  ConsumeSign(rest, &j);
  return ConsumeNumber(rest, &j) && j == rest.size();
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool IsDnsLabelShape(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$
bool IsDnsSubdomainShape(std::string_view s) {
  while (true) {
    size_t dot = s.find('.');
    if (!IsDnsLabelShape(s.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

// ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$
bool IsAnchoredDnsLabelShape(std::string_view s) { return IsDnsLabelShape(s); }

constexpr std::array<std::pair<std::string_view, bool (*)(std::string_view)>, 3> kBuiltins = {{
    {R"(^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$)",
     IsQuantity},
    {R"(^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$)", IsDnsSubdomainShape},
    {R"(^[a-z0-9]([-a-z0-9]*[a-z0-9])?$)", IsAnchoredDnsLabelShape},
}};

}  // namespace

StatusOr<SchemaPattern> SchemaPattern::Compile(std::string pattern) {
  SchemaPattern p;
  p.pattern_ = std::move(pattern);
  for (const auto& [text, fn] : kBuiltins) {
    if (p.pattern_ == text) {
      p.builtin_ = fn;
      return p;
    }
  }
  BERTH_ASSIGN_OR_RETURN(Regexp re, Regexp::Compile(p.pattern_));
  p.regex_ = std::move(re);
  return p;
}

bool SchemaPattern::Search(std::string_view s) const {
  if (builtin_ != nullptr) return builtin_(s);
  return regex_->Search(s);
}

}  // namespace berth::api
