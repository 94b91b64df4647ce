// SqliteStore: the default, durable store, a CachedStore over one SQLite
// database file (the sqlite3 C API only).
//
// Schema (schema_version 1):
//   objects(key TEXT PRIMARY KEY, revision INTEGER, value TEXT) WITHOUT ROWID
//     key   = "<group>/<resource>/<namespace>/<name>" (group and namespace may
//             be empty; no part contains '/', which the store enforces)
//     value = the object's JSON, metadata.resourceVersion == revision
//   meta(name TEXT PRIMARY KEY, value INTEGER): "revision" (the global
//     revision counter, which deletions also advance), "schema_version" and
//     "probe" (rewritten by Persistence::Probe, the health probe; not read).
// A committed batch of writes is one transaction updating both tables, so the
// file always holds a state some acknowledged prefix of writes produced.
//
// Durability. journal_mode=WAL, locking_mode=EXCLUSIVE (one process owns the
// file; a second opener gets kUnavailable). Default synchronous=FULL: each
// commit fsyncs the WAL before the writers are acknowledged, so an
// acknowledged write survives kill -9 and power loss. With
// SqliteOptions::sync = kNormal the WAL is written (to the OS) but fsynced
// only at checkpoints: acknowledged writes survive kill -9 of the process
// (the OS keeps the written pages) but the last ones may be lost on power
// loss or a kernel crash; choose it only where that is acceptable.
// Concurrent writers are batched by CachedStore's group commit: one
// transaction and one fsync per batch.
//
// Faults. A commit that fails (SQLITE_FULL when the disk is full, SQLITE_IOERR,
// SQLITE_BUSY, an exception while writing the batch) is rolled back, so the
// file keeps its last committed state; the store answers kUnavailable
// `storage commit failed: sqlite: <step>: <SQLite's message>` (e.g. `sqlite:
// COMMIT: database or disk is full`) and the next commit tries again on the
// same connection (see cached_store.h).
//
// Recovery. Open reads the revision counter and every object into memory;
// the event history starts empty, so watches and continue tokens from before
// the open get kGone (clients relist, as after an apiserver restart).
//
// Thread-safety: as every Store.
#pragma once

#include <memory>
#include <string>

#include "store/cached_store.h"

namespace berth::store {

struct SqliteOptions {
  StoreOptions store;
  enum class Sync { kFull, kNormal };
  Sync sync = Sync::kFull;
  // The registered SQLite VFS to open the file with (sqlite3_vfs_register);
  // empty: SQLite's default. Tests inject storage faults with one
  // (store/testing/fault_vfs.h).
  std::string vfs;
};

class SqliteStore final : public CachedStore {
 public:
  // Opens (creating if needed) the database at path and recovers its
  // contents. kUnavailable when the file cannot be opened or is locked by
  // another process; kInternal when it holds something this code did not write.
  static StatusOr<std::unique_ptr<SqliteStore>> Open(const std::string& path, Clock& clock,
                                                     const SqliteOptions& options = {});

  // "<group>/<resource>/<namespace>/<name>" and back (false when malformed).
  static std::string EncodeKey(const ObjectKey& key);
  static bool DecodeKey(const std::string& encoded, ObjectKey* key);

 private:
  SqliteStore(Clock& clock, const StoreOptions& options, std::unique_ptr<Persistence> persistence,
              RecoveredState initial)
      : CachedStore(clock, options, std::move(persistence), std::move(initial)) {}
};

}  // namespace berth::store
