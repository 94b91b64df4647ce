#include "core/file.h"

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace berth {
namespace {

Status Errno(const std::string& what, const std::string& path) {
  return InternalError(what + " " + path + ": " + std::strerror(errno));
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view contents, mode_t mode, FileDurability durability) {
  const std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return Errno("cannot create", tmp);
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Status s = Errno("cannot write", tmp);
      close(fd);
      unlink(tmp.c_str());
      return s;
    }
    done += static_cast<size_t>(n);
  }
  if (durability == FileDurability::kSynced && fsync(fd) != 0) {
    Status s = Errno("cannot sync", tmp);
    close(fd);
    unlink(tmp.c_str());
    return s;
  }
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = Errno("cannot rename " + tmp + " to", path);
    unlink(tmp.c_str());
    return s;
  }
  if (durability == FileDurability::kSynced) {
    const std::string dir = DirectoryOf(path);
    int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      fsync(dfd);
      close(dfd);
    }
  }
  return Status::Ok();
}

Status SyncPath(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return Errno("cannot open", path);
  Status s = fsync(fd) == 0 ? Status::Ok() : Errno("cannot sync", path);
  close(fd);
  return s;
}

Status SyncFileAndDirectory(const std::string& path) {
  if (Status s = SyncPath(path); !s.ok()) return s;
  return SyncPath(DirectoryOf(path));
}

StatusOr<std::string> ReadFileBounded(const std::string& path, size_t max_bytes, bool follow_symlinks) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | (follow_symlinks ? 0 : O_NOFOLLOW));
  if (fd < 0) {
    if (errno == ENOENT) return NotFoundError(path + " does not exist");
    if (errno == ELOOP) return InvalidError(path + " is a symbolic link");
    return Errno("cannot open", path);
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return InvalidError(path + " is not a regular file");
  }
  std::string out;
  char buf[8192];
  while (true) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status s = Errno("cannot read", path);
      close(fd);
      return s;
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > max_bytes) {
      close(fd);
      return TooLargeError(path + " is larger than " + std::to_string(max_bytes) + " bytes");
    }
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

namespace {

// The names in the directory `fd` (without . and ..); the stream is on a dup of `fd`.
Status ListNames(int fd, const std::string& path, std::vector<std::string>* names) {
  names->clear();
  int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (dup_fd < 0) return Errno("cannot read", path);
  DIR* dir = fdopendir(dup_fd);
  if (dir == nullptr) {
    close(dup_fd);
    return Errno("cannot read", path);
  }
  rewinddir(dir);
  while (const dirent* e = readdir(dir)) {
    const std::string_view n = e->d_name;
    if (n != "." && n != "..") names->emplace_back(n);
  }
  closedir(dir);
  return Status::Ok();
}

}  // namespace

Status RemoveTree(const std::string& path) {
  int top = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (top < 0) {
    if (errno == ENOENT) return Status::Ok();
    if (errno == ENOTDIR || errno == ELOOP) {
      if (unlink(path.c_str()) != 0 && errno != ENOENT) return Errno("cannot remove", path);
      return Status::Ok();
    }
    return Errno("cannot open", path);
  }
  struct stat top_st {};
  if (fstat(top, &top_st) != 0) {
    Status s = Errno("cannot stat", path);
    close(top);
    return s;
  }
  uint64_t moved = 0;
  std::vector<std::string> names;
  std::vector<std::string> inner;
  Status result = Status::Ok();
  // Each round: every non-directory at the top is unlinked; every directory's entries move up
  // to the top under fresh names, then the emptied directory is removed. Rounds end when the
  // top holds nothing.
  while (result.ok()) {
    if (Status s = ListNames(top, path, &names); !s.ok()) {
      result = s;
      break;
    }
    if (names.empty()) break;
    bool progress = false;  // a round that changes nothing would repeat forever
    for (const std::string& name : names) {
      struct stat st {};
      if (fstatat(top, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
      if (!S_ISDIR(st.st_mode)) {
        if (unlinkat(top, name.c_str(), 0) == 0 || errno == ENOENT) {
          progress = true;
        } else {
          result = Errno("cannot remove", path + "/" + name);
        }
        continue;
      }
      if (st.st_dev != top_st.st_dev) {
        errno = EBUSY;
        result = Errno("cannot remove (a mount point)", path + "/" + name);
        continue;
      }
      if (unlinkat(top, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT) {  // was empty
        progress = true;
        continue;
      }
      int sub = openat(top, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0) continue;  // replaced meanwhile: the next round sees what is there
      struct stat sub_st {};
      if (fstat(sub, &sub_st) == 0 && sub_st.st_ino == st.st_ino && sub_st.st_dev == st.st_dev &&
          ListNames(sub, path + "/" + name, &inner).ok()) {
        for (const std::string& child : inner) {
          // ".." never starts a name readdir gives, so the moved names cannot clash with "..".
          std::string to;
          do {
            to = ".berth-rm-" + std::to_string(++moved);
          } while (faccessat(top, to.c_str(), F_OK, AT_SYMLINK_NOFOLLOW) == 0);
          if (renameat(sub, child.c_str(), top, to.c_str()) == 0) {
            progress = true;
          } else if (errno != ENOENT) {
            result = Errno("cannot move up", path + "/" + name + "/" + child);
            break;
          }
        }
      }
      close(sub);
      if (result.ok() && unlinkat(top, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT && errno != ENOTEMPTY) {
        result = Errno("cannot remove", path + "/" + name);
      }
    }
    if (result.ok() && !progress) {
      errno = EACCES;
      result = Errno("cannot empty", path);
    }
  }
  close(top);
  if (!result.ok()) return result;
  if (rmdir(path.c_str()) != 0 && errno != ENOENT) return Errno("cannot remove", path);
  return Status::Ok();
}

}  // namespace berth
