// FaultVfs: a SQLite VFS (sqlite3_vfs) over the default one that makes the
// disk fail on demand, for tests of the store's fault handling. Open a
// SqliteStore with SqliteOptions::vfs = FaultVfs::kName.
//
//   SetFull(true)       a write that would grow a file fails with SQLITE_FULL,
//                       what SQLite's unix VFS answers when write(2) or
//                       fallocate(2) reports ENOSPC (writes inside a file's
//                       current size still succeed, as on a full disk)
//   SetSyncFails(true)  every fsync fails with SQLITE_IOERR_FSYNC
// Everything else is passed to the default VFS unchanged, so SQLite takes its
// real error paths (the pager's rollback, the WAL's partial frames).
//
// Test code only. Thread-safety: the switches may be flipped from any thread.
#pragma once

#include <atomic>

namespace berth::store::testing {

class FaultVfs {
 public:
  static constexpr char kName[] = "berth-fault";

  // The process's instance, registered (not as the default VFS) on first use.
  static FaultVfs& Get();

  void SetFull(bool full) { full_ = full; }
  void SetSyncFails(bool fails) { sync_fails_ = fails; }
  bool full() const { return full_; }
  bool sync_fails() const { return sync_fails_; }

 private:
  FaultVfs();
  std::atomic<bool> full_{false};
  std::atomic<bool> sync_fails_{false};
};

}  // namespace berth::store::testing
