#include "api/yaml_codec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include "api/limits.h"

namespace berth::api {

namespace {

// ---------------------------------------------------------------------------
// Scalar resolution (YAML 1.2 core schema)

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool IsNullScalar(std::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

std::optional<bool> BoolScalar(std::string_view s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool MatchesFloat(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  std::size_t int_digits = 0;
  while (i < s.size() && IsDigit(s[i])) ++i, ++int_digits;
  std::size_t frac_digits = 0;
  bool dot = false;
  if (i < s.size() && s[i] == '.') {
    dot = true;
    ++i;
    while (i < s.size() && IsDigit(s[i])) ++i, ++frac_digits;
  }
  if (int_digits == 0 && (!dot || frac_digits == 0)) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    std::size_t exp_digits = 0;
    while (i < s.size() && IsDigit(s[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == s.size();
}

std::optional<double> SpecialFloat(std::string_view s) {
  std::string_view body = s;
  bool neg = false;
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) {
    neg = body[0] == '-';
    body.remove_prefix(1);
  }
  if (body == ".inf" || body == ".Inf" || body == ".INF") {
    return neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  if (s == ".nan" || s == ".NaN" || s == ".NAN") return std::numeric_limits<double>::quiet_NaN();
  return std::nullopt;
}

std::optional<Object> ParseIntScalar(std::string_view s) {
  // 0o777 and 0x1F (unsigned forms), else [-+]?[0-9]+.
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) {
    int base = s[1] == 'o' ? 8 : 16;
    std::string_view digits = s.substr(2);
    for (char c : digits) {
      if (base == 8 ? !(c >= '0' && c <= '7') : !IsHexDigit(c)) return std::nullopt;
    }
    uint64_t v = 0;
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
    if (r.ec != std::errc()) return std::nullopt;  // out of range: a string, like go-yaml
    if (v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Object(static_cast<int64_t>(v));
    }
    return Object(v);
  }
  std::size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  for (std::size_t k = i; k < s.size(); ++k) {
    if (!IsDigit(s[k])) return std::nullopt;
  }
  std::string_view unsigned_part = s.substr(i);
  bool neg = s[0] == '-';
  uint64_t mag = 0;
  auto r = std::from_chars(unsigned_part.data(), unsigned_part.data() + unsigned_part.size(), mag);
  if (r.ec == std::errc()) {
    if (!neg && mag <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Object(static_cast<int64_t>(mag));
    }
    if (neg && mag <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) {
      return Object(static_cast<int64_t>(0 - mag));
    }
    if (!neg) return Object(mag);
  }
  return std::nullopt;  // too large: resolved as a float by the caller
}

std::optional<double> ParseFloatScalar(std::string_view s) {
  if (auto special = SpecialFloat(s)) return special;
  if (!MatchesFloat(s)) return std::nullopt;
  if (s[0] == '+') s.remove_prefix(1);
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() && r.ec != std::errc::result_out_of_range) return std::nullopt;
  if (r.ec == std::errc::result_out_of_range) {
    // Overflow to infinity / underflow to zero, as strtod.
    bool neg = s[0] == '-';
    bool big = s.find_first_of("eE") == std::string_view::npos ||
               s[s.find_first_of("eE") + 1] != '-';
    v = big ? (neg ? -HUGE_VAL : HUGE_VAL) : (neg ? -0.0 : 0.0);
  }
  return v;
}

// A float as the JSON value sigs.k8s.io/yaml hands on: Go's encoding/json writes a whole
// float64 below 1e21 without fraction or exponent (1e3 -> 1000), which every later decode
// reads as an integer; berth keeps those within int64 as integers.
Object FloatObject(double d) {
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (std::isfinite(d) && std::trunc(d) == d && d >= -kTwoTo63 && d < kTwoTo63) {
    return Object(static_cast<int64_t>(d));
  }
  return Object(d);
}

// Resolution of a plain scalar; nullopt means "string".
std::optional<Object> ResolvePlain(std::string_view s) {
  if (IsNullScalar(s)) return Object(nullptr);
  if (auto b = BoolScalar(s)) return Object(*b);
  if (auto i = ParseIntScalar(s)) return i;
  if (auto f = ParseFloatScalar(s)) return FloatObject(*f);
  return std::nullopt;
}

constexpr std::string_view kTagPrefix = "tag:yaml.org,2002:";

// The JSON value of a scalar with the given yaml-cpp tag ("?" plain, "!" quoted/block,
// or an explicit tag).
Object ResolveScalar(const std::string& tag, const std::string& value, std::string* error) {
  if (tag == "!") return Object(value);
  if (tag.rfind(kTagPrefix, 0) == 0) {
    std::string_view t = std::string_view(tag).substr(kTagPrefix.size());
    if (t == "str" || t == "binary" || t == "timestamp") return Object(value);
    if (t == "null") return Object(nullptr);
    if (t == "bool") {
      if (auto b = BoolScalar(value)) return Object(*b);
      *error = "cannot decode !!str `" + value + "` as a !!bool";
      return Object(nullptr);
    }
    if (t == "int") {
      if (auto i = ParseIntScalar(value)) return *i;
      *error = "cannot decode !!str `" + value + "` as a !!int";
      return Object(nullptr);
    }
    if (t == "float") {
      if (auto i = ParseIntScalar(value)) return FloatObject(i->get<double>());
      if (auto f = ParseFloatScalar(value)) return FloatObject(*f);
      *error = "cannot decode !!str `" + value + "` as a !!float";
      return Object(nullptr);
    }
  }
  if (auto v = ResolvePlain(value)) return *v;
  return Object(value);
}

// The JSON key for a resolved scalar key.
std::string KeyString(const Object& key) {
  if (key.is_string()) return key.get<std::string>();
  if (key.is_null()) return "null";
  return key.dump();
}

// ---------------------------------------------------------------------------
// Event handler that builds nlohmann::json directly.

struct ParseFailure {
  YAML::Mark mark;
  std::string message;
};

// YAML text is Unicode: a scalar with bytes that are not UTF-8 is an error (as
// go-yaml's reader reports it), never a JSON string that cannot be serialised.
bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k < n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 0x2) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF.
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += n;
  }
  return true;
}

// go-yaml's wording, with berth's bound (api/limits.h).
std::string MaxDepthMessage() { return "exceeded max depth of " + std::to_string(kMaxYamlNestingDepth); }

// go-yaml's allowedAliasRatio (decode.go): the share of decode steps that may come from
// alias expansion, 99% for documents up to 400,000 steps, falling to 10% at 4,000,000.
double AllowedAliasRatio(std::size_t decode_count) {
  constexpr double kLow = 400000, kHigh = 4000000;
  const auto n = static_cast<double>(decode_count);
  if (n <= kLow) return 0.99;
  if (n >= kHigh) return 0.10;
  return 0.99 - 0.89 * ((n - kLow) / (kHigh - kLow));
}

// The size of a scalar as compact JSON: a string's bytes and quotes (escapes not
// counted), else its printed form.
std::size_t ScalarJsonBytes(const Object& v) {
  if (v.is_string()) return v.get_ref<const std::string&>().size() + 2;
  if (v.is_null()) return 4;
  if (v.is_boolean()) return v.get<bool>() ? 4 : 5;
  return v.dump().size();
}

class JsonBuilder : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {
    stack_.clear();
    anchors_.clear();
    root_.reset();
    decode_count_ = 0;
    alias_count_ = 0;
    expanded_bytes_ = 0;
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    ++decode_count_;
    if (ExpectingKey()) {
      AddKey(mark, Object(nullptr), 4);
    } else {
      AddValue(mark, Object(nullptr), anchor, Size{1, 4});
    }
  }

