#include "store/continue_token.h"

#include <array>
#include <nlohmann/json.hpp>

namespace berth::store {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr const char* kVersion = "meta.k8s.io/v1";

std::string Base64UrlEncode(const std::string& in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
  } else if (i + 2 == in.size()) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
  }
  return out;
}

bool Base64UrlDecode(const std::string& in, std::string* out) {
  static const std::array<int8_t, 256> kValue = [] {
    std::array<int8_t, 256> t{};
    t.fill(-1);
    for (int i = 0; i < 64; ++i) t[uint8_t(kAlphabet[i])] = int8_t(i);
    return t;
  }();
  if (in.size() % 4 == 1) return false;
  out->clear();
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int v = kValue[uint8_t(c)];
    if (v < 0) return false;
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      *out += char((acc >> bits) & 0xFF);
    }
  }
  return true;
}

Status Invalid(const std::string& why) { return BadRequestError("continue key is not valid: " + why); }

}  // namespace

std::string EncodeContinue(const ContinueToken& token) {
  nlohmann::json j = {{"v", kVersion}, {"rv", token.revision}, {"start", token.ns + "/" + token.name}};
  if (token.offset >= 0) j["o"] = token.offset;
  return Base64UrlEncode(j.dump());
}

StatusOr<ContinueToken> DecodeContinue(const std::string& token) {
  std::string raw;
  if (!Base64UrlDecode(token, &raw)) return Invalid("illegal base64 data");
  nlohmann::json j = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Invalid("not a JSON object");
  auto v = j.find("v");
  if (v == j.end() || *v != kVersion) return Invalid("server does not recognize this encoded key");
  auto rv = j.find("rv");
  if (rv == j.end() || !rv->is_number_integer() || rv->get<int64_t>() < 0) {
    return Invalid("incorrect encoded start resourceVersion (version meta.k8s.io/v1)");
  }
  auto start = j.find("start");
  if (start == j.end() || !start->is_string()) return Invalid("encoded start key is missing");
  const std::string& s = start->get_ref<const std::string&>();
  auto slash = s.find('/');
  if (slash == std::string::npos || s.find('/', slash + 1) != std::string::npos) {
    return Invalid("encoded start key is malformed");
  }
  int64_t offset = -1;
  if (auto o = j.find("o"); o != j.end() && o->is_number_integer() && o->get<int64_t>() >= 0)
    offset = o->get<int64_t>();
  return ContinueToken{rv->get<int64_t>(), s.substr(0, slash), s.substr(slash + 1), offset};
}

std::string InconsistentContinue(const std::string& token) {
  auto decoded = DecodeContinue(token);
  if (!decoded.ok()) return "";
  decoded->revision = 0;
  decoded->offset = -1;  // the latest state has other objects before the key
  return EncodeContinue(*decoded);
}

}  // namespace berth::store
