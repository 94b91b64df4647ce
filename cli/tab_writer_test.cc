#include "cli/tab_writer.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace berth::cli {
namespace {

// Text written to a TabWriter, each piece followed by a Flush() that must
// return what the case says.
struct Case {
  const char* name;
  TabWriterOptions options;
  std::vector<std::pair<std::string, std::string>> writes_and_flushes;
};

TEST(TabWriterTest, WritesAndFlushes) {
  const Case cases[] = {
      {"GetSettingsPadThreeWithMinimumSix",
       TabWriter::GetOptions(),
       {{"NAME\tSTATUS\tAGE\ndefault\tActive\t5m\nteam-a\tActive\t10s\n",
         "NAME      STATUS   AGE\n"
         "default   Active   5m\n"
         "team-a    Active   10s\n"}}},
      {"NarrowColumnsGetTheMinimumWidth", TabWriter::GetOptions(), {{"A\tB\nx\ty\n", "A     B\nx     y\n"}}},
      // "été" is 3 code points, 5 bytes.
      {"WidthsCountCodePoints", {0, 1, '.', false}, {{"\xc3\xa9t\xc3\xa9\tx\nab\ty\n", "\xc3\xa9t\xc3\xa9.x\nab..y\n"}}},
      {"LinesWithoutCellsEndColumnBlocks",
       TabWriter::DescribeOptions(),
       {{"Name:\tcq\nNamespace:\t\nSpec:\n  Cohort:\tteam\n  Queueing Strategy:\tBestEffortFIFO\n",
         "Name:       cq\n"
         "Namespace:  \n"
         "Spec:\n"
         "  Cohort:             team\n"
         "  Queueing Strategy:  BestEffortFIFO\n"}}},
      {"RememberedWidthsOnlyGrow",
       TabWriter::GetOptions(),
       {{"NAME\tAGE\nab\t1s\n", "NAME   AGE\nab     1s\n"},
        {"abcdefghij\t2s\n", "abcdefghij   2s\n"},
        {"a\t3s\n", "a            3s\n"}}},
      {"WithoutRememberingEachFlushStandsAlone",
       {0, 2, ' ', false},
       {{"abcdefgh\tx\n", "abcdefgh  x\n"}, {"a\tx\n", "a  x\n"}}},
      {"UnterminatedLastLineHasNoNewline", {0, 1, ' ', false}, {{"a\tb\nccc\td", "a   b\nccc d"}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TabWriter w(c.options);
    for (const auto& [text, flushed] : c.writes_and_flushes) {
      w.Write(text);
      EXPECT_EQ(w.Flush(), flushed);
    }
  }
}

}  // namespace
}  // namespace berth::cli
