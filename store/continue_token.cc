#include "store/continue_token.h"

#include <array>
#include <nlohmann/json.hpp>

#include "core/base64.h"

namespace berth::store {
namespace {

constexpr const char* kVersion = "meta.k8s.io/v1";

Status Invalid(const std::string& why) { return BadRequestError("continue key is not valid: " + why); }

}  // namespace

std::string EncodeContinue(const ContinueToken& token) {
  nlohmann::json j = {{"v", kVersion}, {"rv", token.revision}, {"start", token.ns + "/" + token.name}};
  if (token.offset >= 0) j["o"] = token.offset;
  return Base64Encode(j.dump(), Base64Alphabet::kUrl);
}

StatusOr<ContinueToken> DecodeContinue(const std::string& token) {
  const std::optional<std::string> decoded = Base64Decode(token, Base64Alphabet::kUrl);
  if (!decoded) return Invalid("illegal base64 data");
  const std::string& raw = *decoded;
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
