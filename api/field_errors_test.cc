#include "api/field_errors.h"

#include <gtest/gtest.h>

namespace berth::api {
namespace {

using nlohmann::json;

TEST(FieldPathTest, BuildsKubernetesPaths) {
  FieldPath spec("spec");
  EXPECT_EQ(spec.Child("resourceGroups").Index(0).Child("flavors").Index(1).Child("name").String(),
            "spec.resourceGroups[0].flavors[1].name");
  EXPECT_EQ(FieldPath("metadata").Child("labels").Key("app").String(), "metadata.labels[app]");
  EXPECT_EQ(FieldPath().Child("x").String(), "x");
  EXPECT_TRUE(FieldPath().empty());
}

TEST(FieldErrorTest, BodiesMatchApimachinery) {
  FieldPath p("spec.replicas");
  struct Case {
    FieldError err;
    std::string body;
    std::string cause_type;
  };
  const Case cases[] = {
      {Invalid(p, -1, "must be greater than or equal to 0"),
       "Invalid value: -1: must be greater than or equal to 0", "FieldValueInvalid"},
      {Invalid(p, "-1", "must be greater than or equal to 0"),
       "Invalid value: \"-1\": must be greater than or equal to 0", "FieldValueInvalid"},
      {Invalid(p, 1.5, "x"), "Invalid value: 1.5: x", "FieldValueInvalid"},
      {Invalid(p, 1e6, "x"), "Invalid value: 1e+06: x", "FieldValueInvalid"},
      {Invalid(p, 1234567.0, "x"), "Invalid value: 1.234567e+06: x", "FieldValueInvalid"},
      {Invalid(p, 123456.0, "x"), "Invalid value: 123456: x", "FieldValueInvalid"},
      {Invalid(p, 0.0001, "x"), "Invalid value: 0.0001: x", "FieldValueInvalid"},
      {Invalid(p, 0.00001, "x"), "Invalid value: 1e-05: x", "FieldValueInvalid"},
      {Invalid(p, true, "x"), "Invalid value: true: x", "FieldValueInvalid"},
      {Invalid(p, nullptr, "x"), "Invalid value: null: x", "FieldValueInvalid"},
      {Invalid(p, json{{"b", 1}, {"a", "<&>"}}, "x"),
       "Invalid value: {\"a\":\"\\u003c\\u0026\\u003e\",\"b\":1}: x", "FieldValueInvalid"},
      {Invalid(p, json::array({"a", 2}), ""), "Invalid value: [\"a\",2]", "FieldValueInvalid"},
      {TypeInvalid(p, "x", "must be of type integer"),
       "Invalid value: \"x\": must be of type integer", "FieldValueTypeInvalid"},
      {Required(p), "Required value", "FieldValueRequired"},
      {Required(p, "name or generateName is required"),
       "Required value: name or generateName is required", "FieldValueRequired"},
      {Forbidden(p, "may not be changed in an update."),
       "Forbidden: may not be changed in an update.", "FieldValueForbidden"},
      {Duplicate(p, "cpu"), "Duplicate value: \"cpu\"", "FieldValueDuplicate"},
      {NotFound(p, "x"), "Not found: \"x\"", "FieldValueNotFound"},
      {NotSupported(p, "X", {"A", "B"}), "Unsupported value: \"X\": supported values: \"A\", \"B\"",
       "FieldValueNotSupported"},
      {NotSupported(p, "X", {}), "Unsupported value: \"X\"", "FieldValueNotSupported"},
      {TooLong(p, 63), "Too long: may not be more than 63 bytes", "FieldValueTooLong"},
      {TooLong(p, 1), "Too long: may not be more than 1 byte", "FieldValueTooLong"},
      {TooLong(p, -1), "Too long: value is too long", "FieldValueTooLong"},
      {TooMany(p, 9, 8), "Too many: 9: must have at most 8 items", "FieldValueTooMany"},
      {TooMany(p, -1, 1), "Too many: must have at most 1 item", "FieldValueTooMany"},
      {InternalFieldError(p, "boom"), "Internal error: boom", "InternalError"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(c.err.Body(), c.body);
    EXPECT_EQ(c.err.Error(), "spec.replicas: " + c.body);
    StatusCause cause = c.err.ToCause();
    EXPECT_EQ(cause.type, c.cause_type) << c.body;
    EXPECT_EQ(cause.field, "spec.replicas");
    EXPECT_EQ(cause.message, c.body);
  }
}

TEST(FieldErrorTest, GoQuoteEscapesLikeStrconvQuote) {
  EXPECT_EQ(GoQuote("Bad_Name"), "\"Bad_Name\"");
  EXPECT_EQ(GoQuote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(GoQuote("a\nb\tc\r\a\b\f\v"), "\"a\\nb\\tc\\r\\a\\b\\f\\v\"");
  EXPECT_EQ(GoQuote(std::string("\x01\x7f", 2)), "\"\\x01\\x7f\"");
  EXPECT_EQ(GoQuote("caf\xC3\xA9 \xE6\x97\xA5"), "\"caf\xC3\xA9 \xE6\x97\xA5\"");  // printable kept
  EXPECT_EQ(GoQuote("\xC2\xA0"), "\"\\u00a0\"");    // no-break space
  EXPECT_EQ(GoQuote("\xEF\xBB\xBF"), "\"\\ufeff\"");  // BOM
  EXPECT_EQ(GoQuote("\xff"), "\"\\xff\"");            // invalid UTF-8
  EXPECT_EQ(GoQuote("\xC0\x80"), "\"\\xc0\\x80\"");   // overlong form
  EXPECT_EQ(GoQuote("\xF0\x9F\x98\x80"), "\"\xF0\x9F\x98\x80\"");
}

TEST(FieldErrorTest, InvalidStatusOneAndManyErrors) {
  FieldPath meta("metadata");
  Status one = InvalidStatus("ClusterQueue", "x", {Required(FieldPath("spec.podSets"))});
  EXPECT_EQ(one.code(), Code::kInvalid);
  EXPECT_EQ(one.message(), "ClusterQueue \"x\" is invalid: spec.podSets: Required value");
  ASSERT_EQ(one.causes().size(), 1u);
  EXPECT_EQ(one.causes()[0],
            (StatusCause{"FieldValueRequired", "spec.podSets", "Required value"}));

  FieldError dup = Invalid(meta.Child("name"), "A", "bad");
  Status many = InvalidStatus("Pod", "A", {dup, Required(meta.Child("namespace")), dup});
  EXPECT_EQ(many.message(),
            "Pod \"A\" is invalid: [metadata.name: Invalid value: \"A\": bad, "
            "metadata.namespace: Required value]");
  EXPECT_EQ(many.causes().size(), 3u);  // causes keep every error, as NewInvalid does
}

}  // namespace
}  // namespace berth::api
