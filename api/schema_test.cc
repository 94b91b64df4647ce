#include "api/schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace berth::api {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Wraps `spec_schema` as the schema of .spec in a resource root schema.
json Root(const json& spec_schema) {
  return json{{"type", "object"},
              {"properties",
               {{"apiVersion", {{"type", "string"}}},
                {"kind", {{"type", "string"}}},
                {"metadata", {{"type", "object"}}},
                {"spec", spec_schema}}}};
}

Schema MustCompile(const json& schema, SchemaDefinitions defs = {}) {
  SchemaCompiler compiler(std::move(defs));
  StatusOr<Schema> s = compiler.Compile(schema, "test");
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : Schema();
}

std::vector<std::string> Errors(const Schema& schema, const json& obj,
                                ValidateOptions options = {}) {
  std::vector<std::string> out;
  for (const FieldError& e : schema.Validate(obj, options)) out.push_back(e.Error());
  return out;
}

struct KeywordCase {
  const char* name;
  json spec_schema;  // schema of .spec.x
  json value;        // value of .spec.x
  std::vector<std::string> errors;
};

void PrintTo(const KeywordCase& c, std::ostream* os) { *os << c.name; }

class KeywordTest : public ::testing::TestWithParam<KeywordCase> {};

TEST_P(KeywordTest, ValidatesWithKubeOpenAPIMessages) {
  const KeywordCase& c = GetParam();
  Schema s = MustCompile(Root({{"type", "object"}, {"properties", {{"x", c.spec_schema}}}}));
  json obj = {{"apiVersion", "v1"}, {"kind", "K"}, {"spec", {{"x", c.value}}}};
  EXPECT_THAT(Errors(s, obj), ElementsAreArray(c.errors)) << c.name;
}

