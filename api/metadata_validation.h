// Kubernetes name and metadata validation, as apimachinery does it, with its
// exact messages:
//   k8s.io/apimachinery/pkg/util/validation        IsDNS1123Label, IsDNS1123Subdomain,
//                                                  IsDNS1035Label, IsQualifiedName,
//                                                  IsValidLabelValue, MaxLenError, RegexError
//   k8s.io/apimachinery/pkg/api/validation         ValidateObjectMetaAccessor,
//                                                  NameIsDNSSubdomain/Label/1035Label,
//                                                  ValidateAnnotations, ValidateFinalizers
//   k8s.io/apimachinery/pkg/apis/meta/v1/validation ValidateLabels
//
// The Is* functions return the list of failure messages (empty = valid), e.g.
//   IsDNS1123Label("my_name") ==
//     {"a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-',
//       and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc',
//       regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"}
// (the double space after "'my-name'," is upstream's). Lengths are in bytes, as Go's len().
//
// The Validate* functions return field errors (api/field_errors.h) with the paths
// kubectl prints: "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 ...".
// Map entries (labels, annotations) are checked in key order, so the error list is
// deterministic (upstream iterates a Go map).
//
// Thread-safety: pure functions.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "api/field_errors.h"
#include "api/object.h"

namespace berth::api {

inline constexpr int kDNS1123LabelMaxLength = 63;
inline constexpr int kDNS1123SubdomainMaxLength = 253;
inline constexpr int kDNS1035LabelMaxLength = 63;
inline constexpr int kQualifiedNameMaxLength = 63;
inline constexpr int kLabelValueMaxLength = 63;
// Sum of the lengths of all annotation keys and values (256 KiB).
inline constexpr long long kTotalAnnotationSizeLimitBytes = 256 * 1024;

// "must be no more than 63 characters".
std::string MaxLenError(int length);
// "<msg> (e.g. 'a',  or 'b', regex used for validation is '<fmt>')", or without examples
// "<msg> (regex used for validation is '<fmt>')".
std::string RegexError(std::string_view msg, std::string_view fmt,
                       const std::vector<std::string_view>& examples);
// "must be non-empty".
std::string EmptyError();

// RFC 1123 label: ≤63, [a-z0-9]([-a-z0-9]*[a-z0-9])?. A valid subdomain with dots gets
// "must not contain dots".
std::vector<std::string> IsDNS1123Label(std::string_view value);
// RFC 1123 subdomain: ≤253, labels joined by '.'.
std::vector<std::string> IsDNS1123Subdomain(std::string_view value);
// RFC 1035 label: ≤63, [a-z]([-a-z0-9]*[a-z0-9])?.
std::vector<std::string> IsDNS1035Label(std::string_view value);
// Label keys / annotation keys / finalizers: [prefix/]name, prefix a DNS subdomain (≤253),
// name ≤63 of ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9].
std::vector<std::string> IsQualifiedName(std::string_view value);
// Label values: empty or ≤63 of the qualified-name pattern.
std::vector<std::string> IsValidLabelValue(std::string_view value);
// IsDomainPrefixedPath: "<host>/<path>", the host a DNS-1123 subdomain, the path of HTTP
// path characters (RFC 3986: [A-Za-z0-9/\-._~%!$&'()*+,;=:]+). Errors at `path`:
//   Required value                    (empty)
//   Invalid value: "<value>": must be a domain-prefixed path (such as "acme.io/foo")
//   Invalid value: "<host>": <IsDNS1123Subdomain's messages>
//   Invalid value: "<path>": Invalid path (regex used for validation is '<that class>')
FieldErrorList IsDomainPrefixedPath(const FieldPath& path, std::string_view value);

// ValidateNameFunc: validates a name, or (prefix == true) a generateName prefix, which may
// end in '-' (apimachinery masks a trailing dash before checking).
using NameValidator = std::function<std::vector<std::string>(std::string_view name, bool prefix)>;
std::vector<std::string> NameIsDNSSubdomain(std::string_view name, bool prefix);
std::vector<std::string> NameIsDNSLabel(std::string_view name, bool prefix);
std::vector<std::string> NameIsDNS1035Label(std::string_view name, bool prefix);

// metadata.labels: keys qualified names, values label values. Errors at `path` itself
// (upstream reports "metadata.labels: Invalid value: \"x\": ..."). Non-string values get
// a TypeInvalid at path[key] (upstream fails to decode them).
FieldErrorList ValidateLabels(const Object& labels, const FieldPath& path);
// metadata.annotations: keys qualified names (case-insensitively), total size ≤ 256 KiB
// ("Too long: may not be more than 262144 bytes").
FieldErrorList ValidateAnnotations(const Object& annotations, const FieldPath& path);
// metadata.finalizers: qualified names; orphan + foregroundDeletion together is invalid.
FieldErrorList ValidateFinalizers(const Object& finalizers, const FieldPath& path);

// ValidateObjectMetaAccessor for obj["metadata"] (absent metadata reads as empty):
//   generateName   Invalid per name_validator(prefix=true)
//   name           Required "name or generateName is required" when empty (the API server
//                  fills name from generateName before validating, so call this after);
//                  else Invalid per name_validator
//   namespace      namespaced: Required when empty, else Invalid per NameIsDNSLabel;
//                  cluster-scoped: Forbidden "not allowed on this type" when set
//   generation     Invalid "must be greater than or equal to 0" when negative
//   labels, annotations, finalizers as above.
// Not checked: ownerReferences, managedFields.
FieldErrorList ValidateObjectMeta(const Object& obj, bool namespaced,
                                  const NameValidator& name_validator,
                                  const FieldPath& path = FieldPath("metadata"));

// The JSON types Go's decoder demands of metadata (k8s.io/apimachinery/pkg/apis/meta/v1
// ObjectMeta, OwnerReference, ManagedFieldsEntry), which kube-apiserver checks before any
// validation: strings name, generateName, namespace, selfLink, uid, resourceVersion,
// creationTimestamp, deletionTimestamp; integers generation, deletionGracePeriodSeconds;
// string-to-string maps labels, annotations; a list of strings finalizers; a list of
// objects ownerReferences (apiVersion, kind, name, uid strings; controller,
// blockOwnerDeletion booleans) and managedFields. null is accepted anywhere (Go keeps the
// zero value); other fields are not checked here. Returns kInvalid with Go's message for
// the first mismatch, e.g.
//   "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type
//    map[string]string"
// (the caller prefixes "<Kind> in version \"v1\" cannot be handled as a <Kind>: ").
Status CheckObjectMetaTypes(const Object& meta);

}  // namespace berth::api
