// List continue tokens, shaped as the apiserver's (storage.EncodeContinue):
// base64url (no padding) of {"v":"meta.k8s.io/v1","rv":<revision>,"start":"<ns>/<name>"}
// (and berth's "o", see ContinueToken::offset).
// Clients treat them as opaque. Here `start` is the last key returned; the
// next page begins strictly after it. rv = 0 marks an "inconsistent" token
// that continues at the latest revision (what the apiserver hands back with
// the 410 for an expired token).
//
// Thread-safety: pure functions.
#pragma once

#include "core/status.h"

#include <cstdint>
#include <string>

namespace berth::store {

struct ContinueToken {
  int64_t revision = 0;  // the list's revision; 0 = latest (inconsistent continuation)
  std::string ns;        // last key returned
  std::string name;
  // Objects of the list's scope (its resource and namespace, no selector) up to and
  // including `name`, so the next page's remainingItemCount is computed without counting
  // what follows; -1 = unknown (then omitted from the encoding). Field "o".
  int64_t offset = -1;

  bool operator==(const ContinueToken&) const = default;
};

std::string EncodeContinue(const ContinueToken& token);

// kBadRequest "continue key is not valid: <why>" for anything EncodeContinue
// did not produce.
StatusOr<ContinueToken> DecodeContinue(const std::string& token);

// The token to offer with a 410 for an expired `token`: same position, latest
// revision. Returns "" when `token` does not decode.
std::string InconsistentContinue(const std::string& token);

}  // namespace berth::store
