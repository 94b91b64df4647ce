#include "tests/seeds/seed_manifests.h"

#include <cctype>

namespace berth::seeds {
namespace {

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

bool IsBlank(std::string_view line) {
  for (char c : line) {
    if (c != ' ' && c != '\t') return false;
  }
  return true;
}

bool IsIndented(std::string_view line) {
  return !line.empty() && (line[0] == ' ' || line[0] == '\t');
}

bool IsSeparator(std::string_view line) {
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  return line == "---";
}

bool IsComment(std::string_view line) { return !line.empty() && line[0] == '#'; }

// A column-0 mapping key: [A-Za-z_][A-Za-z0-9_./-]* followed by ':' and then a blank or
// the end of the line.
bool IsKeyLine(std::string_view line) {
  if (line.empty()) return false;
  unsigned char first = static_cast<unsigned char>(line[0]);
  if (!std::isalpha(first) && first != '_') return false;
  size_t i = 1;
  while (i < line.size()) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    if (std::isalnum(c) || c == '_' || c == '.' || c == '/' || c == '-') {
      ++i;
      continue;
    }
    break;
  }
  if (i >= line.size() || line[i] != ':') return false;
  return i + 1 == line.size() || line[i + 1] == ' ' || line[i + 1] == '\t';
}

bool StartsBlock(std::string_view line) { return line.starts_with("apiVersion:"); }

}  // namespace

std::vector<SeedManifest> ExtractManifests(std::string_view file, std::string_view text) {
  const std::vector<std::string_view> lines = SplitLines(text);
  const size_t n = lines.size();
  std::vector<SeedManifest> out;

  auto emit = [&](size_t first, size_t last) {  // [first, last); trailing blanks dropped
    while (last > first + 1 && IsBlank(lines[last - 1])) --last;
    SeedManifest m;
    m.file = std::string(file);
    m.line = static_cast<int>(first) + 1;
    m.end_line = static_cast<int>(last);
    for (size_t k = first; k < last; ++k) {
      m.text.append(lines[k]);
      m.text.push_back('\n');
    }
    out.push_back(std::move(m));
  };

  size_t i = 0;
  while (i < n) {
    if (!StartsBlock(lines[i])) {
      ++i;
      continue;
    }
    const size_t start = i;
    size_t j = i + 1;
    while (j < n) {
      std::string_view l = lines[j];
      if (IsBlank(l)) {
        size_t k = j;
        while (k < n && IsBlank(lines[k])) ++k;
        if (k < n && (IsIndented(lines[k]) || IsSeparator(lines[k]))) {
          j = k;
          continue;
        }
        break;
      }
      if (IsIndented(l) || IsSeparator(l) || IsComment(l) || IsKeyLine(l)) {
        ++j;
        continue;
      }
      break;
    }
    size_t end = j;
    while (end > start &&
           (IsBlank(lines[end - 1]) || IsSeparator(lines[end - 1]) || IsComment(lines[end - 1]))) {
      --end;
    }
    // Split into documents.
    bool open = false;
    size_t doc_start = 0;
    for (size_t k = start; k < end; ++k) {
      if (IsSeparator(lines[k])) {
        if (open) emit(doc_start, k);
        open = false;
        continue;
      }
      if (!open) {
        if (IsComment(lines[k]) || IsBlank(lines[k])) continue;
        open = true;
        doc_start = k;
      }
    }
    if (open) emit(doc_start, end);
    i = end > start ? end : start + 1;
  }
  return out;
}

}  // namespace berth::seeds
