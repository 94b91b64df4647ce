// Container log files, in the layout and format `kubectl logs` needs, rotated
// as the kubelet rotates them.
//
// Layout (as the kubelet's /var/log/pods/<ns>_<pod>_<uid>/<container>/<n>.log):
//   <pod dir>/logs/<container>/<restartCount>.log       raw stdout+stderr bytes
//   <pod dir>/logs/<container>/<restartCount>.log.ts    timestamps index
//   <pod dir>/logs/<container>/<restartCount>.log.<YYYYMMDD-HHMMSS>[-NNNNNN]
//                                                       rotated, with its .ts
// One file set per run of a container, so `--previous` reads run n-1.
//
// The index has one text line per log line: "<byte offset> <RFC3339Nano>\n",
// the offset of the line's first byte in its .log file and the time (from the
// injected Clock) the writer read it. The reader uses it to serve
// `timestamps=true` ("2026-01-01T00:00:00.000000000Z <line>", as the API
// server prefixes each line) and `sinceTime`.
//
// Rotation follows the kubelet's container log manager
// (pkg/kubelet/logs/container_log_manager.go): once the current file has
// reached `max_bytes` (log and index bytes together: the kubelet's CRI files
// carry each line's timestamp, and it measures them whole) it is renamed to
// "<n>.log.<UTC time as 20060102-150405>" (rotateLatestLog's timestampFormat)
// and a new <n>.log is started; rotated files beyond `max_files` - 1 are
// removed, oldest first (removeExcessLogs keeps MaxFiles - 2 before it
// rotates, so MaxFiles files remain with the current one). Departures: the
// writer rotates itself, at the first line start after the limit (the kubelet
// checks every 10 s, so its files overshoot by whatever was written
// meanwhile); a line that runs kMaxLogLineBytes past the limit is cut there
// (containerd splits lines at 16 KiB too); a second rotation within the same
// second gets "-000001", "-000002", ... so names sort in rotation order;
// rotated files are not gzip-compressed, so `--tail` can read them backwards.
// A rotated file is first linked to its new name and the new current file
// renamed over the old name, so a reader always finds "<n>.log".
//
// Reading: ReadContainerLog serves the options of one GET pods/log over the
// rotated files and the current one, oldest first, as one log; `tailLines`
// reads backwards from the end, so its cost is the tail's size, not the log's
// (LogReadOptions::bytes_read counts what was read). ReadContainerLogFrom
// continues from a LogCursor (what `kubectl logs -f` needs): only the bytes
// written after it are read, also across rotations (a cursor names its file
// by inode, which a rename keeps).
//
// Thread-safety: a ContainerLogWriter is used by one thread (the container's
// supervisor); readers may run concurrently with it (they read what has been
// flushed; a partial last line is served as it is). A read racing a rotation
// may miss the timestamps of the lines it reads (they are then printed as the
// zero time).
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/status.h"

namespace berth::agent::shim {

// kubelet `containerLogMaxSize` default "10Mi" (KubeletConfiguration,
// pkg/kubelet/apis/config/v1beta1/defaults.go).
inline constexpr int64_t kDefaultContainerLogMaxBytes = 10 << 20;
// kubelet `containerLogMaxFiles` default 5; the kubelet refuses fewer than 2.
inline constexpr int kDefaultContainerLogMaxFiles = 5;
inline constexpr int kMinContainerLogMaxFiles = 2;
// How far a line may run past the size limit before it is cut: containerd's
// `max_container_log_line_size` default, 16 KiB.
inline constexpr int64_t kMaxLogLineBytes = 16 << 10;

// How a run's log is rotated. max_bytes < 0 disables rotation (as the
// kubelet's negative containerLogMaxSize does).
struct LogRotation {
  int64_t max_bytes = kDefaultContainerLogMaxBytes;
  int max_files = kDefaultContainerLogMaxFiles;  // >= 2
  bool operator==(const LogRotation&) const = default;
};

// "<pod_dir>/logs/<container>/<restart_count>.log".
std::string ContainerLogPath(const std::string& pod_dir, std::string_view container, int restart_count);

// "2026-01-01T00:00:00.123456789Z" (RFC 3339 with nanoseconds, as Go's RFC3339Nano
// but always 9 digits).
std::string FormatRfc3339Nano(Time t);

class ContainerLogWriter {
 public:
  // Creates (truncates) `path` and `path + ".ts"`; parent directories are created.
  static StatusOr<std::unique_ptr<ContainerLogWriter>> Open(const std::string& path, const Clock& clock,
                                                            LogRotation rotation = {});
  ~ContainerLogWriter();
  ContainerLogWriter(const ContainerLogWriter&) = delete;
  ContainerLogWriter& operator=(const ContainerLogWriter&) = delete;

  // Appends bytes read from the container; every line that starts in `data`
  // gets an index entry stamped clock.Now(). Rotates as the file comment
  // says. Flushes both files (the index first, so a reader that sees a line
  // also sees its entry).
  void Append(std::string_view data);

 private:
  ContainerLogWriter(std::string path, std::FILE* log, std::FILE* index, const Clock& clock, LogRotation rotation)
      : path_(std::move(path)), log_(log), index_(index), clock_(clock), rotation_(rotation) {}
  void Write(std::string_view data, const std::string& stamp);
  // Starts a new current file; false (and the current file kept) on an error.
  bool Rotate();

  std::string path_;
  std::FILE* log_;
  std::FILE* index_;
  const Clock& clock_;
  LogRotation rotation_;
  uint64_t offset_ = 0;       // bytes in the current .log
  uint64_t index_bytes_ = 0;  // bytes in the current .log.ts
  bool at_line_start_ = true;
  std::deque<std::string> rotated_;  // rotated names, oldest first
  std::string last_stamp_;           // the last rotation's time suffix
  int same_stamp_ = 0;               // rotations within that second so far
};

// Where a reader has read up to in one run's log.
struct LogCursor {
  uint64_t file_id = 0;  // inode of the file `offset` is in; 0 = before the first file
  uint64_t offset = 0;
  bool line_start = true;  // `offset` starts a line (else it continues one)
  // Holds that file open, so that its inode is not given to a new file once
  // rotation removes it (the cursor then continues at the oldest file left).
  std::shared_ptr<void> pin;
};

// Query options of GET pods/<name>/log (the non-streaming ones).
struct LogReadOptions {
  bool timestamps = false;
  std::optional<int64_t> tail_lines;   // last N lines
  std::optional<int64_t> limit_bytes;  // at most N bytes of output
  std::optional<Time> since_time;      // lines read at or after this time
  // When set, every byte read from the files (log and index) is added to it.
  uint64_t* bytes_read = nullptr;
};

struct LogChunk {
  std::string text;
  LogCursor end;        // after the last byte read
  bool at_end = false;  // everything the files held when the read began was read
};

// The log text as the API server returns it; `end` is where a follower
// continues. Errors: kNotFound when no file of the log exists.
StatusOr<LogChunk> ReadContainerLog(const std::string& path, const LogReadOptions& options);

// What was written after `from` (tail_lines is ignored; since_time,
// timestamps and limit_bytes apply), at most `max_bytes` bytes of the log
// files. A cursor whose file was removed (more rotations than max_files
// happened since) continues at the oldest file left. Errors: kNotFound when
// no file of the log exists.
StatusOr<LogChunk> ReadContainerLogFrom(const std::string& path, const LogCursor& from, const LogReadOptions& options,
                                        size_t max_bytes = std::numeric_limits<size_t>::max());

}  // namespace berth::agent::shim