  // Aliases are bounded twice: go-yaml's ratio of alias-driven decode steps (every node
  // of an expanded value is one) to all of them, and berth's bound on the bytes the
  // expansions add (api/limits.h kMaxYamlAliasExpansionBytes), both checked before the
  // value is copied.
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) throw ParseFailure{mark, "unknown anchor referenced"};
    const Size size = it->second.size;
    ++decode_count_;
    decode_count_ += size.nodes;
    alias_count_ += size.nodes;
    expanded_bytes_ += size.bytes;
    if ((alias_count_ > 100 && decode_count_ > 1000 &&
         static_cast<double>(alias_count_) / static_cast<double>(decode_count_) > AllowedAliasRatio(decode_count_)) ||
        expanded_bytes_ > kMaxYamlAliasExpansionBytes) {
      throw ParseFailure{mark, "document contains excessive aliasing"};
    }
    Object copy = it->second.value;
    if (ExpectingKey()) {
      if (copy.is_structured()) throw ParseFailure{mark, "invalid map key: a mapping or sequence"};
      AddKey(mark, copy, size.bytes);
      return;
    }
    AddValue(mark, std::move(copy), 0, size);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    if (!IsValidUtf8(value)) throw ParseFailure{mark, "invalid UTF-8 in a scalar"};
    ++decode_count_;
    std::string error;
    Object v = ResolveScalar(tag, value, &error);
    if (!error.empty()) throw ParseFailure{mark, error};
    const Size size{1, ScalarJsonBytes(v)};
    if (ExpectingKey()) {
      Frame& f = stack_.back();
      if (tag == "?" && value == "<<") {
        f.merge_pending = true;
        f.key_mark = mark;
        if (anchor != 0) anchors_[anchor] = {v, size};
        return;
      }
      if (anchor != 0) anchors_[anchor] = {v, size};
      AddKey(mark, v, size.bytes);
      return;
    }
    AddValue(mark, std::move(v), anchor, size);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    StartCollection(mark, false, anchor);
  }
  void OnSequenceEnd() override { EndCollection(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    StartCollection(mark, true, anchor);
  }
  void OnMapEnd() override { EndCollection(); }

  std::optional<Object> TakeRoot() { return std::move(root_); }

  // Where the innermost open collection starts (for errors found below it).
  YAML::Mark InnermostMark() const { return stack_.empty() ? YAML::Mark() : stack_.back().mark; }

 private:
  // A value's node count (go-yaml's decode steps) and its size as compact JSON, kept
  // as the value is built so that an alias's expansion is known without walking it.
  struct Size {
    std::size_t nodes = 0;
    std::size_t bytes = 0;
    std::size_t depth = 0;  // levels of collections, this one included (a scalar: 0)
  };

  struct Frame {
    bool is_map = false;
    Object value;
    YAML::anchor_t anchor = 0;
    YAML::Mark mark;
    // Maps: the pending key (set once a key was read), merged keys, and where keys were.
    std::optional<std::string> key;
    YAML::Mark key_mark;
    bool merge_pending = false;      // a "<<" key was read; its value is being built
    Object merged = Object::object();
    std::map<std::string, int> key_lines;  // explicit key -> 1-based line
    Size size{1, 2, 1};                    // the collection and its brackets; its entries add theirs
  };

  struct Anchor {
    Object value;
    Size size;
  };

  bool ExpectingKey() const {
    return !stack_.empty() && stack_.back().is_map && !stack_.back().key &&
           !stack_.back().merge_pending;
  }

  void AddKey(const YAML::Mark& mark, const Object& key, std::size_t bytes) {
    Frame& f = stack_.back();
    f.size.nodes += 1;
    f.size.bytes += bytes + 1;  // and the colon
    std::string k = KeyString(key);
    auto [it, inserted] = f.key_lines.emplace(k, mark.line + 1);
    if (!inserted) {
      throw ParseFailure{mark, "mapping key \"" + k + "\" already defined at line " +
                                   std::to_string(it->second)};
    }
    f.key = std::move(k);
    f.key_mark = mark;
  }

  void Merge(const YAML::Mark& mark, const Object& value) {
    Frame& f = stack_.back();
    f.merge_pending = false;
    auto merge_one = [&](const Object& m) {
      if (!m.is_object()) {
        throw ParseFailure{mark, "map merge requires map or sequence of maps as the value"};
      }
      for (const auto& [k, v] : m.items()) {
        if (!f.merged.contains(k)) f.merged[k] = v;  // earlier merged maps win
      }
    };
    if (value.is_array()) {
      for (const auto& m : value) merge_one(m);
    } else {
      merge_one(value);
    }
  }

  void AddValue(const YAML::Mark& mark, Object v, YAML::anchor_t anchor, Size size) {
    if (anchor != 0) anchors_[anchor] = {v, size};
    if (stack_.empty()) {
      root_ = std::move(v);
      return;
    }
    // The text is at most kMaxYamlNestingDepth deep, but an alias of a deep value inside
    // another deep value is deeper once expanded: as JSON it must stay within the JSON
    // decoder's limit (kube-apiserver converts YAML to JSON, whose decoder refuses more).
    if (stack_.size() + size.depth > static_cast<std::size_t>(kMaxJsonNestingDepth)) {
      throw ParseFailure{mark, "exceeded max depth of " + std::to_string(kMaxJsonNestingDepth) +
                                   " once aliases are expanded"};
    }
    Frame& f = stack_.back();
    f.size.nodes += size.nodes;
    f.size.bytes += size.bytes + 1;  // and the comma
    f.size.depth = std::max(f.size.depth, size.depth + 1);
    if (f.is_map) {
      if (f.merge_pending) {
        Merge(mark, v);
        return;
      }
      f.value[*f.key] = std::move(v);
      f.key.reset();
    } else {
      f.value.push_back(std::move(v));
    }
  }

  void StartCollection(const YAML::Mark& mark, bool is_map, YAML::anchor_t anchor) {
    if (ExpectingKey()) {
      throw ParseFailure{mark, "invalid map key: a mapping or sequence cannot be a key"};
    }
    // yaml-cpp refuses the node one deeper than this itself (DeepRecursion, caught in
    // ParseYamlStream); this keeps the bound if its parser ever allows more.
    if (stack_.size() >= static_cast<std::size_t>(kMaxYamlNestingDepth)) {
      throw ParseFailure{mark, MaxDepthMessage()};
    }
    ++decode_count_;
    Frame f;
    f.is_map = is_map;
    f.value = is_map ? Object::object() : Object::array();
    f.anchor = anchor;
    f.mark = mark;
    stack_.push_back(std::move(f));
  }

  void EndCollection() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    if (f.is_map) {
      for (auto& [k, v] : f.merged.items()) {
        if (!f.value.contains(k)) f.value[k] = v;  // explicit keys win over merged ones
      }
    }
    AddValue(f.mark, std::move(f.value), f.anchor, f.size);
  }

  std::vector<Frame> stack_;
  std::unordered_map<YAML::anchor_t, Anchor> anchors_;
  std::optional<Object> root_;
  std::size_t decode_count_ = 0;    // go-yaml's decodeCount
  std::size_t alias_count_ = 0;     // go-yaml's aliasCount
  std::size_t expanded_bytes_ = 0;  // the bytes alias expansions added
};

