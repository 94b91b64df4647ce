// Reading manifests for `apply -f` and `delete -f`, as kubectl's resource
// builder does (FilenameOptions without recursion):
//   - "-" reads standard input (source name "STDIN");
//   - a directory contributes its *.yaml, *.yml and *.json files (not
//     recursively), in lexical order of their names;
//   - a file is read whatever its extension.
// A file is a YAML stream (documents split at `---`, empty documents
// skipped, see api/yaml_codec.h); JSON is a YAML subset, so .json files go
// through the same reader. A document of kind "List" (or any kind ending in
// "List" with an `items` array) contributes its items, in order.
// Every document must be an object with apiVersion and kind:
//   kBadRequest `error validating "<source>": error validating data:
//   [apiVersion not set, kind not set]`.
//
// Thread-safety: pure functions (ReadManifests reads files and stdin).
#pragma once

#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "core/status.h"

namespace berth::cli {

// One object of a manifest and where it came from (for messages).
struct ManifestObject {
  api::Object object;
  std::string source;  // the file path, or "STDIN"
};

// The objects of one manifest text, in order.
StatusOr<std::vector<ManifestObject>> ParseManifest(std::string_view text, std::string_view source);

// The objects of every path in order ("-" = stdin).
StatusOr<std::vector<ManifestObject>> ReadManifests(const std::vector<std::string>& paths, std::istream& stdin_stream);

}  // namespace berth::cli
