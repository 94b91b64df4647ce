// Container log files, in the layout and format `kubectl logs` needs.
//
// Layout (as the kubelet's /var/log/pods/<ns>_<pod>_<uid>/<container>/<n>.log):
//   <pod dir>/logs/<container>/<restartCount>.log       raw stdout+stderr bytes
//   <pod dir>/logs/<container>/<restartCount>.log.ts    timestamps index
// One file pair per run of a container, so `--previous` reads run n-1.
//
// The index has one text line per log line: "<byte offset> <RFC3339Nano>\n",
// the offset of the line's first byte in the .log file and the time (from the
// injected Clock) the agent read it. ReadContainerLog uses it to serve
// `timestamps=true` ("2026-01-01T00:00:00.000000000Z <line>", as the API
// server prefixes each line) and `sinceTime`.
//
// Thread-safety: a ContainerLogWriter is used by one thread (the container's
// monitor); ReadContainerLog may run concurrently with it (it reads what has
// been flushed; a partial last line is served as it is).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/status.h"

namespace berth::agent::shim {

// "<pod_dir>/logs/<container>/<restart_count>.log".
std::string ContainerLogPath(const std::string& pod_dir, std::string_view container, int restart_count);

// "2026-01-01T00:00:00.123456789Z" (RFC 3339 with nanoseconds, as Go's RFC3339Nano
// but always 9 digits).
std::string FormatRfc3339Nano(Time t);

class ContainerLogWriter {
 public:
  // Creates (truncates) `path` and `path + ".ts"`; parent directories are created.
  static StatusOr<std::unique_ptr<ContainerLogWriter>> Open(const std::string& path, const Clock& clock);
  ~ContainerLogWriter();
  ContainerLogWriter(const ContainerLogWriter&) = delete;
  ContainerLogWriter& operator=(const ContainerLogWriter&) = delete;

  // Appends bytes read from the container; every line that starts in `data`
  // gets an index entry stamped clock.Now(). Flushes both files.
  void Append(std::string_view data);

 private:
  ContainerLogWriter(std::FILE* log, std::FILE* index, const Clock& clock) : log_(log), index_(index), clock_(clock) {}
  std::FILE* log_;
  std::FILE* index_;
  const Clock& clock_;
  uint64_t offset_ = 0;
  bool at_line_start_ = true;
};

// Query options of GET pods/<name>/log (the non-streaming ones).
struct LogReadOptions {
  bool timestamps = false;
  std::optional<int64_t> tail_lines;   // last N lines
  std::optional<int64_t> limit_bytes;  // at most N bytes of output
  std::optional<Time> since_time;      // lines read at or after this time
};

// The log text as the API server returns it. Errors: kNotFound when the log
// file does not exist.
StatusOr<std::string> ReadContainerLog(const std::string& path, const LogReadOptions& options);

}  // namespace berth::agent::shim
