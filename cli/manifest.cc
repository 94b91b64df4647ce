#include "cli/manifest.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "api/yaml_codec.h"
#include "cli/errors.h"

namespace berth::cli {

namespace fs = std::filesystem;

namespace {

bool IsList(const api::Object& doc) {
  if (!doc.is_object()) return false;
  auto kind = doc.find("kind");
  auto items = doc.find("items");
  if (kind == doc.end() || !kind->is_string() || items == doc.end() || !items->is_array()) return false;
  const std::string& k = kind->get_ref<const std::string&>();
  return k.size() >= 4 && k.compare(k.size() - 4, 4, "List") == 0;
}

Status CheckTypeMeta(const api::Object& doc, std::string_view source) {
  std::vector<std::string> missing;
  if (!doc.is_object() || !doc.contains("apiVersion") || !doc["apiVersion"].is_string() ||
      doc["apiVersion"].get_ref<const std::string&>().empty()) {
    missing.push_back("apiVersion not set");
  }
  if (!doc.is_object() || !doc.contains("kind") || !doc["kind"].is_string() ||
      doc["kind"].get_ref<const std::string&>().empty()) {
    missing.push_back("kind not set");
  }
  if (missing.empty()) return Status::Ok();
  std::string msg = "error validating \"" + std::string(source) + "\": error validating data: [";
  for (size_t i = 0; i < missing.size(); ++i) msg += (i ? ", " : "") + missing[i];
  return BadRequestError(msg + "]");
}

Status Append(const api::Object& doc, std::string_view source, std::vector<ManifestObject>* out) {
  if (IsList(doc)) {
    for (const auto& item : doc["items"]) BERTH_RETURN_IF_ERROR(Append(item, source, out));
    return Status::Ok();
  }
  BERTH_RETURN_IF_ERROR(CheckTypeMeta(doc, source));
  out->push_back({doc, std::string(source)});
  return Status::Ok();
}

StatusOr<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("the path \"" + path.string() + "\" does not exist");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

StatusOr<std::vector<ManifestObject>> ParseManifest(std::string_view text, std::string_view source) {
  BERTH_ASSIGN_OR_RETURN(std::vector<api::Object> docs, api::ParseYamlStream(text, source));
  std::vector<ManifestObject> out;
  for (const auto& doc : docs) BERTH_RETURN_IF_ERROR(Append(doc, source, &out));
  return out;
}

namespace {
StatusOr<std::vector<ManifestObject>> ReadAll(const std::vector<std::string>& paths, std::istream& stdin_stream);
}  // namespace

StatusOr<std::vector<ManifestObject>> ReadManifests(const std::vector<std::string>& paths, std::istream& stdin_stream) {
  // Reading files involves no server: every failure prints as kubectl's
  // client-side "error: ..." (the path does not exist, error parsing ...).
  auto read = ReadAll(paths, stdin_stream);
  if (!read.ok() && !IsClientError(read.status())) return ClientError(read.status().message());
  return read;
}

namespace {
StatusOr<std::vector<ManifestObject>> ReadAll(const std::vector<std::string>& paths, std::istream& stdin_stream) {
  std::vector<ManifestObject> out;
  auto add = [&](const std::string& text, const std::string& source) -> Status {
    BERTH_ASSIGN_OR_RETURN(std::vector<ManifestObject> objs, ParseManifest(text, source));
    for (auto& o : objs) out.push_back(std::move(o));
    return Status::Ok();
  };
  for (const auto& p : paths) {
    if (p == "-") {
      std::string text((std::istreambuf_iterator<char>(stdin_stream)), std::istreambuf_iterator<char>());
      BERTH_RETURN_IF_ERROR(add(text, "STDIN"));
      continue;
    }
    std::error_code ec;
    if (!fs::exists(p, ec)) return NotFoundError("the path \"" + p + "\" does not exist");
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> files;
      for (const auto& entry : fs::directory_iterator(p, ec)) {
        const std::string ext = entry.path().extension().string();
        if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
          files.push_back(entry.path());
        }
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) {
        BERTH_ASSIGN_OR_RETURN(std::string text, ReadFile(f));
        BERTH_RETURN_IF_ERROR(add(text, f.string()));
      }
      continue;
    }
    BERTH_ASSIGN_OR_RETURN(std::string text, ReadFile(p));
    BERTH_RETURN_IF_ERROR(add(text, p));
  }
  return out;
}
}  // namespace

}  // namespace berth::cli