const KeywordCase kKeywordCases[] = {
    // type
    {"integer ok", {{"type", "integer"}}, 3, {}},
    {"integer given string",
     {{"type", "integer"}},
     "string",
     {"spec.x: Invalid value: \"string\": spec.x in body must be of type integer: \"string\""}},
    {"integer given float",
     {{"type", "integer"}},
     1.5,
     {"spec.x: Invalid value: \"number\": spec.x in body must be of type integer: \"number\""}},
    {"integer given whole float", {{"type", "integer"}}, 2.0, {}},
    {"number given integer", {{"type", "number"}}, 2, {}},
    {"string given bool",
     {{"type", "string"}},
     true,
     {"spec.x: Invalid value: \"boolean\": spec.x in body must be of type string: \"boolean\""}},
    {"boolean given string",
     {{"type", "boolean"}},
     "true",
     {"spec.x: Invalid value: \"string\": spec.x in body must be of type boolean: \"string\""}},
    {"object given array",
     {{"type", "object"}},
     json::array(),
     {"spec.x: Invalid value: \"array\": spec.x in body must be of type object: \"array\""}},
    {"array given object",
     {{"type", "array"}},
     json::object(),
     {"spec.x: Invalid value: \"object\": spec.x in body must be of type array: \"object\""}},
    {"untyped accepts anything", json::object(), json{{"a", 1}}, {}},
    // nullable
    {"null not nullable",
     {{"type", "string"}},
     nullptr,
     {"spec.x: Invalid value: \"null\": spec.x in body must be of type string: \"null\""}},
    {"null nullable", {{"type", "string"}, {"nullable", true}}, nullptr, {}},
    // int-or-string
    {"int-or-string int", {{"x-kubernetes-int-or-string", true}}, 5, {}},
    {"int-or-string string", {{"x-kubernetes-int-or-string", true}}, "50%", {}},
    {"int-or-string bool",
     {{"x-kubernetes-int-or-string", true}},
     false,
     {"spec.x: Invalid value: \"boolean\": spec.x in body must be of type integer,string: "
      "\"boolean\""}},
    // enum
    {"enum ok", {{"type", "string"}, {"enum", {"StrictFIFO", "BestEffortFIFO"}}}, "StrictFIFO", {}},
    {"enum bad",
     {{"type", "string"}, {"enum", {"StrictFIFO", "BestEffortFIFO"}}},
     "Foo",
     {"spec.x: Unsupported value: \"Foo\": supported values: \"StrictFIFO\", \"BestEffortFIFO\""}},
    {"enum of integers",
     {{"type", "integer"}, {"enum", {1, 2}}},
     3,
     {"spec.x: Unsupported value: 3: supported values: \"1\", \"2\""}},
    // minimum / maximum
    {"minimum ok", {{"type", "integer"}, {"minimum", 1}}, 1, {}},
    {"minimum",
     {{"type", "integer"}, {"minimum", 1}},
     -1,
     {"spec.x: Invalid value: -1: spec.x in body should be greater than or equal to 1"}},
    {"exclusive minimum",
     {{"type", "integer"}, {"minimum", 0}, {"exclusiveMinimum", true}},
     0,
     {"spec.x: Invalid value: 0: spec.x in body should be greater than 0"}},
    {"maximum",
     {{"type", "integer"}, {"maximum", 10}},
     11,
     {"spec.x: Invalid value: 11: spec.x in body should be less than or equal to 10"}},
    {"exclusive maximum",
     {{"type", "integer"}, {"maximum", 10}, {"exclusiveMaximum", true}},
     10,
     {"spec.x: Invalid value: 10: spec.x in body should be less than 10"}},
    {"float maximum",
     {{"type", "number"}, {"maximum", 0.5}},
     0.75,
     {"spec.x: Invalid value: 0.75: spec.x in body should be less than or equal to 0.5"}},
    {"float value, large bound",
     {{"type", "number"}, {"maximum", 1000000}},
     2e6,
     {"spec.x: Invalid value: 2e+06: spec.x in body should be less than or equal to 1e+06"}},
    // formats of numbers
    {"int32 in range", {{"type", "integer"}, {"format", "int32"}}, 2147483647, {}},
    {"int32 out of range",
     {{"type", "integer"}, {"format", "int32"}},
     2147483648LL,
     {"spec.x: Invalid value: 2147483648: Checked value must be of type integer with format int32 "
      "in spec.x"}},
    // strings
    {"maxLength", {{"type", "string"}, {"maxLength", 3}}, "abcd", {"spec.x: Too long: may not be more than 3 bytes"}},
    {"maxLength counts characters", {{"type", "string"}, {"maxLength", 3}}, "äöü", {}},
    {"minLength",
     {{"type", "string"}, {"minLength", 1}},
     "",
     {"spec.x: Invalid value: \"\": spec.x in body should be at least 1 chars long"}},
    {"pattern ok", {{"type", "string"}, {"pattern", "^[a-z]+$"}}, "abc", {}},
    {"pattern",
     {{"type", "string"}, {"pattern", "^[a-z]+$"}},
     "A",
     {"spec.x: Invalid value: \"A\": spec.x in body should match '^[a-z]+$'"}},
    {"pattern is a search", {{"type", "string"}, {"pattern", "b"}}, "abc", {}},
    {"date-time ok", {{"type", "string"}, {"format", "date-time"}}, "2026-01-01T00:00:00Z", {}},
    {"date-time",
     {{"type", "string"}, {"format", "date-time"}},
     "yesterday",
     {"spec.x: Invalid value: \"yesterday\": spec.x in body must be of type date-time: "
      "\"yesterday\""}},
    {"duration ok", {{"type", "string"}, {"format", "duration"}}, "1h30m", {}},
    {"duration",
     {{"type", "string"}, {"format", "duration"}},
     "soon",
     {"spec.x: Invalid value: \"soon\": spec.x in body must be of type duration: \"soon\""}},
    {"uuid",
     {{"type", "string"}, {"format", "uuid"}},
     "nope",
     {"spec.x: Invalid value: \"nope\": spec.x in body must be of type uuid: \"nope\""}},
    {"ipv4",
     {{"type", "string"}, {"format", "ipv4"}},
     "10.0.0.256",
     {"spec.x: Invalid value: \"10.0.0.256\": spec.x in body must be of type ipv4: "
      "\"10.0.0.256\""}},
    {"unknown string format accepted", {{"type", "string"}, {"format", "color"}}, "red", {}},
    // arrays
    {"minItems",
     {{"type", "array"}, {"minItems", 1}, {"items", {{"type", "string"}}}},
     json::array(),
     {"spec.x: Invalid value: 0: spec.x in body should have at least 1 items"}},
    {"maxItems",
     {{"type", "array"}, {"maxItems", 2}, {"items", {{"type", "string"}}}},
     json{"a", "b", "c"},
     {"spec.x: Too many: 3: must have at most 2 items"}},
    {"items",
     {{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", 0}}}},
     json{1, -1},
     {"spec.x[1]: Invalid value: -1: spec.x[1] in body should be greater than or equal to 0"}},
    {"list-type set",
     {{"type", "array"}, {"x-kubernetes-list-type", "set"}, {"items", {{"type", "string"}}}},
     json{"a", "b", "a"},
     {"spec.x[2]: Duplicate value: \"a\""}},
    {"list-type map",
     {{"type", "array"},
      {"x-kubernetes-list-type", "map"},
      {"x-kubernetes-list-map-keys", {"name"}},
      {"items", {{"type", "object"}, {"properties", {{"name", {{"type", "string"}}}}}}}},
     json{{{"name", "x"}}, {{"name", "y"}}, {{"name", "x"}}},
     {"spec.x[2]: Duplicate value: {\"name\":\"x\"}"}},
    {"list-type map, two keys",
     json::parse(R"({"type": "array", "x-kubernetes-list-type": "map",
                     "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
                     "items": {"type": "object", "properties": {
                       "containerPort": {"type": "integer"},
                       "protocol": {"type": "string", "default": "TCP"}}}})"),
     json::parse(R"([{"containerPort": 80}, {"containerPort": 80, "protocol": "UDP"},
                     {"containerPort": 80, "protocol": "TCP"}])"),
     {"spec.x[2]: Duplicate value: {\"containerPort\":80,\"protocol\":\"TCP\"}"}},
    {"list-type atomic allows duplicates",
     {{"type", "array"}, {"x-kubernetes-list-type", "atomic"}, {"items", {{"type", "string"}}}},
     json{"a", "a"},
     {}},
    // objects
    {"required",
     {{"type", "object"},
      {"required", {"b", "a"}},
      {"properties", {{"a", {{"type", "string"}}}, {"b", {{"type", "string"}}}}}},
     json::object(),
     {"spec.x.b: Required value", "spec.x.a: Required value"}},
    {"properties by name",
     {{"type", "object"}, {"properties", {{"b", {{"type", "integer"}}}, {"a", {{"type", "integer"}}}}}},
     json{{"a", "1"}, {"b", "2"}},
     {"spec.x.a: Invalid value: \"string\": spec.x.a in body must be of type integer: \"string\"",
      "spec.x.b: Invalid value: \"string\": spec.x.b in body must be of type integer: \"string\""}},
    {"minProperties",
     {{"type", "object"}, {"minProperties", 1}},
     json::object(),
     {"spec.x: Invalid value: 0: spec.x in body should have at least 1 properties"}},
    {"maxProperties stops the object",
     {{"type", "object"}, {"maxProperties", 1}, {"additionalProperties", {{"type", "integer"}}}},
     json{{"a", "no"}, {"b", "no"}},
     {"spec.x: Too many: 2: must have at most 1 item"}},
    {"additionalProperties schema",
     {{"type", "object"}, {"additionalProperties", {{"type", "string"}, {"maxLength", 2}}}},
     json{{"zone", "abc"}},
     {"spec.x.zone: Too long: may not be more than 2 bytes"}},
    {"additionalProperties false",
     {{"type", "object"}, {"additionalProperties", false}, {"properties", {{"a", {{"type", "string"}}}}}},
     json{{"a", "x"}, {"b", "y"}},
     {"spec.x: Invalid value: \"b\": spec.x.b in body is a forbidden property"}},
    {"embedded resource",
     {{"type", "object"}, {"x-kubernetes-embedded-resource", true}, {"x-kubernetes-preserve-unknown-fields", true}},
     json{{"kind", ""}},
     {"spec.x.apiVersion: Required value: must not be empty", "spec.x.kind: Invalid value: \"\": must not be empty"}},
    // combinators
    {"anyOf int-or-string ok",
     {{"x-kubernetes-int-or-string", true}, {"anyOf", {{{"type", "integer"}}, {{"type", "string"}}}}},
     "10%",
     {}},
    {"anyOf none",
     {{"anyOf", {{{"minimum", 5}}, {{"maximum", 1}}}}},
     3,
     {"spec.x: Invalid value: 3: spec.x must validate at least one schema (anyOf)",
      "spec.x: Invalid value: 3: spec.x in body should be greater than or equal to 5"}},
    {"oneOf two match",
     {{"oneOf", {{{"minimum", 1}}, {{"maximum", 10}}}}},
     5,
     {"spec.x: Invalid value: 5: spec.x must validate one and only one schema (oneOf). Found 2 "
      "valid alternatives"}},
    {"allOf",
     {{"allOf", {{{"minimum", 1}}, {{"maximum", 2}}}}},
     3,
     {"spec.x: Invalid value: 3: spec.x in body should be less than or equal to 2",
      "spec.x: Invalid value: 3: spec.x must validate all the schemas (allOf)"}},
    // quantities
    {"quantity ok", {{"x-kubernetes-int-or-string", true}, {"x-berth-quantity", true}}, "500m", {}},
    {"quantity number ok", {{"x-kubernetes-int-or-string", true}, {"x-berth-quantity", true}}, 2, {}},
    {"quantity bad",
     {{"x-kubernetes-int-or-string", true}, {"x-berth-quantity", true}},
     "1.5.5",
     {"spec.x: Invalid value: \"1.5.5\": quantities must match the regular expression "
      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"}},
    {"quantity beyond range",
     {{"x-kubernetes-int-or-string", true}, {"x-berth-quantity", true}},
     "100Pi",
     {"spec.x: Invalid value: \"100Pi\": must be between -9223372036854775807m and 9223372036854775807m (berth "
      "holds quantities as int64 milli-units)"}},
    {"quantity number beyond range", {{"x-kubernetes-int-or-string", true}, {"x-berth-quantity", true}},
     int64_t{-10000000000000000},
     {"spec.x: Invalid value: -10000000000000000: must be between -9223372036854775807m and 9223372036854775807m "
      "(berth holds quantities as int64 milli-units)"}},
    {"quantity at range", {{"x-kubernetes-int-or-string", true}, {"x-berth-quantity", true}}, "8Pi", {}},
    {"quantity minimum",
     {{"x-kubernetes-int-or-string", true}, {"x-berth-quantity", true}, {"x-berth-quantity-minimum", "0"}},
     "-1",
     {"spec.x: Invalid value: \"-1\": must be greater than or equal to 0"}},
};

INSTANTIATE_TEST_SUITE_P(Keywords, KeywordTest, ::testing::ValuesIn(kKeywordCases),
                         [](const ::testing::TestParamInfo<KeywordCase>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

TEST(SchemaTest, NestedPathsUseIndicesAndDottedMapKeysByDefault) {
  Schema s = MustCompile(Root(json::parse(R"({
    "type": "object",
    "properties": {
      "resourceGroups": {"type": "array", "items": {"type": "object", "properties": {
        "flavors": {"type": "array", "items": {"type": "object", "required": ["name"],
          "properties": {"name": {"type": "string"}}}}}}},
      "nodeLabels": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 3}}
    }})")));
  json obj = json::parse(R"({"spec": {
      "resourceGroups": [{"flavors": [{"name": "a"}, {}]}],
      "nodeLabels": {"zone": "long"}}})");
  EXPECT_THAT(Errors(s, obj), ElementsAre("spec.nodeLabels.zone: Too long: may not be more than 3 bytes",
                                          "spec.resourceGroups[0].flavors[1].name: Required value"));
  ValidateOptions bracket;
  bracket.map_keys = MapKeyStyle::kBracket;
  EXPECT_THAT(Errors(s, obj, bracket),
              ElementsAre("spec.nodeLabels[zone]: Too long: may not be more than 3 bytes",
                          "spec.resourceGroups[0].flavors[1].name: Required value"));
}

// Built-in kinds decode integers as Go's encoding/json does into an int field: any number
// with a fraction or an exponent is refused; a CRD's whole floats pass (isFloatInt) and are
// stored as integers.
TEST(SchemaTest, GoIntegersRefuseEveryFloatAndCrdWholeFloatsBecomeIntegers) {
  Schema s = MustCompile(Root({{"type", "object"},
                               {"properties",
                                {{"n", {{"type", "integer"}, {"format", "int32"}}},
                                 {"list", {{"type", "array"}, {"items", {{"type", "integer"}}}}},
                                 {"port", {{"x-kubernetes-int-or-string", true}}},
                                 {"ratio", {{"type", "number"}}}}}}));
  const json obj = json::parse(R"({"spec":{"n":1e3,"list":[1,2.0],"port":1.5,"ratio":0.5}})");
  ValidateOptions go;
  go.builtin_kind = true;
  const std::string number = R"(Invalid value: "number": )";
  EXPECT_THAT(Errors(s, obj, go),
              ElementsAre("spec.list[1]: " + number + R"(spec.list[1] in body must be of type integer: "number")",
                          "spec.n: " + number + R"(spec.n in body must be of type integer: "number")",
                          "spec.port: " + number + R"(spec.port in body must be of type integer,string: "number")"));
  EXPECT_THAT(Errors(s, obj),
              ElementsAre("spec.port: " + number + R"(spec.port in body must be of type integer,string: "number")"));
  json normalized = obj;
  s.NormalizeIntegers(&normalized);
  EXPECT_EQ(normalized.dump(), R"({"spec":{"list":[1,2],"n":1000,"port":1.5,"ratio":0.5}})");
  EXPECT_TRUE(normalized["spec"]["n"].is_number_integer());
}

// Three rules of built-in decoding (ValidateOptions::builtin_kind): a quantity takes any JSON
// number and is stored as its canonical string; a list-type map marked
// x-berth-builtin-allows-duplicates takes a repeated key; and, for every kind, an enum
// marked x-berth-empty-is-default takes "". A CRD's quantity takes integers only and its
// list-maps stay unique.
TEST(SchemaTest, BuiltinDecodingTakesNumberQuantitiesRepeatedKeysAndEmptyEnums) {
  Schema s = MustCompile(
      Root({{"type", "object"},
            {"properties",
             {{"cpu", {{"x-kubernetes-int-or-string", true}, {"x-berth-quantity", true}}},
              {"env",
               {{"type", "array"},
                {"x-kubernetes-list-type", "map"},
                {"x-kubernetes-list-map-keys", {"name"}},
                {"x-berth-builtin-allows-duplicates", true},
                {"items", {{"type", "object"}, {"properties", {{"name", {{"type", "string"}}}}}}}}},
              {"policy", {{"type", "string"}, {"enum", {"Always", "Never"}}, {"x-berth-empty-is-default", true}}},
              {"strict", {{"type", "string"}, {"enum", {"Always", "Never"}}}}}}}));
  const json obj = json::parse(R"({"spec":{"cpu":0.5,"env":[{"name":"A"},{"name":"A"}],"policy":"","strict":""}})");
  ValidateOptions go;
  go.builtin_kind = true;
  const std::string strict = R"(spec.strict: Unsupported value: "": supported values: "Always", "Never")";
  EXPECT_THAT(Errors(s, obj, go), ElementsAre(strict));
  EXPECT_THAT(
      Errors(s, obj),
      ElementsAre(R"(spec.cpu: Invalid value: "number": spec.cpu in body must be of type integer,string: "number")",
                  R"(spec.env[1]: Duplicate value: {"name":"A"})", strict));
  json normalized = obj;
  s.NormalizeIntegers(&normalized);
  EXPECT_EQ(normalized["spec"]["cpu"], "500m");
  EXPECT_THAT(Errors(s, json::parse(R"({"spec":{"cpu":"half"}})"), go), ElementsAre(::testing::HasSubstr("spec.cpu")));
}

TEST(SchemaTest, CausesCarryKubernetesReasons) {
  Schema s = MustCompile(Root({{"type", "object"},
                               {"required", {"clusterQueue"}},
                               {"properties", {{"clusterQueue", {{"type", "string"}}}}}}));
  FieldErrorList errs = s.Validate({{"spec", json::object()}});
  ASSERT_EQ(errs.size(), 1u);
  StatusCause cause = errs[0].ToCause();
  EXPECT_EQ(cause.type, "FieldValueRequired");
  EXPECT_EQ(cause.field, "spec.clusterQueue");
  EXPECT_EQ(cause.message, "Required value");
}

TEST(SchemaTest, RefsResolveToSharedDefinitionsWithSiblingDefaults) {
  SchemaDefinitions defs;
  defs["io.k8s.api.core.v1.Toleration"] = json::parse(R"({
    "type": "object",
    "properties": {"key": {"type": "string"},
                   "operator": {"type": "string", "enum": ["Equal", "Exists"]}}})");
  defs["test.Policy"] = json::parse(R"({
    "type": "object",
    "properties": {"mode": {"type": "string", "default": "Never"}}})");
  Schema s = MustCompile(Root(json::parse(R"({
    "type": "object",
    "properties": {
      "tolerations": {"type": "array",
                      "items": {"$ref": "#/components/schemas/io.k8s.api.core.v1.Toleration",
                                "description": "a toleration"}},
      "policy": {"$ref": "#/components/schemas/test.Policy", "default": {}}
    }})")), defs);
  json obj = json::parse(R"({"spec": {"tolerations": [{"key": "a", "operator": "Maybe"}]}})");
  EXPECT_THAT(Errors(s, obj), ElementsAre("spec.tolerations[0].operator: Unsupported value: "
                                          "\"Maybe\": supported values: \"Equal\", \"Exists\""));
  s.Default(&obj);
  EXPECT_EQ(obj["spec"]["policy"], json::parse(R"({"mode": "Never"})"));
}