// yaml-cpp's messages in go-yaml's (and so kubectl's) wording where one exists.
std::string GoYamlWording(const std::string& msg) {
  static const std::map<std::string, std::string, std::less<>> kWording = {
      {YAML::ErrorMsg::MAP_VALUE, "mapping values are not allowed in this context"},
      {YAML::ErrorMsg::END_OF_MAP, "did not find expected key"},
      {YAML::ErrorMsg::END_OF_SEQ, "did not find expected '-' indicator"},
      {YAML::ErrorMsg::END_OF_MAP_FLOW, "did not find expected ',' or '}'"},
      {YAML::ErrorMsg::END_OF_SEQ_FLOW, "did not find expected ',' or ']'"},
      {YAML::ErrorMsg::BLOCK_ENTRY, "block sequence entries are not allowed in this context"},
      {YAML::ErrorMsg::UNKNOWN_TOKEN, "found character that cannot start any token"},
      {YAML::ErrorMsg::TAB_IN_INDENTATION, "found character that cannot start any token"},
      {YAML::ErrorMsg::EOF_IN_SCALAR, "found unexpected end of stream"},
      {YAML::ErrorMsg::UNKNOWN_ANCHOR, "unknown anchor referenced"},
  };
  auto it = kWording.find(msg);
  return it == kWording.end() ? msg : it->second;
}

