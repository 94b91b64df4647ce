// Quantity: a resource amount with Kubernetes resource.Quantity semantics
// (k8s.io/apimachinery/pkg/api/resource).
//
// Representation: a signed int64 count of milli-units (1 == 0.001 of the
// unit; "1" is 1000, "500m" is 500, "8Gi" is 8 * 2^30 * 1000) plus the format
// the amount was written in. Amounts finer than 1m are rounded up (away from
// zero) to the next milli-unit, as Kubernetes rounds when it scales to
// milli-units (MilliValue): "0.0001" and "1n" are 1m, "-1n" is -1m. Upstream
// keeps nano precision in the object itself; berth keeps milli, so "1n"
// prints as "1m" here.
//
// Range: values beyond int64 milli-units saturate at INT64_MAX / INT64_MIN
// (about ±9.2e15 units, just over 8Pi). "1E" (10^18) therefore parses to INT64_MAX
// milli and prints "9223372036854775807m"; likewise "9Ei" or "1e30". A
// saturated value compares greater than (less than) every finite one, so
// "unlimited" quota behaves as unlimited. Arithmetic saturates at the same
// bounds instead of wrapping.
//
// Values are compared exactly (kubernetes/kubernetes#139677): "1" is one unit,
// "1G" 10^9, "1Gi" 2^30, no unit is ever guessed, so "1" == "1000m" and
// "1Gi" > "1G" whatever the resource.
//
// Accepted text (as resource.ParseQuantity): an optional sign, a decimal
// number ("2", "1.5", ".5", "0.1", "1."), then either a binary suffix (Ki Mi
// Gi Ti Pi Ei), a decimal SI suffix (n u m "" k M G T P E) or a decimal
// exponent (e3, E-2, e+6; |exponent| <= 2^31-1; "1E" is the SI exa suffix,
// not an exponent). Like upstream, a missing number reads as zero ("." "-"
// "m" parse as 0); the stricter OpenAPI pattern that CRD schemas put on
// quantity fields is schema validation's job, not this parser's.
//
// Canonical formatting (String()) follows resource.Quantity.CanonicalizeBytes:
// the format the quantity was written in (binary, decimal SI or exponent) is
// kept, trailing zeros move into the largest suffix that represents the value
// exactly, and the decimal exponent is a multiple of 3 ("1000m" -> "1",
// "1536Mi" -> "1536Mi", "2048Mi" -> "2Gi", "1e3" -> "1e3", "1.5" -> "1500m",
// "0.5" -> "500m", "1000k" -> "1M", "12e-3" -> "12e-3", "1.2e3" -> "1200").
// A binary-format value below 1Ki or not a whole number of units is printed
// in decimal SI ("0.5Ki" -> "512", "0.1Ki" -> "102400m"); a whole one with no
// factor of 1024 prints as a plain number ("1.5Ki" -> "1536", which parses
// back as decimal SI). Zero is always "0". Upstream
// String() returns the original text when it was already canonical, even for
// spellings such as "+1" or "1E3"; berth is a plain value and always prints
// the canonical form ("1", "1e3").
//
// Errors: Parse returns kInvalid with upstream's message:
//   "" and text that does not split ("1.2.3", "abc", "1 Gi", "1Gb"):
//     quantities must match the regular expression
//     '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'
//   a suffix that is not a known one ("1i", "1e", "1Ki3", "--1"):
//     unable to parse quantity's suffix
//
// Thread-safety: a value type.
#pragma once

#include <compare>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include "core/status.h"

namespace berth {

class Quantity {
 public:
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  constexpr Quantity() = default;

  static StatusOr<Quantity> Parse(std::string_view text);
  // Parse that aborts on malformed input; for literals in code and tests.
  static Quantity MustParse(std::string_view text);

  static constexpr Quantity FromMilli(int64_t milli, Format f = Format::kDecimalSI) {
    return Quantity(milli, f);
  }
  static constexpr Quantity FromUnits(int64_t units, Format f = Format::kDecimalSI);

  constexpr int64_t milli() const { return milli_; }
  // Whole units, rounded away from zero (as Quantity.Value(): "500m" -> 1,
  // "1500m" -> 2, "-1500m" -> -2).
  int64_t Value() const;
  constexpr Format format() const { return format_; }
  constexpr bool IsZero() const { return milli_ == 0; }

  // Canonical text, see above.
  std::string String() const;

  // Saturating arithmetic. The result keeps the format of the left operand,
  // or takes the right one's when the left is zero (as Quantity.Add/Sub), so
  // sums accumulated from Quantity() print in the operands' format.
  Quantity operator+(Quantity o) const;
  Quantity operator-(Quantity o) const;
  Quantity& operator+=(Quantity o) { return *this = *this + o; }
  Quantity& operator-=(Quantity o) { return *this = *this - o; }
  // Multiplies by a count (pod count × per-pod request), saturating; keeps the
  // format.
  Quantity operator*(int64_t n) const;

  constexpr auto operator<=>(const Quantity& o) const { return milli_ <=> o.milli_; }
  constexpr bool operator==(const Quantity& o) const { return milli_ == o.milli_; }

 private:
  constexpr Quantity(int64_t milli, Format f) : milli_(milli), format_(f) {}
  int64_t milli_ = 0;
  Format format_ = Format::kDecimalSI;
};

constexpr Quantity Quantity::FromUnits(int64_t units, Format f) {
  constexpr int64_t kMax = INT64_MAX / 1000;
  if (units > kMax) return Quantity(INT64_MAX, f);
  if (units < -kMax) return Quantity(INT64_MIN, f);
  return Quantity(units * 1000, f);
}

// Writes String() (for logs and test failure messages).
std::ostream& operator<<(std::ostream& os, const Quantity& q);

// Saturating int64 helpers, shared with admission/ arithmetic.
int64_t SaturatingAdd(int64_t a, int64_t b);
int64_t SaturatingSub(int64_t a, int64_t b);
int64_t SaturatingMul(int64_t a, int64_t b);

}  // namespace berth
