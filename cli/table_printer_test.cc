#include "cli/table_printer.h"

#include <gtest/gtest.h>

namespace berth::cli {
namespace {

using nlohmann::json;

json ClusterQueueTable() {
  return json::parse(R"({
    "kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"7"},
    "columnDefinitions":[
      {"name":"Name","type":"string","format":"name","priority":0},
      {"name":"Cohort","type":"string","format":"","priority":0},
      {"name":"Strategy","type":"string","format":"","priority":1},
      {"name":"Pending Workloads","type":"integer","format":"","priority":0}],
    "rows":[
      {"cells":["cluster-queue",null,"BestEffortFIFO",0],
       "object":{"kind":"PartialObjectMetadata","metadata":{"name":"cluster-queue","labels":{"tier":"gold","a":"b"}}}},
      {"cells":["gpu",
                "multi\nline","StrictFIFO",12],
       "object":{"kind":"PartialObjectMetadata","metadata":{"name":"gpu"}}}]})");
}

TEST(TablePrinterTest, HidesWideColumnsAndUpperCasesHeaders) {
  TablePrinter p({});
  EXPECT_EQ(p.Print(ClusterQueueTable()),
            "NAME            COHORT     PENDING WORKLOADS\n"
            "cluster-queue              0\n"
            "gpu             multi...   12\n");
  EXPECT_EQ(p.rows_printed(), 2u);
}

TEST(TablePrinterTest, WideShowsEveryColumn) {
  TablePrinter p({.wide = true});
  EXPECT_EQ(p.Print(ClusterQueueTable()),
            "NAME            COHORT     STRATEGY         PENDING WORKLOADS\n"
            "cluster-queue              BestEffortFIFO   0\n"
            "gpu             multi...   StrictFIFO       12\n");
}

TEST(TablePrinterTest, NamespaceColumnAndLabelsComeFromRowObjects) {
  json table = json::parse(R"({"columnDefinitions":[{"name":"Name","priority":0},{"name":"Age","priority":0}],
    "rows":[{"cells":["lq-team-a","5m"],"object":{"metadata":{"name":"lq-team-a","namespace":"team-a","labels":{"tier":"gold"}}}},
            {"cells":["lq","2d"],"object":{"metadata":{"name":"lq","namespace":"b"}}}]})");
  TablePrinter p({.with_namespace = true, .show_labels = true});
  EXPECT_EQ(p.Print(table),
            "NAMESPACE   NAME        AGE   LABELS\n"
            "team-a      lq-team-a   5m    tier=gold\n"
            "b           lq          2d    <none>\n");
}

TEST(TablePrinterTest, EmptyTablePrintsNothingAndHeadersOnce) {
  TablePrinter p({});
  json table = ClusterQueueTable();
  json empty = table;
  empty["rows"] = json::array();
  EXPECT_EQ(p.Print(empty), "");
  EXPECT_EQ(p.rows_printed(), 0u);
  std::string first = p.Print(table);
  EXPECT_EQ(first.substr(0, first.find('\n')), "NAME            COHORT     PENDING WORKLOADS");
  // A watch event: one row, no header again, widths kept.
  json one = table;
  one["rows"] = json::array({table["rows"][1]});
  EXPECT_EQ(p.Print(one), "gpu             multi...   12\n");
  // A later watch event carries no columnDefinitions (null, as the server sends them after the
  // first event): laid out with the last columns.
  one["columnDefinitions"] = nullptr;
  EXPECT_EQ(p.Print(one), "gpu             multi...   12\n");
  one.erase("columnDefinitions");
  EXPECT_EQ(p.Print(one), "gpu             multi...   12\n");
  EXPECT_EQ(p.rows_printed(), table["rows"].size() + 3);
}

TEST(TablePrinterTest, NoHeaders) {
  TablePrinter p({.no_headers = true});
  EXPECT_EQ(p.Print(ClusterQueueTable()),
            "cluster-queue              0\n"
            "gpu             multi...   12\n");
}

TEST(TablePrinterTest, Cells) {
  EXPECT_EQ(CellText(json(nullptr)), "");
  EXPECT_EQ(CellText(json(true)), "true");
  EXPECT_EQ(CellText(json(1.5)), "1.5");
  EXPECT_EQ(CellText(json(-3)), "-3");
  EXPECT_EQ(CellText(json("a\tb")), "a\\tb");
  EXPECT_EQ(CellText(json("first\r\nsecond")), "first...");
}

TEST(TablePrinterTest, NoResourcesFound) {
  EXPECT_EQ(NoResourcesFound("default"), "No resources found in default namespace.\n");
  EXPECT_EQ(NoResourcesFound(""), "No resources found\n");
}

}  // namespace
}  // namespace berth::cli
