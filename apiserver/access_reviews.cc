#include "apiserver/access_reviews.h"

#include <algorithm>
#include <utility>

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

// The attributes a review's spec asks about.
StatusOr<rbac::RequestAttributes> ReviewedAttributes(const api::Object& spec, authn::UserInfo user) {
  rbac::RequestAttributes a;
  a.user = std::move(user);
  const api::Object& resource = api::ObjectAt(spec, "resourceAttributes");
  const api::Object& non_resource = api::ObjectAt(spec, "nonResourceAttributes");
  const bool has_resource = spec.is_object() && spec.contains("resourceAttributes");
  const bool has_non_resource = spec.is_object() && spec.contains("nonResourceAttributes");
  if (has_resource == has_non_resource) {
    return InvalidError(has_resource ? "spec.nonResourceAttributes: Invalid value: \"null\": cannot be specified "
                                       "in combination with resourceAttributes"
                                     : "spec.resourceAttributes: Required value: exactly one of "
                                       "nonResourceAttributes or resourceAttributes must be specified");
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
  body["apiVersion"] = std::string(info.api_group) + "/v1";
  if (info.resource == "selfsubjectreviews") {
    body["kind"] = "SelfSubjectReview";
    body["metadata"] = api::Object{{"creationTimestamp", nullptr}};
    body["status"] = api::Object{{"userInfo", UserInfoJson(requester)}};
    return Created(body);
  }
  if (!body.contains("metadata") || !body["metadata"].is_object()) body["metadata"] = api::Object::object();
  body["metadata"]["creationTimestamp"] = nullptr;
  const api::Object& spec = api::ObjectAt(body, "spec");
  if (info.resource == "selfsubjectrulesreviews") {
    body["kind"] = "SelfSubjectRulesReview";
    const std::string ns = api::StringAt(spec, "namespace");
    if (ns.empty()) {
      return StatusResponse(
          InvalidError("SelfSubjectRulesReview.authorization.k8s.io \"\" is invalid: spec.namespace: "
                       "Required value: no namespace on request"));
    }
    body["status"] = RulesReviewStatus(requester, ns, authorizer);
    return Created(body);
  }
  authn::UserInfo subject = requester;
  if (info.resource == "selfsubjectaccessreviews") {
    body["kind"] = "SelfSubjectAccessReview";
  } else {
    body["kind"] = namespaced ? "LocalSubjectAccessReview" : "SubjectAccessReview";
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
    if (subject.name.empty() && subject.groups.empty()) {
      return StatusResponse(InvalidError(std::string(namespaced ? "LocalSubjectAccessReview" : "SubjectAccessReview") +
                                         ".authorization.k8s.io \"\" is invalid: spec.user: Invalid value: \"\": at "
                                         "least one of user or group must be specified"));
    }
  }
  auto attributes = ReviewedAttributes(spec, subject);
  if (!attributes.ok()) {
    return StatusResponse(InvalidError(api::StringAt(body, "kind") +
                                       ".authorization.k8s.io \"\" is invalid: " + attributes.status().message()));
  }
  if (namespaced) {
    if (!attributes->ns.empty() && attributes->ns != info.namespace_) {
      return StatusResponse(
          InvalidError("LocalSubjectAccessReview.authorization.k8s.io \"\" is invalid: "
                       "spec.resourceAttributes.namespace: Invalid value: \"" +
                       attributes->ns + "\": must match metadata.namespace"));
    }
    attributes->ns = info.namespace_;
    body["metadata"]["namespace"] = info.namespace_;
  }
  const rbac::Decision d = Authorize(authorizer, *attributes);
  api::Object status = {{"allowed", d.allowed}};
  if (!d.reason.empty()) status["reason"] = d.reason;
  body["status"] = std::move(status);
  return Created(body);
}

}  // namespace berth::apiserver
