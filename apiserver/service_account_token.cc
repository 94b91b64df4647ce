#include "apiserver/service_account_token.h"

#include <algorithm>
#include <utility>

#include "api/field_errors.h"
#include "api/unstructured.h"
#include "core/ids.h"
#include "core/logging.h"

namespace berth::apiserver {
namespace {

using nlohmann::json;

const api::GroupResource kServiceAccounts{"", "serviceaccounts"};
const api::GroupResource kPods{"", "pods"};
const api::GroupResource kSecrets{"", "secrets"};
const api::GroupResource kNodes{"", "nodes"};

Status Unauthorized(const std::string& reason) { return Status(Code::kUnauthorized, reason); }

// Whether an object counts as deleted at `now`: its deletionTimestamp lies more than the
// leeway in the past (claims.go invalidIfDeletedBefore).
bool DeletedBefore(const api::Object& obj, Time now) {
  const std::string ts = api::NestedString(obj, {"metadata", "deletionTimestamp"});
  Time t;
  return !ts.empty() && ParseRfc3339(ts, &t) && t < now - authn::kTokenLeeway;
}

std::string Uid(const api::Object& obj) { return api::NestedString(obj, {"metadata", "uid"}); }

}  // namespace

std::vector<std::string> ServiceAccountTokenOptions::Audiences() const {
  if (!api_audiences.empty()) return api_audiences;
  return {issuer};
}

StatusOr<json> ServiceAccountTokens::CreateToken(const std::string& ns, const std::string& name,
                                                 const json& request) const {
  if (!enabled()) return NotFoundError("the server could not find the requested resource");
  // The body decodes as a TokenRequest (a JSON object whose spec is an object
  // or null) and names no other namespace (rest.EnsureObjectNamespaceMatchesRequestNamespace).
  const json& spec = api::Field(request, "spec");
  if (!request.is_object() || !(spec.is_object() || spec.is_null())) {
    return BadRequestError(std::string("TokenRequest in version \"v1\" cannot be handled as a TokenRequest: json: ") +
                           "cannot unmarshal " + (request.is_object() ? "spec" : "body") +
                           " into Go value of type v1.TokenRequest");
  }
  if (const std::string body_ns = api::NestedString(request, {"metadata", "namespace"});
      !body_ns.empty() && body_ns != ns) {
    return BadRequestError("the namespace of the provided object does not match the namespace sent on the request");
  }
  int64_t seconds = kDefaultTokenExpirationSeconds;
  if (const json& e = api::Field(spec, "expirationSeconds"); e.is_number_integer()) seconds = e.get<int64_t>();
  api::FieldErrorList errs;
  const api::FieldPath exp_path = api::FieldPath("spec").Child("expirationSeconds");
  if (seconds < kMinTokenExpirationSeconds) {
    errs.push_back(api::Invalid(exp_path, seconds, "may not specify a duration less than 10 minutes"));
  }
  if (seconds > kMaxTokenExpirationSeconds) {
    errs.push_back(api::Invalid(exp_path, seconds, "may not specify a duration larger than 2^32 seconds"));
  }
  if (!errs.empty()) return api::InvalidStatus("TokenRequest.authentication.k8s.io", "", errs);

  BERTH_ASSIGN_OR_RETURN(store::ObjectPtr sa, store_.GetShared({kServiceAccounts, ns, name}));
  authn::ServiceAccountClaims claims;
  claims.ns = ns;
  claims.service_account = {name, Uid(*sa)};
  const json& ref = api::Field(spec, "boundObjectRef");
  if (ref.is_object()) {
    const std::string kind = api::StringAt(ref, "kind");
    const std::string api_version = api::StringAt(ref, "apiVersion");
    const std::string ref_name = api::StringAt(ref, "name");
    // schema.FromAPIVersionAndKind: "v1" is the core group; "g/v" group g.
    const std::size_t slash = api_version.find('/');
    const std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
    const std::string version = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
    std::string uid;
    if (group.empty() && (kind == "Pod" || kind == "Secret" || kind == "Node")) {
      if (ref_name.empty()) return BadRequestError("resource name may not be empty");
    }
    if (group.empty() && kind == "Pod") {
      BERTH_ASSIGN_OR_RETURN(store::ObjectPtr pod, store_.GetShared({kPods, ns, ref_name}));
      if (api::NestedString(*pod, {"spec", "serviceAccountName"}) != name) {
        return BadRequestError("cannot bind token for serviceaccount \"" + name +
                               "\" to pod running with different serviceaccount name.");
      }
      uid = Uid(*pod);
      claims.pod = {ref_name, uid};
      if (std::string node = api::NestedString(*pod, {"spec", "nodeName"}); !node.empty()) {
        auto node_obj = store_.GetShared({kNodes, "", node});
        claims.node = {node, node_obj.ok() ? Uid(**node_obj) : ""};
      }
    } else if (group.empty() && kind == "Secret") {
      BERTH_ASSIGN_OR_RETURN(store::ObjectPtr secret, store_.GetShared({kSecrets, ns, ref_name}));
      uid = Uid(*secret);
      claims.secret = {ref_name, uid};
    } else if (group.empty() && kind == "Node") {
      BERTH_ASSIGN_OR_RETURN(store::ObjectPtr node, store_.GetShared({kNodes, "", ref_name}));
      uid = Uid(*node);
      claims.node = {ref_name, uid};
    } else {
      return BadRequestError("cannot bind token to object of type " + group + "/" + version + ", Kind=" + kind);
    }
    if (const std::string want = api::StringAt(ref, "uid"); !want.empty() && want != uid) {
      return ConflictError("Operation cannot be fulfilled on " + kind + " \"" + ref_name +
                           "\": the UID in the bound object reference (" + want +
                           ") does not match the UID in record. The object might have been deleted and then "
                           "recreated");
    }
  }
  std::vector<std::string> audiences;
  if (const json& a = api::Field(spec, "audiences"); a.is_array()) {
    for (const json& s : a) {
      if (s.is_string()) audiences.push_back(s.get<std::string>());
    }
  }
  if (audiences.empty()) audiences = options_.Audiences();
  if (options_.max_expiration.count() > 0 && seconds > options_.max_expiration.count()) {
    seconds = options_.max_expiration.count();
  }
  const Time now = Time(std::chrono::duration_cast<std::chrono::seconds>(clock_.Now().time_since_epoch()));
  claims.issuer = options_.issuer;
  claims.subject = authn::ServiceAccountUsername(ns, name);
  claims.audiences = audiences;
  claims.issued_at = claims.not_before = now;
  claims.expiry = now + std::chrono::seconds(seconds);
  claims.id = NewUid();
  BERTH_ASSIGN_OR_RETURN(std::string token, authn::SignServiceAccountToken(claims, options_.signing_key_pem));

  json out = {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"}};
  out["metadata"] = {{"name", name}, {"namespace", ns}, {"creationTimestamp", FormatRfc3339(now)}};
  out["spec"] = {{"audiences", audiences}, {"expirationSeconds", seconds}};
  if (ref.is_object()) out["spec"]["boundObjectRef"] = ref;
  out["status"] = {{"token", std::move(token)}, {"expirationTimestamp", FormatRfc3339(claims.expiry)}};
  return out;
}

std::optional<StatusOr<authn::UserInfo>> ServiceAccountTokens::Authenticate(std::string_view token) const {
  if (!enabled() || !authn::LooksLikeServiceAccountToken(token, options_.issuer)) return std::nullopt;
  const Time now = clock_.Now();
  auto verified =
      authn::VerifyServiceAccountToken(token, options_.public_key_pem, options_.issuer, options_.Audiences(), now);
  auto fail = [](const std::string& reason) -> StatusOr<authn::UserInfo> {
    Logger("authentication")->debug("service account token refused: {}", reason);
    return Unauthorized("Unauthorized");
  };
  if (!verified.ok()) return fail(verified.status().message());
  const authn::ServiceAccountClaims& c = *verified;
  auto sa = store_.GetShared({kServiceAccounts, c.ns, c.service_account.name});
  if (!sa.ok() || Uid(**sa) != c.service_account.uid || DeletedBefore(**sa, now)) {
    return fail("service account token has been invalidated");
  }
  if (!c.secret.empty()) {
    auto secret = store_.GetShared({kSecrets, c.ns, c.secret.name});
    if (!secret.ok() || Uid(**secret) != c.secret.uid || DeletedBefore(**secret, now)) {
      return fail("service account token has been invalidated");
    }
  }
  if (!c.pod.empty()) {
    auto pod = store_.GetShared({kPods, c.ns, c.pod.name});
    if (!pod.ok() || Uid(**pod) != c.pod.uid || DeletedBefore(**pod, now)) {
      return fail("service account token has been invalidated");
    }
  } else if (!c.node.empty()) {  // a Node-bound token
    auto node = store_.GetShared({kNodes, "", c.node.name});
    if (!node.ok() || Uid(**node) != c.node.uid || DeletedBefore(**node, now)) {
      return fail("service account token has been invalidated");
    }
  }
  authn::UserInfo user;
  user.name = c.subject;
  user.uid = c.service_account.uid;
  user.groups = {authn::kServiceAccountsGroup, std::string(authn::kServiceAccountsGroup) + ":" + c.ns};
  constexpr std::string_view kPrefix = "authentication.kubernetes.io/";
  auto extra = [&](std::string_view key, const std::string& value) {
    if (!value.empty()) user.extra[std::string(kPrefix) + std::string(key)] = {value};
  };
  extra("pod-name", c.pod.name);
  extra("pod-uid", c.pod.uid);
  extra("node-name", c.node.name);
  extra("node-uid", c.node.uid);
  if (!c.id.empty()) extra("credential-id", "JTI=" + c.id);
  return StatusOr<authn::UserInfo>(std::move(user));
}

}  // namespace berth::apiserver
