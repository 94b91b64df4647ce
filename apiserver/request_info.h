// RequestInfo: what a request path and query ask for, parsed the way
// kube-apiserver's RequestInfoFactory (k8s.io/apiserver/pkg/endpoints/request)
// parses them.
//
// Resource paths:
//   /api/v1/{resource}                               list/create/watch, cluster scope or all namespaces
//   /api/v1/{resource}/{name}[/{subresource}]        cluster-scoped object
//   /api/v1/namespaces/{ns}/{resource}[/{name}[/{subresource}]]
//   /api/v1/namespaces/{name}[/{subresource}]        the Namespace object itself
//   /apis/{group}/{version}/...                      the same forms for a named group
//   /api/v1/watch/...                                legacy watch prefix (verb watch/list)
// Everything else (/version, /api, /apis, /api/v1, /apis/{g}/{v}, /openapi/...)
// is a non-resource request; `path` and `parts` are still filled in.
//
// Verbs (as upstream): GET -> get, or list when there is no name, or watch when
// watch=true|1 (or the /watch/ prefix); POST -> create; PUT -> update;
// PATCH -> patch; DELETE -> delete, or deletecollection when there is no name.
//
// Query strings are application/x-www-form-urlencoded: '+' decodes to a space
// (kubectl sends `-l 'app in (a,b)'` as labelSelector=app+in+%28a%2Cb%29).
//
// Thread-safety: pure functions over values.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/admission_pipeline.h"
#include "core/status.h"

namespace berth::apiserver {

// Decoded query parameters. A parameter given several times keeps every value
// in order (Get returns the first, as Go's url.Values.Get does).
class QueryParams {
 public:
  QueryParams() = default;
  // Parses "a=1&b=x+y&c" (no leading '?'). Malformed %-escapes are kept verbatim.
  static QueryParams Parse(std::string_view query);

  bool Has(std::string_view name) const;
  // First value, or "" when absent.
  const std::string& Get(std::string_view name) const;
  const std::vector<std::string>& GetAll(std::string_view name) const;
  // "true", "1" -> true; absent or anything else -> false (upstream's bool
  // query parameter conversion accepts the strconv.ParseBool forms; these are
  // the ones clients send).
  bool GetBool(std::string_view name) const;

 private:
  std::map<std::string, std::vector<std::string>, std::less<>> values_;
};

// Percent-decoding; `plus_as_space` for query components.
std::string UrlDecode(std::string_view s, bool plus_as_space);

struct RequestInfo {
  std::string path;        // without the query
  std::vector<std::string> parts;  // decoded, non-empty path segments
  QueryParams query;

  bool is_resource_request = false;
  std::string verb;        // get list watch create update patch delete deletecollection
  std::string api_prefix;  // "api" or "apis"
  std::string api_group;   // "" for the core group
  std::string api_version;
  std::string namespace_;  // "" for cluster scope or all namespaces
  std::string resource;    // plural, lower case
  std::string name;
  std::string subresource;

  // "group/version" or "version".
  std::string GroupVersion() const {
    return api_group.empty() ? api_version : api_group + "/" + api_version;
  }
};

// Parses a request-target ("/api/v1/namespaces/default/pods?limit=500") with
// its HTTP method. Errors: kBadRequest for paths that are resource-shaped but
// malformed (e.g. too many segments after a name).
StatusOr<RequestInfo> ParseRequestInfo(std::string_view method, std::string_view target);
// A request-target read as a non-resource URL whatever its shape (the paths
// of ApiServer::RegisterNonResourceHandler): path, parts and query only.
StatusOr<RequestInfo> NonResourceRequestInfo(std::string_view target);

// metav1.ListOptions / WatchOptions as query parameters.
struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  int64_t limit = 0;  // 0 = no limit
  std::string continue_token;
  std::string resource_version;        // "" = most recent, "0" = any
  std::string resource_version_match;  // "", "NotOlderThan", "Exact"
  bool watch = false;
  bool allow_watch_bookmarks = false;
  std::optional<int64_t> timeout_seconds;
  bool send_initial_events = false;
};

// Errors: kBadRequest with upstream's text for a non-integer limit or
// timeoutSeconds, or a resourceVersionMatch value other than NotOlderThan/Exact.
StatusOr<ListOptions> ParseListOptions(const QueryParams& q);

// kube-apiserver's --min-request-timeout default, 1800 s
// (staging/src/k8s.io/apiserver/pkg/server/options/server_run_options.go): a watch
// without timeoutSeconds runs between this and twice this.
inline constexpr std::chrono::seconds kMinRequestTimeout{1800};

// How long a watch runs, as GetTimeoutForWatch
// (staging/src/k8s.io/apiserver/pkg/endpoints/request) decides it: timeoutSeconds as
// given, a negative one included (the watch ends at once: the result is negative);
// absent or 0: kMinRequestTimeout x a random factor in [1, 2). A timeout beyond 2^31 s
// (where Go's Duration arithmetic stops meaning anything) is 0: no deadline.
// Thread-safe (a thread-local generator).
std::chrono::milliseconds WatchTimeout(const std::optional<int64_t>& timeout_seconds);

// CreateOptions / UpdateOptions / PatchOptions as query parameters.
struct WriteOptions {
  bool dry_run = false;  // dryRun=All
  api::FieldValidation field_validation = api::FieldValidation::kWarn;  // absent: Warn
  std::string field_manager;
  std::optional<bool> force;  // server-side apply only
};

// Errors: kBadRequest `Invalid dryRun value "x"`, or api::ParseFieldValidation's
// error for a fieldValidation other than Ignore/Warn/Strict.
StatusOr<WriteOptions> ParseWriteOptions(const QueryParams& q);

// metav1.DeleteOptions: from the JSON body when there is one, overridden by
// query parameters (gracePeriodSeconds, propagationPolicy, dryRun), as upstream.
struct DeleteOptions {
  std::optional<int64_t> grace_period_seconds;
  std::string propagation_policy;  // "", Orphan, Background, Foreground
  bool dry_run = false;
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
};

// Errors: kBadRequest for an unparsable body or values, e.g.
// `propagationPolicy: Unsupported value: "X"`.
StatusOr<DeleteOptions> ParseDeleteOptions(const QueryParams& q, std::string_view body);

}  // namespace berth::apiserver
