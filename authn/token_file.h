// Static bearer tokens from a file, as kube-apiserver's --token-auth-file
// (staging/src/k8s.io/apiserver/pkg/authentication/token/tokenfile/tokenfile.go).
//
// The file is CSV, one token per record:
//   token,user,uid[,"group1,group2,..."]
// Quoted fields may hold commas and doubled quotes (RFC 4180, as Go's
// encoding/csv reads it); fields are not trimmed. A record with fewer than
// three fields is an error naming the file and the count; a record with an
// empty token is skipped; for a token given twice the last record wins (both
// upstream behaviours, upstream logs a warning for each). Blank lines are
// skipped.
//
// Limits: the file may hold at most kMaxTokenFileBytes (berth's bound; upstream
// reads any size), and a token is at most kMaxBearerTokenBytes long when
// presented.
//
// Thread-safety: immutable after Load/Parse; Authenticate is safe from any
// number of threads.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "authn/user_info.h"
#include "core/status.h"

namespace berth::authn {

inline constexpr std::size_t kMaxTokenFileBytes = 16 * 1024 * 1024;
// A bearer token longer than this is refused without a lookup. Upstream sets
// no bound of its own; Go's net/http bounds all request headers to 1 MiB.
inline constexpr std::size_t kMaxBearerTokenBytes = 64 * 1024;

class TokenFile {
 public:
  TokenFile() = default;
  // Errors: kNotFound / kInternal naming the path when it cannot be read;
  // kInvalid for a malformed record, naming the path and the record number.
  static StatusOr<TokenFile> Load(const std::string& path);
  static StatusOr<TokenFile> Parse(std::string_view text, std::string_view source = "token file");

  // The user the token belongs to, or nullopt.
  std::optional<UserInfo> Authenticate(std::string_view token) const;
  std::size_t size() const { return tokens_.size(); }

 private:
  std::unordered_map<std::string, UserInfo> tokens_;
};

// Splits CSV text into records of fields (RFC 4180 quoting). Errors: kInvalid
// for a quote that is never closed or text after a closing quote, with the
// line number.
StatusOr<std::vector<std::vector<std::string>>> ParseCsv(std::string_view text);

}  // namespace berth::authn
