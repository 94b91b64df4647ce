#include "api/strategic_merge_patch.h"

#include <gtest/gtest.h>

namespace berth::api {
namespace {

using nlohmann::json;

const StrategicMergeSchema& PodSchema() { return StrategicMergeSchema::ForKind("", "Pod"); }

json Apply(const json& original, const json& patch, const StrategicMergeSchema& schema = PodSchema()) {
  auto r = ApplyStrategicMergePatch(original, patch, schema);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : json();
}

Status ApplyError(const json& original, const json& patch) {
  auto r = ApplyStrategicMergePatch(original, patch, PodSchema());
  EXPECT_FALSE(r.ok()) << r->dump();
  return r.ok() ? Status::Ok() : r.status();
}

// kubernetes.io "Update API Objects in Place Using kubectl patch": a strategic
// merge patch adds a container to the list (merged by name); the page shows the
// patch's container first (patch items precede live-only items unless the live
// order says otherwise) ...
TEST(StrategicMergePatchTest, ContainersMergeByName) {
  json live = json::parse(R"({"spec":{"containers":[{"name":"patch-demo-ctr","image":"nginx"}]}})");
  json patch = json::parse(R"({"spec":{"containers":[{"name":"patch-demo-ctr-2","image":"redis"}]}})");
  EXPECT_EQ(Apply(live, patch),
            json::parse(R"({"spec":{"containers":[{"name":"patch-demo-ctr-2","image":"redis"},
                                                  {"name":"patch-demo-ctr","image":"nginx"}]}})"));
  // ... and changes a field of an existing one without touching the others.
  json change = json::parse(R"({"spec":{"containers":[{"name":"patch-demo-ctr","image":"nginx:2"}]}})");
  json live2 = json::parse(
      R"({"spec":{"containers":[{"name":"patch-demo-ctr","image":"nginx","ports":[{"containerPort":80}]}]}})");
  EXPECT_EQ(Apply(live2, change),
            json::parse(R"({"spec":{"containers":[{"name":"patch-demo-ctr","image":"nginx:2",
                                                   "ports":[{"containerPort":80}]}]}})"));
}

// Same page: tolerations have no patch strategy, so the patch's list replaces it.
TEST(StrategicMergePatchTest, TolerationsAreReplaced) {
  json live = json::parse(R"({"spec":{"tolerations":[{"effect":"NoSchedule","key":"dedicated","value":"test-team"}]}})");
  json patch = json::parse(R"({"spec":{"tolerations":[{"effect":"NoSchedule","key":"disktype","value":"ssd"}]}})");
  EXPECT_EQ(Apply(live, patch), patch);
}

// The patch kubectl 1.32 sends for `kubectl apply` of a changed Pod (its three-way strategic
// merge patch, k8s.io/kubectl/pkg/cmd/apply/patcher.go): label removed with null, env entry
// deleted by directive, image changed, $setElementOrder for containers and env.
TEST(StrategicMergePatchTest, KubectlApplyPatchOfAPod) {
  json live = json::parse(R"({
    "metadata":{"name":"p1","labels":{"app":"demo","tier":"web"},"annotations":{"a":"1"}},
    "spec":{"containers":[
      {"name":"c","image":"busybox","env":[{"name":"A","value":"1"},{"name":"B","value":"1"}]},
      {"name":"d","image":"busybox"}]}})");
  json patch = json::parse(R"({
    "metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}\n"},"labels":{"tier":null}},
    "spec":{"$setElementOrder/containers":[{"name":"c"},{"name":"d"}],
            "containers":[{"$setElementOrder/env":[{"name":"B"}],
                           "env":[{"name":"B","value":"2"},{"$patch":"delete","name":"A"}],
                           "image":"busybox:2","name":"c"}]}})");
  EXPECT_EQ(Apply(live, patch), json::parse(R"({
    "metadata":{"name":"p1","labels":{"app":"demo"},
                "annotations":{"a":"1","kubectl.kubernetes.io/last-applied-configuration":"{}\n"}},
    "spec":{"containers":[
      {"name":"c","image":"busybox:2","env":[{"name":"B","value":"2"}]},
      {"name":"d","image":"busybox"}]}})"));
}

