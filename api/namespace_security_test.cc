#include "api/namespace_security.h"

#include <gtest/gtest.h>

namespace berth::api {
namespace {

const GroupResource kNamespacesResource{"", "namespaces"};

Object Namespace(const std::string& name, const Object& annotations = Object()) {
  Object ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
  if (!annotations.is_null()) ns["metadata"]["annotations"] = annotations;
  return ns;
}

TEST(NamespaceSecurityTest, BlocksAreBaseSlashSize) {
  auto b = ParseIdBlock("1000010000/10000");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->base, 1000010000);
  EXPECT_EQ(b->size, 10000);
  EXPECT_EQ(FormatIdBlock(*b), "1000010000/10000");
  EXPECT_TRUE(b->Contains(1000010000));
  EXPECT_TRUE(b->Contains(1000019999));
  EXPECT_FALSE(b->Contains(1000020000));
  EXPECT_FALSE(b->Contains(1000009999));
  for (const char* bad : {"", "1000", "1/0", "-1/5", "a/5", "5/b", "2147483647/2", "1/2/3", " 1/2"}) {
    EXPECT_EQ(ParseIdBlock(bad).status().code(), Code::kInvalid) << bad;
  }
  EXPECT_TRUE(ParseIdBlock("2147483647/1").ok());
  EXPECT_EQ(NamespaceIdBlock(Namespace("a"), kUidRangeAnnotation).status().code(), Code::kNotFound);
  EXPECT_EQ(NamespaceIdBlock(Namespace("a", {{kUidRangeAnnotation, "x"}}), kUidRangeAnnotation).status().code(),
            Code::kInvalid);
  EXPECT_EQ(*NamespaceIdBlock(Namespace("a", {{kUidRangeAnnotation, "200000/1"}}), kUidRangeAnnotation),
            (IdBlock{200000, 1}));
}

// A user (even cluster-admin) cannot give itself another team's ids: adding, changing or
// removing the annotations is refused; the control plane may; other edits pass.
TEST(NamespaceSecurityTest, OnlyTheControlPlaneWritesTheAnnotations) {
  const Object allocated = Namespace(
      "team-a",
      {{kUidRangeAnnotation, "1000010000/10000"}, {kSupplementalGroupsAnnotation, "1000010000/10000"}, {"note", "x"}});
  const std::string refused_uid =
      "namespaces \"team-a\" is forbidden: the annotation openshift.io/sa.scc.uid-range is set by the control "
      "plane and cannot be changed";
  // Create with the annotation.
  Status s = CheckNamespaceSecurityWrite(false, kNamespacesResource,
                                         Namespace("team-a", {{kUidRangeAnnotation, "0/10000"}}), nullptr);
  EXPECT_EQ(s.code(), Code::kForbidden);
  EXPECT_EQ(s.message(), refused_uid);
  // Change.
  Object changed = allocated;
  changed["metadata"]["annotations"][kSupplementalGroupsAnnotation] = "0/10";
  s = CheckNamespaceSecurityWrite(false, kNamespacesResource, changed, &allocated);
  EXPECT_EQ(s.code(), Code::kForbidden);
  EXPECT_EQ(s.message(),
            "namespaces \"team-a\" is forbidden: the annotation openshift.io/sa.scc.supplemental-groups is set by the "
            "control plane and cannot be changed");
  // Removal (kubectl replace without it).
  EXPECT_EQ(CheckNamespaceSecurityWrite(false, kNamespacesResource, Namespace("team-a"), &allocated).code(),
            Code::kForbidden);
  // The MCS label too.
  Object mcs = allocated;
  mcs["metadata"]["annotations"][kMcsAnnotation] = "s0:c1,c0";
  EXPECT_EQ(CheckNamespaceSecurityWrite(false, kNamespacesResource, mcs, &allocated).code(), Code::kForbidden);
  // Other annotations change freely; the control plane writes them.
  Object relabeled = allocated;
  relabeled["metadata"]["annotations"]["note"] = "y";
  relabeled["metadata"]["labels"] = {{"team", "a"}};
  EXPECT_TRUE(CheckNamespaceSecurityWrite(false, kNamespacesResource, relabeled, &allocated).ok());
  EXPECT_TRUE(CheckNamespaceSecurityWrite(false, kNamespacesResource, Namespace("team-b"), nullptr).ok());
  EXPECT_TRUE(CheckNamespaceSecurityWrite(true, kNamespacesResource, changed, &allocated).ok());
  EXPECT_TRUE(CheckNamespaceSecurityWrite(true, kNamespacesResource, allocated, nullptr).ok());
  // The same annotation on another kind is nothing to berth.
  Object cm = {{"apiVersion", "v1"},
               {"kind", "ConfigMap"},
               {"metadata", {{"name", "c"}, {"annotations", {{kUidRangeAnnotation, "0/1"}}}}}};
  EXPECT_TRUE(CheckNamespaceSecurityWrite(false, GroupResource{"", "configmaps"}, cm, nullptr).ok());
}

}  // namespace
}  // namespace berth::api
