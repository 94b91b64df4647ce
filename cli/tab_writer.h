// TabWriter: Go's text/tabwriter (with the RememberWidths flag of
// github.com/liggitt/tabwriter, the fork kubectl vendors), which is how kubectl
// aligns every table it prints.
//
// Text is written as lines of '\t'-terminated cells; the text after a line's
// last tab is not part of a column and is printed as is. A column *block* is
// a run of consecutive lines that all have a cell in that column; a line with
// fewer cells ends the block, so alignment restarts after it (kubectl
// describe relies on this: "Spec:" lines split the key/value blocks). Each
// cell of a block is padded with the pad character to the block's width:
//   max(min_width, max over the block of (cell width + padding)).
// Widths count UTF-8 code points, as Go's tabwriter counts runes.
//
// Settings kubectl uses:
//   get (cli-runtime printers.GetNewTabWriter): min_width 6, padding 3,
//     remember_widths (later flushes of `get -w` never narrow a column).
//   describe (tabbedString): min_width 0, padding 2.
//
// Thread-safety: a TabWriter is a value used by one thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace berth::cli {

struct TabWriterOptions {
  int min_width = 0;
  int padding = 1;
  char pad_char = ' ';
  // Keep each column's largest width across Flush() calls (widths grow only).
  bool remember_widths = false;
};

class TabWriter {
 public:
  explicit TabWriter(TabWriterOptions options) : options_(options) {}

  // Appends text; lines end at '\n'. Nothing is formatted until Flush().
  void Write(std::string_view text);
  // Formats every buffered line (an unterminated last line too) and returns
  // the text; the buffer is emptied.
  std::string Flush();

  // kubectl's `get` writer and `describe` writer.
  static TabWriterOptions GetOptions() { return {6, 3, ' ', true}; }
  static TabWriterOptions DescribeOptions() { return {0, 2, ' ', false}; }

 private:
  struct Cell {
    std::string text;
    int width = 0;
  };
  using Line = std::vector<Cell>;  // every cell but the last was tab-terminated

  void Format(std::string* out, size_t line0, size_t line1);
  void WriteLines(std::string* out, size_t line0, size_t line1);

  TabWriterOptions options_;
  std::string pending_;             // text not yet split into lines
  std::vector<Line> lines_;
  std::vector<int> widths_;         // widths of the columns being formatted
  std::vector<int> max_widths_;     // remember_widths: per column, across flushes
};

// The number of UTF-8 code points in s (invalid bytes count one each).
int RuneCount(std::string_view s);

}  // namespace berth::cli
