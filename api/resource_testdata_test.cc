// The table-driven test over resources/testdata/<folder>/<plural>/{valid,invalid}-*.yaml
// (the convention in docs/contributing.md): every file is one object written through the
// admission pipeline of the embedded registry, as `kubectl create -f` would send it.
//
//   valid-*.yaml    must be admitted with fieldValidation=Strict. Optional lines
//                   `# expect-default: <json-pointer> = <json value>` assert the stored
//                   object's value (defaulting).
//   invalid-*.yaml  must be rejected with fieldValidation=Strict. Each line
//                   `# expect: <text>` must occur in the error output: the Strict error, the
//                   error of the same write with fieldValidation=Warn (so schema and strategy
//                   errors are seen even when unknown fields stop a Strict write, as
//                   `kubectl apply --validate=warn` would show) and its warnings.
// The object's kind must be the one defined by resources/<folder>/<plural>.yaml (folder
// "core" is the core group ""). A namespaced object without a namespace gets "default",
// as kubectl fills it in.
//
// The files are compiled into this test (cmake/embed_resources.cmake), so adding one
// re-runs CMake and the test list.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <iostream>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "api/admission_pipeline.h"
#include "api/registry.h"
#include "api/strategy.h"
#include "api/yaml_codec.h"

namespace berth::api {

std::span<const EmbeddedFile> ResourceTestdataFiles();

namespace {

struct TestFile {
  std::string path;       // resources/testdata/<folder>/<plural>/<name>.yaml
  std::string folder;
  std::string plural;
  std::string name;       // file name without .yaml
  std::string contents;
};

std::vector<TestFile> Files() {
  std::vector<TestFile> out;
  for (const EmbeddedFile& f : ResourceTestdataFiles()) {
    TestFile t;
    t.path = std::string(f.path);
    t.contents = std::string(f.contents);
    std::string rest = t.path.substr(std::string("resources/testdata/").size());
    auto slash1 = rest.find('/');
    auto slash2 = rest.find('/', slash1 + 1);
    if (slash1 == std::string::npos || slash2 == std::string::npos) {
      t.name = rest;  // reported as malformed by the test
    } else {
      t.folder = rest.substr(0, slash1);
      t.plural = rest.substr(slash1 + 1, slash2 - slash1 - 1);
      t.name = rest.substr(slash2 + 1);
      if (t.name.size() > 5 && t.name.ends_with(".yaml")) t.name.resize(t.name.size() - 5);
    }
    out.push_back(std::move(t));
  }
  return out;
}

// Lines "# <key>: <value>" of the leading comment block.
std::vector<std::string> Directives(const std::string& text, const std::string& key) {
  std::vector<std::string> out;
  const std::string prefix = "# " + key + ":";
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    std::string line = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (line.rfind(prefix, 0) == 0) {
      std::string value = line.substr(prefix.size());
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\r')) value.pop_back();
      out.push_back(value);
    }
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return out;
}

StatusOr<AdmittedWrite> Write(const Object& obj, FieldValidation fv) {
  static const AdmissionPipeline pipeline(Registry::Default(), StrategyRegistry::Default());
  WriteRequest req;
  req.object = obj;
  req.field_validation = fv;
  return pipeline.Admit(std::move(req));
}

class ResourceTestdataTest : public ::testing::TestWithParam<TestFile> {};

TEST_P(ResourceTestdataTest, AdmitsOrRejectsAsExpected) {
  const TestFile& f = GetParam();
  SCOPED_TRACE(f.path);
  ASSERT_FALSE(f.folder.empty()) << "test data must live in resources/testdata/<folder>/<plural>/";
  const bool valid = f.name.rfind("valid-", 0) == 0;
  const bool invalid = f.name.rfind("invalid-", 0) == 0;
  ASSERT_TRUE(valid || invalid) << "file names start with valid- or invalid-";

  const Registry& registry = Registry::Default();
  const std::string group = f.folder == "core" ? "" : f.folder;
  const ResourceDefinition* def = registry.Find({group, f.plural});
  ASSERT_NE(def, nullptr) << "no definition resources/" << f.folder << "/" << f.plural << ".yaml";

  StatusOr<Object> parsed = ParseYaml(f.contents, f.path);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  Object obj = *parsed;
  StatusOr<const ResourceDefinition*> kind =
      registry.ForKind(obj.value("apiVersion", ""), obj.value("kind", ""));
  ASSERT_TRUE(kind.ok()) << kind.status();
  ASSERT_EQ(*kind, def) << "the object is a " << (*kind)->name << ", not a " << def->name;
  if (def->namespaced() && Namespace(obj).empty()) obj["metadata"]["namespace"] = "default";

  StatusOr<AdmittedWrite> strict = Write(obj, FieldValidation::kStrict);
  if (valid) {
    EXPECT_THAT(Directives(f.contents, "expect"), ::testing::IsEmpty())
        << "valid files carry no '# expect:' lines";
    ASSERT_TRUE(strict.ok()) << strict.status();
    for (const std::string& d : Directives(f.contents, "expect-default")) {
      auto eq = d.find(" = ");
      ASSERT_NE(eq, std::string::npos) << "expect-default needs '<json-pointer> = <json>': " << d;
      std::string pointer = d.substr(0, eq);
      Object expected = Object::parse(d.substr(eq + 3), nullptr, /*allow_exceptions=*/false);
      ASSERT_FALSE(expected.is_discarded()) << "not JSON: " << d.substr(eq + 3);
      Object::json_pointer ptr(pointer);
      ASSERT_TRUE(strict->object.contains(ptr)) << pointer << " is absent in " << strict->object.dump();
      EXPECT_EQ(strict->object[ptr], expected) << pointer;
    }
    return;
  }
  const std::vector<std::string> expects = Directives(f.contents, "expect");
  ASSERT_FALSE(expects.empty()) << "invalid files need at least one '# expect:' line";
  ASSERT_FALSE(strict.ok()) << "admitted: " << strict->object.dump();
  std::string output = strict.status().ToString();
  StatusOr<AdmittedWrite> warn = Write(obj, FieldValidation::kWarn);
  if (!warn.ok()) {
    output += "\n" + warn.status().ToString();
  } else {
    for (const std::string& w : warn->warnings) output += "\nWarning: " + w;
  }
  for (const std::string& e : expects) EXPECT_THAT(output, ::testing::HasSubstr(e));
}

std::string TestName(const ::testing::TestParamInfo<TestFile>& info) {
  std::string n = info.param.folder + "_" + info.param.plural + "_" + info.param.name;
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(Files, ResourceTestdataTest, ::testing::ValuesIn(Files()), TestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ResourceTestdataTest);

TEST(ResourceTestdataCoverageTest, EveryKindHasValidAndInvalidFiles) {
  std::map<std::string, std::pair<int, int>> counts;  // definition name -> (valid, invalid)
  for (const TestFile& f : Files()) {
    const ResourceDefinition* def = Registry::Default().Find({f.folder == "core" ? "" : f.folder, f.plural});
    if (def == nullptr) continue;
    auto& c = counts[def->name];
    (f.name.rfind("valid-", 0) == 0 ? c.first : c.second)++;
  }
  std::vector<std::string> missing;
  for (const ResourceDefinition* d : Registry::Default().Definitions()) {
    auto it = counts.find(d->name);
    if (it == counts.end() || it->second.first == 0 || it->second.second == 0) missing.push_back(d->name);
  }
  EXPECT_THAT(missing, ::testing::IsEmpty())
      << "every kind needs at least one valid-*.yaml and one invalid-*.yaml in "
         "resources/testdata/<folder>/<plural>/";
}

}  // namespace
}  // namespace berth::api
