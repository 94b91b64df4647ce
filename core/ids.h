// Identifiers: object UIDs as Kubernetes writes them (RFC 4122 version 4
// UUIDs, lower-case, "8-4-4-4-12" hex), and short random suffixes for
// generateName ("<prefix>" + 5 characters from Kubernetes' alphabet
// "bcdfghjklmnpqrstvwxz2456789").
//
// Thread-safety: safe from any thread (thread-local generators seeded from
// std::random_device).
#pragma once

#include <string>

namespace berth {

std::string NewUid();
std::string RandomNameSuffix(int length = 5);

}  // namespace berth
