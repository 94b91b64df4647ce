// What the fuzz targets share: reporting a violated invariant (the process aborts, which
// libFuzzer reports as a crash and saves the input) and splitting an input into parts.
//
// Thread-safety: the fuzz targets are single-threaded; so is this.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/status.h"

namespace berth::fuzz {

// Prints `what` and `detail` (cut to 2000 bytes) and aborts.
[[noreturn]] inline void Violation(std::string_view what, std::string_view detail = {}) {
  if (detail.size() > 2000) detail = detail.substr(0, 2000);
  std::fprintf(stderr, "invariant violated: %.*s\n%.*s\n", static_cast<int>(what.size()), what.data(),
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

inline void Check(bool ok, std::string_view what, std::string_view detail = {}) {
  if (!ok) Violation(what, detail);
}

// A decoder's error must be one of the codes a request can answer with for bad input
// (400, 413, 415, 422), never an internal error.
inline void CheckInputError(const Status& s, std::string_view input) {
  switch (s.code()) {
    case Code::kInvalid:
    case Code::kBadRequest:
    case Code::kTooLarge:
    case Code::kUnsupportedMedia:
      return;
    default:
      Violation("an input error is not 400/413/415/422: " + s.ToString(), input);
  }
}

// The input as text, and its first line split off: Next() returns the text up to the next
// '\n' (all the rest when there is none) and Rest() what follows.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : text_(reinterpret_cast<const char*>(data), size) {}
  std::string_view text() const { return text_; }
  bool empty() const { return text_.empty(); }
  // The first byte (0 when empty), consumed.
  uint8_t Byte() {
    if (text_.empty()) return 0;
    uint8_t b = static_cast<uint8_t>(text_[0]);
    text_.remove_prefix(1);
    return b;
  }
  std::string_view Line() {
    size_t nl = text_.find('\n');
    std::string_view line = text_.substr(0, nl);
    text_.remove_prefix(nl == std::string_view::npos ? text_.size() : nl + 1);
    return line;
  }
  std::string_view Rest() const { return text_; }

 private:
  std::string_view text_;
};

}  // namespace berth::fuzz
