// Base64 (RFC 4648): the standard alphabet with '=' padding, as Go's
// base64.StdEncoding writes []byte fields in JSON and kubeconfig *-data
// fields, and the URL alphabet without padding (base64.RawURLEncoding), as
// kube-apiserver writes continue tokens.
//
// Thread-safety: pure functions.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace berth {

enum class Base64Alphabet {
  kStandard,  // A-Z a-z 0-9 + /, padded with '=' to a multiple of 4
  kUrl,       // A-Z a-z 0-9 - _, no padding
};

std::string Base64Encode(std::string_view in, Base64Alphabet alphabet = Base64Alphabet::kStandard);

// The decoded bytes, or nullopt for a character outside the alphabet, a
// length no encoding produces, or (standard) padding that is missing or out
// of place. Whitespace is not skipped.
std::optional<std::string> Base64Decode(std::string_view in, Base64Alphabet alphabet = Base64Alphabet::kStandard);

}  // namespace berth
