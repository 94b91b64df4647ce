#include "apiserver/access_reviews.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/field_errors.h"
#include "api/unstructured.h"
#include "apiserver/authorization.h"
#include "apiserver/status_response.h"

namespace berth::apiserver {
namespace {

constexpr char kAuthentication[] = "authentication.k8s.io";
constexpr char kAuthorization[] = "authorization.k8s.io";

HttpResponse Created(const api::Object& body) {
  HttpResponse r;
  r.status = 201;
  r.body = DumpJson(body);
  return r;
}

api::Object UserInfoJson(const authn::UserInfo& user) {
  api::Object u = api::Object::object();
  u["username"] = user.name;
  if (!user.uid.empty()) u["uid"] = user.uid;
  if (!user.groups.empty()) u["groups"] = user.groups;
  if (!user.extra.empty()) {
    api::Object extra = api::Object::object();
    for (const auto& [k, v] : user.extra) extra[k] = v;
    u["extra"] = std::move(extra);
  }
  return u;
}

// The JSON type Go's decoder names in an UnmarshalTypeError.
std::string_view JsonTypeName(const api::Object& v) {
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "bool";
  if (v.is_number()) return "number";
  if (v.is_array()) return "array";
  return "object";
}

// One field of a review's Go type: its JSON name and Go type, and for a
// struct the struct's name and fields.
struct GoField {
  const char* name;
  const char* go_type;  // "string", "[]string", "map[string]v1.ExtraValue" or a struct "v1.X"
  const char* struct_name = nullptr;
  std::vector<GoField> fields = {};
};

// The first field of `value` (an object of the struct `st`) whose JSON type
// its Go type cannot hold, as the decoder words it (see CheckReviewTypes).
std::optional<std::string> FirstTypeError(const api::Object& value, const GoField& st, const std::string& path) {
  for (const GoField& f : st.fields) {
    auto it = value.find(f.name);
    if (it == value.end() || it->is_null()) continue;  // Go leaves a null field at its zero value
    const std::string p = path.empty() ? std::string(f.name) : path + "." + f.name;
    const std::string type = f.go_type;
    auto error = [&](const api::Object& v, std::string_view go_type) {
      return "json: cannot unmarshal " + std::string(JsonTypeName(v)) + " into Go struct field " + st.struct_name +
             "." + p + " of type " + std::string(go_type);
    };
    if (type == "string") {
      if (!it->is_string()) return error(*it, type);
    } else if (type == "[]string" || type == "map[string]v1.ExtraValue") {
      const bool map = type != "[]string";
      if (map ? !it->is_object() : !it->is_array()) return error(*it, type);
      for (const api::Object& item : *it) {
        if (map && !item.is_null() && !item.is_array()) return error(item, "v1.ExtraValue");
        for (const api::Object& s : map ? item : api::Object::array({item})) {
          if (!s.is_null() && !s.is_string()) return error(s, "string");
        }
      }
    } else {  // a struct
      if (!it->is_object()) return error(*it, type);
      if (auto e = FirstTypeError(*it, f, p)) return e;
    }
  }
  return std::nullopt;
}

// Strict typing of a review body (kind = its Kind), as kube-apiserver's JSON
// decoder reads it into the typed v1 struct: the first field whose JSON type
// the Go field cannot hold is a 400 (handlers/create.go transformDecodeError):
//   SelfSubjectAccessReview in version "v1" cannot be handled as a
//   SelfSubjectAccessReview: json: cannot unmarshal number into Go struct field
//   ResourceAttributes.spec.resourceAttributes.verb of type string
// (encoding/json UnmarshalTypeError: the innermost struct's name, the field's
// path from the root). Unknown fields are dropped, as upstream's default
// fieldValidation (Warn) decodes them. metadata.name/.namespace must be strings.
Status CheckReviewTypes(const std::string& kind, const api::Object& body) {
  static const GoField kResource{
      "resourceAttributes",
      "v1.ResourceAttributes",
      "ResourceAttributes",
      {{"namespace", "string"},
       {"verb", "string"},
       {"group", "string"},
       {"version", "string"},
       {"resource", "string"},
       {"subresource", "string"},
       {"name", "string"},
       {"fieldSelector", "v1.FieldSelectorAttributes", "FieldSelectorAttributes", {{"rawSelector", "string"}}},
       {"labelSelector", "v1.LabelSelectorAttributes", "LabelSelectorAttributes", {{"rawSelector", "string"}}}}};
  static const GoField kNonResource{"nonResourceAttributes",
                                    "v1.NonResourceAttributes",
                                    "NonResourceAttributes",
                                    {{"path", "string"}, {"verb", "string"}}};
  static const GoField kMeta{"metadata", "v1.ObjectMeta", "ObjectMeta", {{"name", "string"}, {"namespace", "string"}}};
  static const std::map<std::string, GoField, std::less<>> kReviews = {
      {"SelfSubjectAccessReview",
       {"",
        "",
        "SelfSubjectAccessReview",
        {kMeta, {"spec", "v1.SelfSubjectAccessReviewSpec", "SelfSubjectAccessReviewSpec", {kResource, kNonResource}}}}},
      {"SubjectAccessReview",
       {"",
        "",
        "SubjectAccessReview",
        {kMeta,
         {"spec",
          "v1.SubjectAccessReviewSpec",
          "SubjectAccessReviewSpec",
          {kResource,
           kNonResource,
           {"user", "string"},
           {"groups", "[]string"},
           {"extra", "map[string]v1.ExtraValue"},
           {"uid", "string"}}}}}},
      {"SelfSubjectRulesReview",
       {"",
        "",
        "SelfSubjectRulesReview",
        {kMeta, {"spec", "v1.SelfSubjectRulesReviewSpec", "SelfSubjectRulesReviewSpec", {{"namespace", "string"}}}}}},
      {"SelfSubjectReview", {"", "", "SelfSubjectReview", {kMeta}}},
  };
  auto it = kReviews.find(kind == "LocalSubjectAccessReview" ? std::string("SubjectAccessReview") : kind);
  if (it == kReviews.end()) return Status::Ok();
  GoField root = it->second;
  root.struct_name = kind.c_str();
  if (auto e = FirstTypeError(body, root, "")) {
    return BadRequestError(kind + " in version \"v1\" cannot be handled as a " + kind + ": " + *e);
  }
  return Status::Ok();
}

// The attributes a review's spec asks about, and ValidateSubjectAccessReviewSpec's
// errors (pkg/apis/authorization/validation/validation.go): both or neither of
// resourceAttributes and nonResourceAttributes; with `subject`, neither user
// nor groups.
rbac::RequestAttributes ReviewedAttributes(const api::Object& spec, authn::UserInfo user, bool subject,
                                           api::FieldErrorList* errors) {
  rbac::RequestAttributes a;
  a.user = std::move(user);
  const api::Object& resource = api::ObjectAt(spec, "resourceAttributes");
  const api::Object& non_resource = api::ObjectAt(spec, "nonResourceAttributes");
  const bool has_resource = !api::Field(spec, "resourceAttributes").is_null();
  const bool has_non_resource = !api::Field(spec, "nonResourceAttributes").is_null();
  const api::FieldPath path("spec");
  if (has_resource && has_non_resource) {
    errors->push_back(api::Invalid(path.Child("nonResourceAttributes"), non_resource,
                                   "cannot be specified in combination with resourceAttributes"));
  }
  if (!has_resource && !has_non_resource) {
    // Upstream passes the (nil) nonResourceAttributes pointer, which renders "null".
    errors->push_back(api::Invalid(path.Child("resourceAttributes"), "null",
                                   "exactly one of nonResourceAttributes or resourceAttributes must be specified"));
  }
  if (subject && a.user.name.empty() && a.user.groups.empty()) {
    errors->push_back(api::Invalid(path.Child("user"), "", "at least one of user or group must be specified"));
  }
  if (has_resource) {
    a.resource_request = true;
    a.ns = api::StringAt(resource, "namespace");
    a.verb = api::StringAt(resource, "verb");
    a.api_group = api::StringAt(resource, "group");
    a.api_version = api::StringAt(resource, "version");
    a.resource = api::StringAt(resource, "resource");
    a.subresource = api::StringAt(resource, "subresource");
    a.name = api::StringAt(resource, "name");
  } else {
    a.resource_request = false;
    a.path = api::StringAt(non_resource, "path");
    a.verb = api::StringAt(non_resource, "verb");
  }
  return a;
}

// AlwaysAllow (no authorizer) allows everything, as its RulesFor says; else
// RBAC's rules for the user.
api::Object RulesReviewStatus(const authn::UserInfo& user, const std::string& ns, const rbac::Authorizer* authorizer) {
  if (authorizer != nullptr) return rbac::SubjectRulesReviewStatus(*authorizer, user, ns);
  return api::Object{
      {"resourceRules",
       api::Object::array({api::Object{{"verbs", {"*"}}, {"apiGroups", {"*"}}, {"resources", {"*"}}}})},
      {"nonResourceRules", api::Object::array({api::Object{{"verbs", {"*"}}, {"nonResourceURLs", {"*"}}}})},
      {"incomplete", false}};
}

}  // namespace

bool IsAccessReview(const RequestInfo& info) {
  if (!info.is_resource_request || info.api_version != "v1") return false;
  if (info.api_group == kAuthentication) return info.resource == "selfsubjectreviews";
  if (info.api_group != kAuthorization) return false;
  return info.resource == "selfsubjectaccessreviews" || info.resource == "subjectaccessreviews" ||
         info.resource == "localsubjectaccessreviews" || info.resource == "selfsubjectrulesreviews";
}

HttpResponse ServeAccessReview(const RequestInfo& info, api::Object body, const authn::UserInfo& requester,
                               const rbac::Authorizer* authorizer) {
  const bool namespaced = info.resource == "localsubjectaccessreviews";
  if (info.verb != "create" || !info.name.empty() || !info.subresource.empty() ||
      namespaced != !info.namespace_.empty()) {
    return StatusResponse(MethodNotAllowedError("the server does not allow this method on the requested resource"));
  }
  if (!body.is_object()) body = api::Object::object();
  static const std::map<std::string, std::string, std::less<>> kKinds = {
      {"selfsubjectreviews", "SelfSubjectReview"},
      {"selfsubjectaccessreviews", "SelfSubjectAccessReview"},
      {"subjectaccessreviews", "SubjectAccessReview"},
      {"localsubjectaccessreviews", "LocalSubjectAccessReview"},
      {"selfsubjectrulesreviews", "SelfSubjectRulesReview"}};
  const std::string kind = kKinds.at(info.resource);
  if (Status typed = CheckReviewTypes(kind, body); !typed.ok()) return StatusResponse(typed);
  body["apiVersion"] = std::string(info.api_group) + "/v1";
  body["kind"] = kind;
  if (info.resource == "selfsubjectreviews") {
    body["metadata"] = api::Object{{"creationTimestamp", nullptr}};
    body["status"] = api::Object{{"userInfo", UserInfoJson(requester)}};
    return Created(body);
  }
  if (!body.contains("metadata") || !body["metadata"].is_object()) body["metadata"] = api::Object::object();
  body["metadata"]["creationTimestamp"] = nullptr;
  const api::Object& spec = api::ObjectAt(body, "spec");
  if (info.resource == "selfsubjectrulesreviews") {
    const std::string ns = api::StringAt(spec, "namespace");
    if (ns.empty()) {
      return StatusResponse(
          InvalidError("SelfSubjectRulesReview.authorization.k8s.io \"\" is invalid: spec.namespace: "
                       "Required value: no namespace on request"));
    }
    body["status"] = RulesReviewStatus(requester, ns, authorizer);
    return Created(body);
  }
  if (namespaced) {
    // The handler sets metadata.namespace from the URL, or refuses another one
    // (rest.EnsureObjectNamespaceMatchesRequestNamespace).
    const std::string body_ns = api::StringAt(body["metadata"], "namespace");
    if (!body_ns.empty() && body_ns != info.namespace_) {
      return StatusResponse(
          BadRequestError("the namespace of the provided object does not match the namespace sent on the request"));
    }
    body["metadata"]["namespace"] = info.namespace_;
  }
  authn::UserInfo subject = requester;
  const bool self = info.resource == "selfsubjectaccessreviews";
  if (!self) {
    subject = authn::UserInfo{};
    subject.name = api::StringAt(spec, "user");
    subject.uid = api::StringAt(spec, "uid");
    for (const api::Object& g : api::ArrayAt(spec, "groups")) {
      if (g.is_string()) subject.groups.push_back(g.get<std::string>());
    }
    for (const auto& [key, values] : api::ObjectAt(spec, "extra").items()) {
      for (const api::Object& v : values.is_array() ? values : api::Object::array()) {
        if (v.is_string()) subject.extra[key].push_back(v.get<std::string>());
      }
    }
  }
  api::FieldErrorList errors;
  std::optional<rbac::RequestAttributes> attributes = ReviewedAttributes(spec, subject, !self, &errors);
  if (namespaced) {
    // ValidateLocalSubjectAccessReview: the reviewed namespace is the URL's.
    const api::Object& resource = api::Field(spec, "resourceAttributes");
    if (!resource.is_null() && api::StringAt(resource, "namespace") != info.namespace_) {
      errors.push_back(api::Invalid(api::FieldPath("spec.resourceAttributes.namespace"),
                                    api::StringAt(resource, "namespace"), "must match metadata.namespace"));
    }
    const api::Object& non_resource = api::Field(spec, "nonResourceAttributes");
    if (!non_resource.is_null()) {
      errors.push_back(api::Invalid(api::FieldPath("spec.nonResourceAttributes"), non_resource,
                                    "disallowed on this kind of request"));
    }
  }
  if (!errors.empty()) return StatusResponse(api::InvalidStatus(kind + ".authorization.k8s.io", "", errors));
  const rbac::Decision d = Authorize(authorizer, *attributes);
  api::Object status = {{"allowed", d.allowed}};
  if (!d.reason.empty()) status["reason"] = d.reason;
  body["status"] = std::move(status);
  return Created(body);
}

}  // namespace berth::apiserver
