// Extraction of the YAML manifests embedded in the seed documents
// (../shared/seeds/*.txt): Japanese prose copied from web articles, with manifests pasted
// in without code fences, among shell commands, sample outputs and diagrams.
//
// Rules (line based; lines are split on '\n', a trailing '\r' is ignored):
//   * A manifest block starts at a line beginning with `apiVersion:` in column 0
//     (comment lines or a `---` right above it are not part of the block).
//   * The block continues over lines that are YAML-shaped: indented lines, column-0
//     `key:` lines (key = [A-Za-z_][A-Za-z0-9_./-]*), column-0 comments (`#...`) and
//     `---` separators. A run of blank lines continues the block only when the next
//     non-blank line is indented (a block scalar or a nested value) or is `---`;
//     anything else (prose, `kubectl ...`, `EOF`, a lone "0") ends the block.
//   * Trailing blank, comment and `---` lines are trimmed from the block.
//   * The block is split into documents at `---` lines; leading comment and blank lines
//     of a document are skipped, and a document that holds nothing else is dropped. So a
//     block may yield documents without apiVersion (a `---` followed by a bare
//     `metadata:` excerpt), which the seed test classifies like any other.
//   * A second `apiVersion:` in column 0 after a blank line starts a new block (the
//     blank-line rule above ends the previous one first).
// A manifest is identified by its seed file name and the 1-based number of its first
// line (the `apiVersion:` line for the first document of a block).
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace berth::seeds {

struct SeedManifest {
  std::string file;   // seed file name, e.g. "kubeflow-trainer-kueue-intro.ja.txt"
  int line = 0;       // 1-based number of the document's first line
  int end_line = 0;   // 1-based number of its last line (inclusive)
  std::string text;   // the document's lines, each ending in '\n'
};

// Every manifest document of one seed text, in order of appearance.
std::vector<SeedManifest> ExtractManifests(std::string_view file, std::string_view text);

}  // namespace berth::seeds
