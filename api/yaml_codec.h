// YAML <-> JSON for objects (api/object.h), the way kubectl and the API server
// read manifests (sigs.k8s.io/yaml: YAML is decoded, then handled as JSON).
//
// Reading (YAML 1.2 core schema):
//   * A stream holds documents separated by `---` (and optionally ended by `...`).
//     Empty documents -- nothing but comments/whitespace, or a bare `null` -- are
//     skipped, as kubectl skips them.
//   * Plain (unquoted) scalars resolve by the core schema:
//       null   "", ~, null, Null, NULL
//       bool   true True TRUE false False FALSE      (yes/no/on/off/y/n stay strings)
//       int    [-+]?[0-9]+, 0o[0-7]+, 0x[0-9a-fA-F]+ (int64; larger: uint64, else float)
//       float  [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, [-+]?.inf, .nan
//              (.inf/.nan are held as IEEE values; JSON serialisation writes them null);
//              a whole float within int64 (1e3, 5., !!float 1) is held as the integer, as
//              sigs.k8s.io/yaml's JSON text has it (Go writes float64 1000 as 1000), so a
//              YAML `completions: 1e3` fills an integer field as it does through kubectl
//       everything else is a string.
//     Quoted and block (| >) scalars are always strings: "5" stays a string, 5 a number.
//     Explicit tags !!str !!int !!float !!bool !!null are honoured; other tags are ignored.
//   * Anchors (&a), aliases (*a) and merge keys (<<: *a, <<: [*a, *b]) work; keys written
//     in the mapping win over merged ones, earlier merged maps over later ones. Excessive
//     alias expansion is an error, "document contains excessive aliasing": more alias-
//     driven nodes than go-yaml's allowedAliasRatio allows (a "billion laughs" document),
//     or expansions adding more than api/limits.h kMaxYamlAliasExpansionBytes (a few
//     aliases of one large anchor).
//   * A node nested deeper than api/limits.h kMaxYamlNestingDepth (the root is depth 1)
//     is an error, "exceeded max depth of 499".
//   * Map keys become JSON strings (a scalar key is rendered in its resolved form:
//     `1: x` -> "1"); a mapping or sequence used as a key is an error. A key repeated in
//     one mapping is an error.
//   * Errors are BadRequest Statuses whose message follows kubectl's wording and carries
//     the source name, the 1-based document index and the 1-based line and column:
//       error parsing pod.yaml (document 2): error converting YAML to JSON: yaml: line 7,
//       column 12: mapping values are not allowed in this context
//     (without a source name the message starts at "document 2: ...").
//
// Writing (for `-o yaml`): block style with two-space indentation, sequence items at
// the parent key's indentation (as kubectl -o yaml prints), keys in the object's
// (sorted) order, strings plain unless they would re-resolve as another type or need
// escaping ("5", "true", "null", "", "yes", " x", "a: b" are double-quoted), multi-line
// strings as literal blocks (|, |- or |+). Emit(Parse(x)) round-trips every JSON value.
//
// yaml-cpp stays out of this header. Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "core/status.h"

namespace berth::api {

// All non-empty documents of a YAML stream, in order.
StatusOr<std::vector<Object>> ParseYamlStream(std::string_view text,
                                              std::string_view source_name = "");

// Exactly one document (empty text or several documents is a BadRequest).
StatusOr<Object> ParseYaml(std::string_view text, std::string_view source_name = "");

// A request body or file in either encoding: text whose first non-blank character is
// '{' or '[' is parsed as JSON (ParseJson), anything else as a single YAML document.
StatusOr<Object> ParseJsonOrYaml(std::string_view text, std::string_view source_name = "");

// JSON text (RFC 8259), at most api/limits.h kMaxJsonNestingDepth levels deep.
// Errors: BadRequest "json: line L, column C: <what>", where <what> is nlohmann's
// description of a syntax error or, for text nested deeper, Go's "exceeded max depth"
// (checked in one pass before anything is decoded); a number beyond double is "json:
// cannot unmarshal number 1e400 into Go value of type float64".
StatusOr<Object> ParseJson(std::string_view text, std::string_view source_name = "");

// The offset of the first '[' or '{' of `text` (outside strings) that opens a level
// deeper than `max_depth`, or npos. Linear, no allocation; text that is not JSON gets
// an answer about its brackets.
std::size_t ExcessiveNestingOffset(std::string_view text, int max_depth);

// Whether `s` is UTF-8 by RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF
// (what JSON text carries; nlohmann's parser and strict encoder refuse the rest).
bool ValidUtf8(std::string_view s);

// The document a client's JSON text of `value` reads back as: what the API server gets when
// the in-process client hands it `value` decoded instead of sending its text
// (apiserver/in_process_client.h), so that both transports store the same thing. The text is
// value.dump() with each maximal invalid UTF-8 subsequence in strings and keys replaced by
// U+FFFD (as client::HttpClient sends them; Go's encoding/json replaces byte by byte), NaN and
// infinities written as null; it is read with ParseJson. A copy of `value` when that changes nothing (every
// string and key UTF-8 by RFC 3629, every number finite, at most kMaxJsonNestingDepth levels
// of arrays and objects: checked without recursion, at any depth), which is the common case;
// otherwise the text is built and parsed. Errors: ParseJson's (BadRequest "exceeded max depth"
// for a document nested deeper than the parser reads).
StatusOr<Object> ReadBackAsJsonText(const Object& value);

// The length in bytes of value.dump() (compact, invalid UTF-8 replaced by U+FFFD, as the
// store measures objects against api/limits.h kMaxStoredObjectBytes), counted without
// building the text.
std::size_t CompactJsonSize(const Object& value);

// One document as block YAML, ending in a newline ("{}\n" for an empty object).
std::string EmitYaml(const Object& value);

// Several documents joined by "---\n" (as kubectl -o yaml prints a stream).
std::string EmitYamlStream(const std::vector<Object>& documents);

}  // namespace berth::api
