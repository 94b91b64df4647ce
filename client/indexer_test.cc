#include "client/indexer.h"

#include <gtest/gtest.h>

namespace berth::client {
namespace {

ObjectPtr Obj(const std::string& ns, const std::string& name, api::Object labels = api::Object::object(),
              std::vector<std::string> owners = {}) {
  api::Object o = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}}}};
  if (!ns.empty()) o["metadata"]["namespace"] = ns;
  if (!labels.empty()) o["metadata"]["labels"] = labels;
  for (const auto& uid : owners) o["metadata"]["ownerReferences"].push_back({{"uid", uid}, {"kind", "Job"}});
  return std::make_shared<const api::Object>(std::move(o));
}

std::vector<std::string> Keys(const std::vector<ObjectPtr>& objs) {
  std::vector<std::string> out;
  for (const auto& o : objs) out.push_back(MetaNamespaceKey(*o));
  return out;
}

TEST(IndexerTest, KeysFollowMetaNamespaceKeyFunc) {
  EXPECT_EQ(MetaNamespaceKey(*Obj("team-a", "w1")), "team-a/w1");
  EXPECT_EQ(MetaNamespaceKey(*Obj("", "cq")), "cq");
  EXPECT_EQ(SplitMetaNamespaceKey("team-a/w1"), (std::pair<std::string, std::string>{"team-a", "w1"}));
  EXPECT_EQ(SplitMetaNamespaceKey("cq"), (std::pair<std::string, std::string>{"", "cq"}));
}

TEST(IndexerTest, IndexesFollowUpsertsAndRemovals) {
  Indexer idx;
  ASSERT_TRUE(idx.AddIndex(kNamespaceIndex, NamespaceIndexFunc).ok());
  ASSERT_TRUE(idx.AddIndex("queue", LabelIndexFunc("kueue.x-k8s.io/queue-name")).ok());
  ASSERT_TRUE(idx.AddIndex("owner", OwnerUidIndexFunc()).ok());
  EXPECT_EQ(idx.AddIndex("queue", LabelIndexFunc("x")).code(), Code::kAlreadyExists);

  EXPECT_EQ(idx.Upsert(Obj("b", "p2", {{"kueue.x-k8s.io/queue-name", "lq"}}, {"u1"})), nullptr);
  idx.Upsert(Obj("a", "p1", {{"kueue.x-k8s.io/queue-name", "lq"}}, {"u1", "u2"}));
  idx.Upsert(Obj("a", "p3"));

  EXPECT_EQ(Keys(idx.List()), (std::vector<std::string>{"a/p1", "a/p3", "b/p2"}));
  EXPECT_EQ(Keys(*idx.ByIndex(kNamespaceIndex, "a")), (std::vector<std::string>{"a/p1", "a/p3"}));
  EXPECT_EQ(Keys(*idx.ByIndex("queue", "lq")), (std::vector<std::string>{"a/p1", "b/p2"}));
  EXPECT_EQ(*idx.IndexKeys("owner", "u1"), (std::vector<std::string>{"a/p1", "b/p2"}));
  EXPECT_EQ(*idx.IndexValues("owner"), (std::vector<std::string>{"u1", "u2"}));
  EXPECT_EQ(*idx.IndexCount("owner", "u1"), 2u);
  EXPECT_EQ(*idx.IndexCount("owner", "u2"), 1u);
  EXPECT_EQ(*idx.IndexCount("owner", "none"), 0u);

  // Relabel p1 to another queue and drop its owners: old index entries go away.
  ObjectPtr old = idx.Upsert(Obj("a", "p1", {{"kueue.x-k8s.io/queue-name", "other"}}));
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(Keys(*idx.ByIndex("queue", "lq")), std::vector<std::string>{"b/p2"});
  EXPECT_EQ(Keys(*idx.ByIndex("queue", "other")), std::vector<std::string>{"a/p1"});
  EXPECT_EQ(*idx.IndexValues("owner"), std::vector<std::string>{"u1"});

  EXPECT_NE(idx.Remove("b/p2"), nullptr);
  EXPECT_EQ(idx.Remove("b/p2"), nullptr);
  EXPECT_TRUE(idx.ByIndex("queue", "lq")->empty());
  EXPECT_TRUE(idx.IndexValues("owner")->empty());
  EXPECT_EQ(idx.Size(), 2u);
  EXPECT_EQ(idx.ByIndex("missing", "x").status().code(), Code::kNotFound);
  EXPECT_EQ(idx.IndexCount("queue", "lq").value(), 0u);
  EXPECT_EQ(idx.IndexCount("missing", "x").status().code(), Code::kNotFound);
}

TEST(IndexerTest, LateIndexCoversExistingObjectsAndReplaceRebuilds) {
  Indexer idx;
  idx.Upsert(Obj("a", "p1", {{"app", "x"}}));
  idx.Upsert(Obj("a", "p2", {{"app", "y"}}));
  ASSERT_TRUE(idx.AddIndex("app", LabelIndexFunc("app")).ok());
  EXPECT_EQ(Keys(*idx.ByIndex("app", "x")), std::vector<std::string>{"a/p1"});

  idx.Replace({Obj("c", "p9", {{"app", "y"}})});
  EXPECT_EQ(idx.ListKeys(), std::vector<std::string>{"c/p9"});
  EXPECT_TRUE(idx.ByIndex("app", "x")->empty());
  EXPECT_EQ(Keys(*idx.ByIndex("app", "y")), std::vector<std::string>{"c/p9"});
  EXPECT_EQ(idx.Get("c", "p9")->at("metadata").at("name"), "p9");
  EXPECT_EQ(idx.Get("a/p1"), nullptr);
}

}  // namespace
}  // namespace berth::client
