#include "api/metadata_validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::api {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

const std::string kSubdomainMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const std::string kLabelMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const std::string k1035Msg =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const std::string kNamePartMsg =
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
    "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const std::string kLabelValueMsg =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

TEST(NameValidationTest, DNS1123Subdomain) {
  for (const char* ok : {"a", "example.com", "a-b.c-d", "0", "cq-1.team"}) {
    EXPECT_THAT(IsDNS1123Subdomain(ok), IsEmpty()) << ok;
  }
  for (const char* bad : {"", "Bad_Name", "-a", "a-", "a..b", ".a", "a.", "a_b", "A"}) {
    EXPECT_THAT(IsDNS1123Subdomain(bad), ElementsAre(kSubdomainMsg)) << bad;
  }
  EXPECT_THAT(IsDNS1123Subdomain(std::string(253, 'a')), IsEmpty());
  EXPECT_THAT(IsDNS1123Subdomain(std::string(254, 'a')),
              ElementsAre("must be no more than 253 characters"));
}

TEST(NameValidationTest, DNS1123Label) {
  EXPECT_THAT(IsDNS1123Label("my-name"), IsEmpty());
  EXPECT_THAT(IsDNS1123Label("123-abc"), IsEmpty());
  EXPECT_THAT(IsDNS1123Label("a.b"), ElementsAre("must not contain dots"));
  EXPECT_THAT(IsDNS1123Label("My"), ElementsAre(kLabelMsg));
  EXPECT_THAT(IsDNS1123Label(""), ElementsAre(kLabelMsg));
  EXPECT_THAT(IsDNS1123Label(std::string(63, 'a')), IsEmpty());
  EXPECT_THAT(IsDNS1123Label(std::string(64, 'a')),
              ElementsAre("must be no more than 63 characters"));
  EXPECT_THAT(IsDNS1123Label(std::string(64, 'A')),
              ElementsAre("must be no more than 63 characters", kLabelMsg));
}

TEST(NameValidationTest, DNS1035Label) {
  EXPECT_THAT(IsDNS1035Label("abc-123"), IsEmpty());
  EXPECT_THAT(IsDNS1035Label("1abc"), ElementsAre(k1035Msg));
  EXPECT_THAT(IsDNS1035Label("abc-"), ElementsAre(k1035Msg));
}

TEST(NameValidationTest, QualifiedNames) {
  for (const char* ok : {"app", "App_1.x-y", "kueue.x-k8s.io/queue-name", "a/B", "9"}) {
    EXPECT_THAT(IsQualifiedName(ok), IsEmpty()) << ok;
  }
  EXPECT_THAT(IsQualifiedName("-app"), ElementsAre(kNamePartMsg));
  EXPECT_THAT(IsQualifiedName(""), ElementsAre("name part must be non-empty", kNamePartMsg));
  EXPECT_THAT(IsQualifiedName("/a"), ElementsAre("prefix part must be non-empty"));
  EXPECT_THAT(IsQualifiedName("Ex.com/a"), ElementsAre("prefix part " + kSubdomainMsg));
  EXPECT_THAT(IsQualifiedName(std::string(64, 'a')),
              ElementsAre("name part must be no more than 63 characters"));
  EXPECT_THAT(
      IsQualifiedName("a/b/c"),
      ElementsAre("a qualified name must consist of alphanumeric characters, '-', '_' or '.', "
                  "and must start and end with an alphanumeric character (e.g. 'MyName',  or "
                  "'my.name',  or '123-abc', regex used for validation is "
                  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain "
                  "prefix and '/' (e.g. 'example.com/MyName')"));
}

TEST(NameValidationTest, LabelValues) {
  EXPECT_THAT(IsValidLabelValue(""), IsEmpty());
  EXPECT_THAT(IsValidLabelValue("my_value.1"), IsEmpty());
  EXPECT_THAT(IsValidLabelValue("a b"), ElementsAre(kLabelValueMsg));
  EXPECT_THAT(IsValidLabelValue("_a"), ElementsAre(kLabelValueMsg));
  EXPECT_THAT(IsValidLabelValue(std::string(64, 'a')),
              ElementsAre("must be no more than 63 characters"));
}

TEST(NameValidationTest, GenerateNamePrefixMayEndInDash) {
  EXPECT_THAT(NameIsDNSSubdomain("job-", true), IsEmpty());
  EXPECT_THAT(NameIsDNSSubdomain("job-", false), ElementsAre(kSubdomainMsg));
  EXPECT_THAT(NameIsDNSLabel("-", true), ElementsAre(kLabelMsg));
}

