#include "agent/shim/container_log.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace berth::agent::shim {

std::string ContainerLogPath(const std::string& pod_dir, std::string_view container, int restart_count) {
  return pod_dir + "/logs/" + std::string(container) + "/" + std::to_string(restart_count) + ".log";
}

std::string FormatRfc3339Nano(Time t) {
  auto secs = std::chrono::floor<std::chrono::seconds>(t);
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t - secs).count();
  std::string s = FormatRfc3339(secs);  // "...:SSZ"
  char frac[16];
  std::snprintf(frac, sizeof frac, ".%09lldZ", static_cast<long long>(ns));
  s.pop_back();
  return s + frac;
}

// ---------------------------------------------------------------------------
// Writing.

namespace {

constexpr char kIndexSuffix[] = ".ts";
constexpr char kNewSuffix[] = ".new";  // the next current file, before it is renamed into place

// "20260101-120000" (Go's "20060102-150405", UTC) from "2026-01-01T12:00:00Z".
std::string RotationStamp(Time t) {
  const std::string s = FormatRfc3339(std::chrono::floor<std::chrono::seconds>(t));
  return s.substr(0, 4) + s.substr(5, 2) + s.substr(8, 2) + "-" + s.substr(11, 2) + s.substr(14, 2) + s.substr(17, 2);
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A rotated file's suffix: "YYYYMMDD-HHMMSS" or "YYYYMMDD-HHMMSS-NNNNNN".
bool IsRotationSuffix(std::string_view s) {
  if (s.size() != 15 && s.size() != 22) return false;
  if (!AllDigits(s.substr(0, 8)) || s[8] != '-' || !AllDigits(s.substr(9, 6))) return false;
  return s.size() == 15 || (s[15] == '-' && AllDigits(s.substr(16, 6)));
}

}  // namespace

StatusOr<std::unique_ptr<ContainerLogWriter>> ContainerLogWriter::Open(const std::string& path, const Clock& clock,
                                                                       LogRotation rotation) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) return InternalError("creating log directory for " + path + ": " + ec.message());
  std::FILE* log = std::fopen(path.c_str(), "wb");
  if (log == nullptr) return InternalError("opening " + path + ": " + std::strerror(errno));
  std::FILE* index = std::fopen((path + kIndexSuffix).c_str(), "wb");
  if (index == nullptr) {
    std::fclose(log);
    return InternalError("opening " + path + kIndexSuffix + ": " + std::strerror(errno));
  }
  rotation.max_files = std::max(rotation.max_files, kMinContainerLogMaxFiles);
  return std::unique_ptr<ContainerLogWriter>(new ContainerLogWriter(path, log, index, clock, rotation));
}

ContainerLogWriter::~ContainerLogWriter() {
  std::fclose(log_);
  std::fclose(index_);
}

void ContainerLogWriter::Append(std::string_view data) {
  if (data.empty()) return;
  const std::string stamp = FormatRfc3339Nano(clock_.Now());
  while (!data.empty()) {
    size_t n = data.size();
    if (rotation_.max_bytes >= 0) {
      const uint64_t limit = static_cast<uint64_t>(rotation_.max_bytes);
      const uint64_t size = offset_ + index_bytes_;
      const uint64_t cut = limit + static_cast<uint64_t>(kMaxLogLineBytes);
      if (size >= limit && offset_ > 0 && (at_line_start_ || size >= cut) && Rotate()) continue;
      // One line at a time (each adds its index entry): up to the limit, then
      // on to the end of the line or to where it is cut.
      const size_t newline = data.find('\n');
      const uint64_t line = newline == std::string_view::npos ? data.size() : newline + 1;
      if (size < limit) {
        n = std::min<uint64_t>(line, limit - size);
      } else if (size < cut) {
        n = std::min<uint64_t>(line, cut - size);
      }
    }
    Write(data.substr(0, n), stamp);
    data.remove_prefix(n);
  }
  std::fflush(index_);
  std::fflush(log_);
}

