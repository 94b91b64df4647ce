// MemoryStore: the store with no persistence, for tests and benchmarks.
// Everything is lost when it is destroyed; revisions start at 1. Semantics,
// errors and thread-safety are CachedStore's (store.h, cached_store.h); writes
// are applied under the store mutex without batching.
#pragma once

#include "store/cached_store.h"

namespace berth::store {

class MemoryStore final : public CachedStore {
 public:
  explicit MemoryStore(Clock& clock, const StoreOptions& options = {})
      : CachedStore(clock, options, /*persistence=*/nullptr, RecoveredState{}) {}
};

}  // namespace berth::store