std::vector<std::string> Render(const FieldErrorList& errs) {
  std::vector<std::string> out;
  for (const auto& e : errs) out.push_back(e.Error());
  return out;
}

TEST(ValidateObjectMetaTest, ValidObjects) {
  json pod = {{"metadata", {{"name", "p1"}, {"namespace", "default"},
                            {"labels", {{"app", "demo"}, {"kueue.x-k8s.io/queue-name", "lq"}}},
                            {"annotations", {{"Example.com/Note", "x y"}}},
                            {"finalizers", {"kubernetes.io/pv-protection"}}}}};
  EXPECT_THAT(ValidateObjectMeta(pod, true, NameIsDNSSubdomain), IsEmpty());
  json cq = {{"metadata", {{"name", "cq-1"}}}};
  EXPECT_THAT(ValidateObjectMeta(cq, false, NameIsDNSSubdomain), IsEmpty());
}

TEST(ValidateObjectMetaTest, ReportsEachFieldAsKubectlPrintsIt) {
  json obj = {{"metadata", {{"name", "Bad_Name"}, {"generation", -1},
                            {"labels", {{"-bad", "ok"}, {"good", "not ok"}}}}}};
  EXPECT_THAT(
      Render(ValidateObjectMeta(obj, true, NameIsDNSSubdomain)),
      ElementsAre("metadata.name: Invalid value: \"Bad_Name\": " + kSubdomainMsg,
                  "metadata.namespace: Required value",
                  "metadata.generation: Invalid value: -1: must be greater than or equal to 0",
                  "metadata.labels: Invalid value: \"-bad\": " + kNamePartMsg,
                  "metadata.labels: Invalid value: \"not ok\": " + kLabelValueMsg));
}

TEST(ValidateObjectMetaTest, NameAndNamespaceRules) {
  EXPECT_THAT(Render(ValidateObjectMeta(json::object(), false, NameIsDNSSubdomain)),
              ElementsAre("metadata.name: Required value: name or generateName is required"));
  json cluster_scoped = {{"metadata", {{"name", "cq"}, {"namespace", "default"}}}};
  EXPECT_THAT(Render(ValidateObjectMeta(cluster_scoped, false, NameIsDNSSubdomain)),
              ElementsAre("metadata.namespace: Forbidden: not allowed on this type"));
  json bad_ns = {{"metadata", {{"name", "p"}, {"namespace", "a.b"}}}};
  EXPECT_THAT(Render(ValidateObjectMeta(bad_ns, true, NameIsDNSSubdomain)),
              ElementsAre("metadata.namespace: Invalid value: \"a.b\": must not contain dots"));
  json bad_prefix = {{"metadata", {{"generateName", "Job-"}, {"name", "job-abcde"}}}};
  EXPECT_THAT(Render(ValidateObjectMeta(bad_prefix, false, NameIsDNSSubdomain)),
              ElementsAre("metadata.generateName: Invalid value: \"Job-\": " + kSubdomainMsg));
  // A Namespace object's name is a DNS label.
  json ns = {{"metadata", {{"name", "team.a"}}}};
  EXPECT_THAT(Render(ValidateObjectMeta(ns, false, NameIsDNSLabel)),
              ElementsAre("metadata.name: Invalid value: \"team.a\": must not contain dots"));
}

TEST(ValidateObjectMetaTest, AnnotationSizeAndFinalizers) {
  json ann = {{"a", std::string(kTotalAnnotationSizeLimitBytes - 1, 'x')}};
  EXPECT_THAT(ValidateAnnotations(ann, FieldPath("metadata.annotations")), IsEmpty());
  ann["b"] = "";
  EXPECT_THAT(Render(ValidateAnnotations(ann, FieldPath("metadata.annotations"))),
              ElementsAre("metadata.annotations: Too long: may not be more than 262144 bytes"));
  json fin = {"orphan", "foregroundDeletion", "bad/"};
  EXPECT_THAT(Render(ValidateFinalizers(fin, FieldPath("metadata.finalizers"))),
              ElementsAre("metadata.finalizers: Invalid value: \"bad/\": name part must be non-empty",
                          "metadata.finalizers: Invalid value: \"bad/\": " + kNamePartMsg,
                          "metadata.finalizers: Invalid value: "
                          "[\"orphan\",\"foregroundDeletion\",\"bad/\"]: finalizer orphan and "
                          "foregroundDeletion cannot be both set"));
}

}  // namespace
}  // namespace berth::api