// Merge keys other than name: ports by containerPort (an integer), volumeMounts
// by mountPath, conditions by type, ownerReferences by uid.
TEST(StrategicMergePatchTest, OtherMergeKeys) {
  json live = json::parse(R"({
    "metadata":{"ownerReferences":[{"uid":"u1","name":"a"},{"uid":"u2","name":"b"}]},
    "spec":{"containers":[{"name":"c",
      "ports":[{"containerPort":80,"name":"http"},{"containerPort":443}],
      "volumeMounts":[{"mountPath":"/data","name":"v1"}]}]},
    "status":{"conditions":[{"type":"Ready","status":"False"},{"type":"PodScheduled","status":"True"}]}})");
  json patch = json::parse(R"({
    "metadata":{"ownerReferences":[{"uid":"u2","name":"b2"}]},
    "spec":{"containers":[{"name":"c",
      "ports":[{"containerPort":80,"protocol":"TCP"}],
      "volumeMounts":[{"mountPath":"/data","readOnly":true},{"mountPath":"/cache","name":"v2"}]}]},
    "status":{"conditions":[{"type":"Ready","status":"True"}]}})");
  EXPECT_EQ(Apply(live, patch), json::parse(R"({
    "metadata":{"ownerReferences":[{"uid":"u1","name":"a"},{"uid":"u2","name":"b2"}]},
    "spec":{"containers":[{"name":"c",
      "ports":[{"containerPort":80,"name":"http","protocol":"TCP"},{"containerPort":443}],
      "volumeMounts":[{"mountPath":"/data","name":"v1","readOnly":true},{"mountPath":"/cache","name":"v2"}]}]},
    "status":{"conditions":[{"type":"Ready","status":"True"},{"type":"PodScheduled","status":"True"}]}})"));
}

// Lists of primitives with the merge strategy (finalizers) are sets: union in
// order, no duplicates; $deleteFromPrimitiveList removes values.
TEST(StrategicMergePatchTest, FinalizersAreASet) {
  json live = json::parse(R"({"metadata":{"finalizers":["a","b"]}})");
  EXPECT_EQ(Apply(live, json::parse(R"({"metadata":{"finalizers":["b","c"]}})")),
            json::parse(R"({"metadata":{"finalizers":["a","b","c"]}})"));
  EXPECT_EQ(Apply(live, json::parse(R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["a"]}})")),
            json::parse(R"({"metadata":{"finalizers":["b"]}})"));
  // Deleting from a list that is absent changes nothing.
  EXPECT_EQ(Apply(json::parse(R"({"metadata":{}})"),
                  json::parse(R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["a"]}})")),
            json::parse(R"({"metadata":{}})"));
}

// A list of primitives without a strategy (container args) is atomic.
TEST(StrategicMergePatchTest, AtomicPrimitiveListIsReplaced) {
  json live = json::parse(R"({"spec":{"containers":[{"name":"c","args":["a","b"]}]}})");
  json patch = json::parse(R"({"spec":{"containers":[{"name":"c","args":["c"]}]}})");
  EXPECT_EQ(Apply(live, patch), json::parse(R"({"spec":{"containers":[{"name":"c","args":["c"]}]}})"));
}

// Strategic merge patch design notes: `$patch: replace` in a map replaces the
// whole map; `$patch: delete` empties it.
TEST(StrategicMergePatchTest, MapDirectives) {
  json live = json::parse(R"({"spec":{"nodeSelector":{"a":"1","b":"2"},"containers":[{"name":"c"}]}})");
  EXPECT_EQ(Apply(live, json::parse(R"({"spec":{"nodeSelector":{"$patch":"replace","c":"3"}}})")),
            json::parse(R"({"spec":{"nodeSelector":{"c":"3"},"containers":[{"name":"c"}]}})"));
  EXPECT_EQ(Apply(live, json::parse(R"({"spec":{"nodeSelector":{"$patch":"delete"}}})")),
            json::parse(R"({"spec":{"nodeSelector":{},"containers":[{"name":"c"}]}})"));
  EXPECT_EQ(Apply(live, json::parse(R"({"spec":{"nodeSelector":{"$patch":"merge","c":"3"}}})")),
            json::parse(R"({"spec":{"nodeSelector":{"a":"1","b":"2","c":"3"},"containers":[{"name":"c"}]}})"));
}

