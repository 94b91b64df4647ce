#include "api/yaml_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "api/limits.h"

namespace berth::api {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

json ParseValue(const std::string& scalar_text) {
  auto doc = ParseYaml("v: " + scalar_text + "\n");
  EXPECT_TRUE(doc.ok()) << scalar_text << ": " << doc.status();
  return doc.ok() ? (*doc)["v"] : json();
}

TEST(YamlScalarTest, CoreSchemaResolution) {
  struct Case {
    const char* text;
    json want;
  };
  const Case cases[] = {
      // null
      {"~", nullptr}, {"null", nullptr}, {"Null", nullptr}, {"NULL", nullptr}, {"", nullptr},
      // bool
      {"true", true}, {"True", true}, {"TRUE", true},
      {"false", false}, {"False", false}, {"FALSE", false},
      // YAML 1.1 booleans are strings in 1.2
      {"yes", "yes"}, {"no", "no"}, {"on", "on"}, {"off", "off"}, {"y", "y"}, {"tRUE", "tRUE"},
      // int
      {"0", 0}, {"5", 5}, {"-17", -17}, {"+3", 3}, {"0123", 123}, {"0o17", 15}, {"0x1F", 31},
      {"9223372036854775807", INT64_MAX}, {"-9223372036854775808", INT64_MIN},
      {"18446744073709551615", UINT64_MAX},
      // not ints
      {"1_000", "1_000"}, {"0b101", "0b101"}, {"0o8", "0o8"}, {"0xG", "0xG"}, {"-0x1", "-0x1"},
      {"12:30", "12:30"}, {"1.2.3", "1.2.3"},
      // float
      {"1.5", 1.5}, {"-2.25", -2.25}, {".5", 0.5}, {"1E-2", 0.01}, {"99999999999999999999", 1e20},
      // whole floats within int64 are integers, as in sigs.k8s.io/yaml's JSON text
      {"5.", 5}, {"1e3", 1000}, {"+1.5e+2", 150}, {"-0.0", 0},
      // not floats
      {"1e", "1e"}, {"e3", "e3"}, {".", "."}, {"1.5x", "1.5x"},
      // strings
      {"hello world", "hello world"}, {"\"5\"", "5"}, {"'true'", "true"}, {"\"null\"", "null"},
      {"''", ""}, {"!!str 5", "5"}, {"!!int \"7\"", 7}, {"!!float 1", 1}, {"! 5", "5"},
      {"!!null ''", nullptr}, {"|\n  a\n  b\n", "a\nb\n"}, {">-\n  a\n  b\n", "a b"},
  };
  for (const auto& c : cases) {
    json got = ParseValue(c.text);
    EXPECT_EQ(got, c.want) << "scalar: " << c.text << " got " << got.dump();
    EXPECT_EQ(got.type(), c.want.type()) << "scalar: " << c.text << " got " << got.dump();
  }
}

// Found by the request fuzzer: bytes that are not UTF-8 must not become a JSON
// string (which nlohmann cannot serialise).
TEST(YamlScalarTest, InvalidUtf8IsAnError) {
  auto doc = ParseYaml("v: \"a\xbfb\"\n");
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(doc.status().message(), HasSubstr("invalid UTF-8"));
  auto key = ParseYaml("k\xff: 1\n");
  EXPECT_FALSE(key.ok());
  auto fine = ParseYaml("v: \"caf\xc3\xa9 \xe6\x97\xa5\xf0\x9f\x98\x80\"\n");
  ASSERT_TRUE(fine.ok()) << fine.status();
  EXPECT_EQ((*fine)["v"], "caf\xc3\xa9 \xe6\x97\xa5\xf0\x9f\x98\x80");
}

// Found by the request fuzzer: yaml-cpp 0.7 produces empty documents forever
// for a stream that starts with ','. The parse must end with an error.
TEST(YamlDocumentTest, MalformedStreamEnds) {
  auto doc = ParseYamlStream(",\"spec\":{\"a\":[{\"n\":\"c\"}]}}}");
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(doc.status().message(), HasSubstr("did not find expected node content"));
  EXPECT_FALSE(ParseJsonOrYaml(",a").ok());
}

// Found by the request fuzzer: a JSON number beyond double is a BadRequest,
// not an exception.
TEST(YamlDocumentTest, JsonNumberOverflowIsAnError) {
  auto doc = ParseJsonOrYaml(R"({"spec":{"replicas":1e400}})");
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), Code::kBadRequest);
  EXPECT_EQ(doc.status().message(), "json: cannot unmarshal number 1e400 into Go value of type float64");
}

