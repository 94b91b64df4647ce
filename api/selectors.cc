#include "api/selectors.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <set>
#include <utility>

#include "api/metadata_validation.h"
#include "api/unstructured.h"

namespace berth::api {

namespace {

// ---------------------------------------------------------------------------
// Requirement validation (labels.NewRequirement)

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

std::optional<int64_t> ParseInt64(std::string_view s) {
  int64_t v = 0;
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// An aggregate of field errors as upstream's ToAggregate().Error() prints it.
std::string AggregateMessage(const FieldErrorList& errs) {
  std::vector<std::string> msgs;
  std::set<std::string> seen;
  for (const auto& e : errs) {
    std::string m = e.Error();
    if (seen.insert(m).second) msgs.push_back(std::move(m));
  }
  if (msgs.size() == 1) return msgs[0];
  return "[" + Join(msgs, ", ") + "]";
}

// Upstream passes a nil *field.Path here, whose String() is "<nil>".
const FieldPath kNilPath("<nil>");

std::optional<FieldError> ValidateLabelKey(std::string_view key, const FieldPath& path) {
  auto errs = IsQualifiedName(key);
  if (errs.empty()) return std::nullopt;
  return Invalid(path, std::string(key), Join(errs, "; "));
}

std::vector<std::string> SortedUnique(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

const std::string* LabelValue(const Object& labels, const std::string& key) {
  if (!labels.is_object()) return nullptr;
  auto it = labels.find(key);
  if (it == labels.end() || !it->is_string()) return nullptr;
  return &it->get_ref<const std::string&>();
}

// ---------------------------------------------------------------------------
// Lexer and parser for the string form (labels.Parse)

enum class Token {
  kError,
  kEndOfString,
  kClosedPar,
  kComma,
  kDoesNotExist,
  kDoubleEquals,
  kEquals,
  kGreaterThan,
  kIdentifier,
  kIn,
  kLessThan,
  kNotEquals,
  kNotIn,
  kOpenPar,
};

struct Scanned {
  Token tok;
  std::string literal;
};

bool IsWhitespace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool IsSpecialSymbol(char c) {
  return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

std::optional<Token> SymbolToken(std::string_view s) {
  if (s == "!") return Token::kDoesNotExist;
  if (s == "!=") return Token::kNotEquals;
  if (s == "(") return Token::kOpenPar;
  if (s == ")") return Token::kClosedPar;
  if (s == ",") return Token::kComma;
  if (s == "=") return Token::kEquals;
  if (s == "==") return Token::kDoubleEquals;
  if (s == ">") return Token::kGreaterThan;
  if (s == "<") return Token::kLessThan;
  return std::nullopt;
}

std::vector<Scanned> Lex(std::string_view s) {
  std::vector<Scanned> out;
  std::size_t i = 0;
  while (true) {
    while (i < s.size() && IsWhitespace(s[i])) ++i;
    if (i >= s.size()) {
      out.push_back({Token::kEndOfString, ""});
      return out;
    }
    if (IsSpecialSymbol(s[i])) {
      // Longest run of symbol characters that still names a token.
      std::string buffer;
      std::optional<Scanned> last;
      while (i < s.size() && IsSpecialSymbol(s[i])) {
        buffer.push_back(s[i]);
        if (auto t = SymbolToken(buffer)) {
          last = Scanned{*t, buffer};
          ++i;
        } else if (last) {
          break;
        } else {
          ++i;
        }
      }
      if (!last) {
        out.push_back({Token::kError, "error expected: keyword found '" + buffer + "'"});
        return out;
      }
      out.push_back(*last);
      continue;
    }
    std::size_t start = i;
    while (i < s.size() && !IsWhitespace(s[i]) && !IsSpecialSymbol(s[i])) ++i;
    std::string word(s.substr(start, i - start));
    Token t = word == "in" ? Token::kIn : word == "notin" ? Token::kNotIn : Token::kIdentifier;
    out.push_back({t, std::move(word)});
  }
}

enum class Context { kKeyAndOperator, kValues };

class Parser {
 public:
  explicit Parser(std::string_view text) : items_(Lex(text)) {}

  StatusOr<std::vector<LabelRequirement>> Parse() {
    std::vector<LabelRequirement> reqs;
    while (true) {
      Scanned look = Lookahead(Context::kValues);
      switch (look.tok) {
        case Token::kIdentifier:
        case Token::kDoesNotExist: {
          auto r = ParseRequirement();
          if (!r.ok()) {
            return BadRequestError("unable to parse requirement: " + r.status().message());
          }
          reqs.push_back(std::move(*r));
          Scanned next = Consume(Context::kValues);
          if (next.tok == Token::kEndOfString) return reqs;
          if (next.tok != Token::kComma) {
            return BadRequestError("found '" + next.literal +
                                   "', expected: ',' or 'end of string'");
          }
          Scanned after = Lookahead(Context::kValues);
          if (after.tok != Token::kIdentifier && after.tok != Token::kDoesNotExist) {
            return BadRequestError("found '" + after.literal + "', expected: identifier after ','");
          }
          break;
        }
        case Token::kEndOfString:
          return reqs;
        default:
          return BadRequestError("found '" + look.literal +
                                 "', expected: !, identifier, or 'end of string'");
      }
    }
  }

 private:
  // In the values context the keywords in/notin are ordinary identifiers.
  static Scanned InContext(Scanned s, Context ctx) {
    if (ctx == Context::kValues && (s.tok == Token::kIn || s.tok == Token::kNotIn)) {
      s.tok = Token::kIdentifier;
    }
    return s;
  }
  Scanned Lookahead(Context ctx) const { return InContext(items_[std::min(pos_, items_.size() - 1)], ctx); }
  Scanned Consume(Context ctx) {
    Scanned s = Lookahead(ctx);
    if (pos_ < items_.size() - 1) ++pos_;
    return s;
  }

  StatusOr<LabelRequirement> ParseRequirement() {
    SelectorOperator op = SelectorOperator::kExists;
    bool does_not_exist = false;
    Scanned key = Consume(Context::kValues);
    if (key.tok == Token::kDoesNotExist) {
      does_not_exist = true;
      key = Consume(Context::kValues);
    }
    if (key.tok != Token::kIdentifier) {
      return BadRequestError("found '" + key.literal + "', expected: identifier");
    }
    if (auto err = ValidateLabelKey(key.literal, kNilPath)) {
      return BadRequestError(err->Error());
    }
    Token next = Lookahead(Context::kValues).tok;
    if (does_not_exist || next == Token::kEndOfString || next == Token::kComma) {
      // A key alone is Exists; "!key" is DoesNotExist (anything after it is the caller's
      // problem: "!a=b" fails there with "expected: ',' or 'end of string'").
      op = does_not_exist ? SelectorOperator::kDoesNotExist : SelectorOperator::kExists;
      return NewLabelRequirement(key.literal, op, {});
    }
    Scanned op_tok = Consume(Context::kKeyAndOperator);
    switch (op_tok.tok) {
      case Token::kIn: op = SelectorOperator::kIn; break;
      case Token::kEquals: op = SelectorOperator::kEquals; break;
      case Token::kDoubleEquals: op = SelectorOperator::kDoubleEquals; break;
      case Token::kGreaterThan: op = SelectorOperator::kGreaterThan; break;
      case Token::kLessThan: op = SelectorOperator::kLessThan; break;
      case Token::kNotIn: op = SelectorOperator::kNotIn; break;
      case Token::kNotEquals: op = SelectorOperator::kNotEquals; break;
      default:
        return BadRequestError("found '" + op_tok.literal +
                               "', expected: in, notin, =, ==, !=, gt, lt");
    }
    std::vector<std::string> values;
    if (op == SelectorOperator::kIn || op == SelectorOperator::kNotIn) {
      BERTH_ASSIGN_OR_RETURN(values, ParseValues());
    } else {
      BERTH_ASSIGN_OR_RETURN(values, ParseExactValue());
    }
    return NewLabelRequirement(key.literal, op, std::move(values));
  }

  StatusOr<std::vector<std::string>> ParseValues() {
    Scanned open = Consume(Context::kValues);
    if (open.tok != Token::kOpenPar) {
      return BadRequestError("found '" + open.literal + "' expected: '('");
    }
    Scanned look = Lookahead(Context::kValues);
    switch (look.tok) {
      case Token::kIdentifier:
      case Token::kComma: {
        BERTH_ASSIGN_OR_RETURN(std::vector<std::string> values, ParseIdentifiersList());
        if (Consume(Context::kValues).tok != Token::kClosedPar) {
          return BadRequestError("found '" + look.literal + "', expected: ')'");
        }
        return values;
      }
      case Token::kClosedPar:
        Consume(Context::kValues);
        return std::vector<std::string>{""};
      default:
        return BadRequestError("found '" + look.literal +
                               "', expected: ',', ')' or identifier");
    }
  }

  StatusOr<std::vector<std::string>> ParseIdentifiersList() {
    std::vector<std::string> values;
    while (true) {
      Scanned s = Consume(Context::kValues);
      switch (s.tok) {
        case Token::kIdentifier: {
          values.push_back(s.literal);
          Scanned next = Lookahead(Context::kValues);
          if (next.tok == Token::kComma) continue;
          if (next.tok == Token::kClosedPar) return values;
          return BadRequestError("found '" + next.literal + "', expected: ',' or ')'");
        }
        case Token::kComma: {
          // "(,", ",)" and ",," stand for empty values.
          if (values.empty()) values.push_back("");
          Token next = Lookahead(Context::kValues).tok;
          if (next == Token::kClosedPar) {
            values.push_back("");
            return values;
          }
          if (next == Token::kComma) {
            Consume(Context::kValues);
            values.push_back("");
          }
          break;
        }
        default:
          return BadRequestError("found '" + s.literal + "', expected: ',', or identifier");
      }
    }
  }

  StatusOr<std::vector<std::string>> ParseExactValue() {
    Token look = Lookahead(Context::kValues).tok;
    if (look == Token::kEndOfString || look == Token::kComma) return std::vector<std::string>{""};
    Scanned s = Consume(Context::kValues);
    if (s.tok == Token::kIdentifier) return std::vector<std::string>{s.literal};
    return BadRequestError("found '" + s.literal + "', expected: identifier");
  }

  std::vector<Scanned> items_;
  std::size_t pos_ = 0;
};

// ---------------------------------------------------------------------------
// Field selectors

std::vector<std::string> SplitTerms(std::string_view s) {
  std::vector<std::string> terms;
  if (s.empty()) return terms;
  std::string current;
  bool escaped = false;
  for (char c : s) {
    if (escaped) {
      escaped = false;
      current.push_back(c);
    } else if (c == '\\') {
      escaped = true;
      current.push_back(c);
    } else if (c == ',') {
      terms.push_back(std::move(current));
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  terms.push_back(std::move(current));
  return terms;
}

StatusOr<std::string> UnescapeFieldValue(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\\') {
      if (i + 1 >= s.size()) {
        return BadRequestError("invalid field selector: invalid escape sequence: \\");
      }
      char n = s[++i];
      if (n != '\\' && n != ',' && n != '=') {
        return BadRequestError(std::string("invalid field selector: invalid escape sequence: \\") + n);
      }
      out.push_back(n);
    } else if (c == ',' || c == '=') {
      return BadRequestError(std::string("invalid field selector: unescaped character: ") + c);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------
// LabelRequirement

StatusOr<LabelRequirement> NewLabelRequirement(std::string key, SelectorOperator op,
                                               std::vector<std::string> values) {
  FieldErrorList errs;
  // Upstream's path here is nil, whose children print without a root: "key", "values[0]".
  const FieldPath values_path("values");
  if (auto e = ValidateLabelKey(key, FieldPath("key"))) errs.push_back(*e);
  Object values_json = values;
  switch (op) {
    case SelectorOperator::kIn:
    case SelectorOperator::kNotIn:
      if (values.empty()) {
        errs.push_back(Invalid(values_path, values_json,
                               "for 'in', 'notin' operators, values set can't be empty"));
      }
      break;
    case SelectorOperator::kEquals:
    case SelectorOperator::kDoubleEquals:
    case SelectorOperator::kNotEquals:
      if (values.size() != 1) {
        errs.push_back(Invalid(values_path, values_json,
                               "exact-match compatibility requires one single value"));
      }
      break;
    case SelectorOperator::kExists:
    case SelectorOperator::kDoesNotExist:
      if (!values.empty()) {
        errs.push_back(Invalid(values_path, values_json,
                               "values set must be empty for exists and does not exist"));
      }
      break;
    case SelectorOperator::kGreaterThan:
    case SelectorOperator::kLessThan:
      if (values.size() != 1) {
        errs.push_back(Invalid(values_path, values_json,
                               "for 'Gt', 'Lt' operators, exactly one value is required"));
      }
      for (std::size_t i = 0; i < values.size(); ++i) {
        if (!ParseInt64(values[i])) {
          errs.push_back(Invalid(values_path.Index(i), values[i],
                                 "for 'Gt', 'Lt' operators, the value must be an integer"));
        }
      }
      break;
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    auto msgs = IsValidLabelValue(values[i]);
    if (!msgs.empty()) {
      errs.push_back(Invalid(values_path.Index(i).Key(key), values[i], Join(msgs, "; ")));
    }
  }
  if (!errs.empty()) return BadRequestError(AggregateMessage(errs));
  LabelRequirement r;
  r.key = std::move(key);
  r.op = op;
  r.values = SortedUnique(std::move(values));
  return r;
}

bool LabelRequirement::Matches(const Object& labels) const {
  const std::string* v = LabelValue(labels, key);
  auto contains = [&](const std::string& x) {
    return std::binary_search(values.begin(), values.end(), x);
  };
  switch (op) {
    case SelectorOperator::kEquals:
    case SelectorOperator::kDoubleEquals:
    case SelectorOperator::kIn:
      return v != nullptr && contains(*v);
    case SelectorOperator::kNotEquals:
    case SelectorOperator::kNotIn:
      return v == nullptr || !contains(*v);
    case SelectorOperator::kExists:
      return v != nullptr;
    case SelectorOperator::kDoesNotExist:
      return v == nullptr;
    case SelectorOperator::kGreaterThan:
    case SelectorOperator::kLessThan: {
      if (v == nullptr || values.size() != 1) return false;
      auto have = ParseInt64(*v);
      auto want = ParseInt64(values[0]);
      if (!have || !want) return false;
      return op == SelectorOperator::kGreaterThan ? *have > *want : *have < *want;
    }
  }
  return false;
}

std::string LabelRequirement::String() const {
  std::string out;
  if (op == SelectorOperator::kDoesNotExist) out += '!';
  out += key;
  switch (op) {
    case SelectorOperator::kEquals: out += '='; break;
    case SelectorOperator::kDoubleEquals: out += "=="; break;
    case SelectorOperator::kNotEquals: out += "!="; break;
    case SelectorOperator::kIn: out += " in "; break;
    case SelectorOperator::kNotIn: out += " notin "; break;
    case SelectorOperator::kGreaterThan: out += '>'; break;
    case SelectorOperator::kLessThan: out += '<'; break;
    case SelectorOperator::kExists:
    case SelectorOperator::kDoesNotExist:
      return out;
  }
  bool set = op == SelectorOperator::kIn || op == SelectorOperator::kNotIn;
  if (set) out += '(';
  out += Join(values, ",");
  if (set) out += ')';
  return out;
}

// ---------------------------------------------------------------------------
// LabelSelector

LabelSelector LabelSelector::Nothing() {
  LabelSelector s;
  s.nothing_ = true;
  return s;
}

void LabelSelector::Add(LabelRequirement r) { requirements_.push_back(std::move(r)); }

// Requirements in key order, then by their text (upstream sorts by key,
// sort.Sort(ByKey)): once, after every Add, so a selector of n terms costs
// O(n log n), never O(n^2).
void LabelSelector::SortRequirements() {
  std::stable_sort(requirements_.begin(), requirements_.end(),
                   [](const LabelRequirement& a, const LabelRequirement& b) {
                     if (a.key != b.key) return a.key < b.key;
                     return a.String() < b.String();
                   });
}

StatusOr<LabelSelector> LabelSelector::Parse(std::string_view text) {
  Parser parser(text);
  BERTH_ASSIGN_OR_RETURN(std::vector<LabelRequirement> reqs, parser.Parse());
  LabelSelector s;
  for (auto& r : reqs) s.Add(std::move(r));
  s.SortRequirements();
  return s;
}

StatusOr<LabelSelector> LabelSelector::FromJson(const Object& selector) {
  if (selector.is_null()) return Nothing();
  if (!selector.is_object()) return BadRequestError("label selector must be an object");
  LabelSelector s;
  if (auto it = selector.find("matchLabels"); it != selector.end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) {
      if (!v.is_string()) return BadRequestError("matchLabels values must be strings");
      BERTH_ASSIGN_OR_RETURN(LabelRequirement r,
                             NewLabelRequirement(k, SelectorOperator::kEquals, {v.get<std::string>()}));
      s.Add(std::move(r));
    }
  }
  if (auto it = selector.find("matchExpressions"); it != selector.end() && it->is_array()) {
    for (const auto& expr : *it) {
      std::string op_name = StringAt(expr, "operator");
      SelectorOperator op;
      if (op_name == "In") op = SelectorOperator::kIn;
      else if (op_name == "NotIn") op = SelectorOperator::kNotIn;
      else if (op_name == "Exists") op = SelectorOperator::kExists;
      else if (op_name == "DoesNotExist") op = SelectorOperator::kDoesNotExist;
      else return BadRequestError(GoQuote(op_name) + " is not a valid label selector operator");
      std::vector<std::string> values;
      if (auto v = expr.find("values"); v != expr.end() && v->is_array()) {
        for (const auto& x : *v) {
          if (!x.is_string()) return BadRequestError("matchExpressions values must be strings");
          values.push_back(x.get<std::string>());
        }
      }
      BERTH_ASSIGN_OR_RETURN(LabelRequirement r,
                             NewLabelRequirement(StringAt(expr, "key"), op, std::move(values)));
      s.Add(std::move(r));
    }
  }
  s.SortRequirements();
  return s;
}

StatusOr<LabelSelector> LabelSelector::FromSet(const Object& labels) {
  return FromJson(Object{{"matchLabels", labels.is_object() ? labels : Object::object()}});
}

bool LabelSelector::Matches(const Object& labels) const {
  if (nothing_) return false;
  for (const auto& r : requirements_) {
    if (!r.Matches(labels)) return false;
  }
  return true;
}

bool LabelSelector::MatchesObject(const Object& obj) const {
  static const Object kNone;
  auto m = obj.find("metadata");
  if (m == obj.end() || !m->is_object()) return Matches(kNone);
  auto l = m->find("labels");
  return Matches(l == m->end() ? kNone : *l);
}

std::optional<std::string> LabelSelector::RequiresExactMatch(std::string_view key) const {
  for (const auto& r : requirements_) {
    if (r.key != key) continue;
    if ((r.op == SelectorOperator::kEquals || r.op == SelectorOperator::kDoubleEquals ||
         r.op == SelectorOperator::kIn) &&
        r.values.size() == 1) {
      return r.values[0];
    }
  }
  return std::nullopt;
}

std::string LabelSelector::String() const {
  std::vector<std::string> parts;
  for (const auto& r : requirements_) parts.push_back(r.String());
  return Join(parts, ",");
}

FieldErrorList ValidateLabelSelector(const Object& selector, const FieldPath& path) {
  FieldErrorList errs;
  if (!selector.is_object()) return errs;
  if (auto it = selector.find("matchLabels"); it != selector.end()) {
    for (auto& e : ValidateLabels(*it, path.Child("matchLabels"))) errs.push_back(std::move(e));
  }
  auto exprs = selector.find("matchExpressions");
  if (exprs == selector.end() || !exprs->is_array()) return errs;
  for (std::size_t i = 0; i < exprs->size(); ++i) {
    const Object& expr = (*exprs)[i];
    FieldPath p = path.Child("matchExpressions").Index(i);
    const Object& values = ArrayAt(expr, "values");
    const std::size_t n = values.size();
    const Object op = expr.is_object() ? expr.value("operator", Object("")) : Object("");
    if (op == "In" || op == "NotIn") {
      if (n == 0) {
        errs.push_back(Required(p.Child("values"),
                                "must be specified when `operator` is 'In' or 'NotIn'"));
      }
    } else if (op == "Exists" || op == "DoesNotExist") {
      if (n > 0) {
        errs.push_back(Forbidden(p.Child("values"),
                                 "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      }
    } else {
      errs.push_back(Invalid(p.Child("operator"), op, "not a valid selector operator"));
    }
    const std::string key = StringAt(expr, "key");
    for (auto& msg : IsQualifiedName(key)) errs.push_back(Invalid(p.Child("key"), key, std::move(msg)));
    for (std::size_t j = 0; j < n; ++j) {
      if (!values[j].is_string()) continue;
      const auto& v = values[j].get_ref<const std::string&>();
      for (auto& msg : IsValidLabelValue(v)) {
        errs.push_back(Invalid(p.Child("values").Index(j), v, std::move(msg)));
      }
    }
  }
  return errs;
}

// ---------------------------------------------------------------------------
// FieldSelector

std::string FieldValueAtPath(const Object& obj, std::string_view dotted_path) {
  const Object* cur = &obj;
  while (true) {
    auto dot = dotted_path.find('.');
    std::string_view seg = dotted_path.substr(0, dot);
    if (!cur->is_object()) return "";
    auto it = cur->find(std::string(seg));
    if (it == cur->end()) return "";
    cur = &*it;
    if (dot == std::string_view::npos) break;
    dotted_path.remove_prefix(dot + 1);
  }
  if (cur->is_string()) return cur->get<std::string>();
  if (cur->is_number() || cur->is_boolean()) return cur->dump();
  return "";
}

std::string EscapeFieldSelectorValue(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == ',' || c == '=') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

bool FieldRequirement::Matches(const Object& obj) const {
  return (FieldValueAtPath(obj, field) == value) != not_equals;
}

std::string FieldRequirement::String() const {
  return field + (not_equals ? "!=" : "=") + EscapeFieldSelectorValue(value);
}

StatusOr<FieldSelector> FieldSelector::Parse(std::string_view text) {
  std::vector<std::string> parts = SplitTerms(text);
  std::sort(parts.begin(), parts.end());
  FieldSelector s;
  for (const auto& part : parts) {
    if (part.empty()) continue;
    // The first operator from the left, trying "!=", "==", "=" at each position.
    std::size_t at = std::string::npos;
    std::size_t op_len = 0;
    bool not_equals = false;
    for (std::size_t i = 0; i < part.size() && at == std::string::npos; ++i) {
      std::string_view rest = std::string_view(part).substr(i);
      if (rest.rfind("!=", 0) == 0) {
        at = i, op_len = 2, not_equals = true;
      } else if (rest.rfind("==", 0) == 0) {
        at = i, op_len = 2;
      } else if (rest.rfind("=", 0) == 0) {
        at = i, op_len = 1;
      }
    }
    if (at == std::string::npos) {
      return BadRequestError("invalid selector: '" + std::string(text) + "'; can't understand '" +
                             part + "'");
    }
    BERTH_ASSIGN_OR_RETURN(std::string value, UnescapeFieldValue(part.substr(at + op_len)));
    s.requirements_.push_back(FieldRequirement{part.substr(0, at), not_equals, std::move(value)});
  }
  // Upstream sorts the terms as written; berth then orders them by their
  // canonical text, which is the same order unless a term was written in a
  // second form ("==" for "=", an escape that was not needed), so that
  // String() parses back to this selector.
  std::stable_sort(s.requirements_.begin(), s.requirements_.end(),
                   [](const FieldRequirement& a, const FieldRequirement& b) { return a.String() < b.String(); });
  return s;
}

bool FieldSelector::Matches(const Object& obj) const {
  for (const auto& r : requirements_) {
    if (!r.Matches(obj)) return false;
  }
  return true;
}

std::optional<std::string> FieldSelector::RequiresExactMatch(std::string_view field) const {
  for (const auto& r : requirements_) {
    if (r.field == field && !r.not_equals) return r.value;
  }
  return std::nullopt;
}

std::string FieldSelector::String() const {
  std::vector<std::string> parts;
  for (const auto& r : requirements_) parts.push_back(r.String());
  return Join(parts, ",");
}

}  // namespace berth::api
