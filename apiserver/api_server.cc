#include "apiserver/api_server.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>

#include "api/conditions.h"
#include "api/conversion.h"
#include "api/metadata_validation.h"
#include "api/namespace_security.h"
#include "api/priority_admission.h"
#include "api/selectors.h"
#include "api/unstructured.h"
#include "api/yaml_codec.h"
#include "apiserver/access_reviews.h"
#include "apiserver/authorization.h"
#include "apiserver/deletion.h"
#include "apiserver/discovery.h"
#include "apiserver/encoding_cache.h"
#include "apiserver/garbage_collector.h"
#include "apiserver/media_type.h"
#include "apiserver/node_authorization.h"
#include "apiserver/object_ops.h"
#include "apiserver/openapi.h"
#include "apiserver/pod_streams.h"
#include "apiserver/protobuf_codec.h"
#include "apiserver/request_info.h"
#include "apiserver/request_metrics.h"
#include "apiserver/service_account_token.h"
#include "apiserver/status_response.h"
#include "apiserver/store_object_lookup.h"
#include "apiserver/table_convertor.h"
#include "apiserver/watch_pump.h"
#include "core/ids.h"
#include "core/logging.h"
#include "rbac/bootstrap_policy.h"
#include "rbac/escalation.h"
#include "store/continue_token.h"

namespace berth::apiserver {

using nlohmann::json;

namespace {

std::vector<api::ApiServiceDescription> ServiceDescriptions(const std::vector<ApiService>& services) {
  std::vector<api::ApiServiceDescription> out;
  for (const ApiService& s : services) out.push_back(s.description);
  return out;
}

constexpr std::string_view kVersionBody =
    R"({"major":"1","minor":"32","gitVersion":"v1.32.0","gitCommit":"berth","gitTreeState":"clean",)"
    R"("buildDate":"2025-01-01T00:00:00Z","goVersion":"go1.23.0","compiler":"gc","platform":"linux/amd64"})";

// A request body as JSON: JSON, YAML or Kubernetes protobuf (what kubectl's
// typed commands such as `kubectl create namespace` send; protobuf_codec.h
// turns it into the same JSON). A body without a Content-Type is read as JSON,
// as upstream defaults to its first serializer; any other media type (CBOR,
// text/plain, a form) is refused with 415, as NegotiateInputSerializer does.
StatusOr<json> DecodeRequestBody(const HttpRequest& req) {
  std::string_view content_type = req.Header("Content-Type");
  std::string_view media = content_type.substr(0, content_type.find(';'));
  while (!media.empty() && media.back() == ' ') media.remove_suffix(1);
  const bool protobuf = IsProtobufContentType(content_type);
  if (!protobuf && !media.empty() && !EqualsIgnoringCase(media, "application/json") &&
      !EqualsIgnoringCase(media, "application/yaml") && !EqualsIgnoringCase(media, "application/apply-patch+yaml")) {
    return UnsupportedMediaError(
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, application/vnd.kubernetes.protobuf");
  }
  if (req.object) {  // handed over decoded by the in-process client: read as its text would be
    auto read = api::ReadBackAsJsonText(*req.object);
    if (!read.ok()) return BadRequestError(read.status().message());
    return read;
  }
  auto parsed = protobuf ? DecodeProtobufObject(req.body) : api::ParseJsonOrYaml(req.body);
  if (!parsed.ok()) {
    if (parsed.status().code() == Code::kUnsupportedMedia) return parsed.status();
    return BadRequestError(parsed.status().message());
  }
  return parsed;
}

HttpResponse JsonResponse(int status, const json& body, std::string content_type = "application/json") {
  HttpResponse r;
  r.status = status;
  r.content_type = std::move(content_type);
  AppendJson(body, &r.body);
  return r;
}

HttpResponse NotFoundResponse() {
  return StatusResponse(NotFoundError("the server could not find the requested resource"));
}

// `Warning: 299 - "text"` (RFC 7234 warn-text: quotes and backslashes escaped).
std::string WarningHeader(std::string_view text) {
  std::string out = "299 - \"";
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

// The bounds of kube-apiserver's warning recorder
// (staging/src/k8s.io/apiserver/pkg/endpoints/filters/warning.go): once the
// warnings of a response pass 4 Ki runes in total, every warning is cut to 256
// runes, and those that would still pass the total are dropped.
constexpr std::size_t kWarningsTotalRunes = 4 * 1024;
constexpr std::size_t kWarningItemRunes = 256;

std::size_t Runes(std::string_view s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// The first `runes` UTF-8 characters of s.
std::string_view TruncateRunes(std::string_view s, std::size_t runes) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((s[i] & 0xC0) != 0x80 && seen++ == runes) return s.substr(0, i);
  }
  return s;
}

void AddWarnings(HttpResponse* r, const std::vector<std::string>& warnings) {
  std::size_t total = 0;
  for (const auto& w : warnings) total += Runes(w);
  const bool truncating = total > kWarningsTotalRunes;
  std::size_t written = 0;
  for (const auto& w : warnings) {
    const std::string_view text = truncating ? TruncateRunes(w, kWarningItemRunes) : std::string_view(w);
    written += Runes(text);
    if (truncating && written > kWarningsTotalRunes) break;
    r->headers.emplace_back("Warning", WarningHeader(text));
  }
}

// The warning kube-apiserver sends with every request to a deprecated version
// of a custom resource (apiextensions-apiserver customresource_handler.go): the
// version's deprecationWarning, else "<group>/<version> <Kind> is deprecated",
// plus "; use <group>/<newer> <Kind>" naming the most preferred served,
// non-deprecated version that sorts after it (kube-aware version order).
std::string DeprecationWarning(const api::ResourceDefinition& def, const api::DefinitionVersion& v) {
  if (!v.deprecation_warning.empty()) return v.deprecation_warning;
  const std::string prefix = def.group.empty() ? "" : def.group + "/";
  std::string msg = prefix + v.name + " " + def.names.kind + " is deprecated";
  for (const api::DefinitionVersion* newer : def.ServedVersions()) {
    if (!newer->deprecated && api::CompareKubeAwareVersions(newer->name, v.name) < 0) {
      return msg + "; use " + prefix + newer->name + " " + def.names.kind;
    }
  }
  return msg;
}

}  // namespace

// One request against one resource: everything the REST verbs need.
struct ResourceRequest {
  const HttpRequest* http = nullptr;
  RequestInfo info;
  const api::ResourceDefinition* def = nullptr;
  std::string version;      // the URL's version
  std::string api_version;  // "group/version" of the URL
  api::GroupResource gr;
  // Where the objects are kept: gr, or the resource a view of another's storage reads
  // (berth.io/stored-as: events.k8s.io Events are the core Events).
  api::GroupResource stored;
  bool status_subresource = false;
  Transform transform = Transform::kNone;  // the negotiated answer's (media_type.h)
  std::string meta_version;                // of the transform's meta.k8s.io kinds
  IncludeObject include = IncludeObject::kMetadata;
  authn::UserInfo user;  // who the request acts as
  ResponseMediaType media = ResponseMediaType::kJson;  // the answer's, as negotiated
};

class ApiServer::Impl {
 public:
  Impl(const api::Registry& registry, const api::AdmissionPipeline& pipeline, store::Store& store, Clock& clock,
       ApiServerOptions options)
      : registry_(registry),
        pipeline_(pipeline),
        store_(store),
        clock_(clock),
        options_(std::move(options)),
        discovery_(registry, ServiceDescriptions(options_.api_services)),
        openapi_(registry, discovery_),
        pump_(clock, options_.bookmark_interval, 1),
        deleter_(store),
        gc_(registry, store),
        lookup_(store),
        policy_(store),
        authorizer_(options_.rbac_authorization ? std::make_unique<rbac::Authorizer>(&policy_) : nullptr),
        streams_(StorePodLookup(store), clock),
        node_proxy_(options_.node_proxy.client_certificate_pem.empty()
                        ? nullptr
                        : std::make_unique<NodeProxy>(options_.node_proxy)),
        sa_tokens_(options_.service_account_tokens, store, clock) {
    if (sa_tokens_.enabled()) {
      options_.authentication.service_account_tokens = [this](std::string_view token) {
        return sa_tokens_.Authenticate(token);
      };
    }
    for (const auto& gv : discovery_.GroupVersions()) {
      for (const auto* def : gv.definitions) {
        const api::DefinitionVersion* v = def->FindVersion(gv.version);
        std::optional<TableConvertor> tc;
        if (def->builtin) tc = TableConvertor::Builtin(def->group, def->names.kind);
        if (!tc) {
          tc = TableConvertor::FromColumns(v ? v->printer_columns : std::vector<PrinterColumn>{}, def->builtin);
        }
        tables_.emplace(std::make_pair(def, gv.version), std::move(*tc));
      }
    }
    namespaces_ = registry_.Find(api::GroupResource{"", "namespaces"});
    for (const auto& gv : discovery_.GroupVersions()) {
      for (const auto* def : gv.definitions) {
        const api::DefinitionVersion* v = def->FindVersion(gv.version);
        if (v != nullptr && v->deprecated) {
          deprecation_warnings_.emplace(std::make_pair(def, gv.version), DeprecationWarning(*def, *v));
        }
      }
    }
  }

  HandlerResult Handle(const HttpRequest& req);
  Status EnsureSystemNamespaces();
  Status EnsureSystemObjects();

  // Set when options.metrics_registry is (request_metrics.h).
  std::unique_ptr<RequestMetrics> request_metrics_;

  // Registered with RegisterNonResourceHandler, longest prefix first.
  std::vector<std::pair<std::string, NonResourceHandler>> extra_handlers_;

  std::unique_ptr<HttpServer> http_;
  WatchPump& pump() { return pump_; }
  const ApiServerOptions& options() const { return options_; }
  GarbageCollector& gc() { return gc_; }
  PodStreams& streams() { return streams_; }
  NodeProxy* node_proxy() { return node_proxy_.get(); }

  // The housekeeping thread: every store::kExpirySweepInterval it removes
  // expired objects (Store::RemoveExpired, when options.remove_expired_objects),
  // and every options.system_objects_interval of Clock time it re-creates the
  // system namespaces and PriorityClasses when missing. Stop is idempotent.
  void StartHousekeeping() {
    std::lock_guard lock(housekeeping_mu_);
    if (housekeeping_thread_.joinable()) return;
    housekeeping_stop_ = false;
    // The first check is due one interval after Start, whenever the thread gets to run.
    const Time first_check = clock_.Now() + options_.system_objects_interval;
    housekeeping_thread_ = std::thread([this, first_check] { HousekeepingLoop(first_check); });
  }
  void StopHousekeeping() {
    {
      std::lock_guard lock(housekeeping_mu_);
      housekeeping_stop_ = true;
    }
    housekeeping_cv_.notify_all();
    if (housekeeping_thread_.joinable()) housekeeping_thread_.join();
  }