void ContainerLogWriter::Write(std::string_view data, const std::string& stamp) {
  for (size_t i = 0; i < data.size(); ++i) {
    if (at_line_start_) {
      const int n = std::fprintf(index_, "%llu %s\n", static_cast<unsigned long long>(offset_ + i), stamp.c_str());
      if (n > 0) index_bytes_ += static_cast<uint64_t>(n);
      at_line_start_ = false;
    }
    if (data[i] == '\n') at_line_start_ = true;
  }
  std::fwrite(data.data(), 1, data.size(), log_);
  offset_ += data.size();
}

bool ContainerLogWriter::Rotate() {
  const std::string stamp = RotationStamp(clock_.Now());
  std::string suffix;
  if (stamp > last_stamp_) {
    last_stamp_ = stamp;
    same_stamp_ = 0;
    suffix = stamp;
  } else {
    char seq[16];
    std::snprintf(seq, sizeof seq, "-%06d", ++same_stamp_ % 1000000);
    suffix = last_stamp_ + seq;
  }
  const std::string rotated = path_ + "." + suffix;
  const std::string index_path = path_ + kIndexSuffix;
  std::FILE* log = std::fopen((path_ + kNewSuffix).c_str(), "wb");
  std::FILE* index = log == nullptr ? nullptr : std::fopen((index_path + kNewSuffix).c_str(), "wb");
  auto fail = [&] {
    if (log != nullptr) std::fclose(log);
    if (index != nullptr) std::fclose(index);
    unlink((path_ + kNewSuffix).c_str());
    unlink((index_path + kNewSuffix).c_str());
    return false;
  };
  if (index == nullptr) return fail();
  std::fflush(log_);
  std::fflush(index_);
  // The old file gets its rotated name first, then the new one takes the
  // current name: a reader always finds a current file.
  if (link(path_.c_str(), rotated.c_str()) != 0) return fail();
  if (link(index_path.c_str(), (rotated + kIndexSuffix).c_str()) != 0) {
    unlink(rotated.c_str());
    return fail();
  }
  if (rename((path_ + kNewSuffix).c_str(), path_.c_str()) != 0 ||
      rename((index_path + kNewSuffix).c_str(), index_path.c_str()) != 0) {
    // Unreachable in practice (same directory); keep writing the old file.
    unlink(rotated.c_str());
    unlink((rotated + kIndexSuffix).c_str());
    return fail();
  }
  std::fclose(log_);
  std::fclose(index_);
  log_ = log;
  index_ = index;
  offset_ = 0;
  index_bytes_ = 0;
  at_line_start_ = true;  // a line cut here continues as a line of its own
  rotated_.push_back(rotated);
  while (rotated_.size() > static_cast<size_t>(rotation_.max_files - 1)) {
    unlink(rotated_.front().c_str());
    unlink((rotated_.front() + kIndexSuffix).c_str());
    rotated_.pop_front();
  }
  return true;
}

// ---------------------------------------------------------------------------
// Reading.

namespace {

constexpr size_t kReadChunk = 64 << 10;  // forward reads
constexpr size_t kTailChunk = 8 << 10;   // backward reads (tail)
constexpr size_t kEntryProbe = 256;      // an index entry is ~50 bytes
constexpr uint64_t kLinearIndexBytes = 1024;

struct File {
  std::string path;
  int fd = -1;
  uint64_t id = 0;
  uint64_t size = 0;  // when opened
};

// The files of one log, oldest first (rotated ones, then the current one), opened.
class FileSet {
 public:
  FileSet() = default;
  FileSet(const FileSet&) = delete;
  FileSet& operator=(const FileSet&) = delete;
  ~FileSet() {
    for (const File& f : files) close(f.fd);
  }
  std::vector<File> files;
};

// Opens a regular file without following a symbolic link at its name.
bool OpenFile(const std::string& path, File* out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return false;
  }
  out->path = path;
  out->fd = fd;
  out->id = static_cast<uint64_t>(st.st_ino);
  out->size = static_cast<uint64_t>(st.st_size);
  return true;
}

