#include "core/quantity.h"

#include <array>
#include <charconv>
#include <limits>
#include <ostream>

namespace berth {
namespace {

constexpr uint64_t kMaxPositive = static_cast<uint64_t>(INT64_MAX);       // 2^63 - 1
constexpr uint64_t kMaxNegative = static_cast<uint64_t>(INT64_MAX) + 1;   // |INT64_MIN|

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsSuffixLetter(char c) {
  switch (c) {
    case 'e': case 'E': case 'i': case 'n': case 'u': case 'm':
    case 'k': case 'K': case 'M': case 'G': case 'T': case 'P':
      return true;
    default:
      return false;
  }
}

// The pieces of a quantity's text, as resource.parseQuantityString splits it:
// "-1.025Ti" -> negative, num "1", denom "025", suffix "Ti". Leading zeros of
// num are stripped; an absent num or denom is empty.
struct Scanned {
  bool negative = false;
  std::string_view num;
  std::string_view denom;
  std::string_view suffix;
};

// Returns false when the text cannot be split (ErrFormatWrong upstream). Like
// upstream this accepts a missing number ("." and "-" are zero); the CRD
// OpenAPI pattern for quantities is stricter and is applied by validation.
bool Scan(std::string_view s, Scanned* out) {
  size_t pos = 0;
  const size_t end = s.size();
  if (pos < end && (s[pos] == '-' || s[pos] == '+')) {
    out->negative = s[pos] == '-';
    ++pos;
  }
  while (pos < end && s[pos] == '0') ++pos;
  if (pos == end) return true;  // all zeros: the value is zero

  const size_t num_start = pos;
  while (pos < end && IsDigit(s[pos])) ++pos;
  out->num = s.substr(num_start, pos - num_start);
  if (pos == end) return true;

  if (s[pos] == '.') {
    const size_t denom_start = ++pos;
    while (pos < end && IsDigit(s[pos])) ++pos;
    out->denom = s.substr(denom_start, pos - denom_start);
    if (pos == end) return true;
  }

  const size_t suffix_start = pos;
  while (pos < end && IsSuffixLetter(s[pos])) ++pos;
  if (pos < end && (s[pos] == '-' || s[pos] == '+')) ++pos;
  while (pos < end && IsDigit(s[pos])) ++pos;
  if (pos != end) return false;
  out->suffix = s.substr(suffix_start);
  return true;
}

// What a suffix means: value = number * base^exponent.
struct Suffix {
  int base = 10;      // 10 or 2
  int64_t exponent = 0;
  Quantity::Format format = Quantity::Format::kDecimalSI;
};

// resource.suffixHandler.interpret: the SI table, the binary table, then a
// decimal exponent "e<int>"/"E<int>" whose value must fit in ±(2^31-1).
bool InterpretSuffix(std::string_view s, Suffix* out) {
  using F = Quantity::Format;
  if (s.empty()) { *out = {10, 0, F::kDecimalSI}; return true; }
  if (s.size() == 1) {
    int64_t e;
    switch (s[0]) {
      case 'n': e = -9; break;
      case 'u': e = -6; break;
      case 'm': e = -3; break;
      case 'k': e = 3; break;
      case 'M': e = 6; break;
      case 'G': e = 9; break;
      case 'T': e = 12; break;
      case 'P': e = 15; break;
      case 'E': e = 18; break;
      default: return false;
    }
    *out = {10, e, F::kDecimalSI};
    return true;
  }
  if (s.size() == 2 && s[1] == 'i') {
    constexpr std::string_view kBinary = "KMGTPE";
    const size_t i = kBinary.find(s[0]);
    if (i != std::string_view::npos) {
      *out = {2, static_cast<int64_t>(10 * (i + 1)), F::kBinarySI};
      return true;
    }
  }
  if (s[0] != 'e' && s[0] != 'E') return false;
  std::string_view digits = s.substr(1);
  bool negative = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty()) return false;
  constexpr int64_t kMaxExponent = std::numeric_limits<int32_t>::max();
  int64_t e = 0;
  for (char c : digits) {
    if (!IsDigit(c)) return false;
    e = e * 10 + (c - '0');
    if (e > kMaxExponent) return false;
  }
  *out = {10, negative ? -e : e, F::kDecimalExponent};
  return true;
}

// The digits num+denom of a scanned number, addressed by position; positions
// outside the digits read as zero (leading/trailing zeros of the real number).
class DigitString {
 public:
  DigitString(std::string_view num, std::string_view denom) : num_(num), denom_(denom) {}
  int64_t size() const { return static_cast<int64_t>(num_.size() + denom_.size()); }
  int At(int64_t i) const {
    if (i < 0 || i >= size()) return 0;
    const size_t u = static_cast<size_t>(i);
    return (u < num_.size() ? num_[u] : denom_[u - num_.size()]) - '0';
  }

