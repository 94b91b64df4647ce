#include "api/unstructured.h"

#include <gtest/gtest.h>

namespace berth::api {
namespace {

const Object kPod = Object::parse(R"({
  "metadata": {"name": "p", "labels": {"app": "a"}},
  "spec": {"nodeName": "node-0", "priority": 7, "hostNetwork": true,
           "containers": [{"name": "main", "image": "i"}, {"name": "side"}]}
})");

TEST(UnstructuredTest, ReadsPresentFieldsOfTheirType) {
  EXPECT_EQ(StringAt(ObjectAt(kPod, "spec"), "nodeName"), "node-0");
  EXPECT_EQ(IntAt(ObjectAt(kPod, "spec"), "priority", -1), 7);
  EXPECT_TRUE(BoolAt(ObjectAt(kPod, "spec"), "hostNetwork", false));
  EXPECT_EQ(ArrayAt(ObjectAt(kPod, "spec"), "containers").size(), 2u);
  EXPECT_EQ(NestedField(kPod, {"metadata", "labels", "app"}), "a");
  EXPECT_EQ(NestedString(kPod, {"spec", "nodeName"}), "node-0");
  EXPECT_TRUE(HasField(kPod, "spec"));
}

TEST(UnstructuredTest, AbsentOrMistypedFieldsReadAsTheFallback) {
  const Object& spec = ObjectAt(kPod, "spec");
  EXPECT_EQ(StringAt(spec, "priority", "none"), "none");  // an integer, not a string
  EXPECT_EQ(IntAt(spec, "nodeName", -1), -1);             // a string, not an integer
  EXPECT_FALSE(BoolAt(spec, "missing", false));
  EXPECT_TRUE(ObjectAt(spec, "nodeName").is_object());
  EXPECT_TRUE(ObjectAt(spec, "nodeName").empty());
  EXPECT_TRUE(ArrayAt(spec, "nodeName").is_array());
  EXPECT_TRUE(Field(Object("scalar"), "x").is_null());
  EXPECT_TRUE(NestedField(kPod, {"spec", "nodeName", "deeper"}).is_null());
  EXPECT_TRUE(NestedField(kPod, {"status", "phase"}).is_null());
  EXPECT_EQ(AsString(Object(3), "fallback"), "fallback");
  EXPECT_EQ(NestedString(kPod, {"spec", "priority"}, "none"), "none");
  EXPECT_EQ(NestedString(kPod, {"spec", "containers", "0"}), "");
  EXPECT_FALSE(HasField(spec, "missing"));
}

TEST(UnstructuredTest, MutableAccessReplacesMistypedValues) {
  Object obj = {{"spec", "not an object"}};
  MutableObject(&obj, "spec")["suspend"] = true;
  EXPECT_EQ(obj, Object::parse(R"({"spec": {"suspend": true}})"));
  MutableArray(&obj["spec"], "list").push_back(1);
  EXPECT_EQ(obj["spec"]["list"], Object::array({1}));
  Object scalar = 5;
  MutableObject(&scalar, "a")["b"] = 1;
  EXPECT_EQ(scalar, Object::parse(R"({"a": {"b": 1}})"));
}

TEST(UnstructuredTest, NamedListsMergeByName) {
  Object env = Object::array({{{"name", "A"}, {"value", "1"}}});
  UpsertNamed(&env, {{"name", "B"}, {"value", "2"}});
  UpsertNamed(&env, {{"name", "A"}, {"value", "3"}});
  EXPECT_EQ(env, Object::parse(R"([{"name": "A", "value": "3"}, {"name": "B", "value": "2"}])"));
  ASSERT_NE(FindNamed(env, "B"), nullptr);
  EXPECT_EQ(StringAt(*FindNamed(env, "B"), "value"), "2");
  EXPECT_EQ(FindNamed(env, "C"), nullptr);
  EXPECT_EQ(FindNamed(Object("x"), "A"), nullptr);
  Object not_a_list = "x";
  UpsertNamed(&not_a_list, {{"name", "A"}});
  EXPECT_EQ(not_a_list, Object::parse(R"([{"name": "A"}])"));
}

TEST(UnstructuredTest, MergeStringMapLetsTheSourceWin) {
  Object labels = {{"a", "1"}, {"b", "2"}};
  MergeStringMap(&labels, {{"b", "3"}, {"c", "4"}});
  EXPECT_EQ(labels, Object::parse(R"({"a": "1", "b": "3", "c": "4"})"));
  MergeStringMap(&labels, Object());  // null: no-op
  EXPECT_EQ(labels.size(), 3u);
  Object none;
  MergeStringMap(&none, {{"x", "y"}});
  EXPECT_EQ(none, Object::parse(R"({"x": "y"})"));
}

}  // namespace
}  // namespace berth::api