TEST(SchemaTest, CompileErrorsNameThePlace) {
  struct Case {
    json schema;
    SchemaDefinitions defs;
    std::string error;
  };
  SchemaDefinitions cyclic;
  cyclic["A"] = json::parse(R"({"type": "object", "properties": {"b": {"$ref": "#/components/schemas/B"}}})");
  cyclic["B"] = json::parse(R"({"type": "array", "items": {"$ref": "#/components/schemas/A"}})");
  const Case cases[] = {
      {json::parse(R"({"type": "object", "properties": {"x": {"$ref": "#/components/schemas/Nope"}}})"),
       {}, "f.yaml: openAPIV3Schema.properties.x: $ref \"#/components/schemas/Nope\" not found"},
      {json::parse(R"({"$ref": "#/definitions/A"})"), {},
       "$ref \"#/definitions/A\" must start with \"#/components/schemas/\""},
      {json::parse(R"({"$ref": "#/components/schemas/A"})"), cyclic, "$ref cycle: A -> B -> A"},
      {json::parse(R"({"type": "map"})"), {}, "openAPIV3Schema.type: unsupported type \"map\""},
      {json::parse(R"({"type": "string", "pattern": "[a-"})"), {}, "invalid regular expression"},
      {json::parse(R"({"type": "array", "x-kubernetes-list-type": "map"})"), {},
       "x-kubernetes-list-type map requires x-kubernetes-list-map-keys"},
      {json::parse(R"({"type": "string", "maxLength": -1})"), {},
       "openAPIV3Schema.maxLength: must not be negative"},
      {json::parse(R"({"type": "object", "required": "a"})"), {}, "must be a list of strings"},
      {json::parse(R"({"x-berth-quantity": true, "x-berth-quantity-minimum": "zero"})"), {},
       "quantities must match"},
  };
  for (const Case& c : cases) {
    SchemaCompiler compiler(c.defs);
    StatusOr<Schema> s = compiler.Compile(c.schema, "f.yaml: openAPIV3Schema");
    ASSERT_FALSE(s.ok()) << c.error;
    EXPECT_EQ(s.status().code(), Code::kInvalid);
    EXPECT_THAT(s.status().message(), HasSubstr(c.error));
  }
}

TEST(SchemaTest, DefinitionsAreCompiledOnceAndAllCanBeChecked) {
  SchemaDefinitions defs;
  defs["Good"] = json{{"type", "string"}};
  defs["Bad"] = json{{"type", "string"}, {"pattern", "("}};
  SchemaCompiler compiler(defs);
  EXPECT_TRUE(compiler.Compile(json{{"$ref", "#/components/schemas/Good"}}, "x").ok());
  Status all = compiler.CompileAllDefinitions("resources/definitions");
  EXPECT_FALSE(all.ok());
  EXPECT_THAT(all.message(), HasSubstr("definition Bad.pattern"));
}

// ---------------------------------------------------------------------------------------
// Defaulting

const char* kDefaultingSchema = R"({
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "default": {},
      "properties": {
        "queueingStrategy": {"type": "string", "default": "BestEffortFIFO"},
        "preemption": {
          "type": "object",
          "default": {},
          "properties": {
            "withinClusterQueue": {"type": "string", "default": "Never"},
            "borrowWithinCohort": {"type": "object", "properties": {
              "policy": {"type": "string", "default": "Never"}}}
          }
        },
        "podSets": {"type": "array", "items": {"type": "object", "properties": {
          "name": {"type": "string", "default": "main"},
          "count": {"type": "integer", "default": 1}}}},
        "limits": {"type": "object", "additionalProperties": {
          "type": "object", "properties": {"max": {"type": "integer", "default": 10}}}},
        "nullableNote": {"type": "string", "nullable": true},
        "note": {"type": "string"},
        "mode": {"type": "string", "default": "Auto"}
      }
    }
  }})";

TEST(SchemaDefaultTest, AppliesNestedDefaultsOnlyWhereParentsExist) {
  Schema s = MustCompile(json::parse(kDefaultingSchema));
  json obj = json::parse(R"({"spec": {
      "podSets": [{"name": "workers"}, {}],
      "limits": {"a": {}},
      "nullableNote": null,
      "note": null,
      "mode": null}})");
  s.Default(&obj);
  EXPECT_EQ(obj, json::parse(R"({"spec": {
      "queueingStrategy": "BestEffortFIFO",
      "preemption": {"withinClusterQueue": "Never"},
      "podSets": [{"name": "workers", "count": 1}, {"name": "main", "count": 1}],
      "limits": {"a": {"max": 10}},
      "nullableNote": null,
      "mode": "Auto"}})"));
}