 private:
  std::string_view num_, denom_;
};

// Magnitude in milli-units of digits * 10^(point_shift) * 2^binary_exponent,
// rounded up (towards +inf on the magnitude, i.e. away from zero), capped at
// `cap`. `point` is where the decimal point falls in the digit string once
// scaled to milli-units (the integer part is digits[0, point)).
uint64_t MilliMagnitude(const DigitString& d, int64_t point, int binary_exponent, uint64_t cap) {
  int64_t first = 0;
  while (first < d.size() && d.At(first) == 0) ++first;
  if (first == d.size()) return 0;
  int64_t last = d.size() - 1;
  while (d.At(last) == 0) --last;

  // Integer part: at most 19 significant digits fit below 10^19 < 2^64.
  uint64_t integer = 0;
  if (point > first) {
    if (point - first > 19) return cap;
    for (int64_t i = first; i < point; ++i) integer = integer * 10 + d.At(i);
  }
  const bool has_fraction = last >= point;

  if (binary_exponent == 0) {
    if (integer >= cap) return cap;
    return integer + (has_fraction ? 1 : 0);
  }

  if (binary_exponent >= 64 || integer > (cap >> binary_exponent)) return cap;
  unsigned __int128 total = static_cast<unsigned __int128>(integer) << binary_exponent;
  if (has_fraction) {
    // ceil(fraction * 2^b). Sixty fraction digits are exact enough: with
    // F' the fraction truncated to 60 digits, every integer is a multiple of
    // 2^b/10^60 (b <= 60), so no integer lies strictly between F'*2^b and
    // (F' + 10^-60)*2^b; the dropped digits only decide the +1 when F'*2^b
    // is itself an integer.
    constexpr int kDigits = 60;
    std::array<uint8_t, kDigits> frac{};
    for (int k = 0; k < kDigits; ++k) frac[k] = static_cast<uint8_t>(d.At(point + k));
    const bool sticky = last >= point + kDigits;
    uint64_t bits = 0;
    for (int b = 0; b < binary_exponent; ++b) {
      int carry = 0;
      for (int k = kDigits - 1; k >= 0; --k) {
        const int v = frac[k] * 2 + carry;
        frac[k] = static_cast<uint8_t>(v % 10);
        carry = v / 10;
      }
      bits = (bits << 1) | static_cast<uint64_t>(carry);
    }
    bool remainder = sticky;
    for (uint8_t f : frac) remainder = remainder || f != 0;
    total += bits + (remainder ? 1 : 0);
  }
  return total >= cap ? cap : static_cast<uint64_t>(total);
}

Status FormatWrongError() {
  return InvalidError(
      "quantities must match the regular expression "
      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
}

Status SuffixError() { return InvalidError("unable to parse quantity's suffix"); }

void AppendUnsigned(std::string* out, uint64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, end);
}

void AppendSigned(std::string* out, int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, end);
}

}  // namespace