TEST(YamlScalarTest, InfinityAndNaN) {
  json inf = ParseValue(".inf");
  ASSERT_TRUE(inf.is_number_float());
  EXPECT_TRUE(std::isinf(inf.get<double>()) && inf.get<double>() > 0);
  json ninf = ParseValue("-.Inf");
  ASSERT_TRUE(ninf.is_number_float());
  EXPECT_TRUE(std::isinf(ninf.get<double>()) && ninf.get<double>() < 0);
  json nan = ParseValue(".NaN");
  ASSERT_TRUE(nan.is_number_float());
  EXPECT_TRUE(std::isnan(nan.get<double>()));
  EXPECT_EQ(ParseValue(".infinity"), ".infinity");
}

TEST(YamlScalarTest, ExplicitTagMismatchIsAnError) {
  auto r = ParseYaml("v: !!int abc\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kBadRequest);
  EXPECT_THAT(r.status().message(), HasSubstr("cannot decode !!str `abc` as a !!int"));
}

TEST(YamlDocumentTest, NestedManifest) {
  const char* text = R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: cluster-queue
spec:
  namespaceSelector: {}   # all namespaces
  resourceGroups:
  - coveredResources: ["cpu", "memory"]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: 9
      - name: memory
        nominalQuota: 36Gi
)";
  auto doc = ParseYaml(text, "cq.yaml");
  ASSERT_TRUE(doc.ok()) << doc.status();
  json want = {
      {"apiVersion", "kueue.x-k8s.io/v1beta1"},
      {"kind", "ClusterQueue"},
      {"metadata", {{"name", "cluster-queue"}}},
      {"spec",
       {{"namespaceSelector", json::object()},
        {"resourceGroups",
         {{{"coveredResources", {"cpu", "memory"}},
           {"flavors",
            {{{"name", "default-flavor"},
              {"resources",
               {{{"name", "cpu"}, {"nominalQuota", 9}},
                {{"name", "memory"}, {"nominalQuota", "36Gi"}}}}}}}}}}}}};
  EXPECT_EQ(*doc, want);
}

TEST(YamlDocumentTest, MultiDocumentStreamSkipsEmptyDocuments) {
  const char* text = R"(---
# only a comment
---
a: 1
---
---
null
---
- x
...
---
b: "2"
)";
  auto docs = ParseYamlStream(text);
  ASSERT_TRUE(docs.ok()) << docs.status();
  ASSERT_EQ(docs->size(), 3u);
  EXPECT_EQ((*docs)[0], (json{{"a", 1}}));
  EXPECT_EQ((*docs)[1], json::array({"x"}));
  EXPECT_EQ((*docs)[2], (json{{"b", "2"}}));

  auto none = ParseYamlStream("# nothing\n\n");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_FALSE(ParseYaml("a: 1\n---\nb: 2\n").ok());
  EXPECT_FALSE(ParseYaml("").ok());
}

TEST(YamlDocumentTest, AnchorsAliasesAndMergeKeys) {
  const char* text = R"(base: &base
  cpu: 1
  memory: 2Gi
extra: &extra
  gpu: 1
  cpu: 7
list: &l [a, b]
copy: *l
merged:
  <<: *base
  memory: 4Gi
multi:
  <<: [*extra, *base]
inline:
  <<: {x: 1}
  y: 2
quoted:
  "<<": literal
)";
  auto doc = ParseYaml(text);
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ((*doc)["copy"], json::array({"a", "b"}));
  EXPECT_EQ((*doc)["merged"], (json{{"cpu", 1}, {"memory", "4Gi"}}));
  // Earlier maps in the merge list win: cpu comes from *extra.
  EXPECT_EQ((*doc)["multi"], (json{{"cpu", 7}, {"gpu", 1}, {"memory", "2Gi"}}));
  EXPECT_EQ((*doc)["inline"], (json{{"x", 1}, {"y", 2}}));
  EXPECT_EQ((*doc)["quoted"], (json{{"<<", "literal"}}));
}

