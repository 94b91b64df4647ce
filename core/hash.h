// FNV-1a (64-bit): the same on every platform and run, unlike std::hash, so names and ports
// derived from other names are stable across restarts and hosts.
//
// `offset_basis` is FNV's unless a caller must keep the values it has always produced.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace berth {

inline constexpr uint64_t kFnv1a64OffsetBasis = 14695981039346656037ull;

constexpr uint64_t Fnv1a64(std::string_view s, uint64_t offset_basis = kFnv1a64OffsetBasis) {
  uint64_t h = offset_basis;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace berth