StatusOr<Quantity> Quantity::Parse(std::string_view text) {
  if (text.empty()) return FormatWrongError();
  Scanned scanned;
  if (!Scan(text, &scanned)) return FormatWrongError();
  Suffix suffix;
  if (!InterpretSuffix(scanned.suffix, &suffix)) return SuffixError();

  const DigitString digits(scanned.num, scanned.denom);
  // Scale to milli-units: move the decimal point 3 places right, plus the
  // decimal exponent. |exponent| <= 2^31-1, so this cannot overflow.
  const int64_t point = static_cast<int64_t>(scanned.num.size()) + 3 +
                        (suffix.base == 10 ? suffix.exponent : 0);
  const int binary_exponent = suffix.base == 2 ? static_cast<int>(suffix.exponent) : 0;
  const uint64_t cap = scanned.negative ? kMaxNegative : kMaxPositive;
  const uint64_t magnitude = MilliMagnitude(digits, point, binary_exponent, cap);

  Format format = suffix.format;
  // A binary quantity below one unit is shown in decimal SI (upstream changes
  // the format at parse time, so sums started from it stay decimal too).
  if (format == Format::kBinarySI && magnitude > 0 && magnitude < 1000) {
    format = Format::kDecimalSI;
  }
  if (!scanned.negative) return Quantity(static_cast<int64_t>(magnitude), format);
  if (magnitude == kMaxNegative) return Quantity(INT64_MIN, format);
  return Quantity(-static_cast<int64_t>(magnitude), format);
}

Quantity Quantity::MustParse(std::string_view text) {
  auto q = Parse(text);
  BERTH_CHECK_MSG(q.ok(), "cannot parse '" + std::string(text) + "': " + q.status().message());
  return *q;
}

int64_t Quantity::Value() const {
  int64_t units = milli_ / 1000;
  const int64_t rest = milli_ % 1000;
  if (rest > 0) ++units;
  if (rest < 0) --units;
  return units;
}

std::string Quantity::String() const {
  if (milli_ == 0) return "0";
  std::string out;
  const bool negative = milli_ < 0;
  const uint64_t magnitude =
      negative ? static_cast<uint64_t>(0) - static_cast<uint64_t>(milli_) : static_cast<uint64_t>(milli_);
  if (negative) out.push_back('-');

  // Binary only for a whole number of units of at least 1Ki; anything else
  // would lose precision or confuse ("512" rather than "0.5Ki").
  if (format_ == Format::kBinarySI && magnitude >= 1024 * 1000 && magnitude % 1000 == 0) {
    static constexpr std::array<std::string_view, 7> kBinarySuffix = {"", "Ki", "Mi", "Gi",
                                                                      "Ti", "Pi", "Ei"};
    uint64_t units = magnitude / 1000;
    size_t power = 0;
    while (units % 1024 == 0 && power + 1 < kBinarySuffix.size()) {
      units /= 1024;
      ++power;
    }
    AppendUnsigned(&out, units);
    out += kBinarySuffix[power];
    return out;
  }

  // Decimal: strip trailing zeros, then lower the exponent to a multiple of 3.
  uint64_t mantissa = magnitude;
  int exponent = -3;
  while (mantissa % 10 == 0) {
    mantissa /= 10;
    ++exponent;
  }
  switch (((exponent % 3) + 3) % 3) {
    case 1: mantissa *= 10; exponent -= 1; break;
    case 2: mantissa *= 100; exponent -= 2; break;
    default: break;
  }
  AppendUnsigned(&out, mantissa);
  if (format_ == Format::kDecimalExponent) {
    if (exponent != 0) {
      out.push_back('e');
      AppendSigned(&out, exponent);
    }
    return out;
  }
  // int64 milli-units reach at most ~9.2e15 units, so "P" is the largest
  // suffix ever needed; "E" is kept for completeness.
  static constexpr std::array<std::string_view, 8> kDecimalSuffix = {"m", "", "k", "M",
                                                                     "G", "T", "P", "E"};
  out += kDecimalSuffix[static_cast<size_t>(exponent / 3 + 1)];
  return out;
}

Quantity Quantity::operator+(Quantity o) const {
  return Quantity(SaturatingAdd(milli_, o.milli_), milli_ == 0 ? o.format_ : format_);
}

Quantity Quantity::operator-(Quantity o) const {
  return Quantity(SaturatingSub(milli_, o.milli_), milli_ == 0 ? o.format_ : format_);
}

Quantity Quantity::operator*(int64_t n) const { return Quantity(SaturatingMul(milli_, n), format_); }

std::ostream& operator<<(std::ostream& os, const Quantity& q) { return os << q.String(); }

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

int64_t SaturatingSub(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return b < 0 ? INT64_MAX : INT64_MIN;
}

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}

}  // namespace berth