TEST(YamlDocumentTest, NonStringKeysBecomeStrings) {
  auto doc = ParseYaml("1: a\ntrue: b\n~: c\n1.5: d\n");
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(*doc, (json{{"1", "a"}, {"true", "b"}, {"null", "c"}, {"1.5", "d"}}));
}

TEST(YamlErrorTest, SyntaxErrorsCarrySourceDocumentLineAndColumn) {
  const char* text = "a: 1\n---\nmetadata:\n  name: x\n  labels: a: b\n";
  auto r = ParseYamlStream(text, "pod.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kBadRequest);
  EXPECT_EQ(r.status().message(),
            "error parsing pod.yaml (document 2): error converting YAML to JSON: yaml: line 5, "
            "column 12: mapping values are not allowed in this context");

  auto no_source = ParseYamlStream("a: [1, 2\n");
  ASSERT_FALSE(no_source.ok());
  EXPECT_THAT(no_source.status().message(),
              HasSubstr("document 1: error converting YAML to JSON: yaml: line "));
  EXPECT_THAT(no_source.status().message(), HasSubstr("did not find expected ',' or ']'"));
}

TEST(YamlErrorTest, DuplicateKeysAreErrors) {
  auto r = ParseYaml("metadata:\n  name: a\n  name: b\n", "x.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "error parsing x.yaml (document 1): error converting YAML to JSON: yaml: line 3, "
            "column 3: mapping key \"name\" already defined at line 2");
  // Same key in different mappings is fine.
  EXPECT_TRUE(ParseYaml("a: {k: 1}\nb: {k: 2}\n").ok());
}

TEST(YamlErrorTest, UnknownAnchorComplexKeyAndAliasBomb) {
  auto unknown = ParseYaml("a: *nope\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("yaml: line 1"));

  auto complex_key = ParseYaml("? [a, b]\n: 1\n");
  ASSERT_FALSE(complex_key.ok());
  EXPECT_THAT(complex_key.status().message(), HasSubstr("invalid map key"));

  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'h'; ++c) {
    std::string prev(1, static_cast<char>(c - 1));
    std::string refs;
    for (int i = 0; i < 10; ++i) refs += (i ? ", *" : "*") + prev;
    bomb += std::string(1, c) + ": &" + std::string(1, c) + " [" + refs + "]\n";
  }
  auto r = ParseYaml(bomb);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("excessive aliasing"));
}

// Go's encoding/json maxNestingDepth: 10000 levels parse, 10001 are refused at the
// bracket that opens the extra level, before anything is built.
TEST(JsonDepthTest, TenThousandLevelsAndNoMore) {
  auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  EXPECT_TRUE(ParseJson(nested(10000)).ok());
  auto deep = ParseJson(nested(10001));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().code(), Code::kBadRequest);
  EXPECT_EQ(deep.status().message(), "json: line 1, column 10001: exceeded max depth");
  auto objects = ParseJsonOrYaml(std::string(10001, '{'), "deep.json");
  ASSERT_FALSE(objects.ok());
  EXPECT_EQ(objects.status().message(), "error parsing deep.json: json: line 1, column 10001: exceeded max depth");
  // Brackets inside strings (escaped quotes included) are not levels.
  const std::string text = "[\"" + std::string(20000, '[') + "\\\"{\"]";
  auto in_string = ParseJson(text);
  ASSERT_TRUE(in_string.ok()) << in_string.status();
  EXPECT_EQ(in_string->at(0).get<std::string>().size(), 20002u);
  EXPECT_EQ(ExcessiveNestingOffset("{\"a\":[[1]]}", 2), 6u);
  EXPECT_EQ(ExcessiveNestingOffset("{\"a\":[[1]]}", 3), std::string::npos);
}

