// Printing the server's meta.k8s.io/v1 Tables as `kubectl get` does
// (k8s.io/cli-runtime/pkg/printers/tableprinter.go):
//   - headers are the column names upper-cased; no header line when the
//     table has no rows;
//   - columns with priority > 0 only with `wide`;
//   - with_namespace (-A) puts NAMESPACE first, from rows[].object.metadata.namespace;
//   - show_labels appends LABELS ("k=v,k2=v2" sorted by key, "<none>");
//   - cells: strings as is, cut at the first \n, \r or \f with "..." appended;
//     numbers and booleans as JSON prints them; null empty;
//   - columns are aligned by TabWriter::GetOptions() (padding 3, minimum
//     width 6, widths remembered across flushes for `get -w`).
// "No resources found" texts follow kubectl get: NoResourcesFound("team-a")
// is "No resources found in team-a namespace.", NoResourcesFound("") is
// "No resources found" (cluster-scoped or -A); kubectl writes them to stderr.
//
// Thread-safety: TablePrinter is used by one thread; the functions are pure.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "cli/tab_writer.h"

namespace berth::cli {

struct TablePrintOptions {
  bool wide = false;
  bool with_namespace = false;
  bool show_labels = false;
  bool no_headers = false;
};

// The text of one cell.
std::string CellText(const nlohmann::json& cell);

class TablePrinter {
 public:
  explicit TablePrinter(TablePrintOptions options)
      : options_(options), writer_(TabWriter::GetOptions()) {}

  // Formats the rows of `table` (and the header line unless no_headers or
  // already printed by an earlier call: a watch prints it once). A table
  // without columnDefinitions (null or empty: a watch's events after the
  // first) is laid out with the last columns a table brought, as kubectl's
  // HumanReadablePrinter keeps lastColumns. Returns the text to print; ""
  // when the table has no rows.
  std::string Print(const nlohmann::json& table);

  // Number of rows printed so far.
  size_t rows_printed() const { return rows_printed_; }

 private:
  TablePrintOptions options_;
  TabWriter writer_;
  bool header_printed_ = false;
  size_t rows_printed_ = 0;
  nlohmann::json last_columns_ = nlohmann::json::array();
};

std::string NoResourcesFound(std::string_view ns);

}  // namespace berth::cli