TEST(SchemaDefaultTest, DefaultsTheWholeTreeFromAnEmptyObject) {
  Schema s = MustCompile(json::parse(kDefaultingSchema));
  json obj = json::object();
  s.Default(&obj);
  // borrowWithinCohort has no default, so its policy is not defaulted.
  EXPECT_EQ(obj, json::parse(R"({"spec": {"queueingStrategy": "BestEffortFIFO", "mode": "Auto",
                                          "preemption": {"withinClusterQueue": "Never"}}})"));
  json explicit_value = json::parse(R"({"spec": {"queueingStrategy": "StrictFIFO"}})");
  s.Default(&explicit_value);
  EXPECT_EQ(explicit_value["spec"]["queueingStrategy"], "StrictFIFO");
}

// ---------------------------------------------------------------------------------------
// Pruning and unknown fields

const char* kPruningSchema = R"({
  "type": "object",
  "properties": {
    "apiVersion": {"type": "string"},
    "kind": {"type": "string"},
    "metadata": {"type": "object"},
    "spec": {"type": "object", "properties": {
      "containers": {"type": "array", "items": {"type": "object", "properties": {
        "name": {"type": "string"}}}},
      "labels": {"type": "object", "additionalProperties": {"type": "string"}},
      "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                 "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}},
      "anything": {"type": "object", "additionalProperties": true},
      "template": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {
        "spec": {"type": "object", "properties": {"x": {"type": "string"}}}}}
    }},
    "status": {"type": "object", "properties": {"phase": {"type": "string"}}}
  }})";

