#include "scheduling/host_images.h"

#include <algorithm>

namespace berth::scheduling {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

template <typename F>
void ForEachEntry(std::string_view text, F&& f) {
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view entry = Trim(text.substr(0, comma));
    if (!entry.empty()) f(entry);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
}

}  // namespace

std::vector<std::string> ParseHostImages(std::string_view text) {
  std::vector<std::string> out;
  ForEachEntry(text, [&](std::string_view e) {
    if (out.size() < kMaxHostImagePatterns && e.size() <= kMaxHostImagePatternBytes) out.emplace_back(e);
  });
  return out;
}

std::string ValidateHostImages(std::string_view text) {
  std::string error;
  size_t n = 0;
  ForEachEntry(text, [&](std::string_view e) {
    if (!error.empty()) return;
    if (++n > kMaxHostImagePatterns) {
      error = "more than " + std::to_string(kMaxHostImagePatterns) + " images";
    } else if (e.size() > kMaxHostImagePatternBytes) {
      error = "image \"" + std::string(e.substr(0, 64)) + "...\" is longer than " +
              std::to_string(kMaxHostImagePatternBytes) + " bytes";
    } else if (size_t star = e.find('*'); star != std::string_view::npos && star + 1 != e.size()) {
      error = "image \"" + std::string(e) + "\": '*' is only allowed at the end";
    }
  });
  return error;
}

bool HostImageAllowed(const std::vector<std::string>& patterns, std::string_view image) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
    if (!p.empty() && p.back() == '*')
      return image.substr(0, p.size() - 1) == std::string_view(p).substr(0, p.size() - 1);
    return image == p;
  });
}

std::optional<std::string> FirstUnsupportedImage(const std::optional<std::vector<std::string>>& patterns,
                                                 const std::vector<std::string>& images) {
  if (!patterns) return std::nullopt;
  for (const std::string& image : images) {
    if (!HostImageAllowed(*patterns, image)) return image;
  }
  return std::nullopt;
}

std::string FormatHostImages(const std::vector<std::string>& patterns) {
  std::string out;
  for (const std::string& p : patterns) out += (out.empty() ? "" : ",") + p;
  return out;
}

std::string UnsupportedImageReason(std::string_view image) {
  return "node(s) cannot run image \"" + std::string(image) + "\" on the host";
}

}  // namespace berth::scheduling
