// ResourceVersionNumber: an object's metadata.resourceVersion as the store revision it is.
//
// Upstream clients must treat a resourceVersion as opaque (the API conventions); they compare
// two only for equality. berth's own components run against berth's store, whose
// resourceVersions are its revisions written in decimal (store/store.h), growing with every
// write. They order two revisions of one object with this: the larger was written later. The
// informer-lag checks that need it (an in-process writer holding its own write's result while
// its informer still shows an older revision) are the node agent's and the Kueue cache's.
//
// Returns 0 when the field is absent, empty, or not a decimal number that fits an int64 (no
// revision of berth's store is 0), so an unreadable version orders before every real one.
// Thread-safety: a pure function of its argument.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>

#include "api/object.h"

namespace berth::api {

inline int64_t ResourceVersionNumber(const Object& obj) {
  const std::string& rv = ResourceVersion(obj);
  int64_t n = 0;
  const char* end = rv.data() + rv.size();
  auto [ptr, ec] = std::from_chars(rv.data(), end, n);
  if (ec != std::errc() || ptr != end || n < 0) return 0;
  return n;
}

}  // namespace berth::api
