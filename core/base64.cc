#include "core/base64.h"

#include <array>
#include <cstdint>

namespace berth {
namespace {

constexpr char kStandardChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char kUrlChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

const char* Chars(Base64Alphabet alphabet) {
  return alphabet == Base64Alphabet::kStandard ? kStandardChars : kUrlChars;
}

std::array<int8_t, 256> ValueTable(const char* chars) {
  std::array<int8_t, 256> t{};
  t.fill(-1);
  for (int i = 0; i < 64; ++i) t[static_cast<uint8_t>(chars[i])] = static_cast<int8_t>(i);
  return t;
}

}  // namespace

std::string Base64Encode(std::string_view in, Base64Alphabet alphabet) {
  const char* chars = Chars(alphabet);
  const bool pad = alphabet == Base64Alphabet::kStandard;
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v =
        (static_cast<uint8_t>(in[i]) << 16) | (static_cast<uint8_t>(in[i + 1]) << 8) | static_cast<uint8_t>(in[i + 2]);
    out += chars[v >> 18];
    out += chars[(v >> 12) & 63];
    out += chars[(v >> 6) & 63];
    out += chars[v & 63];
  }
  const std::size_t rest = in.size() - i;
  if (rest > 0) {
    uint32_t v = static_cast<uint8_t>(in[i]) << 16;
    if (rest == 2) v |= static_cast<uint8_t>(in[i + 1]) << 8;
    out += chars[v >> 18];
    out += chars[(v >> 12) & 63];
    if (rest == 2) out += chars[(v >> 6) & 63];
    if (pad) out.append(3 - rest, '=');
  }
  return out;
}

std::optional<std::string> Base64Decode(std::string_view in, Base64Alphabet alphabet) {
  static const std::array<int8_t, 256> kStandard = ValueTable(kStandardChars);
  static const std::array<int8_t, 256> kUrl = ValueTable(kUrlChars);
  const auto& value = alphabet == Base64Alphabet::kStandard ? kStandard : kUrl;
  if (alphabet == Base64Alphabet::kStandard) {
    if (in.size() % 4 != 0) return std::nullopt;
    std::size_t padding = 0;
    while (padding < 2 && padding < in.size() && in[in.size() - 1 - padding] == '=') ++padding;
    in.remove_suffix(padding);
  }
  if (in.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(in.size() / 4 * 3 + 2);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const int v = value[static_cast<uint8_t>(c)];
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  return out;
}

}  // namespace berth