 private:
  // Handle without metrics; the parsed request is copied to *parsed_info
  // when it is not null and the path parsed.
  HandlerResult Route(const HttpRequest& req, std::optional<RequestInfo>* parsed_info);
  // An authenticated and authorized request to the handler of its path.
  HandlerResult Dispatch(const HttpRequest& req, const std::pair<std::string, NonResourceHandler>* extra,
                         RequestInfo info, authn::UserInfo user);
  // The extra handler whose prefix matches the request's path, or null.
  const std::pair<std::string, NonResourceHandler>* ExtraHandlerFor(const HttpRequest& req) const;
  // The delegate serving a resource request's group-version; nullptr when none.
  const ApiService* ServiceFor(const RequestInfo& info) const;
  // The served resource a resource request names (group, version, plural), or null.
  const api::ResourceDefinition* ServedDefinition(const RequestInfo& info) const;
  // The route a request took, for the metrics' labels (request_metrics.h).
  RouteMatch MatchedRoute(const HttpRequest& req, const RequestInfo* info, int code) const;
  HandlerResult HandleNonResource(const HttpRequest& req, const RequestInfo& info);
  void HousekeepingLoop(Time next_system_objects_check);
  // /healthz, /livez, /readyz (`endpoint`), or one check of it (`check`), as
  // staging/src/k8s.io/apiserver/pkg/server/healthz/healthz.go serves them.
  HttpResponse HealthResponse(const std::string& endpoint, const std::string& check, const QueryParams& query);
  HandlerResult HandleResource(const HttpRequest& req, RequestInfo info, authn::UserInfo user);
  // A review kubectl auth sends (access_reviews.h).
  HttpResponse AccessReview(const HttpRequest& req, const RequestInfo& info, const authn::UserInfo& user);
  // The admission pipeline, then NodeRestriction for a node and the RBAC
  // escalation check for the user.
  StatusOr<api::AdmittedWrite> Admit(const ResourceRequest& r, api::WriteRequest wr) const;
  // pods/{name}/log, exec, attach and portforward (already authorized): from
  // an embedded node's agent (streams_), or relayed to the streaming server of
  // the pod's node when that node is another process's (node_proxy_), with
  // the request's path rebuilt from `info` (the node parses exactly what was
  // authorized) and its query unchanged.
  // `unbounded`: the requester is not held to the exec and port-forward session bounds.
  HandlerResult ServePodStream(const HttpRequest& req, const RequestInfo& info, bool unbounded);
  // HandleResource once the definition is known.
  HandlerResult HandleResourceOf(const HttpRequest& req, RequestInfo info, const api::ResourceDefinition* def,
                                 authn::UserInfo user, ResponseFormat format);

  HttpResponse Get(const ResourceRequest& r);
  HttpResponse List(const ResourceRequest& r);
  // The JSON of `object` in the request's version, from object_texts_ or encoded (and kept).
  StatusOr<std::shared_ptr<const std::string>> ObjectText(const ResourceRequest& r, const store::ObjectPtr& object);
  HandlerResult Watch(const ResourceRequest& r);
  HttpResponse Create(const ResourceRequest& r);
  // Admits the decoded `object` as a create and, without dryRun, stores it:
  // 201 with the object, or the error (about the object's name).
  HttpResponse CreateObject(const ResourceRequest& r, const WriteOptions& wopts, json object);
  HttpResponse Update(const ResourceRequest& r);
  HttpResponse BindPod(const ResourceRequest& r);
  // PUT of an absent object of a kind that allows it (ResourceDefinition::
  // allow_create_on_update): created as POST creates it, 201.
  HttpResponse CreateOnUpdate(const ResourceRequest& r, const WriteOptions& wopts, json object);
  HttpResponse Patch(const ResourceRequest& r);
  HttpResponse Delete(const ResourceRequest& r);
  HttpResponse DeleteCollection(const ResourceRequest& r);
  // The answer of a LIST or a deletecollection (`items` in the request's version, `meta` the
  // list's metadata) under the request's transform (not kNone): a Table, a
  // PartialObjectMetadataList, or 406 for PartialObjectMetadata.
  HttpResponse TransformedListResponse(const ResourceRequest& r, const std::vector<const api::Object*>& items,
                                       json meta) const;
  HttpResponse DeleteResponse(const ResourceRequest& r, const store::DeleteResult& result) const;

  // Error response with details for the object the request is about.
  HttpResponse Error(const ResourceRequest& r, const Status& s, std::string_view name = {}) const {
    const StatusDetails details = DetailsFor(s, r.gr, r.def->names.kind, name.empty() ? r.info.name : name);
    // The store names the resource it keeps the object under; a view (berth.io/stored-as)
    // answers in its own name, as `events.events.k8s.io "e" not found` upstream.
    const std::string stored = r.stored.String() + " \"";
    const size_t at = r.stored == r.gr ? std::string::npos : s.message().find(stored);
    if (at == std::string::npos) return StatusResponse(s, details);
    std::string message = s.message();
    message.replace(at, stored.size(), r.gr.String() + " \"");
    return StatusResponse(Status(s.code(), std::move(message), s.causes()), details);
  }
  // The stored (storage-version) object as the URL's version.
  StatusOr<json> ToRequestVersion(const ResourceRequest& r, const json& stored) const {
    if (InRequestVersion(r, stored)) return stored;
    return api::Convert(registry_, stored, r.api_version);
  }
  // The stored object as the URL's version without copying it when it already
  // is (the common case): `stored` itself, else the conversion kept in *holder.
  StatusOr<const json*> ViewInRequestVersion(const ResourceRequest& r, const json& stored, json* holder) const {
    if (InRequestVersion(r, stored)) return &stored;
    BERTH_ASSIGN_OR_RETURN(*holder, api::Convert(registry_, stored, r.api_version));
    return holder;
  }
  static bool InRequestVersion(const ResourceRequest& r, const json& stored) {
    return InApiVersion(stored, r.api_version);
  }
  static bool InApiVersion(const json& stored, const std::string& api_version) {
    auto v = stored.find("apiVersion");
    return v != stored.end() && v->is_string() && v->get_ref<const std::string&>() == api_version;
  }
  // Object (or one-row Table) response.
  HttpResponse ObjectResponse(const ResourceRequest& r, int code, const json& stored,
                              const std::vector<std::string>& warnings = {}) const;
  // The same for a stored object; an in-process caller that takes objects
  // (HttpRequest::take_objects) gets the stored one itself, with an empty
  // body, when it needs no conversion and no Table.
  HttpResponse StoredObjectResponse(const ResourceRequest& r, int code, const store::ObjectPtr& stored,
                                    const std::vector<std::string>& warnings = {}) const;
  // Whether `stored` is handed over to the caller as it is (HttpResponse::objects):
  // an in-process request that takes objects, answered in JSON, not as a
  // Table, in the stored version (no conversion).
  static bool HandsOver(const ResourceRequest& r, const json& stored) {
    return r.http != nullptr && r.http->take_objects && r.transform == Transform::kNone &&
           r.media == ResponseMediaType::kJson && InRequestVersion(r, stored);
  }
  // The Table of `items` in the negotiated meta.k8s.io version.
  json TableOf(const ResourceRequest& r, const std::vector<const api::Object*>& items, const std::string& rv,
               const std::string& continue_token, bool with_columns = true) const {
    return tables_.at(std::make_pair(r.def, r.version))
        .Table(items, clock_.Now(), r.include, rv, continue_token, r.meta_version, with_columns);
  }
  // One object (in the request's version) under the request's single-object transform:
  // itself, its Table or its PartialObjectMetadata. PartialObjectMetadataList leaves it as it
  // is (the caller decides: a 406, or a watch event sent unchanged as upstream sends it).
  json TransformedObject(const ResourceRequest& r, const json& object) const {
    switch (r.transform) {
      case Transform::kTable:
        return TableOf(r, {&object}, api::ResourceVersion(object), "");
      case Transform::kPartialObjectMetadata:
        return PartialObjectMetadata(object, r.meta_version);
      default:
        return object;
    }
  }
  // Decodes a request body (JSON or YAML) into an object of the URL's kind:
  // fills apiVersion/kind when absent, checks them, the name and the namespace.
  StatusOr<json> DecodeBody(const ResourceRequest& r, bool require_name) const;
  // The checks of an object's metadata against the URL, as kube-apiserver's
  // EnsureObjectNamespaceMatchesRequestNamespace and checkName
  // (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go), for a body and for
  // a patch's result alike: metadata is an object (null reads as {}) whose fields have
  // the types Go's decoder demands (api::CheckObjectMetaTypes; a null name or namespace
  // reads as absent); an empty namespace becomes the URL's, another one is a 400;
  // a cluster-scoped kind's namespace is cleared; the name must be the URL's (an empty
  // one takes the URL's unless `require_name`). Errors: 400 BadRequest.
  Status CheckMetadataAgainstUrl(const ResourceRequest& r, json& obj, bool require_name) const;
  // Namespace existence (NamespaceLifecycle admission).
  // `name` is the object's (the URL has none on create).
  Status CheckNamespace(const ResourceRequest& r, std::string_view name) const;
  // The store list of the request's namespace ("" for all) filtered by the
  // label and field selectors of `o`; errors are the selectors' kBadRequest.
  StatusOr<store::ListOptions> StoreListOptions(const ResourceRequest& r, const ListOptions& o) const;

