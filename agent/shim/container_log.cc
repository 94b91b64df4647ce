#include "agent/shim/container_log.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
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

StatusOr<std::unique_ptr<ContainerLogWriter>> ContainerLogWriter::Open(const std::string& path, const Clock& clock) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) return InternalError("creating log directory for " + path + ": " + ec.message());
  std::FILE* log = std::fopen(path.c_str(), "wb");
  if (log == nullptr) return InternalError("opening " + path + ": " + std::strerror(errno));
  std::FILE* index = std::fopen((path + ".ts").c_str(), "wb");
  if (index == nullptr) {
    std::fclose(log);
    return InternalError("opening " + path + ".ts: " + std::strerror(errno));
  }
  return std::unique_ptr<ContainerLogWriter>(new ContainerLogWriter(log, index, clock));
}

ContainerLogWriter::~ContainerLogWriter() {
  std::fclose(log_);
  std::fclose(index_);
}

void ContainerLogWriter::Append(std::string_view data) {
  if (data.empty()) return;
  std::string stamp = FormatRfc3339Nano(clock_.Now());
  for (size_t i = 0; i < data.size(); ++i) {
    if (at_line_start_) {
      std::fprintf(index_, "%llu %s\n", static_cast<unsigned long long>(offset_ + i), stamp.c_str());
      at_line_start_ = false;
    }
    if (data[i] == '\n') at_line_start_ = true;
  }
  std::fwrite(data.data(), 1, data.size(), log_);
  offset_ += data.size();
  std::fflush(log_);
  std::fflush(index_);
}

namespace {

struct IndexEntry {
  uint64_t offset;
  std::string stamp;
  Time time;
};

std::vector<IndexEntry> ReadIndex(const std::string& path) {
  std::vector<IndexEntry> out;
  std::ifstream in(path + ".ts");
  std::string line;
  while (std::getline(in, line)) {
    auto sp = line.find(' ');
    if (sp == std::string::npos) continue;
    IndexEntry e;
    e.offset = std::stoull(line.substr(0, sp));
    e.stamp = line.substr(sp + 1);
    if (!ParseRfc3339(e.stamp, &e.time)) continue;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

StatusOr<std::string> ReadContainerLog(const std::string& path, const LogReadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("log file " + path + " not found");
  std::stringstream buf;
  buf << in.rdbuf();
  std::string text = buf.str();

  // Split into lines (a partial last line counts as a line).
  struct Line {
    std::string_view text;
    const IndexEntry* entry;
  };
  std::vector<IndexEntry> index;
  if (options.timestamps || options.since_time) index = ReadIndex(path);
  std::vector<Line> lines;
  size_t next_entry = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string::npos ? text.size() : nl + 1;
    while (next_entry < index.size() && index[next_entry].offset < pos) ++next_entry;
    const IndexEntry* e = next_entry < index.size() && index[next_entry].offset == pos ? &index[next_entry] : nullptr;
    lines.push_back({std::string_view(text).substr(pos, end - pos), e});
    pos = end;
  }
  size_t first = 0;
  if (options.since_time) {
    while (first < lines.size() && lines[first].entry != nullptr && lines[first].entry->time < *options.since_time) {
      ++first;
    }
  }
  if (options.tail_lines && *options.tail_lines >= 0 &&
      lines.size() - first > static_cast<size_t>(*options.tail_lines)) {
    first = lines.size() - static_cast<size_t>(*options.tail_lines);
  }
  std::string out;
  for (size_t i = first; i < lines.size(); ++i) {
    if (options.timestamps) {
      out += lines[i].entry != nullptr ? lines[i].entry->stamp : FormatRfc3339Nano(Time{});
      out += ' ';
    }
    out += lines[i].text;
  }
  if (options.limit_bytes && *options.limit_bytes >= 0 && out.size() > static_cast<size_t>(*options.limit_bytes)) {
    out.resize(static_cast<size_t>(*options.limit_bytes));
  }
  return out;
}

}  // namespace berth::agent::shim