std::string ErrorPrefix(std::string_view source, int document) {
  std::string out;
  if (!source.empty()) {
    out = "error parsing " + std::string(source) + " (document " + std::to_string(document) +
          "): ";
  } else {
    out = "document " + std::to_string(document) + ": ";
  }
  return out;
}

Status YamlError(std::string_view source, int document, const YAML::Mark& mark,
                 const std::string& message) {
  std::string where;
  if (mark.line >= 0) {
    where = "line " + std::to_string(mark.line + 1) + ", column " +
            std::to_string(mark.column + 1) + ": ";
  }
  return BadRequestError(ErrorPrefix(source, document) +
                         "error converting YAML to JSON: yaml: " + where + message);
}

// ---------------------------------------------------------------------------
// Emission

bool ResolvesAsNonString(std::string_view s) { return ResolvePlain(s).has_value(); }

// YAML 1.1 booleans (y, yes, on, off...) that other parsers (go-yaml v2) read as bools.
bool IsYaml11Bool(std::string_view s) {
  static const char* const kWords[] = {"y",  "Y",  "yes", "Yes", "YES", "n",  "N",   "no",
                                       "No", "NO", "on",  "On",  "ON",  "off", "Off", "OFF"};
  for (const char* w : kWords) {
    if (s == w) return true;
  }
  return false;
}

