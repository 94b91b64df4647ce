#include "cli/manifest.h"
#include "cli/errors.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace berth::cli {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> Names(const std::vector<ManifestObject>& objs) {
  std::vector<std::string> out;
  for (const auto& o : objs) out.push_back(o.object["kind"].get<std::string>() + "/" + api::Name(o.object) + "@" + o.source);
  return out;
}

TEST(ManifestTest, SplitsDocumentsAndSkipsEmptyOnes) {
  auto objs = ParseManifest(
      "# leading comment\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n---\n---\n"
      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: default-flavor\n...\n",
      "seed.yaml");
  ASSERT_TRUE(objs.ok()) << objs.status();
  EXPECT_EQ(Names(*objs), (std::vector<std::string>{"Namespace/team-a@seed.yaml", "ResourceFlavor/default-flavor@seed.yaml"}));
}

TEST(ManifestTest, ListsContributeTheirItems) {
  auto objs = ParseManifest(
      R"({"apiVersion":"v1","kind":"List","items":[
          {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}},
          {"apiVersion":"v1","kind":"PodList","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}]}]})",
      "list.json");
  ASSERT_TRUE(objs.ok()) << objs.status();
  EXPECT_EQ(Names(*objs), (std::vector<std::string>{"ConfigMap/a@list.json", "Pod/p@list.json"}));
}

TEST(ManifestTest, MissingTypeMetaIsAnError) {
  auto objs = ParseManifest("metadata:\n  name: x\n", "bad.yaml");
  ASSERT_FALSE(objs.ok());
  EXPECT_EQ(objs.status().message(),
            "error validating \"bad.yaml\": error validating data: [apiVersion not set, kind not set]");
  auto no_kind = ParseManifest("apiVersion: v1\n", "k.yaml");
  EXPECT_EQ(no_kind.status().message(), "error validating \"k.yaml\": error validating data: [kind not set]");
}

TEST(ManifestTest, YamlErrorsNameTheSource) {
  auto objs = ParseManifest("apiVersion: v1\nkind: [\n", "broken.yaml");
  ASSERT_FALSE(objs.ok());
  EXPECT_EQ(objs.status().code(), Code::kBadRequest);
  EXPECT_NE(objs.status().message().find("broken.yaml"), std::string::npos) << objs.status();
}

TEST(ManifestTest, ReadingErrorsPrintAsClientSideErrors) {
  std::istringstream no_stdin;
  auto missing = ReadManifests({"/nonexistent/berth.yaml"}, no_stdin);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(IsClientError(missing.status()));
  EXPECT_EQ(ErrorText(missing.status()), "error: the path \"/nonexistent/berth.yaml\" does not exist\n");
  std::istringstream broken("apiVersion: v1\nkind: [\n");
  auto parse = ReadManifests({"-"}, broken);
  ASSERT_FALSE(parse.ok());
  EXPECT_EQ(ErrorText(parse.status()).rfind("error: ", 0), 0u) << ErrorText(parse.status());
}

TEST(ManifestTest, DirectoriesStdinAndFilesInOrder) {
  fs::path dir = fs::temp_directory_path() / ("berth-cli-manifest-" + std::to_string(::getpid()));
  fs::create_directories(dir / "sub");
  auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  write(dir / "b.yml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n");
  write(dir / "a.json", R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}})");
  write(dir / "c.txt", "not a manifest");
  write(dir / "sub" / "d.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\n");
  std::istringstream in("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n");
  auto objs = ReadManifests({dir.string(), "-", (dir / "c.txt").string()}, in);
  // c.txt named explicitly is read whatever its extension: it is no object.
  ASSERT_FALSE(objs.ok());
  std::istringstream in2("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n");
  objs = ReadManifests({dir.string(), "-"}, in2);
  ASSERT_TRUE(objs.ok()) << objs.status();
  EXPECT_EQ(Names(*objs), (std::vector<std::string>{"ConfigMap/a@" + (dir / "a.json").string(),
                                                   "ConfigMap/b@" + (dir / "b.yml").string(), "Secret/s@STDIN"}));
  auto missing = ReadManifests({(dir / "nope.yaml").string()}, in2);
  EXPECT_EQ(missing.status().message(), "the path \"" + (dir / "nope.yaml").string() + "\" does not exist");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace berth::cli