Status OpenLog(const std::string& path, FileSet* set) {
  File current;
  const bool has_current = OpenFile(path, &current);
  const std::filesystem::path p(path);
  const std::string prefix = p.filename().string() + ".";
  std::vector<std::string> rotated;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(p.parent_path(), ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
        IsRotationSuffix(std::string_view(name).substr(prefix.size()))) {
      rotated.push_back(e.path().string());
    }
  }
  std::sort(rotated.begin(), rotated.end());
  for (const std::string& r : rotated) {
    File f;
    if (!OpenFile(r, &f)) continue;  // removed meanwhile
    if (has_current && f.id == current.id) {
      close(f.fd);  // linked, the current file not yet replaced: it is the current one
      continue;
    }
    set->files.push_back(std::move(f));
  }
  if (has_current) set->files.push_back(std::move(current));
  if (set->files.empty()) return NotFoundError("log file " + path + " not found");
  return Status::Ok();
}

size_t ReadAt(int fd, uint64_t offset, char* buf, size_t n, uint64_t* counter) {
  ssize_t r;
  do {
    r = pread(fd, buf, n, static_cast<off_t>(offset));
  } while (r < 0 && errno == EINTR);
  if (r <= 0) return 0;
  if (counter != nullptr) *counter += static_cast<uint64_t>(r);
  return static_cast<size_t>(r);
}

struct IndexEntry {
  uint64_t offset = 0;
  std::string stamp;
  Time time{};
};

bool ParseEntry(std::string_view line, IndexEntry* e) {
  const size_t sp = line.find(' ');
  if (sp == std::string_view::npos) return false;
  auto [end, ec] = std::from_chars(line.data(), line.data() + sp, e->offset);
  if (ec != std::errc() || end != line.data() + sp) return false;
  e->stamp = std::string(line.substr(sp + 1));
  return ParseRfc3339(e->stamp, &e->time);
}

// The timestamps index of one log file: sorted by offset, and by time (the
// writer stamps lines in order).
class Index {
 public:
  Index(const std::string& log_path, uint64_t* counter) : counter_(counter) {
    fd_ = open((log_path + kIndexSuffix).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    if (fd_ >= 0 && fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) size_ = static_cast<uint64_t>(st.st_size);
  }
  ~Index() {
    if (fd_ >= 0) close(fd_);
  }
  Index(const Index&) = delete;
  Index& operator=(const Index&) = delete;

  bool ok() const { return fd_ >= 0; }

  // The first entry for which `pred` holds (entries are false, then true), or
  // nullopt; the sequential reader then continues after it.
  template <typename Pred>
  std::optional<IndexEntry> Seek(Pred pred) {
    uint64_t lo = 0, hi = size_;  // the answer's position is in [lo, hi]
    while (hi - lo > kLinearIndexBytes) {
      const uint64_t mid = lo + (hi - lo) / 2;
      const uint64_t start = EntryStartAtOrAfter(mid);
      if (start >= hi) break;
      IndexEntry e;
      uint64_t next = 0;
      if (!EntryAt(start, &e, &next)) break;
      if (pred(e)) {
        hi = start;
      } else {
        lo = next;
      }
    }
    for (uint64_t pos = lo; pos < size_;) {
      IndexEntry e;
      uint64_t next = 0;
      if (!EntryAt(pos, &e, &next)) break;
      if (pred(e)) {
        buf_.clear();
        cur_ = 0;
        file_pos_ = next;
        return e;
      }
      pos = next;
    }
    file_pos_ = size_;
    return std::nullopt;
  }

  // The entry after the last one returned.
  std::optional<IndexEntry> Next() {
    while (true) {
      const size_t nl = buf_.find('\n', cur_);
      if (nl != std::string::npos) {
        IndexEntry e;
        const bool parsed = ParseEntry(std::string_view(buf_).substr(cur_, nl - cur_), &e);
        cur_ = nl + 1;
        if (parsed) return e;
        continue;
      }
      buf_.erase(0, cur_);
      cur_ = 0;
      if (file_pos_ >= size_) return std::nullopt;
      char chunk[4096];
      const size_t n = ReadAt(fd_, file_pos_, chunk, std::min<uint64_t>(sizeof chunk, size_ - file_pos_), counter_);
      if (n == 0) return std::nullopt;
      file_pos_ += n;
      buf_.append(chunk, n);
    }
  }

 private:
  uint64_t EntryStartAtOrAfter(uint64_t pos) {
    if (pos == 0) return 0;
    char buf[kEntryProbe];
    const size_t n = ReadAt(fd_, pos - 1, buf, sizeof buf, counter_);
    const void* nl = std::memchr(buf, '\n', n);
    if (nl == nullptr) return size_;
    return pos + static_cast<uint64_t>(static_cast<const char*>(nl) - buf);
  }
  bool EntryAt(uint64_t pos, IndexEntry* e, uint64_t* next) {
    char buf[kEntryProbe];
    const size_t n = ReadAt(fd_, pos, buf, std::min<uint64_t>(sizeof buf, size_ - pos), counter_);
    const void* nl = std::memchr(buf, '\n', n);
    if (nl == nullptr) return false;
    const size_t len = static_cast<size_t>(static_cast<const char*>(nl) - buf);
    *next = pos + len + 1;
    if (!ParseEntry(std::string_view(buf, len), e)) e->offset = 0;  // a damaged entry: never a match
    return true;
  }

  int fd_ = -1;
  uint64_t size_ = 0;
  uint64_t* counter_;
  std::string buf_;
  size_t cur_ = 0;
  uint64_t file_pos_ = 0;
};

struct Position {
  size_t file = 0;
  uint64_t offset = 0;
  bool operator<(const Position& o) const { return file != o.file ? file < o.file : offset < o.offset; }
};

// Where the last `*lines` lines of [lo, hi) of `f` start (a final line
// without '\n' counts). When [lo, hi) holds fewer, returns nullopt and
// subtracts the lines it holds from *lines.
std::optional<uint64_t> TailStart(const File& f, uint64_t lo, uint64_t hi, int64_t* lines, uint64_t* counter) {
  if (hi <= lo) return std::nullopt;
  int64_t seen = 0;
  char buf[kTailChunk];
  for (uint64_t pos = hi; pos > lo;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof buf, pos - lo));
    const uint64_t from = pos - want;
    const size_t n = ReadAt(f.fd, from, buf, want, counter);
    if (n < want) return lo;  // shrunk under us (never: logs only grow); serve from lo
    for (size_t j = n; j-- > 0;) {
      if (buf[j] != '\n' || from + j == hi - 1) continue;
      if (++seen == *lines) return from + j + 1;
    }
    pos = from;
  }
  *lines -= seen + 1;
  if (*lines == 0) return lo;
  return std::nullopt;
}

