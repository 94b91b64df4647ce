// Server-side tables: what `kubectl get` prints.
//
// kubectl 1.32 has no column printers of its own: it asks for
//   Accept: application/json;as=Table;v=v1;g=meta.k8s.io, ...
// and prints the meta.k8s.io/v1 Table the server renders (k8s.io/cli-runtime/pkg/printers/
// tableprinter.go; built-in columns as pkg/printers/internalversion/printers.go, CRD columns
// as apiextensions-apiserver's tableconvertor.go).
// A Table is
//   {"kind":"Table","apiVersion":"meta.k8s.io/v1",
//    "metadata":{"resourceVersion":"101"[,"continue":"..."]},
//    "columnDefinitions":[{"name","type","format","description","priority"}...],
//    "rows":[{"cells":[...],"object":<PartialObjectMetadata>}...]}
// kubectl upper-cases the column names, hides priority > 0 columns unless
// `-o wide`, prints null cells empty and takes the NAMESPACE column (-A) and
// labels (--show-labels, -L) from rows[].object.metadata.
//
// Two kinds of convertors, as upstream:
//   - Column convertors for definitions with additionalPrinterColumns
//     (apiextensions-apiserver tableconvertor): Name first, then the columns
//     in order; a version that declares none gets a single Age column. Cells:
//     the first JSONPath result; none -> null; type string -> the value as
//     text (objects and lists as compact JSON); integer/number/boolean -> the
//     JSON value; date -> the age string (HumanDuration).
//   - Built-in printers for Kubernetes kinds with upstream's column sets and
//     cell rules (pkg/printers/internalversion/printers.go, Kubernetes 1.32):
//     Pod, Node, Namespace, Event, ConfigMap, Secret (Name, Type, Data, Age),
//     ServiceAccount (Name, Secrets, Age), Service, batch/v1 Job and
//     scheduling.k8s.io PriorityClass. The server renders them as
//     kube-apiserver does, with every wide (priority 1) cell filled. Kinds
//     without either get Name + Age.
//     Job: Name, Status, Completions, Duration, Age; wide Containers, Images,
//     Selector. Status is Complete / Failed (that condition True), Terminating
//     (metadata.deletionTimestamp set), Suspended / FailureTarget (condition
//     True), else Running; the first condition of a type decides. 1.32 has no
//     SuccessCriteriaMet status (1.34 added it) and no indexed form.
//     Completions is "<succeeded>/<completions>", without completions
//     "<succeeded>/1 of <parallelism>" when parallelism > 1, else
//     "<succeeded>/1". Duration is HumanDuration(completionTime - startTime),
//     (now - startTime) while not complete, "" before startTime. Selector is
//     metav1.FormatLabelSelector ("<none>" when empty).
//     Service: Type, Cluster-IP (clusterIPs[0], else clusterIP, else
//     "<none>"), External-IP (externalIPs / load-balancer ingress, "<none>",
//     "<pending>", the externalName), Port(s) ("80/TCP", "80:30080/TCP",
//     comma-separated, "<none>"), Age; wide Selector ("k=v,..." sorted).
//
// Ages are computed at `now` from the injected Clock, never from the system
// clock, so tests are exact.
//
// Thread-safety: a TableConvertor is immutable after construction; Convert*
// may be called from any thread.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "api/resource_definition.h"
#include "core/clock.h"

namespace berth::apiserver {

// k8s.io/apimachinery/pkg/util/duration.HumanDuration: "33s", "2m3s", "5m",
// "179m", "3h5m", "47h", "2d3h", "729d", "2y10d", "9y"; below -1s "<invalid>",
// between -1s and 0 "0s".
std::string HumanDuration(Duration d);
// The age of an RFC 3339 timestamp at `now`; "<unknown>" when absent or
// unparsable (translateTimestampSince).
std::string AgeOf(const nlohmann::json& timestamp, Time now);

// The JSONPath subset printer columns use: dotted fields (.a.b), indices
// ([0], [-1]), slices ([-1:], [0:2]), wildcards ([*]) and filters
// ([?(@.type=='X')], [?(@.type=="X")], != too), optionally wrapped in {}.
// Returns every match in document order; empty for no match or a path
// outside the subset.
std::vector<nlohmann::json> EvalJsonPath(const nlohmann::json& doc, std::string_view path);

using api::PrinterColumn;

// rows[].object content (the includeObject query parameter).
enum class IncludeObject { kNone, kMetadata, kObject };

class TableConvertor {
 public:
  // Cells for one object at `now`, in column order.
  using RowFunction = std::function<std::vector<nlohmann::json>(const api::Object&, Time now)>;

  // From additionalPrinterColumns (empty: Name + Age). A custom resource's
  // columns get Name in front; the resource files of built-in kinds list
  // kubectl's complete column set, Name included (`name_included`).
  static TableConvertor FromColumns(const std::vector<PrinterColumn>& columns, bool name_included = false);
  // The built-in printer for a Kubernetes kind ("Pod", "Node", "Namespace",
  // "Event", "ConfigMap", "Service" of group ""; "Job" of batch;
  // "PriorityClass" of scheduling.k8s.io: the kinds whose cells are
  // computed, not read by a JSONPath), or nullopt.
  static std::optional<TableConvertor> Builtin(std::string_view group, std::string_view kind);

  // The columnDefinitions array.
  const nlohmann::json& ColumnDefinitions() const { return *column_definitions_; }
  // One row: {"cells":[...],"object":...}; a PartialObjectMetadata object is written in
  // meta.k8s.io/<meta_version>.
  nlohmann::json Row(const api::Object& obj, Time now, IncludeObject include,
                     std::string_view meta_version = "v1") const;
  // A whole Table in meta.k8s.io/<meta_version> ("v1" or "v1beta1"), its rows' objects
  // too (upstream's asTable). `with_columns` false writes columnDefinitions null, as
  // upstream's TableOptions.NoHeaders does (a Table watch's events after the first).
  nlohmann::json Table(const std::vector<const api::Object*>& items, Time now, IncludeObject include,
                       const std::string& resource_version, const std::string& continue_token,
                       std::string_view meta_version = "v1", bool with_columns = true) const;

 private:
  TableConvertor(std::shared_ptr<const nlohmann::json> defs, RowFunction row)
      : column_definitions_(std::move(defs)), row_(std::move(row)) {}
  std::shared_ptr<const nlohmann::json> column_definitions_;
  RowFunction row_;
};

// The Table row's object for includeObject=Metadata, and the answer for
// as=PartialObjectMetadata (media_type.h): a meta.k8s.io/<meta_version>
// PartialObjectMetadata carrying the object's whole metadata (upstream's
// meta.AsPartialObjectMetadata).
nlohmann::json PartialObjectMetadata(const api::Object& obj, std::string_view meta_version = "v1");

}  // namespace berth::apiserver
