#include "cli/table_printer.h"

#include <map>
#include <vector>

namespace berth::cli {

using nlohmann::json;

namespace {

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// WriteEscaped: tabs and other control characters would break the columns.
std::string Escaped(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      out += '?';
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string Labels(const json& row) {
  const json* labels = nullptr;
  if (auto o = row.find("object"); o != row.end() && o->is_object()) {
    if (auto m = o->find("metadata"); m != o->end() && m->is_object()) {
      if (auto l = m->find("labels"); l != m->end() && l->is_object()) labels = &*l;
    }
  }
  if (labels == nullptr || labels->empty()) return "<none>";
  std::string out;
  for (const auto& [k, v] : labels->items()) {  // nlohmann::json keeps keys sorted
    if (!out.empty()) out += ',';
    out += k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return out;
}

std::string RowNamespace(const json& row) {
  if (auto o = row.find("object"); o != row.end() && o->is_object()) {
    if (auto m = o->find("metadata"); m != o->end() && m->is_object()) return m->value("namespace", "");
  }
  return "";
}

}  // namespace

std::string CellText(const json& cell) {
  if (cell.is_null()) return "";
  if (cell.is_string()) {
    const std::string& s = cell.get_ref<const std::string&>();
    size_t brk = s.find_first_of("\f\n\r");
    if (brk == std::string::npos) return Escaped(s);
    return Escaped(std::string_view(s).substr(0, brk)) + "...";
  }
  return Escaped(cell.dump());
}

std::string TablePrinter::Print(const json& table) {
  const json empty = json::array();
  auto defined = table.find("columnDefinitions");
  if (defined != table.end() && defined->is_array() && !defined->empty()) last_columns_ = *defined;
  const json& columns = last_columns_;
  const json& rows = table.contains("rows") && table["rows"].is_array() ? table["rows"] : empty;
  if (rows.empty()) return "";
  std::vector<bool> shown;
  for (const auto& c : columns) shown.push_back(options_.wide || c.value("priority", 0) == 0);
  std::string text;
  auto cell = [&text, first = true](std::string_view s) mutable {
    if (!first) text += '\t';
    first = false;
    text += s;
  };
  if (!options_.no_headers && !header_printed_) {
    if (options_.with_namespace) cell("NAMESPACE");
    for (size_t i = 0; i < columns.size(); ++i) {
      if (shown[i]) cell(Upper(columns[i].value("name", "")));
    }
    if (options_.show_labels) cell("LABELS");
    text += '\n';
    header_printed_ = true;
  }
  for (const auto& row : rows) {
    std::string line;
    auto row_cell = [&line, first = true](std::string_view s) mutable {
      if (!first) line += '\t';
      first = false;
      line += s;
    };
    if (options_.with_namespace) row_cell(RowNamespace(row));
    const json& cells = row.contains("cells") && row["cells"].is_array() ? row["cells"] : empty;
    for (size_t i = 0; i < columns.size(); ++i) {
      if (!shown[i]) continue;
      row_cell(i < cells.size() ? CellText(cells[i]) : "");
    }
    if (options_.show_labels) row_cell(Labels(row));
    text += line + '\n';
    ++rows_printed_;
  }
  writer_.Write(text);
  return writer_.Flush();
}

std::string NoResourcesFound(std::string_view ns) {
  if (ns.empty()) return "No resources found\n";
  return "No resources found in " + std::string(ns) + " namespace.\n";
}

}  // namespace berth::cli