// Looks like a number to some other YAML reader (YAML 1.1: 1_000, 0b101, 1:30:00), so
// that it is quoted although the 1.2 core schema would read it as a string.
bool LooksNumeric(std::string_view s) {
  std::string no_underscores;
  for (char c : s) {
    if (c != '_') no_underscores.push_back(c);
  }
  if (no_underscores.size() != s.size() && ResolvePlain(no_underscores).has_value()) return true;
  std::size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (s.size() > i + 2 && s[i] == '0' && s[i + 1] == 'b' &&
      s.find_first_not_of("01_", i + 2) == std::string_view::npos) {
    return true;
  }
  if (i < s.size() && IsDigit(s[i]) && s.find(':') != std::string_view::npos &&
      s.find_first_not_of("0123456789_:.", i) == std::string_view::npos) {
    return true;  // sexagesimal
  }
  return false;
}

// A YAML 1.1 timestamp as go-yaml v2 resolves it (2006-1-2, 2006-1-2T15:4:5Z,
// 2006-1-2T15:4:5.999+07:00, 2006-1-2 15:4:5): kubectl -o yaml quotes these.
bool LooksLikeTimestamp(std::string_view s) {
  std::size_t i = 0;
  auto digits = [&](std::size_t min, std::size_t max) {
    std::size_t start = i;
    while (i < s.size() && i - start < max && IsDigit(s[i])) ++i;
    return i - start >= min;
  };
  auto lit = [&](char c) { return i < s.size() && s[i] == c ? (++i, true) : false; };
  if (!digits(4, 4) || !lit('-') || !digits(1, 2) || !lit('-') || !digits(1, 2)) return false;
  if (i == s.size()) return true;
  const char sep = s[i++];
  if (sep != 'T' && sep != 't' && sep != ' ') return false;
  if (!digits(1, 2) || !lit(':') || !digits(1, 2) || !lit(':') || !digits(1, 2)) return false;
  if (lit('.') && !digits(1, 9)) return false;
  if (sep == ' ') return i == s.size();
  if (lit('Z')) return i == s.size();
  if (!lit('+') && !lit('-')) return false;
  return digits(2, 2) && lit(':') && digits(2, 2) && i == s.size();
}

bool HasUnsafeChar(std::string_view s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7F) return true;
  }
  // Unicode line/paragraph separators, NEL, BOM.
  return s.find("\xE2\x80\xA8") != std::string_view::npos ||
         s.find("\xE2\x80\xA9") != std::string_view::npos ||
         s.find("\xC2\x85") != std::string_view::npos ||
         s.find("\xEF\xBB\xBF") != std::string_view::npos;
}

bool CanBePlain(std::string_view s) {
  if (s.empty() || ResolvesAsNonString(s) || IsYaml11Bool(s) || LooksNumeric(s) || LooksLikeTimestamp(s)) {
    return false;
  }
  if (HasUnsafeChar(s)) return false;
  if (s.front() == ' ' || s.back() == ' ' || s.back() == ':') return false;
  if (s == "<<") return false;
  switch (s.front()) {
    case '?': case ':': case ',': case '[': case ']': case '{': case '}': case '#':
    case '&': case '*': case '!': case '|': case '>': case '\'': case '"': case '%':
    case '@': case '`':
      return false;
    case '-':
      if (s.size() == 1 || s[1] == ' ' || s.rfind("---", 0) == 0) return false;
      break;
    default:
      break;
  }
  if (s.rfind("...", 0) == 0) return false;
  if (s.find(": ") != std::string_view::npos || s.find(" #") != std::string_view::npos) {
    return false;
  }
  return true;
}

