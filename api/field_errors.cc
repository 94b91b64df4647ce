#include "api/field_errors.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <set>
#include <utility>

namespace berth::api {

FieldPath FieldPath::Child(std::string_view name) const {
  FieldPath p;
  p.path_.reserve(path_.size() + name.size() + 1);
  p.path_ = path_;
  if (!p.path_.empty()) p.path_ += '.';
  p.path_ += name;
  return p;
}

FieldPath FieldPath::Index(std::size_t index) const {
  FieldPath p = *this;
  p.path_ += '[';
  p.path_ += std::to_string(index);
  p.path_ += ']';
  return p;
}

FieldPath FieldPath::Key(std::string_view key) const {
  FieldPath p = *this;
  p.path_ += '[';
  p.path_ += key;
  p.path_ += ']';
  return p;
}

std::string_view FieldErrorCauseType(FieldErrorType type) {
  switch (type) {
    case FieldErrorType::kNotFound: return "FieldValueNotFound";
    case FieldErrorType::kRequired: return "FieldValueRequired";
    case FieldErrorType::kDuplicate: return "FieldValueDuplicate";
    case FieldErrorType::kInvalid: return "FieldValueInvalid";
    case FieldErrorType::kNotSupported: return "FieldValueNotSupported";
    case FieldErrorType::kForbidden: return "FieldValueForbidden";
    case FieldErrorType::kTooLong: return "FieldValueTooLong";
    case FieldErrorType::kTooMany: return "FieldValueTooMany";
    case FieldErrorType::kInternal: return "InternalError";
    case FieldErrorType::kTypeInvalid: return "FieldValueTypeInvalid";
  }
  return "InternalError";
}

std::string_view FieldErrorTypeString(FieldErrorType type) {
  switch (type) {
    case FieldErrorType::kNotFound: return "Not found";
    case FieldErrorType::kRequired: return "Required value";
    case FieldErrorType::kDuplicate: return "Duplicate value";
    case FieldErrorType::kInvalid: return "Invalid value";
    case FieldErrorType::kNotSupported: return "Unsupported value";
    case FieldErrorType::kForbidden: return "Forbidden";
    case FieldErrorType::kTooLong: return "Too long";
    case FieldErrorType::kTooMany: return "Too many";
    case FieldErrorType::kInternal: return "Internal error";
    case FieldErrorType::kTypeInvalid: return "Invalid value";
  }
  return "Internal error";
}

namespace {

constexpr char kHex[] = "0123456789abcdef";

void AppendHexEscape(std::string* out, char prefix, uint32_t v, int digits) {
  out->push_back('\\');
  out->push_back(prefix);
  for (int i = digits - 1; i >= 0; --i) out->push_back(kHex[(v >> (4 * i)) & 0xF]);
}

// Decodes one UTF-8 sequence at s[i]; returns its length, or 0 if invalid.
int DecodeUtf8(std::string_view s, std::size_t i, uint32_t* cp) {
  auto c = static_cast<unsigned char>(s[i]);
  int len;
  uint32_t v;
  if (c < 0x80) { *cp = c; return 1; }
  if ((c & 0xE0) == 0xC0) { len = 2; v = c & 0x1F; }
  else if ((c & 0xF0) == 0xE0) { len = 3; v = c & 0x0F; }
  else if ((c & 0xF8) == 0xF0) { len = 4; v = c & 0x07; }
  else return 0;
  if (i + len > s.size()) return 0;
  for (int k = 1; k < len; ++k) {
    auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    v = (v << 6) | (cc & 0x3F);
  }
  // Reject overlong forms, surrogates and out-of-range code points, as Go does.
  if ((len == 2 && v < 0x80) || (len == 3 && v < 0x800) || (len == 4 && v < 0x10000) ||
      (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF) {
    return 0;
  }
  *cp = v;
  return len;
}

// Go's unicode.IsPrint, approximated: controls, spaces other than U+0020 and
// format characters are unprintable.
bool IsPrintableRune(uint32_t cp) {
  if (cp < 0x20 || cp == 0x7F) return false;
  if (cp >= 0x80 && cp <= 0xA0) return false;
  if (cp == 0xAD || cp == 0x1680 || cp == 0x180E || cp == 0x3000 || cp == 0xFEFF) return false;
  if (cp >= 0x2000 && cp <= 0x200F) return false;
  if (cp >= 0x2028 && cp <= 0x202F) return false;
  if (cp >= 0x205F && cp <= 0x206F) return false;
  if (cp >= 0xE000 && cp <= 0xF8FF) return false;  // private use
  if (cp >= 0xFFF9 && cp <= 0xFFFB) return false;
  return true;
}

// Go's %v for a float64: strconv.FormatFloat(f, 'g', -1, 64): the shortest digits
// that round-trip, in exponent form when the exponent is < -4 or >= 6, with at least
// two exponent digits (1e+06, 1.234567e+06, 1e-05, 0.0001, 123456, 1.5).
std::string GoFormatFloat(double f) {
  if (std::isnan(f)) return "NaN";
  if (std::isinf(f)) return f > 0 ? "+Inf" : "-Inf";
  if (f == 0) return std::signbit(f) ? "-0" : "0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), f, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  // sci = [-]d[.ddd]e[+-]xx
  bool neg = sci[0] == '-';
  if (neg) sci.erase(0, 1);
  auto e = sci.find('e');
  std::string mant = sci.substr(0, e);
  int exp = std::stoi(sci.substr(e + 1));
  std::string digits;
  for (char c : mant) if (c != '.') digits.push_back(c);
  int nd = static_cast<int>(digits.size());
  int dp = exp + 1;  // position of the decimal point relative to digits
  constexpr int eprec = 6;
  std::string out = neg ? "-" : "";
  if (exp < -4 || exp >= eprec) {
    out += digits[0];
    if (nd > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += 'e';
    out += exp < 0 ? '-' : '+';
    int ax = exp < 0 ? -exp : exp;
    if (ax < 10) out += '0';
    out += std::to_string(ax);
    return out;
  }
  if (dp <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-dp), '0');
    out += digits;
  } else if (dp >= nd) {
    out += digits;
    out.append(static_cast<std::size_t>(dp - nd), '0');
  } else {
    out += digits.substr(0, dp);
    out += '.';
    out += digits.substr(dp);
  }
  return out;
}

// encoding/json's HTML-safe escaping of <, > and & (and U+2028/2029) applied to
// nlohmann's compact dump.
std::string GoJsonMarshal(const nlohmann::json& v) {
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else if (c == '\xE2' && i + 2 < s.size() && s[i + 1] == '\x80' &&
             (s[i + 2] == '\xA8' || s[i + 2] == '\xA9')) {
      out += s[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

FieldError Make(FieldErrorType type, const FieldPath& path, nlohmann::json value,
                std::string detail) {
  FieldError e;
  e.type = type;
  e.field = path.String();
  e.bad_value = std::move(value);
  e.detail = std::move(detail);
  return e;
}

}  // namespace

std::string GoQuote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (std::size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    int len = DecodeUtf8(s, i, &cp);
    if (len == 0) {
      AppendHexEscape(&out, 'x', static_cast<unsigned char>(s[i]), 2);
      ++i;
      continue;
    }
    switch (cp) {
      case '\a': out += "\\a"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\v': out += "\\v"; break;
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      default:
        if (IsPrintableRune(cp)) {
          out.append(s.substr(i, len));
        } else if (cp < 0x20 || cp == 0x7F) {
          AppendHexEscape(&out, 'x', cp, 2);
        } else if (cp < 0x10000) {
          AppendHexEscape(&out, 'u', cp, 4);
        } else {
          AppendHexEscape(&out, 'U', cp, 8);
        }
    }
    i += len;
  }
  out.push_back('"');
  return out;
}

std::string RenderFieldValue(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::string:
      return GoQuote(value.get_ref<const std::string&>());
    case nlohmann::json::value_t::boolean:
      return value.get<bool>() ? "true" : "false";
    case nlohmann::json::value_t::number_integer:
      return std::to_string(value.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return std::to_string(value.get<uint64_t>());
    case nlohmann::json::value_t::number_float:
      return GoFormatFloat(value.get<double>());
    default:
      return GoJsonMarshal(value);
  }
}

std::string FieldError::Body() const {
  std::string s(FieldErrorTypeString(type));
  switch (type) {
    case FieldErrorType::kRequired:
    case FieldErrorType::kForbidden:
    case FieldErrorType::kTooLong:
    case FieldErrorType::kInternal:
      break;
    default:
      if (!value_omitted) {
        s += ": ";
        s += RenderFieldValue(bad_value);
      }
  }
  if (!detail.empty()) {
    s += ": ";
    s += detail;
  }
  return s;
}

std::string FieldError::Error() const { return field + ": " + Body(); }

StatusCause FieldError::ToCause() const {
  return StatusCause{std::string(FieldErrorCauseType(type)), field, Body()};
}

FieldError Invalid(const FieldPath& path, const nlohmann::json& value, std::string detail) {
  return Make(FieldErrorType::kInvalid, path, value, std::move(detail));
}

FieldError TypeInvalid(const FieldPath& path, const nlohmann::json& value, std::string detail) {
  return Make(FieldErrorType::kTypeInvalid, path, value, std::move(detail));
}

FieldError Required(const FieldPath& path, std::string detail) {
  return Make(FieldErrorType::kRequired, path, "", std::move(detail));
}

FieldError Forbidden(const FieldPath& path, std::string detail) {
  return Make(FieldErrorType::kForbidden, path, "", std::move(detail));
}

FieldError Duplicate(const FieldPath& path, const nlohmann::json& value) {
  return Make(FieldErrorType::kDuplicate, path, value, "");
}

FieldError NotFound(const FieldPath& path, const nlohmann::json& value) {
  return Make(FieldErrorType::kNotFound, path, value, "");
}

FieldError NotSupported(const FieldPath& path, const nlohmann::json& value,
                        const std::vector<std::string>& supported) {
  std::string detail;
  if (!supported.empty()) {
    detail = "supported values: ";
    for (std::size_t i = 0; i < supported.size(); ++i) {
      if (i > 0) detail += ", ";
      detail += GoQuote(supported[i]);
    }
  }
  return Make(FieldErrorType::kNotSupported, path, value, std::move(detail));
}

FieldError TooLong(const FieldPath& path, long long max_length) {
  std::string detail;
  if (max_length >= 0) {
    detail = "may not be more than " + std::to_string(max_length) +
             (max_length == 1 ? " byte" : " bytes");
  } else {
    detail = "value is too long";
  }
  return Make(FieldErrorType::kTooLong, path, "<value omitted>", std::move(detail));
}

FieldError TooMany(const FieldPath& path, long long actual, long long max_items) {
  std::string detail;
  if (max_items >= 0) {
    detail = "must have at most " + std::to_string(max_items) +
             (max_items == 1 ? " item" : " items");
  } else {
    detail = "has too many items";
  }
  FieldError e = Make(FieldErrorType::kTooMany, path, actual, std::move(detail));
  e.value_omitted = actual < 0;
  return e;
}

FieldError InternalFieldError(const FieldPath& path, std::string detail) {
  return Make(FieldErrorType::kInternal, path, nullptr, std::move(detail));
}

std::vector<StatusCause> ToCauses(const FieldErrorList& errors) {
  std::vector<StatusCause> causes;
  causes.reserve(errors.size());
  for (const auto& e : errors) causes.push_back(e.ToCause());
  return causes;
}

Status InvalidStatus(std::string_view kind, std::string_view name, const FieldErrorList& errors) {
  // field.ErrorList.ToAggregate() drops repeated messages; the aggregate prints one
  // message bare and several as "[a, b]".
  std::vector<std::string> messages;
  std::set<std::string> seen;
  for (const auto& e : errors) {
    std::string m = e.Error();
    if (seen.insert(m).second) messages.push_back(std::move(m));
  }
  std::string msg = std::string(kind) + " " + GoQuote(name) + " is invalid";
  if (messages.size() == 1) {
    msg += ": " + messages[0];
  } else if (messages.size() > 1) {
    msg += ": [";
    for (std::size_t i = 0; i < messages.size(); ++i) {
      if (i > 0) msg += ", ";
      msg += messages[i];
    }
    msg += "]";
  }
  return InvalidError(std::move(msg), ToCauses(errors));
}

}  // namespace berth::api
