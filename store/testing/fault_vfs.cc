#include "store/testing/fault_vfs.h"

#include <cstdlib>
#include <cstring>
#include <sqlite3.h>

namespace berth::store::testing {
namespace {

// An open file: ours first, the default VFS's right behind it.
struct FaultFile {
  sqlite3_file base;
  sqlite3_file* real;
};

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<FaultFile*>(f)->real; }

int Close(sqlite3_file* f) { return Real(f)->pMethods->xClose(Real(f)); }
int Read(sqlite3_file* f, void* buf, int amt, sqlite3_int64 offset) {
  return Real(f)->pMethods->xRead(Real(f), buf, amt, offset);
}
int Write(sqlite3_file* f, const void* buf, int amt, sqlite3_int64 offset) {
  if (FaultVfs::Get().full()) {
    sqlite3_int64 size = 0;
    int rc = Real(f)->pMethods->xFileSize(Real(f), &size);
    if (rc != SQLITE_OK) return rc;
    if (offset + amt > size) return SQLITE_FULL;
  }
  return Real(f)->pMethods->xWrite(Real(f), buf, amt, offset);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) { return Real(f)->pMethods->xTruncate(Real(f), size); }
int Sync(sqlite3_file* f, int flags) {
  if (FaultVfs::Get().sync_fails()) return SQLITE_IOERR_FSYNC;
  return Real(f)->pMethods->xSync(Real(f), flags);
}
int FileSize(sqlite3_file* f, sqlite3_int64* size) { return Real(f)->pMethods->xFileSize(Real(f), size); }
int Lock(sqlite3_file* f, int level) { return Real(f)->pMethods->xLock(Real(f), level); }
int Unlock(sqlite3_file* f, int level) { return Real(f)->pMethods->xUnlock(Real(f), level); }
int CheckReservedLock(sqlite3_file* f, int* out) { return Real(f)->pMethods->xCheckReservedLock(Real(f), out); }
int FileControl(sqlite3_file* f, int op, void* arg) { return Real(f)->pMethods->xFileControl(Real(f), op, arg); }
int SectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
int DeviceCharacteristics(sqlite3_file* f) { return Real(f)->pMethods->xDeviceCharacteristics(Real(f)); }
int ShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  return Real(f)->pMethods->xShmMap(Real(f), region, size, extend, out);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
int ShmUnmap(sqlite3_file* f, int remove) { return Real(f)->pMethods->xShmUnmap(Real(f), remove); }
int Fetch(sqlite3_file* f, sqlite3_int64 offset, int amt, void** out) {
  return Real(f)->pMethods->xFetch(Real(f), offset, amt, out);
}
int Unfetch(sqlite3_file* f, sqlite3_int64 offset, void* p) { return Real(f)->pMethods->xUnfetch(Real(f), offset, p); }

const sqlite3_io_methods kMethods = {
    3,
    Close,
    Read,
    Write,
    Truncate,
    Sync,
    FileSize,
    Lock,
    Unlock,
    CheckReservedLock,
    FileControl,
    SectorSize,
    DeviceCharacteristics,
    ShmMap,
    ShmLock,
    ShmBarrier,
    ShmUnmap,
    Fetch,
    Unfetch,
};

sqlite3_vfs* Default() {
  static sqlite3_vfs* const vfs = sqlite3_vfs_find(nullptr);
  return vfs;
}

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out_flags) {
  auto* file = reinterpret_cast<FaultFile*>(f);
  file->base.pMethods = nullptr;
  file->real = reinterpret_cast<sqlite3_file*>(file + 1);
  int rc = Default()->xOpen(Default(), name, file->real, flags, out_flags);
  if (rc == SQLITE_OK && file->real->pMethods != nullptr) file->base.pMethods = &kMethods;
  return rc;
}

int Delete(sqlite3_vfs*, const char* name, int sync_dir) { return Default()->xDelete(Default(), name, sync_dir); }
int Access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return Default()->xAccess(Default(), name, flags, out);
}
int FullPathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return Default()->xFullPathname(Default(), name, n, out);
}

}  // namespace

FaultVfs::FaultVfs() {
  static sqlite3_vfs vfs = [] {
    sqlite3_vfs v = *Default();  // dlopen, randomness, sleep, time: the default's
    v.szOsFile = static_cast<int>(sizeof(FaultFile)) + Default()->szOsFile;
    v.zName = kName;
    v.pNext = nullptr;
    v.xOpen = Open;
    v.xDelete = Delete;
    v.xAccess = Access;
    v.xFullPathname = FullPathname;
    return v;
  }();
  if (sqlite3_vfs_register(&vfs, /*makeDflt=*/0) != SQLITE_OK) std::abort();
}

FaultVfs& FaultVfs::Get() {
  static FaultVfs* const instance = new FaultVfs();
  return *instance;
}

}  // namespace berth::store::testing