std::string DoubleQuoted(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\0': out += "\\0"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 0xF];
        } else if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
                   (static_cast<unsigned char>(s[i + 2]) == 0xA8 ||
                    static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
          out += static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\L" : "\\P";
          i += 2;
        } else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x85) {
          out += "\\N";
          i += 1;
        } else if (c == 0xEF && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0xBB &&
                   static_cast<unsigned char>(s[i + 2]) == 0xBF) {
          out += "\\uFEFF";
          i += 2;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

// A multi-line string as a literal block: the header ("|", "|-" or "|+") and the lines.
// nullopt when the string cannot be written as one (it then is double-quoted).
std::optional<std::pair<std::string, std::vector<std::string_view>>> LiteralBlock(
    std::string_view s) {
  if (s.find('\n') == std::string_view::npos) return std::nullopt;
  for (unsigned char c : s) {
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F || c == '\r') return std::nullopt;
  }
  std::size_t trailing = 0;
  while (trailing < s.size() && s[s.size() - 1 - trailing] == '\n') ++trailing;
  std::string_view body = s.substr(0, s.size() - trailing);
  if (body.empty()) return std::nullopt;
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (true) {
    auto nl = body.find('\n', start);
    lines.push_back(body.substr(start, nl == std::string_view::npos ? nl : nl - start));
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  // Indentation is detected from the first non-empty line: it must not start with a
  // space or tab (that would need an indentation indicator).
  for (std::string_view line : lines) {
    if (line.empty()) continue;
    if (line.front() == ' ' || line.front() == '\t') return std::nullopt;
    break;
  }
  // Unicode separators inside a literal block would be read as line breaks.
  if (s.find("\xE2\x80\xA8") != std::string_view::npos ||
      s.find("\xE2\x80\xA9") != std::string_view::npos ||
      s.find("\xC2\x85") != std::string_view::npos ||
      s.find("\xEF\xBB\xBF") != std::string_view::npos) {
    return std::nullopt;
  }
  std::string header = trailing == 1 ? "|" : trailing == 0 ? "|-" : "|+";
  for (std::size_t i = 1; i < trailing; ++i) lines.emplace_back();
  return std::make_pair(header, std::move(lines));
}

std::string FormatFloat(double d) {
  if (std::isnan(d)) return ".nan";
  if (std::isinf(d)) return d > 0 ? ".inf" : "-.inf";
  std::string s = Object(d).dump();  // shortest round-trip form, always with '.' or 'e'
  return s;
}

class YamlWriter {
 public:
  std::string Document(const Object& v) {
    out_.clear();
    if (IsInline(v)) {
      WriteInlineOrBlockScalar(v, 0);
      out_ += '\n';
    } else if (v.is_object()) {
      WriteMap(v, 0);
    } else {
      WriteSeq(v, 0);
    }
    return std::move(out_);
  }

 private:
  static bool IsInline(const Object& v) { return !v.is_structured() || v.empty(); }

  static std::string Key(const std::string& k) { return CanBePlain(k) ? k : DoubleQuoted(k); }

  // Writes a scalar or empty collection after "key:" / "-" (the separating space included
  // here); literal blocks continue on the next lines at `indent`.
  void WriteInlineOrBlockScalar(const Object& v, int indent) {
    switch (v.type()) {
      case Object::value_t::null: out_ += "null"; return;
      case Object::value_t::boolean: out_ += v.get<bool>() ? "true" : "false"; return;
      case Object::value_t::number_integer:
      case Object::value_t::number_unsigned: out_ += v.dump(); return;
      case Object::value_t::number_float: out_ += FormatFloat(v.get<double>()); return;
      case Object::value_t::object: out_ += "{}"; return;
      case Object::value_t::array: out_ += "[]"; return;
      case Object::value_t::string: {
        const auto& s = v.get_ref<const std::string&>();
        if (CanBePlain(s)) {
          out_ += s;
        } else if (auto block = LiteralBlock(s)) {
          out_ += block->first;
          for (std::string_view line : block->second) {
            out_ += '\n';
            if (!line.empty()) {
              out_.append(static_cast<std::size_t>(indent), ' ');
              out_ += line;
            }
          }
        } else {
          out_ += DoubleQuoted(s);
        }
        return;
      }
      default: out_ += "null"; return;
    }
  }

  void WriteMap(const Object& m, int indent) {
    for (const auto& [k, v] : m.items()) {
      out_.append(static_cast<std::size_t>(indent), ' ');
      out_ += Key(k);
      out_ += ':';
      WriteValue(v, indent, /*in_map=*/true);
    }
  }

  void WriteSeq(const Object& s, int indent) {
    for (const auto& item : s) {
      out_.append(static_cast<std::size_t>(indent), ' ');
      out_ += '-';
      if (IsInline(item)) {
        out_ += ' ';
        WriteInlineOrBlockScalar(item, indent + 2);
        out_ += '\n';
        continue;
      }
      // The item's first line goes on the dash line: write it at indent+2, then replace
      // the leading spaces of its first line with the dash.
      std::size_t mark = out_.size();
      if (item.is_object()) {
        WriteMap(item, indent + 2);
      } else {
        WriteSeq(item, indent + 2);
      }
      out_.replace(mark, static_cast<std::size_t>(indent + 2), " ");
    }
  }

  // After "key:" (in_map) -- scalars inline, maps indented, sequences at the key's indent.
  void WriteValue(const Object& v, int indent, bool in_map) {
    if (IsInline(v)) {
      out_ += ' ';
      WriteInlineOrBlockScalar(v, indent + 2);
      out_ += '\n';
    } else if (v.is_object()) {
      out_ += '\n';
      WriteMap(v, indent + 2);
    } else {
      out_ += '\n';
      WriteSeq(v, in_map ? indent : indent + 2);
    }
  }

  std::string out_;
};

}  // namespace

