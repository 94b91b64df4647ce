// Fuzz target: resource quantities (core/quantity.h), as every request, limit and quota
// in an object reaches them.
//
// Input: <quantity text>[\n<second quantity text>].
//
// Invariants checked (a violation aborts):
//   - Parse never crashes, and a refused text is a kInvalid error;
//   - the canonical form of a parsed quantity parses back to the same milli-units, and the
//     canonical form of that is its own (String() reaches a fixed point in one more round:
//     as resource.Quantity's CanonicalizeBytes, a binary quantity that is not a whole number
//     of Ki prints as a bare number, which parses as decimal: "62.5Ki" -> "64000" -> "64k");
//   - Value(), +, -, * never overflow (UBSan) and saturate: q - q == 0, q + 0 == q.
#include <cstdint>
#include <string>

#include "core/quantity.h"
#include "fuzz/fuzz_check.h"

using berth::Quantity;
using berth::fuzz::Check;

namespace {

// Parses `text` and checks the canonical form; nullopt-like: returns false when refused.
bool ParseChecked(std::string_view text, Quantity& out) {
  auto q = Quantity::Parse(text);
  if (!q.ok()) {
    Check(q.status().code() == berth::Code::kInvalid, "Parse error is not kInvalid: " + q.status().ToString(), text);
    return false;
  }
  const std::string canonical = q->String();
  auto back = Quantity::Parse(canonical);
  Check(back.ok(), "the canonical form does not parse", std::string(text) + " -> " + canonical);
  Check(back->milli() == q->milli(), "the canonical form parses to another value",
        std::string(text) + " -> " + canonical + " -> " + std::to_string(back->milli()) + "m");
  const std::string again = back->String();
  auto third = Quantity::Parse(again);
  Check(third.ok() && third->milli() == q->milli() && third->String() == again, "String() reaches no fixed point",
        std::string(text) + " -> " + canonical + " -> " + again);
  out = *q;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  berth::fuzz::Input in(data, size);
  const std::string_view first = in.Line();
  const std::string_view second = in.Rest();
  Quantity a, b;
  if (!ParseChecked(first, a)) return 0;
  (void)a.Value();
  Check((a - a).IsZero(), "q - q is not zero", a.String());
  Check(a + Quantity() == a, "q + 0 is not q", a.String());
  (void)(a * -1);
  (void)(a * INT64_MAX);
  if (!ParseChecked(second, b)) return 0;
  const Quantity sum = a + b, diff = a - b;
  (void)sum.String();
  (void)diff.String();
  (void)(a * b.milli());
  Check((a < b) == (b > a), "comparison is not antisymmetric", a.String() + " " + b.String());
  return 0;
}
