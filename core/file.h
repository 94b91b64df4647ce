// Small files written so that a crash never leaves a half-written one, and
// read with a size bound.
//
// WriteFileAtomically(path, contents, mode, durability): writes `path + ".tmp"`
//   (created with `mode`, truncated), fsyncs it, renames it over `path` and
//   fsyncs the directory, so after a crash at any point `path` holds either its
//   previous contents or all of `contents`, never a prefix. With
//   FileDurability::kDeferred both fsyncs are left to the caller: every process
//   sees `path` whole or not at all (the rename), also after the writer is
//   killed, but after a crash of the host it may hold its previous contents, be
//   missing or be empty until SyncFileAndDirectory(path) returned. Errors:
//   kInternal naming the path and errno's text.
// SyncPath(path): fsyncs the file or directory at `path` (not following a
//   symbolic link). Errors: kInternal naming it and errno's text.
// SyncFileAndDirectory(path): SyncPath of the file, then of its directory: what
//   a kDeferred write left to do.
// ReadFileBounded(path, max_bytes, follow_symlinks): the whole file, which
//   must be a regular file: it is opened non-blocking (a FIFO put in its place
//   can never block the reader) and checked with fstat; with follow_symlinks
//   false a symbolic link at `path` is refused too (O_NOFOLLOW). Errors:
//   kNotFound when it does not exist, kTooLarge when it holds more than
//   `max_bytes`, kInvalid when it is not a regular file (or is a refused
//   link), kInternal for other read errors (each naming the path).
// RemoveTree(path): removes `path` and everything below it, never following a
//   symbolic link (a link is removed, not its target) and never entering
//   another filesystem mounted inside (EBUSY there is an error). Whatever the
//   depth, it holds two directories open at a time: it works from the top,
//   moving the entries of each subdirectory up into `path` (renameat, so a
//   chain of 100,000 directories costs 100,000 renames, not 100,000 open
//   descriptors or stack frames) and removing the emptied subdirectory. A
//   missing `path` is success; a `path` that is not a directory is unlinked.
//   Errors: kInternal naming the path and errno's text (what was removed
//   stays removed).
//
// Thread-safety: plain functions; concurrent writers of one path race as
// rename(2) does (the last rename wins, each file whole).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <sys/types.h>

#include "core/status.h"

namespace berth {

enum class FileDurability { kSynced, kDeferred };
Status WriteFileAtomically(const std::string& path, std::string_view contents, mode_t mode = 0644,
                           FileDurability durability = FileDurability::kSynced);
Status SyncPath(const std::string& path);
Status SyncFileAndDirectory(const std::string& path);
StatusOr<std::string> ReadFileBounded(const std::string& path, size_t max_bytes, bool follow_symlinks = true);
Status RemoveTree(const std::string& path);

}  // namespace berth