StatusOr<std::vector<Object>> ParseYamlStream(std::string_view text,
                                              std::string_view source_name) {
  std::vector<Object> docs;
  std::istringstream in{std::string(text)};
  int document = 0;
  // yaml-cpp 0.7 never stops on some malformed streams (a leading ',' yields
  // empty documents forever; found by the request fuzzer). A stream has at most
  // one document more than it has "---"/"..." markers: more means no progress.
  size_t max_documents = 1;
  for (size_t i = 0; i + 3 <= text.size(); ++i) {
    if (text.compare(i, 3, "---") == 0 || text.compare(i, 3, "...") == 0) ++max_documents;
  }
  JsonBuilder builder;
  try {
    YAML::Parser parser(in);
    while (true) {
      ++document;
      if (!parser.HandleNextDocument(builder)) break;
      if (static_cast<size_t>(document) > max_documents) {
        YAML::Mark mark;
        mark.line = 0;
        mark.column = 0;
        return YamlError(source_name, document, mark, "did not find expected node content");
      }
      std::optional<Object> root = builder.TakeRoot();
      if (root && !root->is_null()) docs.push_back(std::move(*root));
    }
  } catch (const ParseFailure& f) {
    return YamlError(source_name, document, f.mark, f.message);
  } catch (const YAML::DeepRecursion&) {
    // yaml-cpp's own mark is wherever its scanner had read ahead to; the collection
    // holding the node that was one too deep is where the error is.
    return YamlError(source_name, document, builder.InnermostMark(), MaxDepthMessage());
  } catch (const YAML::Exception& e) {
    return YamlError(source_name, document, e.mark, GoYamlWording(e.msg));
  }
  return docs;
}

StatusOr<Object> ParseYaml(std::string_view text, std::string_view source_name) {
  BERTH_ASSIGN_OR_RETURN(std::vector<Object> docs, ParseYamlStream(text, source_name));
  if (docs.size() != 1) {
    std::string where = source_name.empty() ? "" : "error parsing " + std::string(source_name) + ": ";
    return BadRequestError(where + "expected exactly one YAML document, found " +
                           std::to_string(docs.size()));
  }
  return std::move(docs[0]);
}

StatusOr<Object> ParseJson(std::string_view text, std::string_view source_name) {
  const std::string where = source_name.empty() ? "" : "error parsing " + std::string(source_name) + ": ";
  // "json: line L, column C: " for the byte at `offset`.
  auto at = [&](std::size_t offset) {
    int line = 1;
    int column = 1;
    for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return where + "json: line " + std::to_string(line) + ", column " + std::to_string(column) + ": ";
  };
  // Depth first, in one pass over the text: nothing recursive ever sees a deeper value.
  if (std::size_t deep = ExcessiveNestingOffset(text, kMaxJsonNestingDepth); deep != std::string_view::npos) {
    return BadRequestError(at(deep) + "exceeded max depth");
  }
  try {
    return Object::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based and points just past the offending character.
    std::size_t offset = e.byte == 0 ? 0 : std::min<std::size_t>(e.byte - 1, text.size());
    std::string what = e.what();
    // nlohmann: "[json.exception.parse_error.101] parse error at line 1, column 9: <detail>"
    auto colon = what.find(": ", what.find("parse error"));
    std::string detail = colon == std::string::npos ? what : what.substr(colon + 2);
    return BadRequestError(at(offset) + detail);
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond double (e.g. 1e400; found by the request fuzzer). Go's
    // decoder: `json: cannot unmarshal number 1e400 into Go value of type float64`.
    std::string what = e.what();
    auto quote = what.find('\'');
    std::string number = quote == std::string::npos ? "" : what.substr(quote + 1, what.rfind('\'') - quote - 1);
    return BadRequestError(where + "json: cannot unmarshal number " + number + " into Go value of type float64");
  }
}