TEST(SchemaPruneTest, DropsUnknownFieldsAndReportsTheirPaths) {
  Schema s = MustCompile(json::parse(kPruningSchema));
  json obj = json::parse(R"({
    "apiVersion": "g/v1", "kind": "K",
    "metadata": {"name": "a", "labels": {"x": "y"}, "bogus": 1},
    "spec": {
      "containers": [{"name": "c", "image": "busybox"}],
      "labels": {"free": "form"},
      "config": {"free": {"deep": 1}, "known": {"a": "x", "b": "y"}},
      "anything": {"k": {"v": 1}},
      "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "t", "junk": 2},
                   "spec": {"x": "1", "y": "2"}, "extra": true},
      "foo": 1
    },
    "status": {"phase": "Running", "bar": 2},
    "topLevel": 3})");
  const std::vector<std::string> expected = {
      "metadata.bogus",
      "spec.config.known.b",
      "spec.containers[0].image",
      "spec.foo",
      "spec.template.extra",
      "spec.template.metadata.junk",
      "spec.template.spec.y",
      "status.bar",
      "topLevel"};
  EXPECT_THAT(s.UnknownFields(obj), ElementsAreArray(expected));
  json pruned = obj;
  EXPECT_THAT(s.Prune(&pruned), ElementsAreArray(expected));
  EXPECT_EQ(pruned, json::parse(R"({
    "apiVersion": "g/v1", "kind": "K",
    "metadata": {"name": "a", "labels": {"x": "y"}},
    "spec": {
      "containers": [{"name": "c"}],
      "labels": {"free": "form"},
      "config": {"free": {"deep": 1}, "known": {"a": "x"}},
      "anything": {"k": {"v": 1}},
      "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "t"},
                   "spec": {"x": "1"}}
    },
    "status": {"phase": "Running"}})"));
  // UnknownFields left the object alone.
  EXPECT_TRUE(obj["spec"].contains("foo"));
}