// Design notes: `{"$patch": "replace"}` in a merged list replaces the list with
// the other elements; `$patch: delete` elements remove by merge key.
TEST(StrategicMergePatchTest, ListDirectives) {
  json live = json::parse(R"({"spec":{"containers":[{"name":"nginx","image":"nginx"},{"name":"log","image":"x"}]}})");
  EXPECT_EQ(Apply(live, json::parse(R"({"spec":{"containers":[{"name":"nginx","image":"nginx-1.0"},{"$patch":"replace"}]}})")),
            json::parse(R"({"spec":{"containers":[{"name":"nginx","image":"nginx-1.0"}]}})"));
  EXPECT_EQ(Apply(live, json::parse(R"({"spec":{"containers":[{"name":"nginx","$patch":"delete"}]}})")),
            json::parse(R"({"spec":{"containers":[{"name":"log","image":"x"}]}})"));
  // A delete of an element of a list the object does not have adds nothing.
  EXPECT_EQ(Apply(json::parse(R"({"spec":{}})"),
                  json::parse(R"({"spec":{"containers":[{"name":"nginx","$patch":"delete"}]}})")),
            json::parse(R"({"spec":{"containers":[]}})"));
}

// kubernetes.io docs (retainKeys): switching a volume's source clears the old one.
TEST(StrategicMergePatchTest, RetainKeysClearsOtherKeys) {
  json live = json::parse(R"({"spec":{"volumes":[{"name":"data","hostPath":{"path":"/tmp"}}]}})");
  json patch = json::parse(R"({"spec":{"volumes":[{"$retainKeys":["emptyDir","name"],"name":"data","emptyDir":{}}]}})");
  EXPECT_EQ(Apply(live, patch), json::parse(R"({"spec":{"volumes":[{"name":"data","emptyDir":{}}]}})"));
  // Every key of the patch must be retained.
  Status s = ApplyError(live, json::parse(R"({"spec":{"volumes":[{"$retainKeys":["name"],"name":"data","emptyDir":{}}]}})"));
  EXPECT_EQ(s.code(), Code::kBadRequest);
  EXPECT_EQ(s.message(), "invalid patch format of retainKeys");
}

// $setElementOrder: patch items take the directive's order, live-only items keep
// their place relative to the live order.
TEST(StrategicMergePatchTest, SetElementOrder) {
  json live = json::parse(R"({"spec":{"containers":[{"name":"a"},{"name":"b"},{"name":"c"}]}})");
  json reorder = json::parse(R"({"spec":{"$setElementOrder/containers":[{"name":"c"},{"name":"b"},{"name":"a"}]}})");
  EXPECT_EQ(Apply(live, reorder),
            json::parse(R"({"spec":{"containers":[{"name":"c"},{"name":"b"},{"name":"a"}]}})"));
  // Add d between a and c. b, not in the directive, is placed (upstream's
  // mergeSortedSlice) before the first patch item that follows it in the live
  // list: c.
  json add = json::parse(R"({"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"d"},{"name":"c"}],
                                     "containers":[{"name":"d"}]}})");
  EXPECT_EQ(Apply(live, add),
            json::parse(R"({"spec":{"containers":[{"name":"a"},{"name":"d"},{"name":"b"},{"name":"c"}]}})"));
  // Primitive lists too.
  json fin = json::parse(R"({"metadata":{"finalizers":["x","y"]}})");
  EXPECT_EQ(Apply(fin, json::parse(R"({"metadata":{"$setElementOrder/finalizers":["z","y","x"],"finalizers":["z"]}})")),
            json::parse(R"({"metadata":{"finalizers":["z","y","x"]}})"));
  // A patch element missing from the order list is an error.
  Status s = ApplyError(live, json::parse(R"({"spec":{"$setElementOrder/containers":[{"name":"a"}],
                                                      "containers":[{"name":"z"}]}})"));
  EXPECT_EQ(s.code(), Code::kBadRequest);
  EXPECT_NE(s.message().find("doesn't match $setElementOrder list"), std::string::npos) << s.message();
}