StatusOr<Object> ParseJsonOrYaml(std::string_view text, std::string_view source_name) {
  auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || (text[first] != '{' && text[first] != '[')) {
    return ParseYaml(text, source_name);
  }
  return ParseJson(text, source_name);
}

std::size_t ExcessiveNestingOffset(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string_view::npos;
}

namespace {

// The length of the longest valid UTF-8 sequence at the start of `s`, or 0 when it
// starts with an invalid one (RFC 3629, Table 3-7 of the Unicode standard).
std::size_t Utf8SequenceLength(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // no overlong forms
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // no overlong forms
    if (c == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  if (b(1) < lo || b(1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i) {
    if (b(i) < 0x80 || b(i) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

bool ValidUtf8(std::string_view s) {
  while (!s.empty()) {
    const std::size_t n = Utf8SequenceLength(s);
    if (n == 0) return false;
    s.remove_prefix(n);
  }
  return true;
}

namespace {

// nlohmann's serializer writing into a counter instead of a string.
class CountingOutput final : public nlohmann::detail::output_adapter_protocol<char> {
 public:
  void write_character(char) override { ++size_; }
  void write_characters(const char*, std::size_t length) override { size_ += length; }
  std::size_t size() const { return size_; }

 private:
  std::size_t size_ = 0;
};

enum class ReadBack { kUnchanged, kChanged, kTooDeep };

// How value.dump() reads back: unchanged when strings and keys are UTF-8, numbers finite and
// the depth within kMaxJsonNestingDepth. Iterative, so any depth is answered.
ReadBack HowItReadsBack(const Object& value) {
  ReadBack answer = ReadBack::kUnchanged;
  std::vector<std::pair<const Object*, int>> todo{{&value, 0}};  // a value, and its depth
  while (!todo.empty()) {
    const auto [v, depth] = todo.back();
    todo.pop_back();
    if (v->is_string()) {
      if (!ValidUtf8(v->get_ref<const std::string&>())) answer = ReadBack::kChanged;
    } else if (v->is_number_float()) {
      if (!std::isfinite(v->get<double>())) answer = ReadBack::kChanged;
    } else if (v->is_object() || v->is_array()) {
      if (depth + 1 > kMaxJsonNestingDepth) return ReadBack::kTooDeep;
      for (auto it = v->begin(); it != v->end(); ++it) {
        if (v->is_object() && !ValidUtf8(it.key())) answer = ReadBack::kChanged;
        todo.emplace_back(&*it, depth + 1);
      }
    }
  }
  return answer;
}

}  // namespace

StatusOr<Object> ReadBackAsJsonText(const Object& value) {
  switch (HowItReadsBack(value)) {
    case ReadBack::kUnchanged:
      return value;
    case ReadBack::kTooDeep:  // refused before dump, which recurses, builds the text
      return BadRequestError("json: exceeded max depth of " + std::to_string(kMaxJsonNestingDepth));
    case ReadBack::kChanged:
      break;
  }
  return ParseJson(value.dump(-1, ' ', false, Object::error_handler_t::replace));
}

std::size_t CompactJsonSize(const Object& value) {
  auto counter = std::make_shared<CountingOutput>();
  nlohmann::detail::serializer<Object> serializer(counter, ' ', Object::error_handler_t::replace);
  serializer.dump(value, /*pretty_print=*/false, /*ensure_ascii=*/false, /*indent_step=*/0);
  return counter->size();
}

std::string EmitYaml(const Object& value) { return YamlWriter().Document(value); }

std::string EmitYamlStream(const std::vector<Object>& documents) {
  std::string out;
  for (std::size_t i = 0; i < documents.size(); ++i) {
    if (i > 0) out += "---\n";
    out += EmitYaml(documents[i]);
  }
  return out;
}

}  // namespace berth::api