// A field without a schema is pruned by a walk that follows the input, as deep as the
// input goes: arrays of arrays are walked into (their objects emptied, each path
// reported), without recursion and without a copy of the path per level.
TEST(SchemaPruneTest, SchemalessValuesArePrunedAtAnyDepth) {
  Schema s = MustCompile(Root(json::parse(R"({"type":"object","properties":{"known":{"type":"string"}}})")));
  json obj = json::parse(R"({"apiVersion":"g/v1","kind":"K","spec":{"known":"k","unknown":1}})");
  // spec.unknown is dropped whole; an array under a property without items walks into
  // its elements.
  Schema arrays = MustCompile(Root(json::parse(R"({"type":"object","properties":{"list":{"type":"array"}}})")));
  json deep = json::parse(R"({"apiVersion":"g/v1","kind":"K","spec":{"list":[[{"a":1}],[[{"b":2,"c":3}]],5]}})");
  EXPECT_THAT(arrays.Prune(&deep), ElementsAre("spec.list[0][0].a", "spec.list[1][0][0].b", "spec.list[1][0][0].c"));
  EXPECT_EQ(deep["spec"]["list"], json::parse(R"([[{}],[[{}]],5])"));
  EXPECT_THAT(s.Prune(&obj), ElementsAre("spec.unknown"));

  // 200,000 levels (more than a request may carry): no stack used per level.
  json nested = json::array({json::object({{"x", 1}})});
  for (int i = 0; i < 200000; ++i) nested = json::array({std::move(nested)});
  json big = {{"apiVersion", "g/v1"}, {"kind", "K"}, {"spec", {{"list", std::move(nested)}}}};
  std::vector<std::string> pruned = arrays.Prune(&big);
  ASSERT_EQ(pruned.size(), 1u);
  EXPECT_EQ(pruned[0].size(), std::string("spec.list").size() + 3 * 200001 + 2);
}