// Merge patch basics hold: null deletes, maps merge, scalars replace, new keys
// are added (with directives applied).
TEST(StrategicMergePatchTest, MergePatchBasics) {
  json live = json::parse(R"({"metadata":{"labels":{"a":"1","b":"2"}},"spec":{"restartPolicy":"Always"}})");
  json patch = json::parse(R"({"metadata":{"labels":{"a":null,"c":"3"}},"spec":{"restartPolicy":"Never",
                               "nodeSelector":{"$patch":"replace","k":"v"}},"status":{"phase":"Running"}})");
  EXPECT_EQ(Apply(live, patch), json::parse(R"({"metadata":{"labels":{"b":"2","c":"3"}},
    "spec":{"restartPolicy":"Never","nodeSelector":{"k":"v"}},"status":{"phase":"Running"}})"));
  // A null for a key the object lacks is ignored (IgnoreUnmatchedNulls).
  EXPECT_EQ(Apply(live, json::parse(R"({"spec":{"nodeName":null}})")), live);
}

TEST(StrategicMergePatchTest, Errors) {
  json live = json::parse(R"({"spec":{"containers":[{"name":"c"}]}})");
  Status s = ApplyError(live, json::parse(R"({"spec":{"$patch":"frob"}})"));
  EXPECT_EQ(s.code(), Code::kBadRequest);
  EXPECT_EQ(s.message(), R"(unknown patch type: frob in map: {"$patch":"frob"})");
  s = ApplyError(live, json::parse(R"({"spec":{"containers":[{"image":"x"}]}})"));
  EXPECT_EQ(s.message(), R"(map: {"image":"x"} does not contain declared merge key: name)");
  s = ApplyError(live, json::parse(R"({"spec":{"containers":[{"$patch":"merge"}]}})"));
  EXPECT_EQ(s.message(), "merging lists cannot yet be specified in the patch");
  s = ApplyError(live, json::parse(R"({"metadata":{"$deleteFromPrimitiveList/finalizers":"a"}})"));
  EXPECT_EQ(s.message(), "invalid patch format of primitive list");
  s = ApplyError(live, json::parse(R"({"spec":{"$setElementOrder/containers":"c"}})"));
  EXPECT_EQ(s.message(), "invalid patch format of setElementOrder list");
  auto not_object = ApplyStrategicMergePatch(live, json::array(), PodSchema());
  ASSERT_FALSE(not_object.ok());
  EXPECT_EQ(not_object.status().code(), Code::kBadRequest);
}

// The schema table: a Job's pod template merges like a Pod; kinds without
// list fields of their own still merge metadata lists; unknown paths are atomic.
TEST(StrategicMergePatchTest, SchemaTable) {
  const auto& job = StrategicMergeSchema::ForKind("batch", "Job");
  ASSERT_NE(job.Lookup("spec.template.spec.containers"), nullptr);
  EXPECT_EQ(job.Lookup("spec.template.spec.containers")->merge_key, "name");
  EXPECT_EQ(job.Lookup("spec.template.spec.initContainers.env")->merge_key, "name");
  EXPECT_EQ(job.Lookup("spec.template.spec.containers.ports")->merge_key, "containerPort");
  EXPECT_EQ(job.Lookup("spec.containers"), nullptr);
  const auto& pc = StrategicMergeSchema::ForKind("scheduling.k8s.io", "PriorityClass");
  ASSERT_NE(pc.Lookup("metadata.finalizers"), nullptr);
  EXPECT_EQ(pc.Lookup("metadata.finalizers")->merge_key, "");
  EXPECT_EQ(pc.Lookup("metadata.ownerReferences")->merge_key, "uid");
  const auto& node = StrategicMergeSchema::ForKind("", "Node");
  EXPECT_EQ(node.Lookup("spec.taints"), nullptr);
  EXPECT_EQ(node.Lookup("status.addresses")->merge_key, "type");
  EXPECT_EQ(PodSchema().Lookup("spec.tolerations"), nullptr);
  EXPECT_EQ(PodSchema().Lookup("spec.volumes")->merge_key, "name");

  json job_live = json::parse(R"({"spec":{"template":{"spec":{"containers":[{"name":"a","image":"x"}]}}}})");
  json job_patch = json::parse(R"({"spec":{"template":{"spec":{"containers":[{"name":"b","image":"y"}]}}}})");
  EXPECT_EQ(Apply(job_live, job_patch, job).at("/spec/template/spec/containers"_json_pointer).size(), 2u);
}

}  // namespace
}  // namespace berth::api