  const api::Registry& registry_;
  const api::AdmissionPipeline& pipeline_;
  store::Store& store_;
  Clock& clock_;
  ApiServerOptions options_;
  Discovery discovery_;
  OpenApi openapi_;
  EncodingCache event_lines_;  // before pump_: the pump's encoders use it until the pump stops
  // The objects GET and LIST answer with, serialized once per stored object and version. A full
  // list of 10,000 objects of a few hundred bytes fits; a larger list re-encodes what left.
  EncodingCache object_texts_{16384, size_t{64} << 20};
  WatchPump pump_;
  Deleter deleter_;
  GarbageCollector gc_;
  // What the strategies' admission plugins read (api/strategy.h Admit).
  StoreObjectLookup lookup_;
  StorePolicySource policy_;
  std::unique_ptr<const rbac::Authorizer> authorizer_;  // null: every request allowed
  // pods/{name}/log, exec, attach and portforward of the embedded nodes' pods;
  // the relay to remote nodes for the others (null without a client certificate).
  PodStreams streams_;
  std::unique_ptr<NodeProxy> node_proxy_;
  PerUserLimits per_user_{options_.max_long_running_requests_per_user, options_.max_response_bytes_per_user,
                          options_.max_sessions_per_user};
  ServiceAccountTokens sa_tokens_;
  std::mutex housekeeping_mu_;
  std::condition_variable housekeeping_cv_;
  bool housekeeping_stop_ = false;
  std::thread housekeeping_thread_;
  const api::ResourceDefinition* namespaces_ = nullptr;
  std::map<std::pair<const api::ResourceDefinition*, std::string>, TableConvertor> tables_;
  // Warning header text per deprecated served version.
  std::map<std::pair<const api::ResourceDefinition*, std::string>, std::string> deprecation_warnings_;
};

// ---------------------------------------------------------------------------
// Routing

HandlerResult ApiServer::Impl::Handle(const HttpRequest& req) {
  if (!request_metrics_) return Route(req, nullptr);
  const Time start = clock_.Now();
  std::optional<RequestInfo> info;
  HandlerResult result = Route(req, &info);
  // Observed once the answer is known: now, or when a deferred one replies.
  auto observe = [this, start](const HttpRequest& req, const std::optional<RequestInfo>& info, int code) {
    const RequestInfo* parsed = info ? &*info : nullptr;
    request_metrics_->Observe(LabelsForRequest(req, parsed, MatchedRoute(req, parsed, code)), code,
                              clock_.Now() - start);
  };
  if (auto* deferred = std::get_if<DeferredResponse>(&result)) {
    deferred->start = [inner = std::move(deferred->start), observe, req, info](
                          std::function<void(ImmediateResult)> reply) {
      inner([observe, req, info, reply = std::move(reply)](ImmediateResult answer) {
        observe(req, info, std::visit([](const auto& r) { return r.status; }, answer));
        reply(std::move(answer));
      });
    };
    return result;
  }
  observe(req, info, std::visit(
      [](const auto& r) {
        if constexpr (std::is_same_v<std::decay_t<decltype(r)>, DeferredResponse>) {
          return 0;  // handled above
        } else {
          return r.status;
        }
      },
      result));
  return result;
}

const std::pair<std::string, ApiServer::NonResourceHandler>* ApiServer::Impl::ExtraHandlerFor(
    const HttpRequest& req) const {
  std::string_view path(req.target);
  path = path.substr(0, path.find('?'));
  for (const auto& entry : extra_handlers_) {
    const std::string& prefix = entry.first;
    if (path.starts_with(prefix) && (path.size() == prefix.size() || path[prefix.size()] == '/')) return &entry;
  }
  return nullptr;
}

const ApiService* ApiServer::Impl::ServiceFor(const RequestInfo& info) const {
  const api::ApiServiceDescription* description = discovery_.FindService(info.api_group, info.api_version);
  if (description == nullptr) return nullptr;
  for (const ApiService& s : options_.api_services) {
    if (s.description.group == description->group) return &s;
  }
  return nullptr;
}
namespace {
// The pod subresources served beside status: log, and the connect ones
// (exec, attach, portforward).
bool IsPodConnectSubresource(const std::string& subresource) {
  return subresource == "log" || subresource == "exec" || subresource == "attach" || subresource == "portforward";
}
}  // namespace

const api::ResourceDefinition* ApiServer::Impl::ServedDefinition(const RequestInfo& info) const {
  const ServedGroupVersion* gv = discovery_.Find(info.api_group, info.api_version);
  if (gv == nullptr) return nullptr;
  for (const auto* d : gv->definitions) {
    if (d->names.plural == info.resource) return d;
  }
  return nullptr;
}

RouteMatch ApiServer::Impl::MatchedRoute(const HttpRequest& req, const RequestInfo* info, int code) const {
  RouteMatch m;
  if (const auto* extra = ExtraHandlerFor(req)) {
    m.path_template = extra->first;
    return m;
  }
  if (info == nullptr) return m;
  if (info->is_resource_request && ServiceFor(*info) != nullptr) {
    m.resource = m.subresource = true;
    return m;
  }
  if (info->is_resource_request) {
    const api::ResourceDefinition* def = ServedDefinition(*info);
    m.resource = def != nullptr;
    if (def != nullptr) {
      const api::DefinitionVersion* v = def->FindVersion(info->api_version);
      m.subresource = info->subresource.empty() ||
                      (info->subresource == "status" && v != nullptr && v->status_subresource) ||
                      (def->group.empty() && def->names.plural == "pods" &&
                       (IsPodConnectSubresource(info->subresource) || info->subresource == "binding")) ||
                      (info->subresource == "token" && def->group.empty() && def->names.plural == "serviceaccounts" &&
                       sa_tokens_.enabled());
    }
    return m;
  }
  // Every built-in non-resource route that succeeds has a fixed path or one
  // per served group, version or OpenAPI document.
  if (code < 400) m.path_template = info->path;
  return m;
}

HandlerResult ApiServer::Impl::Route(const HttpRequest& req, std::optional<RequestInfo>* parsed_info) {
  auto user = AuthenticateRequest(req, options_.authentication);
  if (!user.ok()) return StatusResponse(user.status());
  // A registered handler's path is a non-resource URL, whatever its shape.
  const auto* extra = ExtraHandlerFor(req);
  auto parsed = extra != nullptr ? NonResourceRequestInfo(req.target) : ParseRequestInfo(req.method, req.target);
  if (!parsed.ok()) return StatusResponse(parsed.status());
  RequestInfo info = std::move(parsed).value();
  if (parsed_info != nullptr && extra == nullptr) *parsed_info = info;
  if (HasImpersonationHeaders(req)) {
    user =
        Impersonate(req, *user, [this](const rbac::RequestAttributes& a) { return Authorize(authorizer_.get(), a); });
    if (!user.ok()) return StatusResponse(user.status());
  }
  const rbac::RequestAttributes attributes = RequestAttributesFor(*user, req, info);
  rbac::Decision decision;
  if (const std::optional<std::string> node = NodeNameOf(*user)) decision = AuthorizeNode(*node, attributes, store_);
  if (!decision.allowed) decision = Authorize(authorizer_.get(), attributes);
  if (!decision.allowed) return ForbiddenResponse(attributes, decision.reason);
  const bool session = attributes.resource == "pods" && attributes.api_group.empty() &&
                       (attributes.subresource == "exec" || attributes.subresource == "attach" ||
                        attributes.subresource == "portforward");
  if (session && attributes.verb == "get") {
    // The WebSocket upgrade (a GET) also needs `create`, as kube-apiserver
    // 1.35 requires with AuthorizePodWebsocketUpgradeCreatePermission
    // (kubernetes/kubernetes#134577): `get` alone must not run commands.
    rbac::RequestAttributes create = attributes;
    create.verb = "create";
    decision = Authorize(authorizer_.get(), create);
    if (!decision.allowed) return ForbiddenResponse(create, decision.reason);
  }
  // The server's own controllers hold no connection: their streams are not counted; nor
  // are system:masters' (per_user_limits.h LimitKeyOf).
  const std::optional<std::string> key = req.in_process ? std::nullopt : LimitKeyOf(*user);
  if (!key) return Dispatch(req, extra, std::move(info), std::move(user).value());
  // Refused before the session starts (and before a SPDY request is told berth wants a WebSocket).
  if (session) {
    if (std::optional<HttpResponse> refused = per_user_.RefuseSession(*key)) return std::move(*refused);
  }
  return per_user_.Limit(*key, Dispatch(req, extra, std::move(info), std::move(user).value()));
}

HandlerResult ApiServer::Impl::Dispatch(const HttpRequest& req, const std::pair<std::string, NonResourceHandler>* extra,
                                        RequestInfo info, authn::UserInfo user) {
  if (extra != nullptr) return extra->second(req);
  if (IsAccessReview(info)) return AccessReview(req, info, user);
  if (!info.is_resource_request) return HandleNonResource(req, info);
  if (const ApiService* service = ServiceFor(info)) return service->handler(req, info, user);
  return HandleResource(req, std::move(info), std::move(user));
}

HttpResponse ApiServer::Impl::AccessReview(const HttpRequest& req, const RequestInfo& info,
                                           const authn::UserInfo& user) {
  auto body = DecodeRequestBody(req);
  if (!body.ok()) return StatusResponse(body.status());
  return ServeAccessReview(info, std::move(body).value(), user, authorizer_.get());
}

StatusOr<api::AdmittedWrite> ApiServer::Impl::Admit(const ResourceRequest& r, api::WriteRequest wr) const {
  const api::Object* old = wr.old;
  auto admitted = pipeline_.Admit(std::move(wr));
  if (!admitted.ok()) return admitted;
  if (const std::optional<std::string> node = NodeNameOf(r.user)) {
    BERTH_RETURN_IF_ERROR(AdmitNodeWrite(*node, r.gr, admitted->object, old));
  }
  if (authorizer_ != nullptr) BERTH_RETURN_IF_ERROR(rbac::CheckRbacWrite(*authorizer_, r.user, admitted->object, old));
  // A namespace's uid/gid block is the control plane's alone: the server's own in-process
  // client (the controllers), not a user named like it nor one impersonating it.
  const bool control_plane = r.http != nullptr && r.http->in_process && !HasImpersonationHeaders(*r.http);
  BERTH_RETURN_IF_ERROR(api::CheckNamespaceSecurityWrite(control_plane, r.gr, admitted->object, old));
  return admitted;
}

void ApiServer::Impl::HousekeepingLoop(Time next_system_objects_check) {
  std::unique_lock lock(housekeeping_mu_);
  while (!housekeeping_stop_) {
    lock.unlock();
    if (options_.remove_expired_objects) {
      auto removed = store_.RemoveExpired();
      if (!removed.ok()) {
        Logger("apiserver")->debug("removing expired objects: {}", removed.status().message());
      } else if (*removed > 0) {
        Logger("apiserver")->debug("removed {} expired objects", *removed);
      }
    }
    gc_.Recheck();
    if (clock_.Now() >= next_system_objects_check) {
      next_system_objects_check = clock_.Now() + options_.system_objects_interval;
      for (const Status& s : {EnsureSystemNamespaces(), EnsureSystemObjects()}) {
        if (!s.ok()) Logger("apiserver")->warn("re-creating the system objects: {}", s.ToString());
      }
    }
    lock.lock();
    // A periodic tick (real time, like a socket timeout); what is due is
    // decided by the Clock.
    housekeeping_cv_.wait_for(lock, store::kExpirySweepInterval, [this] { return housekeeping_stop_; });
  }
}

HttpResponse ApiServer::Impl::HealthResponse(const std::string& endpoint, const std::string& only,
                                             const QueryParams& query) {
  struct Check {
    const char* name;
    std::function<Status()> run;
  };
  std::vector<Check> checks = {{"ping", [] { return Status::Ok(); }}};
  // The storage check is readiness only: a restart cannot free a disk, and
  // reads keep working meanwhile (api_server.h).
  if (endpoint == "readyz") checks.push_back({"etcd", [this] { return store_.Health(); }});
  HttpResponse r;
  r.content_type = "text/plain; charset=utf-8";
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  if (!only.empty()) {  // adaptCheckToHandler
    auto it = std::find_if(checks.begin(), checks.end(), [&](const Check& c) { return only == c.name; });
    if (it == checks.end()) return NotFoundResponse();
    const Status s = it->run();
    if (!s.ok()) {
      r.status = 500;
      r.body = "internal server error: " + s.message() + "\n";
    } else {
      r.body = "ok";
    }
    return r;
  }
  std::set<std::string> excluded;
  for (const std::string& name : query.GetAll("exclude")) excluded.insert(name);
  std::string lines;
  bool failed = false;
  for (const Check& check : checks) {
    if (excluded.erase(check.name) != 0) {
      lines += std::string("[+]") + check.name + " excluded: ok\n";
      continue;
    }
    const Status s = check.run();
    if (s.ok()) {
      lines += std::string("[+]") + check.name + " ok\n";
    } else {
      // The reason is for the log and the check's own path, not the public list.
      lines += std::string("[-]") + check.name + " failed: reason withheld\n";
      Logger("apiserver")->warn("{} check failed: [-]{} failed: {}", endpoint, check.name, s.message());
      failed = true;
    }
  }
  if (!excluded.empty()) {
    std::string names;
    for (const std::string& name : excluded) names += (names.empty() ? "\"" : ",\"") + name + "\"";
    lines += "warn: some health checks cannot be excluded: no matches for " + names + "\n";
  }
  if (failed) {  // always verbose on failure
    r.status = 500;
    r.body = lines + endpoint + " check failed\n";
  } else if (query.Has("verbose")) {
    r.body = lines + endpoint + " check passed\n";
  } else {
    r.body = "ok";
  }
  return r;
}

HandlerResult ApiServer::Impl::HandleNonResource(const HttpRequest& req, const RequestInfo& info) {
  const auto& p = info.parts;
  if (req.method != "GET" && req.method != "HEAD") {
    return StatusResponse(MethodNotAllowedError("the server does not allow this method on the requested resource"));
  }
  if (p.size() == 1 && p[0] == "version") {
    HttpResponse r;
    r.body = std::string(kVersionBody);
    return r;
  }
  // The healthz mux registers exact paths (healthz.go InstallPathHandler): "/healthz/"
  // is none of them.
  if ((p.size() == 1 || p.size() == 2) && (p[0] == "healthz" || p[0] == "livez" || p[0] == "readyz") &&
      !info.path.ends_with('/')) {
    return HealthResponse(p[0], p.size() == 2 ? p[1] : std::string(), info.query);
  }
  const bool aggregated = Discovery::WantsAggregated(req.Header("Accept"));
  if (p.size() == 1 && p[0] == "api") {
    if (aggregated) {
      return JsonResponse(200, discovery_.Aggregated(true), std::string(kAggregatedDiscoveryContentType));
    }
    std::string host(req.Header("Host"));
    return JsonResponse(200, discovery_.LegacyApiVersions(host.empty() ? "127.0.0.1" : host));
  }
  if (p.size() == 1 && p[0] == "apis") {
    if (aggregated) {
      return JsonResponse(200, discovery_.Aggregated(false), std::string(kAggregatedDiscoveryContentType));
    }
    return JsonResponse(200, discovery_.LegacyGroupList());
  }
  if (p.size() == 2 && p[0] == "api") {
    json list = discovery_.ResourceList("", p[1]);
    return list.is_null() ? HandlerResult(NotFoundResponse()) : HandlerResult(JsonResponse(200, list));
  }
  if (p.size() == 2 && p[0] == "apis") {
    json group = discovery_.LegacyGroup(p[1]);
    return group.is_null() ? HandlerResult(NotFoundResponse()) : HandlerResult(JsonResponse(200, group));
  }
  if (p.size() == 3 && p[0] == "apis") {
    json list = discovery_.ResourceList(p[1], p[2]);
    return list.is_null() ? HandlerResult(NotFoundResponse()) : HandlerResult(JsonResponse(200, list));
  }
  if (p.size() == 2 && p[0] == "openapi" && p[1] == "v2") {
    HttpResponse r;
    r.body = OpenApi::V2Document(req.Header("Accept"), &r.content_type);
    return r;
  }
  if (p.size() >= 2 && p[0] == "openapi" && p[1] == "v3") {
    if (p.size() == 2) {
      HttpResponse r;
      r.body = openapi_.Index();
      return r;
    }
    std::string key;
    for (size_t i = 2; i < p.size(); ++i) key += (i > 2 ? "/" : "") + p[i];
    if (const std::string* doc = openapi_.Document(key)) {
      HttpResponse r;
      r.body = *doc;
      // Immutable under its hash, as upstream serves it.
      if (info.query.Has("hash")) r.headers.emplace_back("Cache-Control", "public, immutable");
      return r;
    }
    return NotFoundResponse();
  }
  return NotFoundResponse();
}

HandlerResult ApiServer::Impl::HandleResource(const HttpRequest& req, RequestInfo info, authn::UserInfo user) {
  const api::ResourceDefinition* def = ServedDefinition(info);
  if (def == nullptr) return NotFoundResponse();
  // The response's media type (media_type.h); a watch's stream stays JSON.
  const ResponseFormat format = NegotiateResponseFormat(req.Header("Accept"), def->builtin);
  if (format.media == ResponseMediaType::kNotAcceptable) return NotAcceptableResponse(def->builtin);
  // Every answer from a deprecated version carries its warning, errors
  // included, as the CRD handler adds it before serving.
  auto w = deprecation_warnings_.find(std::make_pair(def, info.api_version));
  HandlerResult result = HandleResourceOf(req, std::move(info), def, std::move(user), format);
  if (w != deprecation_warnings_.end()) {
    const std::string header = WarningHeader(w->second);
    std::visit(
        [&header](auto& resp) {
          // A deferred answer (a relay to a node: pods, never deprecated) carries none.
          if constexpr (!std::is_same_v<std::decay_t<decltype(resp)>, DeferredResponse>) {
            resp.headers.emplace_back("Warning", header);
          }
        },
        result);
  }
  if (format.media == ResponseMediaType::kYaml) {
    if (auto* resp = std::get_if<HttpResponse>(&result)) EncodeResponseAsYaml(resp);
  }
  return result;
}

HandlerResult ApiServer::Impl::ServePodStream(const HttpRequest& req, const RequestInfo& info, bool unbounded) {
  if (node_proxy_ && PodStreams::AllowsVerb(info)) {
    auto pod = store_.GetShared(store::ObjectKey{{"", "pods"}, info.namespace_, info.name});
    const std::string node = pod.ok() ? api::NestedString(**pod, {"spec", "nodeName"}) : "";
    if (!node.empty() && !streams_.ServesNode(node)) {
      if (auto n = store_.GetShared(store::ObjectKey{{"", "nodes"}, "", node}); n.ok()) {
        HttpRequest forwarded = req;
        const std::size_t query = req.target.find('?');
        forwarded.target = "/api/v1/namespaces/" + info.namespace_ + "/pods/" + info.name + "/" + info.subresource +
                           (query == std::string::npos ? "" : req.target.substr(query));
        return node_proxy_->Forward(forwarded, **n);
      }
    }
  }
  return streams_.Serve(req, info, unbounded);
}

HandlerResult ApiServer::Impl::HandleResourceOf(const HttpRequest& req, RequestInfo info,
                                                const api::ResourceDefinition* def, authn::UserInfo user,
                                                ResponseFormat format) {
  ResourceRequest r;
  r.http = &req;
  r.media = format.media;
  r.transform = format.transform;
  r.meta_version = format.meta_version;
  r.user = std::move(user);
  r.def = def;
  r.version = info.api_version;
  r.api_version = info.GroupVersion();
  r.gr = def->Resource();
  r.stored = def->StorageResource();
  if (def->group.empty() && def->names.plural == "pods" && !info.name.empty() &&
      PodStreams::IsPodStreamSubresource(info.subresource)) {
    // The administrator can always reach a pod, whatever the tenants hold.
    return ServePodStream(req, info, authn::IsSystemMaster(r.user));
  }
  if (def->group.empty() && def->names.plural == "serviceaccounts" && info.subresource == "token" &&
      !info.name.empty() && !info.namespace_.empty() && sa_tokens_.enabled()) {
    if (info.verb != "create") {
      return StatusResponse(MethodNotAllowedError("the server does not allow this method on the requested resource"));
    }
    auto body = DecodeRequestBody(req);
    if (!body.ok()) return StatusResponse(body.status());
    if (const std::optional<std::string> node = NodeNameOf(r.user)) {
      Status admitted = AdmitNodeTokenRequest(*node, info.namespace_, info.name, *body, store_);
      if (!admitted.ok()) return StatusResponse(admitted, DetailsFor(admitted, r.gr, "ServiceAccount", info.name));
    }
    auto issued = sa_tokens_.CreateToken(info.namespace_, info.name, *body);
    if (!issued.ok()) {
      return StatusResponse(issued.status(), DetailsFor(issued.status(), r.gr, "TokenRequest", info.name));
    }
    return JsonResponse(201, *issued);
  }
  if (def->group.empty() && def->names.plural == "pods" && info.subresource == "binding" && !info.name.empty() &&
      !info.namespace_.empty()) {
    if (info.verb != "create") {
      return StatusResponse(MethodNotAllowedError("the server does not allow this method on the requested resource"));
    }
    r.info = std::move(info);
    return BindPod(r);
  }
  if (!info.subresource.empty()) {
    const api::DefinitionVersion* v = def->FindVersion(r.version);
    if (info.subresource != "status" || v == nullptr || !v->status_subresource) return NotFoundResponse();
    r.status_subresource = true;
  }
  // Scope: a cluster-scoped resource has no namespace segment; a namespaced
  // object needs one (lists and watches may go across namespaces).
  if (!def->namespaced() && !info.namespace_.empty()) return NotFoundResponse();
  if (def->namespaced() && info.namespace_.empty() && !info.name.empty()) return NotFoundResponse();
  if (def->namespaced() && info.namespace_.empty() && info.verb != "list" && info.verb != "watch") {
    return StatusResponse(MethodNotAllowedError("the server does not allow this method on the requested resource"));
  }
  const std::string& include = info.query.Get("includeObject");
  if (include == "None") {
    r.include = IncludeObject::kNone;
  } else if (include == "Object") {
    r.include = IncludeObject::kObject;
  } else if (!include.empty() && include != "Metadata" && r.transform == Transform::kTable) {
    // Upstream's optionsForTransform (endpoints/handlers/response.go) validates a Table
    // answer's options (ValidateTableOptions) as it encodes the answer, after a write is done;
    // berth refuses before anything is done, so the refused request changes nothing.
    return StatusResponse(BadRequestError("Unable to convert to Table as requested: includeObject: Invalid value: \"" +
                                          include + "\": must be 'Metadata', 'Object', 'None', or empty"));
  }
  r.info = std::move(info);

  const std::string& verb = r.info.verb;
  if (r.status_subresource && verb != "get" && verb != "update" && verb != "patch") {
    return StatusResponse(MethodNotAllowedError("the server does not allow this method on the requested resource"));
  }
  if (verb == "get") return Get(r);
  if (verb == "list") return List(r);
  if (verb == "watch") return Watch(r);
  if (verb == "create") {
    if (!r.info.name.empty()) {
      return StatusResponse(MethodNotAllowedError("the server does not allow this method on the requested resource"));
    }
    return Create(r);
  }
  if (verb == "update") return Update(r);
  if (verb == "patch") return Patch(r);
  if (verb == "delete") return Delete(r);
  if (verb == "deletecollection") return DeleteCollection(r);
  return StatusResponse(MethodNotAllowedError("the server does not allow this method on the requested resource"));
}

// ---------------------------------------------------------------------------
// Helpers

HttpResponse ApiServer::Impl::StoredObjectResponse(const ResourceRequest& r, int code, const store::ObjectPtr& stored,
                                                   const std::vector<std::string>& warnings) const {
  if (!HandsOver(r, *stored)) return ObjectResponse(r, code, *stored, warnings);
  HttpResponse resp;
  resp.status = code;
  resp.objects.push_back(stored);
  AddWarnings(&resp, warnings);
  return resp;
}

HttpResponse ApiServer::Impl::ObjectResponse(const ResourceRequest& r, int code, const json& stored,
                                             const std::vector<std::string>& warnings) const {
  json holder;
  auto converted = ViewInRequestVersion(r, stored, &holder);
  if (!converted.ok()) return Error(r, converted.status());
  const json& object = **converted;
  if (r.transform == Transform::kPartialObjectMetadataList) return TransformNotAcceptableResponse(/*list=*/false);
  HttpResponse resp =
      r.transform == Transform::kNone ? JsonResponse(code, object) : JsonResponse(code, TransformedObject(r, object));
  AddWarnings(&resp, warnings);
  return resp;
}

StatusOr<json> ApiServer::Impl::DecodeBody(const ResourceRequest& r, bool require_name) const {
  // The media types DecodeRequestBody reads; then the checks of a stored kind.
  BERTH_ASSIGN_OR_RETURN(json obj, DecodeRequestBody(*r.http));
  if (!obj.is_object()) {
    return BadRequestError(
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml");
  }
  const std::string& kind = r.def->names.kind;
  if (!obj.contains("apiVersion")) obj["apiVersion"] = r.api_version;
  if (!obj.contains("kind")) obj["kind"] = kind;
  if (!obj["apiVersion"].is_string() || !obj["kind"].is_string()) {
    return BadRequestError(kind + " in version \"" + r.version + "\" cannot be handled as a " + kind +
                           ": apiVersion and kind must be strings");
  }
  std::string group, version;
  api::SplitApiVersion(obj["apiVersion"].get<std::string>(), &group, &version);
  if (group != r.def->group || obj["kind"].get<std::string>() != kind) {
    return BadRequestError("the API version in the data (" + obj["apiVersion"].get<std::string>() +
                           ") does not match the expected API version (" + r.api_version + ")");
  }
  BERTH_RETURN_IF_ERROR(CheckMetadataAgainstUrl(r, obj, require_name));
  return obj;
}

Status ApiServer::Impl::CheckMetadataAgainstUrl(const ResourceRequest& r, json& obj, bool require_name) const {
  const std::string& kind = r.def->names.kind;
  if (!obj.contains("metadata") || obj["metadata"].is_null()) obj["metadata"] = json::object();
  if (!obj["metadata"].is_object()) {
    return BadRequestError(kind + " in version \"" + r.version + "\" cannot be handled as a " + kind +
                           ": metadata must be an object");
  }
  json& meta = obj["metadata"];
  // name and namespace: null reads as absent.
  for (const char* field : {"name", "namespace"}) {
    if (auto it = meta.find(field); it != meta.end() && it->is_null()) meta.erase(it);
  }
  if (Status typed = api::CheckObjectMetaTypes(meta); !typed.ok()) {
    return BadRequestError(kind + " in version \"" + r.version + "\" cannot be handled as a " + kind + ": " +
                           typed.message());
  }
  const std::string& ns = r.info.namespace_;
  if (r.def->namespaced()) {
    std::string body_ns = meta.value("namespace", "");
    if (body_ns.empty()) {
      meta["namespace"] = ns;
    } else if (body_ns != ns) {
      return BadRequestError("the namespace of the provided object does not match the namespace sent on the request");
    }
  } else {
    meta.erase("namespace");
  }
  if (!r.info.name.empty()) {
    std::string body_name = meta.value("name", "");
    if (body_name.empty() && !require_name) {
      meta["name"] = r.info.name;
    } else if (body_name != r.info.name) {
      return BadRequestError("the name of the object (" + body_name + ") does not match the name on the URL (" +
                             r.info.name + ")");
    }
  }
  return Status::Ok();
}

Status ApiServer::Impl::CheckNamespace(const ResourceRequest& r, std::string_view name) const {
  if (!r.def->namespaced() || namespaces_ == nullptr) return Status::Ok();
  auto ns = store_.GetShared(store::ObjectKey{namespaces_->Resource(), "", r.info.namespace_});
  if (!ns.ok()) return ns.status();
  if (api::BeingDeleted(**ns)) {
    return ForbiddenError(r.gr.String() + " \"" + std::string(name) +
                          "\" is forbidden: unable to create new content in namespace " + r.info.namespace_ +
                          " because it is being terminated");
  }
  return Status::Ok();
}

StatusOr<store::ListOptions> ApiServer::Impl::StoreListOptions(const ResourceRequest& r, const ListOptions& o) const {
  store::ListOptions lo;
  lo.ns = r.info.namespace_;
  BERTH_ASSIGN_OR_RETURN(lo.predicate,
                         BuildPredicate(r.def->group, r.def->names.kind, o.label_selector, o.field_selector));
  if (!o.label_selector.empty()) {
    BERTH_ASSIGN_OR_RETURN(api::LabelSelector labels, api::LabelSelector::Parse(o.label_selector));
    lo.required_label = [labels = std::move(labels)](std::string_view key) { return labels.RequiresExactMatch(key); };
  }
  return lo;
}

// ---------------------------------------------------------------------------
// Reads

StatusOr<std::shared_ptr<const std::string>> ApiServer::Impl::ObjectText(const ResourceRequest& r,
                                                                          const store::ObjectPtr& object) {
  // The form: the version the object is converted to (the store holds one version per resource).
  const std::string form = r.def->group + "/" + r.api_version;
  if (auto text = object_texts_.Find(object.get(), form)) return text;
  json holder;
  auto view = ViewInRequestVersion(r, *object, &holder);
  if (!view.ok()) return view.status();
  std::string text;
  AppendJson(**view, &text);
  return object_texts_.Insert(object, form, std::move(text));
}

HttpResponse ApiServer::Impl::Get(const ResourceRequest& r) {
  auto obj = store_.GetShared(store::ObjectKey{r.stored, r.info.namespace_, r.info.name});
  if (!obj.ok()) return Error(r, obj.status());
  if (r.transform != Transform::kNone || HandsOver(r, **obj)) return StoredObjectResponse(r, 200, *obj);
  auto text = ObjectText(r, *obj);
  if (!text.ok()) return Error(r, text.status());
  HttpResponse resp;
  resp.content_type = "application/json";
  resp.body = **text;
  return resp;
}

HttpResponse ApiServer::Impl::List(const ResourceRequest& r) {
  auto opts = ParseListOptions(r.info.query);
  if (!opts.ok()) return StatusResponse(opts.status());
  auto listing = StoreListOptions(r, *opts);
  if (!listing.ok()) return StatusResponse(listing.status());
  store::ListOptions lo = std::move(listing).value();
  lo.limit = opts->limit;
  lo.continue_token = opts->continue_token;
  if (opts->resource_version_match == "Exact") {
    auto rv = ParseResourceVersion(opts->resource_version);
    if (!rv.ok()) return StatusResponse(rv.status());
    lo.revision = *rv;
  } else if (!opts->resource_version.empty()) {
    // NotOlderThan (or unset with a resourceVersion): the latest state is
    // never older; still reject a malformed value as upstream does.
    auto rv = ParseResourceVersion(opts->resource_version);
    if (!rv.ok()) return StatusResponse(rv.status());
  }
  auto result = store_.List(r.stored, lo);
  if (!result.ok()) {
    // An expired continue token: the 410 offers a token that goes on after the same key at
    // the latest revision, as its message says (upstream's handleCompactedErrorForPaging sets
    // ListMeta.Continue; berth's encoding marks such a token with revision 0).
    const std::string next = result.status().code() == Code::kGone && !opts->continue_token.empty()
                                 ? store::InconsistentContinue(opts->continue_token)
                                 : std::string();
    if (next.empty()) return StatusResponse(result.status());
    json body = StatusToJson(result.status());
    body["metadata"]["continue"] = next;
    return JsonResponse(CodeHttpStatus(result.status().code()), body);
  }
  const std::string rv = std::to_string(result->revision);
  json meta = {{"resourceVersion", rv}};
  if (!result->continue_token.empty()) meta["continue"] = result->continue_token;
  if (result->remaining_item_count && !result->continue_token.empty()) {
    meta["remainingItemCount"] = *result->remaining_item_count;
  }
  if (r.transform != Transform::kNone) {
    // The stored objects themselves (shared, immutable) unless they need a conversion to the URL's
    // version.
    std::deque<json> converted_items;
    std::vector<const api::Object*> items;
    items.reserve(result->items.size());
    for (const auto& item : result->items) {
      json holder;
      auto view = ViewInRequestVersion(r, *item, &holder);
      if (!view.ok()) return StatusResponse(view.status());
      if (*view == &holder) {
        converted_items.push_back(std::move(holder));
        items.push_back(&converted_items.back());
      } else {
        items.push_back(*view);
      }
    }
    return TransformedListResponse(r, items, std::move(meta));
  }
  // The List object {"apiVersion","items","kind","metadata"} written with its
  // keys in the order json's sorted object would print them, each item's
  // text from the encoding cache (serialized once per stored object and version).
  HttpResponse resp;
  // An in-process caller that takes objects gets the stored ones themselves,
  // when none needs a conversion.
  if (std::all_of(result->items.begin(), result->items.end(),
                  [&](const store::ObjectPtr& o) { return HandsOver(r, *o); })) {
    resp.objects.swap(result->items);  // the body's items are left empty
  }
  std::string& body = resp.body;
  body = "{\"apiVersion\":";
  AppendJson(json(r.api_version), &body);
  body += ",\"items\":[";
  for (size_t i = 0; i < result->items.size(); ++i) {
    auto text = ObjectText(r, result->items[i]);
    if (!text.ok()) return StatusResponse(text.status());
    if (i > 0) body.push_back(',');
    body += **text;
  }
  body += "],\"kind\":";
  AppendJson(json(r.def->names.list_kind), &body);
  body += ",\"metadata\":";
  AppendJson(meta, &body);
  body.push_back('}');
  return resp;
}

HandlerResult ApiServer::Impl::Watch(const ResourceRequest& r) {
  auto opts = ParseListOptions(r.info.query);
  if (!opts.ok()) return StatusResponse(opts.status());
  auto listing = StoreListOptions(r, *opts);
  if (!listing.ok()) return StatusResponse(listing.status());
  // No resourceVersion, or one that parses to 0 ("0", "00"): the current
  // objects, then their changes (as upstream's storage parses it).
  int64_t from = 0;
  if (!opts->resource_version.empty()) {
    auto rv = ParseResourceVersion(opts->resource_version);
    if (!rv.ok()) return StatusResponse(rv.status());
    from = *rv;
  }
  const bool from_now = from == 0;
  // A watch without a resourceVersion starts with the current objects as ADDED.
  std::vector<std::string> initial;
  // A Table watch sends columnDefinitions in its first event only; the later ones carry none
  // (null), as upstream's serveWatchHandler sets TableOptions.NoHeaders after the first
  // (endpoints/handlers/watch.go; kubectl keeps the last columns it was sent).
  auto columns_sent = std::make_shared<std::atomic<bool>>(false);
  auto encode_object = [this, r, columns_sent](const json& stored) -> StatusOr<json> {
    auto converted = ToRequestVersion(r, stored);
    if (!converted.ok() || r.transform == Transform::kNone) return converted;
    if (r.transform == Transform::kTable && columns_sent->exchange(true)) {
      return TableOf(r, {&*converted}, api::ResourceVersion(*converted), "", /*with_columns=*/false);
    }
    return TransformedObject(r, *converted);
  };
  auto line = [](const char* type, const json& object) {
    std::string out = "{\"object\":";
    AppendJson(object, &out);
    out += ",\"type\":\"";
    out += type;
    out += "\"}\n";
    return out;
  };
  // Listed here, encoded once the watch is open: the watch must start from
  // the list's revision before the store's history moves past it.
  std::vector<store::ObjectPtr> listed;
  if (from_now) {
    auto list = store_.List(r.stored, *listing);
    if (!list.ok()) return StatusResponse(list.status());
    from = list->revision;
    listed = std::move(list->items);
  }
  WatchEncoders encoders;
  auto encode_event = [encode_object, line](const store::WatchEvent& ev) {
    auto obj = encode_object(*ev.object);
    if (!obj.ok()) return line("ERROR", StatusToJson(obj.status()));
    return line(store::EventTypeName(ev.type), *obj);
  };
  if (r.transform != Transform::kNone) {
    encoders.event = std::move(encode_event);
  } else {
    // Every watch of this API version sends the same line for the same event:
    // encoded once (EncodingCache).
    encoders.event = [this, encode_event = std::move(encode_event), version = r.api_version](
                         const store::WatchEvent& ev) { return *event_lines_.Line(ev, version, encode_event); };
    encoders.share = [version = r.api_version](const store::WatchEvent& ev) {
      return InApiVersion(*ev.object, version) ? ev.object : nullptr;
    };
  }
  encoders.error = [line](const Status& s) { return line("ERROR", StatusToJson(s)); };
  if (opts->allow_watch_bookmarks) {
    // A bookmark is an object of the watched kind with only its resourceVersion, transformed
    // as the events are (PartialObjectMetadata; a Table watch's bookmark stays the kind's).
    const bool partial = r.transform == Transform::kPartialObjectMetadata;
    const std::string api_version = partial ? "meta.k8s.io/" + r.meta_version : r.api_version;
    const std::string kind = partial ? "PartialObjectMetadata" : r.def->names.kind;
    encoders.bookmark = [api_version, kind, line](int64_t revision) {
      return line("BOOKMARK", json{{"kind", kind},
                                   {"apiVersion", api_version},
                                   {"metadata", {{"resourceVersion", std::to_string(revision)}}}});
    };
  }
  const api::GroupResource gr = r.stored;
  const std::string ns = r.info.namespace_;
  store::Predicate predicate = std::move(listing->predicate);
  StreamingResponse sr;
  sr.content_type = "application/json";
  const std::chrono::milliseconds timeout = WatchTimeout(opts->timeout_seconds);
  if (timeout.count() > 0) sr.timeout = timeout;
  // Open the watch now, so a too-old resourceVersion is answered as upstream
  // does it: 200 with a single ERROR event.
  auto relay = std::make_shared<NotifyRelay>();
  store::WatchOptions wo;
  wo.ns = ns;
  wo.predicate = std::move(predicate);
  wo.from_revision = from;
  wo.notify = relay->Callback();
  auto watcher = store_.Watch(gr, wo);
  if (!watcher.ok()) {
    if (watcher.status().code() != Code::kGone) return StatusResponse(watcher.status());
    std::string error_line = encoders.error(watcher.status());
    sr.start = [error_line](std::shared_ptr<ResponseStream> stream) {
      stream->Write(error_line);
      stream->Close();
    };
    return sr;
  }
  for (const auto& item : listed) {
    auto obj = encode_object(*item);
    if (!obj.ok()) return StatusResponse(obj.status());
    initial.push_back(line("ADDED", *obj));
  }
  listed.clear();
  if (timeout.count() < 0) {
    // A negative timeoutSeconds: the watch's timer has fired before it serves anything.
    sr.start = [](std::shared_ptr<ResponseStream> stream) { stream->Close(); };
    return sr;
  }
  auto shared_watcher = std::make_shared<std::unique_ptr<store::Watcher>>(std::move(watcher).value());
  sr.start = [this, shared_watcher, relay, initial = std::move(initial), encoders = std::move(encoders),
              timeout](std::shared_ptr<ResponseStream> stream) mutable {
    Status s =
        pump_.Add(std::move(*shared_watcher), relay, std::move(initial), std::move(encoders), stream, timeout);
    if (!s.ok()) stream->Close();
  };
  return sr;
}

// ---------------------------------------------------------------------------
// Writes

HttpResponse ApiServer::Impl::Create(const ResourceRequest& r) {
  auto wopts = ParseWriteOptions(r.info.query);
  if (!wopts.ok()) return StatusResponse(wopts.status());
  auto body = DecodeBody(r, false);
  if (!body.ok()) return StatusResponse(body.status());
  return CreateObject(r, *wopts, std::move(body).value());
}

HttpResponse ApiServer::Impl::CreateObject(const ResourceRequest& r, const WriteOptions& wopts, json object) {
  if (Status ns = CheckNamespace(r, api::Name(object)); !ns.ok()) return StatusResponse(ns);
  // metadata.generateName without a name: named before admission, as the registry's
  // BeforeCreate does (names.SimpleNameGenerator: the prefix cut to 58 characters, then 5
  // random ones), so validation and the kind's prepare see the name; a generated name that
  // is already taken is drawn again (kube-apiserver's RetryGenerateName, GA in 1.32).
  const std::string generate_name = api::MetaString(object, "generateName");
  const bool generate = api::Name(object).empty() && !generate_name.empty();
  constexpr int kGenerateAttempts = 8;
  constexpr size_t kMaxGeneratedNameLength = 58;
  for (int attempt = 1;; ++attempt) {
    if (generate) {
      object["metadata"]["name"] = generate_name.substr(0, kMaxGeneratedNameLength) + RandomNameSuffix();
    }
    const std::string name = api::Name(object);
    api::WriteRequest wr;
    wr.operation = api::Operation::kCreate;
    wr.object = generate ? object : std::move(object);  // only a generated name is tried again
    wr.field_validation = wopts.field_validation;
    wr.lookup = &lookup_;
    auto admitted = Admit(r, std::move(wr));
    if (!admitted.ok()) return Error(r, admitted.status(), name);
    if (wopts.dry_run) return ObjectResponse(r, 201, admitted->object, admitted->warnings);
    auto stored = store_.CreateShared(r.stored, std::move(admitted->object));
    if (stored.ok()) return StoredObjectResponse(r, 201, *stored, admitted->warnings);
    if (generate && stored.status().code() == Code::kAlreadyExists && attempt < kGenerateAttempts) continue;
    return Error(r, stored.status(), name);
  }
}

HttpResponse ApiServer::Impl::Update(const ResourceRequest& r) {
  auto wopts = ParseWriteOptions(r.info.query);
  if (!wopts.ok()) return StatusResponse(wopts.status());
  auto body = DecodeBody(r, true);
  if (!body.ok()) return StatusResponse(body.status());
  const store::ObjectKey key{r.stored, r.info.namespace_, r.info.name};
  auto old = store_.GetShared(key);
  if (!old.ok() && old.status().code() == Code::kNotFound && r.def->allow_create_on_update && !r.status_subresource) {
    return CreateOnUpdate(r, *wopts, std::move(body).value());
  }
  if (!old.ok()) return Error(r, old.status());
  api::WriteRequest wr;
  wr.operation = r.status_subresource ? api::Operation::kUpdateStatus : api::Operation::kUpdate;
  wr.object = std::move(body).value();
  wr.old = old->get();
  wr.field_validation = wopts->field_validation;
  wr.lookup = &lookup_;
  const std::string requested_rv = api::ResourceVersion(wr.object);
  auto admitted = Admit(r, std::move(wr));
  if (!admitted.ok()) return Error(r, admitted.status());
  // The client's resourceVersion is the precondition (empty: unconditional).
  admitted->object["metadata"]["resourceVersion"] = requested_rv;
  if (requested_rv.empty()) admitted->object["metadata"].erase("resourceVersion");
  if (wopts->dry_run) {
    if (!requested_rv.empty() && requested_rv != api::ResourceVersion(**old)) {
      return Error(r, store::ConflictModified(key));
    }
    return ObjectResponse(r, 200, admitted->object, admitted->warnings);
  }
  auto stored = store_.UpdateShared(r.stored, std::move(admitted->object));
  if (!stored.ok()) return Error(r, stored.status());
  return StoredObjectResponse(r, 200, *stored, admitted->warnings);
}

// POST pods/{name}/binding, as kube-apiserver's BindingREST (pkg/registry/core/pod/storage/
// storage.go, 1.32): the Binding names the pod (metadata.name, equal to the URL's) and its
// node (target.name; target.kind empty or "Node"); metadata.uid and resourceVersion, when set,
// are preconditions on the pod. In one write the pod gets spec.nodeName, the Binding's
// annotations and condition PodScheduled=True (setPodHostAndAnnotations); the write is
// admitted as an update of the pod, so the pod's own rules and the node and RBAC checks hold.
// A pod being deleted, already bound or still gated is a 409. Answers 201 with a Success
// Status.
HttpResponse ApiServer::Impl::BindPod(const ResourceRequest& r) {
  auto wopts = ParseWriteOptions(r.info.query);
  if (!wopts.ok()) return StatusResponse(wopts.status());
  auto body = DecodeRequestBody(*r.http);
  if (!body.ok()) return StatusResponse(body.status());
  const json& binding = *body;
  if (!binding.is_object() || !api::Field(binding, "metadata").is_object() ||
      !api::Field(binding, "target").is_object()) {
    return StatusResponse(
        BadRequestError("Binding in version \"v1\" cannot be handled as a Binding: "
                        "metadata and target must be objects"));
  }
  if (api::Name(binding) != r.info.name) {
    return StatusResponse(BadRequestError("name in URL does not match name in Binding object"));
  }
  // ValidatePodBinding.
  api::FieldErrorList errs;
  const json& target = binding["target"];
  const json& target_kind = api::Field(target, "kind");
  if (!target_kind.is_null() && target_kind != "" && target_kind != "Node") {
    errs.push_back(api::NotSupported(api::FieldPath("target").Child("kind"), target_kind, {"Node", "<empty>"}));
  }
  const json& node = api::Field(target, "name");
  if (!node.is_string() || node.get_ref<const std::string&>().empty()) {
    errs.push_back(api::Required(api::FieldPath("target").Child("name")));
  }
  const json& annotations = api::NestedField(binding, {"metadata", "annotations"});
  if (!annotations.is_null() && !annotations.is_object()) {
    errs.push_back(api::Invalid(api::FieldPath("metadata").Child("annotations"), annotations, "must be an object"));
  }
  if (!errs.empty()) return StatusResponse(api::InvalidStatus("Binding", r.info.name, errs));

  const store::ObjectKey key{r.stored, r.info.namespace_, r.info.name};
  const std::string want_uid = api::Uid(binding);
  const std::string want_rv = api::ResourceVersion(binding);
  const std::string node_name = node.get<std::string>();
  auto conflict = [&](const std::string& why) {
    return ConflictError("Operation cannot be fulfilled on pods/binding \"" + r.info.name + "\": " + why);
  };
  auto bind = [&](const api::Object& pod) -> StatusOr<api::Object> {
    if (!want_uid.empty() && want_uid != api::Uid(pod)) {
      return store::ConflictPrecondition(key, "UID", want_uid, api::Uid(pod));
    }
    if (!want_rv.empty() && want_rv != api::ResourceVersion(pod)) {
      return store::ConflictPrecondition(key, "ResourceVersion", want_rv, api::ResourceVersion(pod));
    }
    if (api::BeingDeleted(pod)) {
      return conflict("pod " + r.info.name + " is being deleted, cannot be assigned to a host");
    }
    const std::string& bound = api::NestedString(pod, {"spec", "nodeName"});
    if (!bound.empty()) return conflict("pod " + r.info.name + " is already assigned to node \"" + bound + "\"");
    if (!api::ArrayAt(api::ObjectAt(pod, "spec"), "schedulingGates").empty()) {
      return conflict("pod " + r.info.name + " has non-empty .spec.schedulingGates");
    }
    api::WriteRequest wr;
    wr.operation = api::Operation::kUpdate;
    wr.object = pod;
    wr.object["spec"]["nodeName"] = node_name;
    if (annotations.is_object()) {
      for (const auto& [k, v] : annotations.items()) wr.object["metadata"]["annotations"][k] = v;
    }
    wr.old = &pod;
    wr.field_validation = wopts->field_validation;
    wr.lookup = &lookup_;
    BERTH_ASSIGN_OR_RETURN(api::AdmittedWrite admitted, Admit(r, std::move(wr)));
    // podutil.UpdatePodCondition: PodScheduled True (the status the update kept is the pod's).
    api::SetCondition(&admitted.object, api::Condition{"PodScheduled", "True", "", ""}, clock_.Now(),
                      api::ConditionKind::kNoObservedGeneration);
    admitted.object["metadata"]["resourceVersion"] = api::ResourceVersion(pod);
    return std::move(admitted.object);
  };
  if (wopts->dry_run) {
    auto pod = store_.GetShared(key);
    if (!pod.ok()) return Error(r, pod.status());
    if (auto checked = bind(**pod); !checked.ok()) return Error(r, checked.status());
  } else if (auto stored = store_.GuaranteedUpdateShared(key, bind); !stored.ok()) {
    return Error(r, stored.status());
  }
  return JsonResponse(
      201,
      {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()}, {"status", "Success"}, {"code", 201}});
}

HttpResponse ApiServer::Impl::CreateOnUpdate(const ResourceRequest& r, const WriteOptions& wopts, json object) {
  // The PUT was authorized as "update"; creating needs "create" too
  // (handlers/update.go withAuthorization), refused as NewForbidden words it.
  rbac::RequestAttributes create = RequestAttributesFor(r.user, *r.http, r.info);
  create.verb = "create";
  if (const rbac::Decision d = Authorize(authorizer_.get(), create); !d.allowed) {
    return Error(r, ForbiddenError(r.gr.String() + " " + api::GoQuote(r.info.name) + " is forbidden: " + d.reason),
                 r.info.name);
  }
  // The generic store creates with the object as sent, whatever resourceVersion it
  // carries (store.go Update: the precondition applies to an existing object only).
  object["metadata"].erase("resourceVersion");
  return CreateObject(r, wopts, std::move(object));
}

HttpResponse ApiServer::Impl::Patch(const ResourceRequest& r) {
  auto wopts = ParseWriteOptions(r.info.query);
  if (!wopts.ok()) return StatusResponse(wopts.status());
  auto type = ParsePatchType(r.http->Header("Content-Type"));
  if (!type.ok()) return StatusResponse(type.status());
  const store::ObjectKey key{r.stored, r.info.namespace_, r.info.name};
  const std::string& body = r.http->body;

  if (*type == PatchType::kApply) {
    // Server-side apply, simplified: create when absent, else merge the
    // applied configuration into the live object (no managedFields yet).
    if (wopts->field_manager.empty()) {
      return StatusResponse(BadRequestError(
          "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"));
    }
    auto existing = store_.GetShared(key);
    if (!existing.ok() && existing.status().code() == Code::kNotFound && !r.status_subresource) {
      auto decoded = DecodeBody(r, false);  // the name is the URL's
      if (!decoded.ok()) return StatusResponse(decoded.status());
      return CreateObject(r, *wopts, std::move(decoded).value());
    }
    if (!existing.ok()) return Error(r, existing.status());
    auto decoded = DecodeBody(r, false);  // checks kind, name and namespace
    if (!decoded.ok()) return StatusResponse(decoded.status());
  }

  // Built-in kinds merge lists strategically; custom resources refuse it (415).
  const api::StrategicMergeSchema* strategic_schema =
      r.def->builtin ? &api::StrategicMergeSchema::ForKind(r.def->group, r.def->names.kind) : nullptr;
  std::vector<std::string> warnings;
  auto mutate = [&](const api::Object& current) -> StatusOr<api::Object> {
    json holder;
    auto live = ViewInRequestVersion(r, current, &holder);
    if (!live.ok()) return live.status();
    BERTH_ASSIGN_OR_RETURN(json patched, ApplyPatch(*type, strategic_schema, **live, body));
    if (!patched.is_object()) return BadRequestError("the patch did not produce an object");
    // A patch may not rename its object, move it or remove its metadata (upstream's
    // patcher.applyPatch runs the same checks as a body's).
    BERTH_RETURN_IF_ERROR(CheckMetadataAgainstUrl(r, patched, true));
    // Identity cannot be patched away; a resourceVersion in the patch is a
    // precondition.
    const std::string patched_rv = api::ResourceVersion(patched);
    if (!patched_rv.empty() && patched_rv != api::ResourceVersion(current)) {
      return store::ConflictModified(key);
    }
    patched["apiVersion"] = r.api_version;
    patched["kind"] = r.def->names.kind;
    patched["metadata"]["resourceVersion"] = api::ResourceVersion(current);
    api::WriteRequest wr;
    wr.operation = r.status_subresource ? api::Operation::kUpdateStatus : api::Operation::kUpdate;
    wr.object = std::move(patched);
    wr.old = &current;
    wr.field_validation = wopts->field_validation;
    wr.lookup = &lookup_;
    auto admitted = Admit(r, std::move(wr));
    if (!admitted.ok()) return admitted.status();
    warnings = admitted->warnings;
    return std::move(admitted->object);
  };
  if (wopts->dry_run) {
    auto current = store_.GetShared(key);
    if (!current.ok()) return Error(r, current.status());
    auto result = mutate(**current);
    if (!result.ok()) return Error(r, result.status());
    return ObjectResponse(r, 200, *result, warnings);
  }
  auto stored = store_.GuaranteedUpdateShared(key, mutate);
  if (!stored.ok()) return Error(r, stored.status());
  return StoredObjectResponse(r, 200, *stored, warnings);
}

namespace {

// The DeleteOptions body as JSON text: kubectl's typed clients (drain's pod
// deletions) send it as protobuf.
StatusOr<std::string> DeleteOptionsJson(const HttpRequest& req) {
  if (req.body.empty() || !IsProtobufContentType(req.Header("Content-Type"))) return req.body;
  BERTH_ASSIGN_OR_RETURN(json options, DecodeProtobufObject(req.body));
  if (options.value("kind", "") != "DeleteOptions") {
    return BadRequestError("the body of the request must be DeleteOptions, not " + options.value("kind", ""));
  }
  return DumpJson(options);
}

// The deletion a DELETE (one object or a collection) asks for: its query
// parameters and its body (a JSON, YAML or protobuf DeleteOptions, or none).
StatusOr<DeleteRequest> DeleteRequestOf(const HttpRequest& req, const QueryParams& query) {
  BERTH_ASSIGN_OR_RETURN(std::string body, DeleteOptionsJson(req));
  BERTH_ASSIGN_OR_RETURN(DeleteOptions o, ParseDeleteOptions(query, body));
  DeleteRequest d;
  d.grace_period_seconds = o.grace_period_seconds;
  d.propagation_policy = o.propagation_policy;
  d.precondition_uid = o.precondition_uid;
  d.precondition_resource_version = o.precondition_resource_version;
  d.dry_run = o.dry_run;
  return d;
}

}  // namespace

HttpResponse ApiServer::Impl::DeleteResponse(const ResourceRequest& r, const store::DeleteResult& result) const {
  // Upstream returns the object for custom resources and Pods (their stores set
  // ReturnDeletedObject) and whenever it stays (graceful deletion, finalizers);
  // other built-in kinds removed at once answer with a Success Status.
  if (result.removed && r.def->builtin && !(r.def->group.empty() && r.def->names.kind == "Pod")) {
    StatusDetails d;
    d.name = api::Name(result.object);
    d.group = r.def->group;
    d.kind = r.def->names.plural;
    d.uid = api::Uid(result.object);
    return JsonResponse(200, SuccessStatusJson(d));
  }
  return ObjectResponse(r, 200, result.object);
}

HttpResponse ApiServer::Impl::Delete(const ResourceRequest& r) {
  auto request = DeleteRequestOf(*r.http, r.info.query);
  if (!request.ok()) return StatusResponse(request.status());
  const store::ObjectKey key{r.stored, r.info.namespace_, r.info.name};
  // The PriorityClass REST storage's Delete (pkg/registry/scheduling/priorityclass/storage):
  // the system classes the server re-creates at start may not be deleted one by one (a
  // collection delete goes through the generic store, upstream as here).
  if (r.gr == api::kPriorityClassesResource) {
    for (const api::Object& pc : api::SystemPriorityClasses()) {
      if (api::Name(pc) == r.info.name) {
        return Error(r, ForbiddenError(r.gr.String() + " \"" + r.info.name +
                                       "\" is forbidden: this is a system priority class and cannot be deleted"));
      }
    }
  }
  auto result = deleter_.Delete(registry_.StorageDefinition(*r.def), key, *request);
  if (!result.ok()) return Error(r, result.status());
  return DeleteResponse(r, *result);
}

HttpResponse ApiServer::Impl::DeleteCollection(const ResourceRequest& r) {
  auto opts = ParseListOptions(r.info.query);
  if (!opts.ok()) return StatusResponse(opts.status());
  auto request = DeleteRequestOf(*r.http, r.info.query);
  if (!request.ok()) return StatusResponse(request.status());
  auto listing = StoreListOptions(r, *opts);
  if (!listing.ok()) return StatusResponse(listing.status());
  auto list = store_.List(r.stored, *listing);
  if (!list.ok()) return StatusResponse(list.status());
  json items = json::array();
  for (const auto& item : list->items) {
    const store::ObjectKey key = store::KeyOf(r.stored, *item);
    auto result = deleter_.Delete(registry_.StorageDefinition(*r.def), key, *request);
    if (!result.ok()) {
      if (result.status().code() == Code::kNotFound) continue;  // deleted concurrently
      return Error(r, result.status(), key.name);
    }
    auto converted = ToRequestVersion(r, result->object);
    if (converted.ok()) items.push_back(std::move(converted).value());
  }
  json meta = {{"resourceVersion", std::to_string(store_.CurrentRevision())}};
  if (r.transform != Transform::kNone) {
    std::vector<const api::Object*> pointers;
    for (const json& item : items) pointers.push_back(&item);
    return TransformedListResponse(r, pointers, std::move(meta));
  }
  json out = {{"apiVersion", r.api_version},
              {"kind", r.def->names.list_kind},
              {"metadata", std::move(meta)},
              {"items", std::move(items)}};
  return JsonResponse(200, out);
}

HttpResponse ApiServer::Impl::TransformedListResponse(const ResourceRequest& r,
                                                      const std::vector<const api::Object*>& items, json meta) const {
  switch (r.transform) {
    case Transform::kTable: {
      // The list's metadata as upstream's table generator copies it: resourceVersion,
      // continue and remainingItemCount.
      json table = TableOf(r, items, meta.value("resourceVersion", ""), meta.value("continue", ""));
      if (auto remaining = meta.find("remainingItemCount"); remaining != meta.end()) {
        table["metadata"]["remainingItemCount"] = *remaining;
      }
      return JsonResponse(200, table);
    }
    case Transform::kPartialObjectMetadataList: {
      // Upstream's asPartialObjectMetadataList.
      json list = {{"kind", "PartialObjectMetadataList"},
                   {"apiVersion", "meta.k8s.io/" + r.meta_version},
                   {"metadata", std::move(meta)},
                   {"items", json::array()}};
      for (const api::Object* item : items) list["items"].push_back(PartialObjectMetadata(*item, r.meta_version));
      return JsonResponse(200, list);
    }
    default:  // PartialObjectMetadata asked of a list
      return TransformNotAcceptableResponse(/*list=*/true);
  }
}

Status ApiServer::Impl::EnsureSystemNamespaces() {
  if (namespaces_ == nullptr) return Status::Ok();
  for (const std::string& name : options_.system_namespaces) {
    auto existing = store_.GetShared(store::ObjectKey{namespaces_->Resource(), "", name});
    if (existing.ok()) continue;
    if (existing.status().code() != Code::kNotFound) return existing.status();
    api::WriteRequest wr;
    wr.operation = api::Operation::kCreate;
    wr.object = json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
    auto admitted = pipeline_.Admit(std::move(wr));
    if (!admitted.ok()) return admitted.status().WithContext("creating namespace " + name);
    auto created = store_.Create(namespaces_->Resource(), std::move(admitted->object));
    if (!created.ok() && created.status().code() != Code::kAlreadyExists) return created.status();
  }
  return Status::Ok();
}

// The system PriorityClasses, as kube-apiserver's
// scheduling/bootstrap-system-priority-classes post-start hook, and the
// default RBAC policy (rbac/bootstrap_policy.h), as its
// rbac/bootstrap-roles hook: each created when missing, an existing one left
// as it is (upstream also adds missing rules to the roles annotated
// autoupdate; berth does not yet).
Status ApiServer::Impl::EnsureSystemObjects() {
  std::vector<api::Object> objects = api::SystemPriorityClasses();
  for (api::Object& o : rbac::BootstrapPolicy()) objects.push_back(std::move(o));
  for (api::Object& object : objects) {
    auto def = registry_.ForKind(api::StringAt(object, "apiVersion"), api::StringAt(object, "kind"));
    if (!def.ok()) continue;  // a registry without the kind (tests)
    const std::string name = api::Name(object);
    auto existing = store_.GetShared(store::ObjectKey{(*def)->Resource(), api::Namespace(object), name});
    if (existing.ok()) continue;
    if (existing.status().code() != Code::kNotFound) return existing.status();
    api::WriteRequest wr;
    wr.operation = api::Operation::kCreate;
    wr.object = std::move(object);
    wr.lookup = &lookup_;
    auto admitted = pipeline_.Admit(std::move(wr));
    if (!admitted.ok()) {
      return admitted.status().WithContext("creating " + (*def)->names.singular + " " + name);
    }
    auto created = store_.Create((*def)->Resource(), std::move(admitted->object));
    if (!created.ok() && created.status().code() != Code::kAlreadyExists) return created.status();
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------

ApiServer::ApiServer(const api::Registry& registry, const api::AdmissionPipeline& pipeline, store::Store& store,
                     Clock& clock, ApiServerOptions options)
    : impl_(std::make_unique<Impl>(registry, pipeline, store, clock, options)) {
  if (options.metrics_registry) impl_->request_metrics_ = std::make_unique<RequestMetrics>(*options.metrics_registry);
  impl_->http_ =
      std::make_unique<HttpServer>(options.http, [this](const HttpRequest& req) { return impl_->Handle(req); });
}

ApiServer::~ApiServer() { Stop(); }

Status ApiServer::Start() {
  BERTH_RETURN_IF_ERROR(impl_->EnsureSystemNamespaces());
  BERTH_RETURN_IF_ERROR(impl_->EnsureSystemObjects());
  if (impl_->options().garbage_collector) BERTH_RETURN_IF_ERROR(impl_->gc().Start());
  BERTH_RETURN_IF_ERROR(impl_->http_->Start());
  impl_->StartHousekeeping();
  return Status::Ok();
}

uint16_t ApiServer::port() const { return impl_->http_->port(); }

HttpServerStats ApiServer::TransportStats() const { return impl_->http_->Stats(); }

void ApiServer::Stop() {
  impl_->pump().Stop();
  impl_->http_->Stop();  // ends every stream and WebSocket: follows and sessions end with their clients
  impl_->streams().Stop();
  if (impl_->node_proxy()) impl_->node_proxy()->Stop();
  impl_->gc().Stop();
  impl_->StopHousekeeping();
}

HandlerResult ApiServer::Handle(const HttpRequest& request) { return impl_->Handle(request); }

void ApiServer::RegisterPodLogSource(const std::string& node_name, client::PodLogSource* source) {
  impl_->streams().RegisterLogSource(node_name, source);
}

void ApiServer::UnregisterPodLogSource(const std::string& node_name) {
  impl_->streams().UnregisterLogSource(node_name);
}

void ApiServer::RegisterContainerExecutor(const std::string& node_name, client::ContainerExecutor* executor) {
  impl_->streams().RegisterExecutor(node_name, executor);
}

void ApiServer::UnregisterContainerExecutor(const std::string& node_name) {
  impl_->streams().UnregisterExecutor(node_name);
}

void ApiServer::RegisterNonResourceHandler(std::string path_prefix, NonResourceHandler handler) {
  while (path_prefix.size() > 1 && path_prefix.back() == '/') path_prefix.pop_back();
  auto& handlers = impl_->extra_handlers_;
  handlers.emplace_back(std::move(path_prefix), std::move(handler));
  std::stable_sort(handlers.begin(), handlers.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

Status ApiServer::EnsureSystemNamespaces() { return impl_->EnsureSystemNamespaces(); }

}  // namespace berth::apiserver
