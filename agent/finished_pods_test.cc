#include "agent/finished_pods.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace berth::agent {
namespace {

client::ObjectPtr Pod(const std::string& uid, int revision) {
  return std::make_shared<const api::Object>(
      api::Object{{"metadata", {{"uid", uid}, {"resourceVersion", std::to_string(revision)}}}});
}

TEST(FinishedPodsTest, KnowsARevisionByItsAddressAndANewRevisionOnlyByUid) {
  FinishedPods finished;
  client::ObjectPtr first = Pod("u1", 1);
  finished.Mark("u1", first, 1, false);
  ASSERT_NE(finished.FindObject(first.get()), nullptr);
  EXPECT_EQ(finished.FindObject(first.get())->uid, "u1");

  // An equal document at another address is another object: only its uid finds the entry.
  client::ObjectPtr second = Pod("u1", 1);
  EXPECT_EQ(finished.FindObject(second.get()), nullptr);
  ASSERT_NE(finished.Find("u1"), nullptr);
  EXPECT_EQ(finished.Find("u1")->object, first);

  // Re-pointed: the old address no longer finds it, the new one does.
  finished.Mark("u1", second, 2, true);
  EXPECT_EQ(finished.FindObject(first.get()), nullptr);
  ASSERT_EQ(finished.FindObject(second.get()), finished.Find("u1"));
  EXPECT_EQ(finished.Find("u1")->seen_pass, 2u);
  EXPECT_TRUE(finished.Find("u1")->deleting);
  EXPECT_EQ(finished.size(), 1u);

  // A null object keeps the revision and what it said.
  finished.Mark("u1", nullptr, 3, false);
  EXPECT_EQ(finished.FindObject(second.get()), finished.Find("u1"));
  EXPECT_TRUE(finished.Find("u1")->deleting);
  EXPECT_EQ(finished.Find("u1")->seen_pass, 3u);
  EXPECT_FALSE(finished.Contains("u2"));
  EXPECT_EQ(finished.Find("u2"), nullptr);
}

// The entry holds its revision: dropped by every other holder (the informer replaced or
// removed it), the object stays alive, so its address cannot be given to a new pod.
TEST(FinishedPodsTest, HoldsTheRevisionItKnowsSoItsAddressIsNotReused) {
  FinishedPods finished;
  client::ObjectPtr pod = Pod("u1", 1);
  const api::Object* address = pod.get();
  finished.Mark("u1", pod, 1, false);
  std::weak_ptr<const api::Object> weak = pod;
  pod.reset();
  EXPECT_FALSE(weak.expired());
  for (int i = 0; i < 1000; ++i) {
    client::ObjectPtr other = Pod("u" + std::to_string(i + 2), 1);
    EXPECT_NE(other.get(), address);
    EXPECT_EQ(finished.FindObject(other.get()), nullptr);
  }
  EXPECT_EQ(finished.ForgetUnseen(2), 1u);
  EXPECT_TRUE(weak.expired());
}

// An address slot always names an entry that holds that very object, whatever
// the order of marks, re-points and forgets: one object under two uids (a
// caller's mistake the agent does not make) keeps the first entry's slot.
TEST(FinishedPodsTest, AnAddressSlotNamesOnlyAnEntryHoldingThatObject) {
  FinishedPods finished;
  client::ObjectPtr x = Pod("a", 1), y = Pod("b", 2);
  finished.Mark("a", x, 1, false);
  finished.Mark("b", x, 1, false);
  ASSERT_NE(finished.FindObject(x.get()), nullptr);
  EXPECT_EQ(finished.FindObject(x.get())->uid, "a");
  finished.Mark("b", y, 2, false);  // re-pointing b leaves a's slot alone
  ASSERT_NE(finished.FindObject(x.get()), nullptr);
  EXPECT_EQ(finished.FindObject(x.get())->uid, "a");
  ASSERT_NE(finished.FindObject(y.get()), nullptr);
  EXPECT_EQ(finished.FindObject(y.get())->uid, "b");
  finished.Mark("b", x, 3, false);  // b holds x again: a keeps the slot, b is found by uid
  finished.See(*finished.Find("a"), 3);
  EXPECT_EQ(finished.FindObject(y.get()), nullptr);
  EXPECT_EQ(finished.FindObject(x.get())->uid, "a");
  EXPECT_EQ(finished.Find("b")->object, x);
  // Forgetting b (unseen in pass 4) leaves a's slot; forgetting a then clears it.
  finished.See(*finished.Find("a"), 4);
  EXPECT_EQ(finished.ForgetUnseen(4), 1u);
  EXPECT_EQ(finished.FindObject(x.get())->uid, "a");
  EXPECT_EQ(finished.ForgetUnseen(5), 1u);
  EXPECT_EQ(finished.FindObject(x.get()), nullptr);
  EXPECT_EQ(finished.size(), 0u);
}

TEST(FinishedPodsTest, ForgetsWhatTheLastPassDidNotSeeWithItsAddress) {
  FinishedPods finished;
  client::ObjectPtr a = Pod("a", 1), b = Pod("b", 1), c = Pod("c", 1);
  finished.Mark("a", a, 1, false);
  finished.Mark("b", b, 1, false);
  finished.Mark("c", c, 1, false);
  finished.Mark("a", a, 2, false);
  finished.See(*finished.FindObject(c.get()), 2);
  EXPECT_EQ(finished.ForgetUnseen(2), 1u);
  EXPECT_EQ(finished.size(), 2u);
  EXPECT_FALSE(finished.Contains("b"));
  EXPECT_EQ(finished.FindObject(b.get()), nullptr);
  EXPECT_NE(finished.FindObject(a.get()), nullptr);
  EXPECT_NE(finished.FindObject(c.get()), nullptr);
  EXPECT_EQ(finished.ForgetUnseen(2), 0u);
  EXPECT_EQ(finished.ForgetUnseen(3), 2u);
  EXPECT_EQ(finished.size(), 0u);
  EXPECT_EQ(finished.FindObject(a.get()), nullptr);

  // A pass that saw every entry forgets none; the next, which saw one new pod only, forgets the rest.
  finished.Mark("a", a, 4, false);
  finished.Mark("b", b, 4, false);
  finished.See(*finished.Find("a"), 4);  // twice in one pass counts once
  finished.See(*finished.Find("b"), 4);
  EXPECT_EQ(finished.ForgetUnseen(4), 0u);
  finished.Mark("c", c, 5, false);
  EXPECT_EQ(finished.ForgetUnseen(5), 2u);
  EXPECT_TRUE(finished.Contains("c"));
  EXPECT_EQ(finished.size(), 1u);
}

}  // namespace
}  // namespace berth::agent