// yaml-cpp refuses a node 500 deep (the root is depth 1); the error names the reason at
// the collection that holds it, in flow and block style.
TEST(YamlDepthTest, NodesDeeperThanTheLimitAreRefused) {
  auto flow = [](int depth) { return std::string(depth, '[') + std::string(depth, ']') + "\n"; };
  EXPECT_TRUE(ParseYaml(flow(499)).ok());
  auto deep = ParseYaml(flow(500));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().message(),
            "document 1: error converting YAML to JSON: yaml: line 1, column 499: exceeded max depth of 499");
  // Keys are nodes too: 498 nested mappings, the last key and its null value at 499.
  std::string block;
  for (int i = 0; i < 498; ++i) block += std::string(i, ' ') + "k:\n";
  EXPECT_TRUE(ParseYaml(block).ok());
  block += std::string(498, ' ') + "k: v\n";
  auto deep_block = ParseYaml(block);
  ASSERT_FALSE(deep_block.ok());
  EXPECT_EQ(deep_block.status().message(),
            "document 1: error converting YAML to JSON: yaml: line 499, column 499: exceeded max depth of 499");
}

// Alias expansion is bounded by the bytes it adds (3 MiB a document), whatever the
// number of aliases, and still by go-yaml's ratio for many small ones.
// Each anchor is 480 levels deep in the text and holds the previous one: 25 of them
// are 12,000 levels once expanded, past the JSON decoder's 10,000 (kubectl could no
// longer read such an object back).
std::string AliasDepthChain(int anchors, int levels_each) {
  std::string doc = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\nx: [";
  for (int a = 0; a < anchors; ++a) {
    doc += "&a" + std::to_string(a) + " " + std::string(levels_each, '[');
    doc += a == 0 ? "1" : "*a" + std::to_string(a - 1);
    doc += std::string(levels_each, ']') + ", ";
  }
  return doc + "1]\n";
}

TEST(YamlAliasTest, ExpandedDepthIsBoundedByTheJsonLimit) {
  auto deep = ParseYaml(AliasDepthChain(25, 480));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().code(), Code::kBadRequest);
  EXPECT_NE(deep.status().message().find("exceeded max depth of 10000 once aliases are expanded"), std::string::npos)
      << deep.status().message();
  // 20 of them (9,600 levels and the document's own) stay within it.
  EXPECT_TRUE(ParseYaml(AliasDepthChain(20, 480)).ok());
}

TEST(YamlAliasTest, ExpansionIsBoundedInBytes) {
  auto doc = [](int aliases, size_t anchor_bytes) {
    std::string y = "a: &a " + std::string(anchor_bytes, 'x') + "\nb: [";
    for (int i = 0; i < aliases; ++i) y += i == 0 ? "*a" : ", *a";
    return y + "]\n";
  };
  // 47 copies of 64 KiB + 2 (as JSON) fit in 3 MiB, 48 do not.
  EXPECT_TRUE(ParseYaml(doc(47, 64 * 1024)).ok());
  auto over = ParseYaml(doc(48, 64 * 1024));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().message(), "document 1: error converting YAML to JSON: yaml: line 2, column " +
                                         std::to_string(5 + 4 * 47) + ": document contains excessive aliasing");
  auto attack = ParseYaml(doc(200000, 64 * 1024));
  ASSERT_FALSE(attack.ok());
  EXPECT_THAT(attack.status().message(), HasSubstr("document contains excessive aliasing"));
  // Ordinary use: an anchor merged into a few places.
  auto merged = ParseYaml("base: &b {cpu: 1, memory: 1Gi}\nx: {<<: *b, gpu: 1}\ny: *b\nz: [*b, *b]\n");
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ((*merged)["x"], json::parse(R"({"cpu":1,"memory":"1Gi","gpu":1})"));
}

