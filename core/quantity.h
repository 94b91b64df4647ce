// Quantity: a resource amount with Kubernetes resource.Quantity semantics.
//
// Representation: a signed int64 count of milli-units (1 == 0.001 of the
// unit; "1" is 1000, "500m" is 500, "8Gi" is 8 * 2^30 * 1000). Amounts finer
// than 1m are rounded up to the next milli-unit, as Kubernetes rounds when it
// scales to milli-units (so "0.0001" is 1m). Arithmetic saturates at the int64
// bounds instead of wrapping. Values are compared exactly (C17 in
// reported-failures.md): "1" is one unit, "1G" 10^9, "1Gi" 2^30, no unit is
// ever guessed, so "1" == "1000m" and "1Gi" > "1G".
//
// Accepted text (as resource.ParseQuantity): an optional sign, a decimal
// number ("2", "1.5", ".5", "0.1"), then either a binary suffix (Ki Mi Gi Ti
// Pi Ei), a decimal SI suffix (n u m "" k M G T P E) or a decimal exponent
// (e3, E-2; "1E" is the SI exa suffix, not an exponent).
//
// Canonical formatting (String()) follows resource.Quantity's rules: the
// format the quantity was written in (binary, decimal SI or exponent) is kept
// and the largest suffix that represents the value exactly is chosen
// ("1000m" -> "1", "1536Mi" -> "1536Mi", "2048Mi" -> "2Gi", "1e3" -> "1e3",
// "1500m" -> "1500m", "0.5" -> "500m"). A binary-format value that is not a
// whole number of bytes is printed in decimal SI ("0.5Ki" -> "512").
//
// Errors: Parse returns kInvalid with the message Kubernetes uses
// ("quantities must match the regular expression
// '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'") for malformed text.
//
// Thread-safety: a value type.
#pragma once

#include <compare>
#include <cstdint>
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
  // Whole units, rounded up (as Quantity.Value(): "500m" -> 1, "1500m" -> 2).
  int64_t Value() const;
  constexpr Format format() const { return format_; }
  constexpr bool IsZero() const { return milli_ == 0; }

  // Canonical text, see above.
  std::string String() const;

  // Saturating arithmetic; the result keeps the format of the left operand.
  Quantity operator+(Quantity o) const;
  Quantity operator-(Quantity o) const;
  Quantity& operator+=(Quantity o) { return *this = *this + o; }
  Quantity& operator-=(Quantity o) { return *this = *this - o; }
  // Multiplies by a count (pod count × per-pod request), saturating.
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

// Saturating int64 helpers, shared with admission/ arithmetic.
int64_t SaturatingAdd(int64_t a, int64_t b);
int64_t SaturatingSub(int64_t a, int64_t b);
int64_t SaturatingMul(int64_t a, int64_t b);

}  // namespace berth