// Appends the lines of [from, to) of `f` to `out` as `o` says, until `out`
// holds `limit` bytes. *line_start: whether `from` starts a line (updated).
// Returns the offset reached.
uint64_t ReadRange(const File& f, uint64_t from, uint64_t to, bool* line_start, const LogReadOptions& o, size_t limit,
                   std::string* out) {
  std::optional<Index> index;
  std::optional<IndexEntry> entry;  // the first entry not before the current line
  if (o.timestamps || o.since_time) {
    index.emplace(f.path, o.bytes_read);
    if (index->ok()) entry = index->Seek([from](const IndexEntry& e) { return e.offset >= from; });
  }
  bool skip = false;  // the current line is before since_time
  std::vector<char> buf(kReadChunk);
  uint64_t pos = from;
  while (pos < to && out->size() < limit) {
    const size_t n = ReadAt(f.fd, pos, buf.data(), std::min<uint64_t>(buf.size(), to - pos), o.bytes_read);
    if (n == 0) break;
    size_t i = 0;
    while (i < n && out->size() < limit) {
      if (*line_start) {
        while (entry && entry->offset < pos + i) entry = index->Next();
        const IndexEntry* e = entry && entry->offset == pos + i ? &*entry : nullptr;
        skip = o.since_time && e != nullptr && e->time < *o.since_time;
        if (o.timestamps && !skip) {
          out->append(e != nullptr ? e->stamp : FormatRfc3339Nano(Time{}));
          out->push_back(' ');
        }
        *line_start = false;
      }
      const char* nl = static_cast<const char*>(std::memchr(buf.data() + i, '\n', n - i));
      const size_t end = nl != nullptr ? static_cast<size_t>(nl - buf.data()) + 1 : n;
      if (!skip) out->append(buf.data() + i, end - i);
      if (nl != nullptr) *line_start = true;
      i = end;
    }
    pos += i;
  }
  return pos;
}

