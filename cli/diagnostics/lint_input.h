// The input of `berth lint`: a ClusterView built from manifests, from a live
// server, or from both merged, plus where each manifest object came from.
//
// Manifests (cli/manifest.h ManifestObject) are mapped to their resource
// with the compiled-in registry (api::Registry::Default()) and converted to
// the storage version (api/conversion.h), as the API server would store them:
// a kueue.x-k8s.io/v1beta1 ClusterQueue is held as v1beta2. A namespaced
// object without metadata.namespace gets `default_namespace` (kubectl's
// -n). Objects of kinds the registry does not know (an MPIJob, a Volcano
// Queue) are skipped: lint has no rule for them.
// Merge: live objects first, then every manifest object replaces a live
// object of the same resource, namespace and name (files override the
// server). Each resource's list is sorted by (namespace, name).
// Provenance: for each manifest object, its source, the apiVersion and
// object as written, and the 1-based line of every field path in the file
// (read again with a YAML parser; empty for STDIN or when the file's
// documents do not line up with the manifest objects).
//
// Errors: a conversion failure (kBadRequest, api/conversion.h) is returned
// unchanged; a kind/version no definition serves is skipped, not an error.
// FetchLintObjects returns the client's first List error other than
// kNotFound (e.g. kUnavailable when the server is down).
//
// Thread-safety: pure functions (LineIndex reads the file).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "api/object.h"
#include "cli/diagnostics/cluster_view.h"
#include "cli/diagnostics/lint.h"
#include "cli/manifest.h"
#include "client/client.h"
#include "core/status.h"

namespace berth::cli::diagnostics {

using ObjectsByResource = std::map<api::GroupResource, std::vector<api::Object>>;

struct LintInput {
  ClusterView view;
  Provenance provenance;
};

// Lists everything ClusterView::Fetch lists plus the training runtimes. Every
// served resource is a key of the result, even with no object (so the view
// Covers() it); a resource the server does not serve is absent.
StatusOr<ObjectsByResource> FetchLintObjects(client::Client& client);

StatusOr<LintInput> BuildLintInput(ObjectsByResource live, const std::vector<ManifestObject>& manifests,
                                   const std::string& default_namespace);

// The 1-based line of every field path of every object in a YAML stream, in
// the order cli/manifest.h yields the objects (empty documents skipped, List
// items expanded). Field paths as in lint.h ("" = the object's first line).
std::vector<std::map<std::string, int>> LineIndex(std::string_view yaml_text);

}  // namespace berth::cli::diagnostics
