// core/v1 NodeSelectorRequirement and NodeSelectorTerm (a pod's
// spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
// .nodeSelectorTerms) and the rule that matches them against a node's labels
// and name. kube-scheduler's NodeAffinity filter (placement/) matches them
// against Nodes; Kueue's flavor assigner (admission/) matches the expressions
// on a flavor's label keys against the flavor's nodeLabels, as a node that
// has only those labels and no name.
//
// Upstream behaviour followed (kubernetes v1.32,
// k8s.io/component-helpers/scheduling/corev1/nodeaffinity):
//   - Terms are ORed; a term's matchExpressions and matchFields are ANDed; a
//     term with neither matches nothing.
//   - A term with an invalid requirement matches nothing while the other
//     terms are still evaluated. Invalid: In/NotIn without values,
//     Exists/DoesNotExist with values, Gt/Lt without exactly one value that
//     parses as a base-10 int64, and in matchFields any key other than
//     metadata.name or any operator other than In/NotIn.
//   - Label semantics are labels.Selector's: NotIn and DoesNotExist match a
//     node without the key; Gt/Lt need the node's value to parse as a
//     base-10 int64 (strconv.ParseInt: an optional sign, digits only) and
//     are false otherwise.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace berth::scheduling {

// A node's labels (metadata.labels), key -> value, with lookup by
// string_view.
using Labels = std::map<std::string, std::string, std::less<>>;

struct NodeSelectorRequirement {
  enum class Operator { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };
  std::string key;
  Operator op = Operator::kIn;
  std::vector<std::string> values;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;  // against node labels
  // Against node fields; upstream supports the key "metadata.name" only.
  std::vector<NodeSelectorRequirement> match_fields;
};

// True when the node with these labels and this name (metadata.name) satisfies
// the term (see file comment).
bool MatchesNodeSelectorTerm(const NodeSelectorTerm& term, const Labels& labels,
                             std::string_view node_name);
// ORed terms; false for an empty list.
bool MatchesNodeSelectorTerms(const std::vector<NodeSelectorTerm>& terms, const Labels& labels,
                              std::string_view node_name);

}  // namespace berth::scheduling