// Reads from `start` to the end of the files (at most `max_bytes` of them).
LogChunk ReadForward(const FileSet& set, Position start, bool line_start, const LogReadOptions& o, size_t max_bytes) {
  const size_t limit =
      o.limit_bytes && *o.limit_bytes >= 0 ? static_cast<size_t>(*o.limit_bytes) : std::numeric_limits<size_t>::max();
  const std::vector<File>& files = set.files;
  LogChunk chunk;
  Position pos = start;
  uint64_t budget = max_bytes;
  while (true) {
    const File& f = files[pos.file];
    const uint64_t to = pos.offset + std::min<uint64_t>(budget, f.size - std::min(f.size, pos.offset));
    const uint64_t reached = ReadRange(f, pos.offset, to, &line_start, o, limit, &chunk.text);
    budget -= reached - pos.offset;
    pos.offset = reached;
    if (reached < f.size || pos.file + 1 == files.size()) break;
    ++pos.file;  // each file holds whole lines (a cut line continues as a new one)
    pos.offset = 0;
    line_start = true;
  }
  if (chunk.text.size() > limit) chunk.text.resize(limit);
  chunk.end = {files[pos.file].id, pos.offset, line_start, nullptr};
  if (int fd = fcntl(files[pos.file].fd, F_DUPFD_CLOEXEC, 0); fd >= 0) {
    chunk.end.pin = std::shared_ptr<void>(new int(fd), [](void* p) {
      close(*static_cast<int*>(p));
      delete static_cast<int*>(p);
    });
  }
  chunk.at_end = pos.file + 1 == files.size() && pos.offset >= files[pos.file].size;
  return chunk;
}

}  // namespace

StatusOr<LogChunk> ReadContainerLog(const std::string& path, const LogReadOptions& o) {
  FileSet set;
  if (Status s = OpenLog(path, &set); !s.ok()) return s;
  const std::vector<File>& files = set.files;
  const Position end{files.size() - 1, files.back().size};
  Position start;
  if (o.since_time) {
    // The first line stamped at or after since_time (a line without a stamp stops the search too).
    start = end;
    for (size_t i = 0; i < files.size(); ++i) {
      Index index(files[i].path, o.bytes_read);
      std::optional<IndexEntry> e;
      if (index.ok()) e = index.Seek([&](const IndexEntry& x) { return x.time >= *o.since_time; });
      if (!index.ok() || (e && e->offset < files[i].size)) {
        start = {i, index.ok() ? e->offset : 0};
        break;
      }
    }
  }
  if (o.tail_lines && *o.tail_lines >= 0) {
    int64_t lines = *o.tail_lines;
    Position tail = end;
    for (size_t i = files.size(); lines > 0 && i-- > start.file;) {
      const uint64_t lo = i == start.file ? start.offset : 0;
      std::optional<uint64_t> at = TailStart(files[i], lo, files[i].size, &lines, o.bytes_read);
      tail = {i, at ? *at : lo};
      if (at) break;
    }
    start = std::max(start, tail);
  }
  bool line_start = true;
  if (!(start < end)) {
    // Nothing to read: whether a follower continues a line.
    char last = '\n';
    if (end.offset > 0) ReadAt(files[end.file].fd, end.offset - 1, &last, 1, o.bytes_read);
    line_start = last == '\n';
    start = end;
  }
  return ReadForward(set, start, line_start, o, std::numeric_limits<size_t>::max());
}

StatusOr<LogChunk> ReadContainerLogFrom(const std::string& path, const LogCursor& from, const LogReadOptions& o,
                                        size_t max_bytes) {
  FileSet set;
  if (Status s = OpenLog(path, &set); !s.ok()) return s;
  Position start;
  bool line_start = true;
  for (size_t i = 0; i < set.files.size(); ++i) {
    if (set.files[i].id != from.file_id) continue;
    start = {i, std::min(from.offset, set.files[i].size)};
    line_start = from.line_start;
  }
  return ReadForward(set, start, line_start, o, max_bytes);
}

}  // namespace berth::agent::shim
