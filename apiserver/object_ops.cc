#include "apiserver/object_ops.h"

#include <charconv>

#include "api/limits.h"
#include "api/patch.h"
#include "api/selectors.h"
#include "api/yaml_codec.h"

namespace berth::apiserver {

using nlohmann::json;

namespace {

std::string_view MediaType(std::string_view content_type) {
  std::string_view t = content_type.substr(0, content_type.find(';'));
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  return t;
}

}  // namespace

StatusOr<PatchType> ParsePatchType(std::string_view content_type) {
  std::string_view t = MediaType(content_type);
  if (t == "application/json-patch+json") return PatchType::kJson;
  if (t == "application/merge-patch+json") return PatchType::kMerge;
  if (t == "application/strategic-merge-patch+json") return PatchType::kStrategicMerge;
  if (t == "application/apply-patch+yaml" || t == "application/apply-patch+cbor") return PatchType::kApply;
  return UnsupportedMediaError(
      "the body of the request was in an unknown format - accepted media types include: "
      "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml");
}

StatusOr<json> ApplyPatch(PatchType type, const api::StrategicMergeSchema* strategic_schema,
                          const json& live, std::string_view patch) {
  if (type == PatchType::kStrategicMerge && strategic_schema == nullptr) {
    return UnsupportedMediaError(
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml");
  }
  json p;
  if (type == PatchType::kApply) {
    auto parsed = api::ParseJsonOrYaml(patch);
    if (!parsed.ok()) return BadRequestError(parsed.status().message());
    p = std::move(parsed).value();
  } else {
    auto parsed = api::ParseJson(patch);
    if (!parsed.ok()) return BadRequestError("error decoding patch: " + parsed.status().message());
    p = std::move(parsed).value();
  }
  switch (type) {
    case PatchType::kJson: {
      if (p.is_array() && p.size() > api::kMaxJsonPatchOperations) {
        return TooLargeError("The allowed maximum operations in a JSON patch is " +
                             std::to_string(api::kMaxJsonPatchOperations) + ", got " + std::to_string(p.size()));
      }
      auto patched = api::ApplyJsonPatch(live, p);
      if (!patched.ok() && patched.status().code() == Code::kInvalid) {
        return InvalidError("the server rejected our request due to an error in our request",
                            {StatusCause{"", "", patched.status().message()}});
      }
      return patched;
    }
    case PatchType::kStrategicMerge:
      return api::ApplyStrategicMergePatch(live, p, *strategic_schema);
    case PatchType::kMerge:
    case PatchType::kApply:
      if (!p.is_object()) return BadRequestError("error decoding patch: the patch is not a JSON object");
      return api::ApplyMergePatch(live, p);
  }
  return live;
}

namespace {

// The field labels a kind supports beyond metadata.name and metadata.namespace
// (upstream: each registry's GetAttrs / a CRD's selectableFields), and the
// object path each reads. Sorted by kind.
struct FieldLabel {
  std::string_view group, kind, label, path;
};
constexpr FieldLabel kFieldLabels[] = {
    {"", "Event", "involvedObject.apiVersion", "involvedObject.apiVersion"},
    {"", "Event", "involvedObject.fieldPath", "involvedObject.fieldPath"},
    {"", "Event", "involvedObject.kind", "involvedObject.kind"},
    {"", "Event", "involvedObject.name", "involvedObject.name"},
    {"", "Event", "involvedObject.namespace", "involvedObject.namespace"},
    {"", "Event", "involvedObject.resourceVersion", "involvedObject.resourceVersion"},
    {"", "Event", "involvedObject.uid", "involvedObject.uid"},
    {"", "Event", "reason", "reason"},
    {"", "Event", "reportingComponent", "reportingComponent"},
    {"", "Event", "source", "source.component"},
    {"", "Event", "type", "type"},
    {"", "Namespace", "status.phase", "status.phase"},
    {"", "Node", "spec.unschedulable", "spec.unschedulable"},
    {"", "Pod", "spec.nodeName", "spec.nodeName"},
    {"", "Pod", "spec.restartPolicy", "spec.restartPolicy"},
    {"", "Pod", "spec.schedulerName", "spec.schedulerName"},
    {"", "Pod", "spec.serviceAccountName", "spec.serviceAccountName"},
    {"", "Pod", "status.nominatedNodeName", "status.nominatedNodeName"},
    {"", "Pod", "status.phase", "status.phase"},
    {"", "Pod", "status.podIP", "status.podIP"},
    // events.k8s.io/v1 Events are core Events (resources/events.k8s.io/events.yaml): their
    // labels read the core fields (pkg/apis/events/v1/conversion.go).
    {"events.k8s.io", "Event", "reason", "reason"},
    {"events.k8s.io", "Event", "regarding.apiVersion", "involvedObject.apiVersion"},
    {"events.k8s.io", "Event", "regarding.fieldPath", "involvedObject.fieldPath"},
    {"events.k8s.io", "Event", "regarding.kind", "involvedObject.kind"},
    {"events.k8s.io", "Event", "regarding.name", "involvedObject.name"},
    {"events.k8s.io", "Event", "regarding.namespace", "involvedObject.namespace"},
    {"events.k8s.io", "Event", "regarding.resourceVersion", "involvedObject.resourceVersion"},
    {"events.k8s.io", "Event", "regarding.uid", "involvedObject.uid"},
    {"events.k8s.io", "Event", "reportingController", "reportingComponent"},
    {"events.k8s.io", "Event", "source", "source.component"},
    {"events.k8s.io", "Event", "type", "type"},
    {"kueue.x-k8s.io", "Workload", "status.admission.clusterQueue", "status.admission.clusterQueue"},
};

}  // namespace

StatusOr<store::Predicate> BuildPredicate(std::string_view group, std::string_view kind,
                                          std::string_view label_selector,
                                          std::string_view field_selector) {
  BERTH_ASSIGN_OR_RETURN(api::LabelSelector labels, api::LabelSelector::Parse(label_selector));
  BERTH_ASSIGN_OR_RETURN(api::FieldSelector fields, api::FieldSelector::Parse(field_selector));
  // Check every field label and rewrite it to the object path it reads.
  std::vector<api::FieldRequirement> terms;
  for (const auto& req : fields.requirements()) {
    api::FieldRequirement term = req;
    if (req.field != "metadata.name" && req.field != "metadata.namespace") {
      bool found = false;
      for (const auto& fl : kFieldLabels) {
        if (fl.group == group && fl.kind == kind && fl.label == req.field) {
          term.field = std::string(fl.path);
          found = true;
        }
      }
      if (!found) return BadRequestError("field label not supported: " + req.field);
    }
    terms.push_back(std::move(term));
  }
  if (labels.IsEverything() && terms.empty()) return store::Predicate{};
  return store::Predicate([labels = std::move(labels), terms = std::move(terms)](const api::Object& obj) {
    if (!labels.IsEverything() && !labels.MatchesObject(obj)) return false;
    for (const auto& t : terms) {
      if (!t.Matches(obj)) return false;
    }
    return true;
  });
}

int64_t GracePeriodFor(std::string_view group, std::string_view kind, const api::Object& obj,
                       std::optional<int64_t> requested) {
  if (!group.empty() || kind != "Pod") return 0;
  int64_t grace = 30;
  if (requested) {
    grace = *requested;
  } else if (auto spec = obj.find("spec"); spec != obj.end() && spec->is_object()) {
    auto g = spec->find("terminationGracePeriodSeconds");
    if (g != spec->end() && g->is_number_integer()) grace = g->get<int64_t>();
  }
  std::string node, phase;
  if (auto spec = obj.find("spec"); spec != obj.end() && spec->is_object()) node = spec->value("nodeName", "");
  if (auto st = obj.find("status"); st != obj.end() && st->is_object()) phase = st->value("phase", "");
  if (node.empty() || phase == "Succeeded" || phase == "Failed") return 0;
  if (grace < 0) return 1;
  return grace;
}

StatusOr<int64_t> ParseResourceVersion(std::string_view rv) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), v);
  if (rv.empty() || ec != std::errc() || p != rv.data() + rv.size() || v < 0) {
    return BadRequestError("invalid resource version \"" + std::string(rv) + "\"");
  }
  return v;
}

}  // namespace berth::apiserver