TEST(YamlEmitTest, BlockStyleLikeKubectl) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p1"}, {"labels", {{"app", "demo"}}}, {"annotations", json::object()}}},
              {"spec",
               {{"containers",
                 {{{"name", "c"},
                   {"image", "busybox"},
                   {"args", {"--port", "8080"}},
                   {"env", {{{"name", "NUM"}, {"value", "5"}}}}}}},
                {"tolerations", json::array()},
                {"matrix", {{1, 2}, json::array()}}}}};
  EXPECT_EQ(EmitYaml(pod), R"(apiVersion: v1
kind: Pod
metadata:
  annotations: {}
  labels:
    app: demo
  name: p1
spec:
  containers:
  - args:
    - --port
    - "8080"
    env:
    - name: NUM
      value: "5"
    image: busybox
    name: c
  matrix:
  - - 1
    - 2
  - []
  tolerations: []
)");
  EXPECT_EQ(EmitYaml(json::object()), "{}\n");
  EXPECT_EQ(EmitYaml(json("x")), "x\n");
  EXPECT_EQ(EmitYamlStream({json{{"a", 1}}, json{{"b", true}}}), "a: 1\n---\nb: true\n");
}

TEST(YamlEmitTest, QuotesOnlyWhenNeeded) {
  struct Case {
    json value;
    std::string yaml;
  };
  const Case cases[] = {
      {"plain text", "plain text"}, {"5", "\"5\""}, {"1.5", "\"1.5\""}, {"true", "\"true\""},
      {"null", "\"null\""}, {"~", "\"~\""}, {"", "\"\""}, {"yes", "\"yes\""}, {"0o7", "\"0o7\""},
      {"1_000", "\"1_000\""}, {".inf", "\".inf\""}, {" lead", "\" lead\""}, {"a: b", "\"a: b\""},
      {"a #b", "\"a #b\""}, {"#x", "\"#x\""}, {"*x", "\"*x\""}, {"- x", "\"- x\""},
      {"-x", "-x"}, {"a:b", "a:b"}, {"tab\there", "\"tab\\there\""}, {"caf\xC3\xA9", "caf\xC3\xA9"},
      {"100m", "100m"}, {"8Gi", "8Gi"}, {"1.2.3", "1.2.3"}, {"N", "\"N\""}, {"0b11", "\"0b11\""},
      {"1:30", "\"1:30\""}, {"1_0.5", "\"1_0.5\""}, {"1e3", "\"1e3\""}, {"end:", "\"end:\""},
      {5, "5"}, {-1.5, "-1.5"}, {2.0, "2.0"}, {true, "true"}, {nullptr, "null"},
      // YAML 1.1 timestamps (go-yaml v2 would read them as times): kubectl quotes them.
      {"2026-01-01T00:00:00Z", "\"2026-01-01T00:00:00Z\""}, {"2026-1-2", "\"2026-1-2\""},
      {"2026-01-01T00:00:00.123456+09:00", "\"2026-01-01T00:00:00.123456+09:00\""},
      {"2026-01-01 10:00:00", "\"2026-01-01 10:00:00\""}, {"2026-01-01T00:00:00", "2026-01-01T00:00:00"},
      {"2026-01-01x", "2026-01-01x"}, {"v2026-01-01", "v2026-01-01"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(EmitYaml(json{{"k", c.value}}), "k: " + c.yaml + "\n") << c.value.dump();
  }
  EXPECT_EQ(EmitYaml(json{{"5", 1}, {"", 2}}), "\"\": 2\n\"5\": 1\n");
}

TEST(YamlEmitTest, MultiLineStringsAsLiteralBlocks) {
  EXPECT_EQ(EmitYaml(json{{"a", {{"script", "echo 1\necho 2\n"}}}}),
            "a:\n  script: |\n    echo 1\n    echo 2\n");
  EXPECT_EQ(EmitYaml(json{{"s", "x\n\ny"}}), "s: |-\n  x\n\n  y\n");
  EXPECT_EQ(EmitYaml(json{{"s", "x\n\n"}}), "s: |+\n  x\n\n");
  EXPECT_EQ(EmitYaml(json{{"l", {"a\nb\n"}}}), "l:\n- |\n  a\n  b\n");
  // A first line starting with a space would need an indentation indicator: quoted.
  EXPECT_EQ(EmitYaml(json{{"s", " x\ny"}}), "s: \" x\\ny\"\n");
}

TEST(YamlRoundTripTest, JsonToYamlToJsonIsIdentity) {
  json tricky = {
      {"strings", {"5", "0x1F", "true", "False", "null", "~", "", " ", "yes", "No", "on", "1e3",
                   ".5", "-", "--", "---", "...", "?", ":", "- a", "a: b", "a #b", "#", "!tag",
                   "&a", "*a", "|", ">", "%x", "@x", "`x`", "'q'", "\"dq\"", "{}", "[]", "<<",
                   "x:", "trailing ", "\ttab", "back\\slash", "line\nbreak", "\n", "\n\n",
                   "a\n", "cr\r\nlf", "bell\x07", "del\x7f", "caf\xC3\xA9", "\xE2\x80\xA8sep",
                   "\xEF\xBB\xBF" "bom", "emoji \xF0\x9F\x98\x80", "  indented\nblock", "12:30",
                   "0o17", "+1", "-0", "1_000", ".inf", "-.inf", ".nan", "1.", "1e", "x\n y\n"}},
      {"numbers", {0, -1, 42, INT64_MAX, INT64_MIN, UINT64_MAX, 1.5, -0.25, 1e21, 2.0, 1e-7}},
      {"bools", {true, false}},
      {"null", nullptr},
      {"empty", {{"map", json::object()}, {"list", json::array()}}},
      {"nested", {{{"a", {{"b", {1, {{"c", "d"}}}}}}}, {{{"x"}}}}},
      {"keys", {{"5", 1}, {"true", 2}, {"", 3}, {"a: b", 4}, {"- x", 5}, {"line\nkey", 6}}},
  };
  std::string yaml = EmitYaml(tricky);
  auto back = ParseYaml(yaml);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << yaml;
  EXPECT_EQ(*back, tricky) << yaml;
  for (const auto& s : tricky["strings"]) {
    json doc = {{"v", s}};
    auto again = ParseYaml(EmitYaml(doc));
    ASSERT_TRUE(again.ok()) << again.status() << "\n" << EmitYaml(doc);
    EXPECT_EQ(*again, doc) << EmitYaml(doc);
  }
}

TEST(ParseJsonOrYamlTest, AcceptsEither) {
  auto j = ParseJsonOrYaml("  {\"a\": [1, \"2\"]}");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(*j, (json{{"a", {1, "2"}}}));
  auto y = ParseJsonOrYaml("a:\n- 1\n- \"2\"\n");
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(*y, *j);
  auto bad = ParseJsonOrYaml("{\n  \"a\": 1,\n  }", "x.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kBadRequest);
  EXPECT_THAT(bad.status().message(), HasSubstr("error parsing x.json: json: line 3, column 3: "));
}

// What the HTTP transport sends for a document, read as the server reads a body.
json ThroughText(const json& doc) {
  auto parsed = ParseJson(doc.dump(-1, ' ', false, json::error_handler_t::replace));
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *parsed : json();
}

bool Encodable(const std::string& s) {
  try {
    (void)json(s).dump();
    return true;
  } catch (const json::type_error&) {
    return false;
  }
}

// Every 1- and 2-byte string, every 3-byte string over the bytes where UTF-8's ranges
// turn, and 200,000 random 4-byte strings: ValidUtf8 agrees with the strict encoder;
// in a value and in a key, the document read back is the one its text gives (invalid
// UTF-8 as U+FFFD), and the very document when the text can carry it.
TEST(ReadBackAsJsonTextTest, IsWhatTheTextGivesForEveryString) {
  std::vector<std::string> strings;
  for (int a = 0; a < 256; ++a) {
    strings.push_back(std::string(1, static_cast<char>(a)));
    for (int b = 0; b < 256; ++b) strings.push_back({static_cast<char>(a), static_cast<char>(b)});
  }
  const int edges[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0,
                       0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
  for (int a : edges) {
    for (int b : edges) {
      for (int c : edges) strings.push_back({static_cast<char>(a), static_cast<char>(b), static_cast<char>(c)});
    }
  }
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 200000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    std::string s(4, '\0');
    for (int k = 0; k < 4; ++k) s[k] = static_cast<char>((x >> (8 * k)) & 0xFF);
    if (i % 2 == 0) s[0] = static_cast<char>(0xE0 + (x >> 40) % 0x15);  // multi-byte leads, where the cases are
    strings.push_back(s);
  }
  int encodable = 0;
  for (const std::string& s : strings) {
    ASSERT_EQ(ValidUtf8(s), Encodable(s)) << testing::PrintToString(s);
    for (const json& doc : {json{{"spec", {{"a", s}}}}, json{{"spec", {{s, 1}}}}}) {
      auto read = ReadBackAsJsonText(doc);
      ASSERT_TRUE(read.ok()) << testing::PrintToString(s) << ": " << read.status();
      ASSERT_EQ(*read, ThroughText(doc)) << testing::PrintToString(s);
      if (Encodable(s)) {
        ASSERT_EQ(*read, doc) << testing::PrintToString(s);
      } else {
        ASSERT_NE(read->dump().find("\xef\xbf\xbd"), std::string::npos) << "U+FFFD for " << testing::PrintToString(s);
      }
    }
    encodable += Encodable(s);
  }
  EXPECT_GT(encodable, 10000);  // the set holds both kinds
  EXPECT_LT(encodable, static_cast<int>(strings.size()) - 10000);
}

TEST(ReadBackAsJsonTextTest, NumbersTheTextCannotWriteAreNull) {
  const json fine = {{"x", 1.5}, {"y", -3}, {"z", uint64_t{1} << 63}, {"w", 1e300}};
  EXPECT_EQ(*ReadBackAsJsonText(fine), fine);
  const json odd = {{"a", "ok"}, {"n", std::nan("")}, {"p", {1, HUGE_VAL}}, {"m", -HUGE_VAL}};
  auto read = ReadBackAsJsonText(odd);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, (json{{"a", "ok"}, {"n", nullptr}, {"p", {1, nullptr}}, {"m", nullptr}}));
}

// The parser's depth limit, checked without recursion: a document 100,000 levels deep
// is refused (without overflowing the stack); one at the limit is read back; the text
// parser draws the line at the same depth.
TEST(ReadBackAsJsonTextTest, RefusesWhatIsNestedDeeperThanTheParserReads) {
  auto nested = [](int levels, json leaf) {
    json doc = json::array({std::move(leaf)});
    for (int i = 1; i < levels; ++i) doc = json::array({std::move(doc)});
    return doc;
  };
  for (const json& leaf : {json(1), json("bad \xff")}) {
    auto at_limit = ReadBackAsJsonText(nested(kMaxJsonNestingDepth, leaf));
    ASSERT_TRUE(at_limit.ok()) << at_limit.status();
    EXPECT_EQ(*at_limit, ThroughText(nested(kMaxJsonNestingDepth, leaf)));
    for (int levels : {kMaxJsonNestingDepth + 1, 100000}) {
      auto deep = ReadBackAsJsonText(nested(levels, leaf));
      ASSERT_FALSE(deep.ok());
      EXPECT_EQ(deep.status().code(), Code::kBadRequest);
      EXPECT_THAT(deep.status().message(), HasSubstr("exceeded max depth"));
    }
  }
  EXPECT_TRUE(ParseJson(nested(kMaxJsonNestingDepth, 1).dump()).ok());
  EXPECT_FALSE(ParseJson(nested(kMaxJsonNestingDepth + 1, 1).dump()).ok());
}

TEST(CompactJsonSizeTest, IsTheLengthOfTheCompactText) {
  std::vector<json> docs = {
      json(),
      json(0),
      json(-17),
      json(uint64_t{18446744073709551615ull}),
      json(0.1),
      json(1e300),
      json(-2.5e-8),
      json(true),
      json(""),
      json("a\"b\\c\n\t\x01"),
      json("\xe2\x82\xac \xf0\x9f\x98\x80"),
      json("bad \xff\xfe utf-8 \xc0"),
      json::array(),
      json::object(),
      json{{"apiVersion", "v1"},
           {"kind", "Pod"},
           {"metadata", {{"name", "p"}, {"labels", {{"a", "b"}}}}},
           {"spec", {{"containers", json::array({{{"name", "c"}, {"args", {"x", "y\xff"}}}})}}}},
      json{{"\xff", {1, 2.5, nullptr, false}}},
  };
  for (const json& doc : docs) {
    EXPECT_EQ(CompactJsonSize(doc), doc.dump(-1, ' ', false, json::error_handler_t::replace).size())
        << doc.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

}  // namespace
}  // namespace berth::api
