#include "cli/tab_writer.h"

#include <gtest/gtest.h>

namespace berth::cli {
namespace {

TEST(TabWriterTest, GetSettingsPadThreeWithMinimumSix) {
  TabWriter w(TabWriter::GetOptions());
  w.Write("NAME\tSTATUS\tAGE\ndefault\tActive\t5m\nteam-a\tActive\t10s\n");
  EXPECT_EQ(w.Flush(),
            "NAME      STATUS   AGE\n"
            "default   Active   5m\n"
            "team-a    Active   10s\n");
}

TEST(TabWriterTest, NarrowColumnsGetTheMinimumWidth) {
  TabWriter w(TabWriter::GetOptions());
  w.Write("A\tB\nx\ty\n");
  EXPECT_EQ(w.Flush(), "A     B\nx     y\n");
}

TEST(TabWriterTest, WidthsCountCodePoints) {
  TabWriter w({0, 1, '.', false});
  w.Write("\xc3\xa9t\xc3\xa9\tx\nab\ty\n");  // "été" is 3 code points, 5 bytes
  EXPECT_EQ(w.Flush(), "\xc3\xa9t\xc3\xa9.x\nab..y\n");
}

TEST(TabWriterTest, LinesWithoutCellsEndColumnBlocks) {
  TabWriter w(TabWriter::DescribeOptions());
  w.Write("Name:\tcq\nNamespace:\t\nSpec:\n  Cohort:\tteam\n  Queueing Strategy:\tBestEffortFIFO\n");
  EXPECT_EQ(w.Flush(),
            "Name:       cq\n"
            "Namespace:  \n"
            "Spec:\n"
            "  Cohort:             team\n"
            "  Queueing Strategy:  BestEffortFIFO\n");
}

TEST(TabWriterTest, RememberedWidthsOnlyGrow) {
  TabWriter w(TabWriter::GetOptions());
  w.Write("NAME\tAGE\nab\t1s\n");
  EXPECT_EQ(w.Flush(), "NAME   AGE\nab     1s\n");
  w.Write("abcdefghij\t2s\n");
  EXPECT_EQ(w.Flush(), "abcdefghij   2s\n");
  w.Write("a\t3s\n");
  EXPECT_EQ(w.Flush(), "a            3s\n");
}

TEST(TabWriterTest, WithoutRememberingEachFlushStandsAlone) {
  TabWriter w({0, 2, ' ', false});
  w.Write("abcdefgh\tx\n");
  EXPECT_EQ(w.Flush(), "abcdefgh  x\n");
  w.Write("a\tx\n");
  EXPECT_EQ(w.Flush(), "a  x\n");
}

TEST(TabWriterTest, UnterminatedLastLineHasNoNewline) {
  TabWriter w({0, 1, ' ', false});
  w.Write("a\tb\nccc\td");
  EXPECT_EQ(w.Flush(), "a   b\nccc d");
}

}  // namespace
}  // namespace berth::cli
