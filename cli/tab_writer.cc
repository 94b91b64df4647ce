#include "cli/tab_writer.h"

namespace berth::cli {

int RuneCount(std::string_view s) {
  int n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;  // count every byte that does not continue a sequence
  }
  return n;
}

void TabWriter::Write(std::string_view text) { pending_.append(text); }

std::string TabWriter::Flush() {
  // Split the buffered text into lines of cells.
  lines_.clear();
  size_t start = 0;
  while (start < pending_.size()) {
    size_t nl = pending_.find('\n', start);
    const bool terminated = nl != std::string::npos;
    std::string_view line(pending_.data() + start, (terminated ? nl : pending_.size()) - start);
    Line cells;
    size_t cell_start = 0;
    for (size_t tab; (tab = line.find('\t', cell_start)) != std::string_view::npos; cell_start = tab + 1) {
      std::string_view c = line.substr(cell_start, tab - cell_start);
      cells.push_back({std::string(c), RuneCount(c)});
    }
    std::string_view last = line.substr(cell_start);
    cells.push_back({std::string(last), RuneCount(last)});
    lines_.push_back(std::move(cells));
    if (!terminated) {
      lines_.back().push_back({"\x01", -1});  // marker: no newline after this line
      break;
    }
    start = nl + 1;
  }
  pending_.clear();
  std::string out;
  widths_.clear();
  Format(&out, 0, lines_.size());
  lines_.clear();
  return out;
}

// Go's tabwriter.Writer.format: recursively finds column blocks, left to right.
void TabWriter::Format(std::string* out, size_t line0, size_t line1) {
  const size_t column = widths_.size();
  auto cells_in = [&](size_t i) {
    size_t n = lines_[i].size();
    if (n > 0 && lines_[i].back().width < 0) --n;  // the no-newline marker is not a cell
    return n;
  };
  for (size_t i = line0; i < line1; ++i) {
    if (column + 1 >= cells_in(i)) continue;
    // A cell exists in this column: print the lines before the block.
    WriteLines(out, line0, i);
    line0 = i;
    int width = options_.min_width;
    for (; i < line1; ++i) {
      if (column + 1 >= cells_in(i)) break;
      width = std::max(width, lines_[i][column].width + options_.padding);
    }
    if (options_.remember_widths) {
      if (max_widths_.size() < widths_.size()) {
        max_widths_.insert(max_widths_.end(), widths_.begin() + max_widths_.size(), widths_.end());
      }
      if (max_widths_.size() == widths_.size()) {
        max_widths_.push_back(width);
      } else if (max_widths_[widths_.size()] > width) {
        width = max_widths_[widths_.size()];
      } else {
        max_widths_[widths_.size()] = width;
      }
    }
    widths_.push_back(width);
    Format(out, line0, i);
    widths_.pop_back();
    line0 = i;
    --i;  // the loop's ++i resumes at the line that ended the block
  }
  WriteLines(out, line0, line1);
}

void TabWriter::WriteLines(std::string* out, size_t line0, size_t line1) {
  for (size_t i = line0; i < line1; ++i) {
    const Line& line = lines_[i];
    bool newline = true;
    for (size_t j = 0; j < line.size(); ++j) {
      const Cell& c = line[j];
      if (c.width < 0) {
        newline = false;
        break;
      }
      out->append(c.text);
      if (j < widths_.size() && j + 1 < line.size() && line[j + 1].width >= 0) {
        out->append(static_cast<size_t>(std::max(0, widths_[j] - c.width)), options_.pad_char);
      }
    }
    if (newline) out->push_back('\n');
  }
}

}  // namespace berth::cli
