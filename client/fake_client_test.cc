#include "client/testing/fake_client.h"

#include <gtest/gtest.h>

namespace berth::client {
namespace {

using testing::FakeClient;

const GroupVersionResource kPods{"", "v1", "pods"};

api::Object Pod(const std::string& name, const std::string& app = "demo") {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", {{"app", app}}}}},
          {"spec", {{"nodeName", ""}}}};
}

TEST(FakeClientTest, CreateGetUpdateWithStoreMetadataAndConflicts) {
  FakeClock clock;
  FakeClient fake(clock);
  const ResourceRef ref = kPods.Namespace("default");
  StatusOr<api::Object> created = fake.Create(ref, Pod("p1"));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(api::Namespace(*created), "default");
  EXPECT_EQ(api::ResourceVersion(*created), "1");
  EXPECT_FALSE(api::Uid(*created).empty());
  EXPECT_EQ(fake.Create(ref, Pod("p1")).status().code(), Code::kAlreadyExists);
  EXPECT_EQ(fake.Create(ref, [] {
                  api::Object p = Pod("p2");
                  p["metadata"]["namespace"] = "elsewhere";
                  return p;
                }()).status().code(),
            Code::kBadRequest);

  api::Object stale = *created;
  api::Object fresh = *created;
  fresh["spec"]["nodeName"] = "node-1";
  ASSERT_TRUE(fake.Update(ref, fresh).ok());
  stale["spec"]["nodeName"] = "node-2";
  Status conflict = fake.Update(ref, stale).status();
  EXPECT_EQ(conflict.code(), Code::kConflict);
  EXPECT_EQ(conflict.message(),
            "Operation cannot be fulfilled on pods \"p1\": the object has been modified; please apply your "
            "changes to the latest version and try again");
  EXPECT_EQ(fake.Get(ref, "p1")->at("spec").at("nodeName"), "node-1");
  EXPECT_EQ(fake.Get(ref, "nope").status().message(), "pods \"nope\" not found");
}

TEST(FakeClientTest, UpdateStatusTouchesOnlyStatus) {
  FakeClock clock;
  FakeClient fake(clock);
  const ResourceRef ref = kPods.Namespace("default");
  api::Object p = *fake.Create(ref, Pod("p1"));
  p["spec"]["nodeName"] = "ignored";
  p["status"] = {{"phase", "Running"}};
  api::Object updated = *fake.UpdateStatus(ref, p);
  EXPECT_EQ(updated["status"]["phase"], "Running");
  EXPECT_EQ(updated["spec"]["nodeName"], "");
  // Stale resourceVersion.
  EXPECT_EQ(fake.UpdateStatus(ref, p).status().code(), Code::kConflict);
}

TEST(FakeClientTest, MergeAndJsonPatchesWithResourceVersionPrecondition) {
  FakeClock clock;
  FakeClient fake(clock);
  const ResourceRef ref = kPods.Namespace("default");
  api::Object p = *fake.Create(ref, Pod("p1"));
  api::Object merged = *fake.Patch(ref, "p1", PatchType::kMerge, R"({"metadata":{"labels":{"app":null,"tier":"db"}}})");
  EXPECT_EQ(merged["metadata"]["labels"], (api::Object{{"tier", "db"}}));
  api::Object jsoned = *fake.Patch(ref, "p1", PatchType::kJson, R"([{"op":"replace","path":"/spec/nodeName","value":"n"}])");
  EXPECT_EQ(jsoned["spec"]["nodeName"], "n");
  std::string stale = R"({"metadata":{"resourceVersion":")" + api::ResourceVersion(p) + R"("},"spec":{"x":1}})";
  EXPECT_EQ(fake.Patch(ref, "p1", PatchType::kMerge, stale).status().code(), Code::kConflict);
  EXPECT_EQ(fake.Patch(ref, "p1", PatchType::kApply, "{}").status().code(), Code::kUnsupportedMedia);
  EXPECT_EQ(fake.Patch(ref, "nope", PatchType::kMerge, "{}").status().code(), Code::kNotFound);
  PatchOptions status_only;
  status_only.subresource = "status";
  api::Object st = *fake.Patch(ref, "p1", PatchType::kMerge, R"({"spec":{"nodeName":"z"},"status":{"phase":"Failed"}})",
                               status_only);
  EXPECT_EQ(st["status"]["phase"], "Failed");
  EXPECT_EQ(st["spec"]["nodeName"], "n");
}

TEST(FakeClientTest, DeletePreconditionsAndFinalizers) {
  FakeClock clock;
  FakeClient fake(clock);
  const ResourceRef ref = kPods.Namespace("default");
  api::Object p = Pod("p1");
  p["metadata"]["finalizers"] = {"example.com/keep"};
  p = *fake.Create(ref, p);
  DeleteOptions wrong_uid;
  wrong_uid.preconditions.uid = "not-the-uid";
  EXPECT_EQ(fake.Delete(ref, "p1", wrong_uid).code(), Code::kConflict);
  ASSERT_TRUE(fake.Delete(ref, "p1").ok());
  api::Object marked = *fake.Get(ref, "p1");  // finalizer keeps it, marked
  EXPECT_TRUE(marked["metadata"].contains("deletionTimestamp"));
  marked["metadata"].erase("finalizers");
  ASSERT_TRUE(fake.Update(ref, marked).ok());
  EXPECT_EQ(fake.Get(ref, "p1").status().code(), Code::kNotFound);
}

TEST(FakeClientTest, ListPagesAndSelectors) {
  FakeClock clock;
  FakeClient fake(clock);
  for (const char* n : {"c", "a", "b"}) ASSERT_TRUE(fake.Create(kPods.Namespace("ns"), Pod(n, n)).ok());
  ASSERT_TRUE(fake.Create(kPods.Namespace("other"), Pod("z")).ok());
  ListOptions page;
  page.limit = 2;
  ObjectList first = *fake.List(kPods.Namespace("ns"), page);
  ASSERT_EQ(first.items.size(), 2u);
  EXPECT_EQ(api::Name(first.items[0]), "a");
  EXPECT_EQ(api::Name(first.items[1]), "b");
  ASSERT_FALSE(first.continue_token.empty());
  EXPECT_EQ(first.remaining_item_count, 1);
  page.continue_token = first.continue_token;
  ObjectList second = *fake.List(kPods.Namespace("ns"), page);
  ASSERT_EQ(second.items.size(), 1u);
  EXPECT_EQ(api::Name(second.items[0]), "c");
  EXPECT_EQ(second.resource_version, first.resource_version);
  EXPECT_TRUE(second.continue_token.empty());

  ListOptions selected;
  selected.label_selector = "app in (a,c)";
  ObjectList sel = *fake.List(kPods, selected);
  ASSERT_EQ(sel.items.size(), 2u);
  EXPECT_EQ(api::Name(sel.items[1]), "c");
  selected.label_selector = "";
  selected.field_selector = "metadata.namespace=other";
  EXPECT_EQ(fake.List(kPods, selected)->items.size(), 1u);
  selected.label_selector = "app in (";
  EXPECT_EQ(fake.List(kPods, selected).status().code(), Code::kBadRequest);
}

TEST(FakeClientTest, WatchFromNowFromRevisionAndFromCompactedRevision) {
  FakeClock clock;
  store::StoreOptions options;
  options.history_limit = 2;
  FakeClient fake(clock, options);
  const ResourceRef ref = kPods.Namespace("ns");
  ASSERT_TRUE(fake.Create(ref, Pod("a")).ok());

  // No resourceVersion: synthetic ADDED for the current objects, then changes.
  auto w = std::move(fake.Watch(ref)).value();
  ASSERT_TRUE(fake.Create(ref, Pod("b")).ok());
  auto e1 = w->Next(std::chrono::seconds(10));
  auto e2 = w->Next(std::chrono::seconds(10));
  ASSERT_TRUE(e1.ok() && e1->has_value() && e2.ok() && e2->has_value());
  EXPECT_EQ((*e1)->type, WatchEventType::kAdded);
  EXPECT_EQ(api::Name(*(*e1)->object), "a");
  EXPECT_EQ(api::Name(*(*e2)->object), "b");
  EXPECT_EQ(api::ResourceVersion(*(*e2)->object), "2");
  EXPECT_EQ(w->Next(Duration::zero()).value(), std::nullopt);

  // From an explicit revision.
  ASSERT_TRUE(fake.Delete(ref, "a").ok());
  WatchOptions from;
  from.resource_version = "2";
  auto w2 = std::move(fake.Watch(ref, from)).value();
  auto del = w2->Next(std::chrono::seconds(10));
  ASSERT_TRUE(del.ok() && del->has_value());
  EXPECT_EQ((*del)->type, WatchEventType::kDeleted);
  EXPECT_EQ(api::Name(*(*del)->object), "a");

  // CloseWatches ends open watches as a server would.
  fake.CloseWatches();
  EXPECT_EQ(w->Next(std::chrono::seconds(10)).status().code(), Code::kUnavailable);

  // From a compacted revision: an ERROR event with a 410 Expired Status.
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(fake.Create(ref, Pod("p" + std::to_string(i))).ok());
  from.resource_version = "1";
  auto w3 = std::move(fake.Watch(ref, from)).value();
  auto err = w3->Next(std::chrono::seconds(10));
  ASSERT_TRUE(err.ok() && err->has_value());
  EXPECT_EQ((*err)->type, WatchEventType::kError);
  EXPECT_EQ((*err)->error.code(), Code::kGone);
  EXPECT_EQ((*(*err)->object)["reason"], "Expired");
  EXPECT_EQ((*(*err)->object)["code"], 410);
  EXPECT_EQ(w3->Next(Duration::zero()).status().code(), Code::kUnavailable);
}

TEST(FakeClientTest, InjectedErrorsAreReturnedOnceAndCallsCounted) {
  FakeClock clock;
  FakeClient fake(clock);
  fake.InjectError("get", UnavailableError("down"));
  EXPECT_EQ(fake.Get(kPods.Namespace("ns"), "x").status(), UnavailableError("down"));
  EXPECT_EQ(fake.Get(kPods.Namespace("ns"), "x").status().code(), Code::kNotFound);
  EXPECT_EQ(fake.CallCount("get"), 2);
  EXPECT_EQ(fake.CallCount("list"), 0);
}

}  // namespace
}  // namespace berth::client