// kube-openapi's stringValidator stops at the first failure of maxLength, minLength,
// pattern: a string over its limit is never matched against the pattern.
TEST(SchemaTest, StringChecksStopAtTheFirstFailure) {
  Schema s = MustCompile(Root(json::parse(
      R"({"type":"object","properties":{"reason":{"type":"string","minLength":2,"maxLength":8,"pattern":"^[a-z]+$"}}})")));
  auto spec = [](const std::string& v) {
    return json{{"apiVersion", "g/v1"}, {"kind", "K"}, {"spec", {{"reason", v}}}};
  };
  EXPECT_THAT(Errors(s, spec("ABCDEFGHIJ")), ElementsAre("spec.reason: Too long: may not be more than 8 bytes"));
  EXPECT_THAT(Errors(s, spec("A")),
              ElementsAre("spec.reason: Invalid value: \"A\": spec.reason in body should be at least 2 chars long"));
  EXPECT_THAT(Errors(s, spec("ABC")),
              ElementsAre("spec.reason: Invalid value: \"ABC\": spec.reason in body should match '^[a-z]+$'"));
  EXPECT_THAT(Errors(s, spec(std::string(1 << 20, 'a'))),
              ElementsAre("spec.reason: Too long: may not be more than 8 bytes"));
}

// String formats are matched in linear time: a megabyte-long value is answered at once
// (std::regex recursed once per character on these).
TEST(SchemaTest, FormatsOfLongStringsAreMatchedWithoutRecursion) {
  for (const char* format : {"duration", "uuid", "hostname"}) {
    Schema s =
        MustCompile(Root({{"type", "object"}, {"properties", {{"v", {{"type", "string"}, {"format", format}}}}}}));
    for (const std::string& v : {std::string(1 << 20, '1') + "s", std::string(1 << 20, 'a')}) {
      const std::vector<std::string> errs = Errors(s, {{"apiVersion", "g/v1"}, {"kind", "K"}, {"spec", {{"v", v}}}});
      const bool valid = std::string_view(format) == "duration" && v.back() == 's';
      EXPECT_EQ(errs.empty(), valid) << format;
    }
  }
}

TEST(SchemaPruneTest, NonResourceRootPrunesApiVersionToo) {
  Schema s = MustCompile(json::parse(R"({"type": "object", "properties": {"a": {"type": "string"}}})"));
  json obj = json::parse(R"({"a": "x", "kind": "K"})");
  EXPECT_THAT(s.UnknownFields(obj, /*resource_root=*/false), ElementsAre("kind"));
  EXPECT_THAT(s.UnknownFields(obj, /*resource_root=*/true), IsEmpty());
}

TEST(SchemaTest, EmptySchemaAcceptsEverything) {
  Schema s;
  json obj = json::parse(R"({"spec": {"x": 1}})");
  EXPECT_TRUE(s.empty());
  EXPECT_THAT(s.Validate(obj), IsEmpty());
  EXPECT_THAT(s.Prune(&obj), IsEmpty());
  EXPECT_EQ(obj["spec"]["x"], 1);
}

}  // namespace
}  // namespace berth::api
