#include "agent/pod_admission.h"

#include <algorithm>
#include <optional>

#include "api/unstructured.h"
#include "placement/model.h"
#include "scheduling/host_images.h"
#include "scheduling/pod_requests.h"

namespace berth::agent {
namespace {

placement::ResourceList DecodeResources(const api::Object& list) {
  placement::ResourceList out;
  if (!list.is_object()) return out;
  for (auto it = list.begin(); it != list.end(); ++it) {
    const api::Object& v = it.value();
    StatusOr<Quantity> q = Quantity::Parse(v.is_string() ? v.get<std::string>() : v.dump());
    if (q.ok()) out.Set(it.key(), *q);
  }
  return out;
}

// scheduling::PodRequests of the pod as stored.
placement::ResourceList PodRequests(const api::Object& pod) {
  scheduling::PodResources<placement::ResourceList> r;
  const api::Object& spec = api::Field(pod, "spec");
  for (const char* list : {"initContainers", "containers"}) {
    for (const api::Object& c : api::ArrayAt(spec, list)) {
      scheduling::ContainerResources<placement::ResourceList> cr;
      cr.requests = DecodeResources(api::NestedField(c, {"resources", "requests"}));
      cr.limits = DecodeResources(api::NestedField(c, {"resources", "limits"}));
      cr.restart_always = api::StringAt(c, "restartPolicy") == "Always";
      (std::string_view(list) == "containers" ? r.containers : r.init_containers).push_back(std::move(cr));
    }
  }
  r.overhead = DecodeResources(api::Field(spec, "overhead"));
  return scheduling::PodRequests(r);
}

// v1helper.IsExtendedResourceName: outside kubernetes.io/, with a '/', and not a
// quota "requests." name.
bool IsExtendedResource(std::string_view name) {
  if (name.find('/') == std::string_view::npos) return false;
  if (name.starts_with("requests.")) return false;
  const std::string_view domain = name.substr(0, name.find('/'));
  return domain != "kubernetes.io" && !domain.ends_with(".kubernetes.io");
}

// schedutil.IsScalarResourceName, the resources Fits tracks besides cpu, memory
// and ephemeral-storage.
bool IsScalarResource(std::string_view name) {
  return name.find('/') != std::string_view::npos || name.starts_with("hugepages-");
}

int64_t Amount(std::string_view resource, Quantity q) { return resource == "cpu" ? q.milli() : q.Value(); }

PodAdmitResult Insufficient(std::string_view resource, int64_t requested, int64_t used, int64_t capacity) {
  PodAdmitResult r;
  r.admit = false;
  r.reason = "OutOf" + std::string(resource);
  r.message = "Node didn't have enough resource: " + std::string(resource) +
              ", requested: " + std::to_string(requested) + ", used: " + std::to_string(used) +
              ", capacity: " + std::to_string(capacity);
  return r;
}

}  // namespace

PodAdmitResult AdmitPodResources(const api::Object& pod, const std::vector<const api::Object*>& admitted,
                                 const ResourceList& allocatable) {
  auto allocatable_of = [&](std::string_view name) -> std::optional<Quantity> {
    auto it = allocatable.find(name);
    return it == allocatable.end() ? std::nullopt : std::optional<Quantity>(it->second);
  };
  const int64_t max_pods = allocatable_of("pods").value_or(Quantity()).Value();
  if (static_cast<int64_t>(admitted.size()) + 1 > max_pods) {
    return Insufficient("pods", 1, static_cast<int64_t>(admitted.size()), max_pods);
  }
  placement::ResourceList request = PodRequests(pod);
  placement::ResourceList used;
  for (const api::Object* other : admitted) used.AddAll(PodRequests(*other));
  std::vector<std::string> order = {"cpu", "memory", "ephemeral-storage"};
  for (const auto& [name, q] : request.items()) {
    if (!IsScalarResource(name)) continue;
    if (IsExtendedResource(name) && !allocatable_of(name)) continue;  // removeMissingExtendedResources
    order.push_back(name);
  }
  for (const std::string& name : order) {
    const Quantity want = request.Get(name);
    if (want.IsZero()) continue;
    const int64_t requested = Amount(name, want);
    const int64_t in_use = Amount(name, used.Get(name));
    const int64_t capacity = Amount(name, allocatable_of(name).value_or(Quantity()));
    if (requested > capacity - in_use) return Insufficient(name, requested, in_use, capacity);
  }
  return {};
}

PodAdmitResult AdmitPodImages(const api::Object& pod, const std::string& node_name,
                              const std::optional<std::vector<std::string>>& host_images) {
  if (!host_images) return {};
  std::vector<std::string> images;
  for (const char* list : {"initContainers", "containers"}) {
    const api::Object& cs = api::NestedField(pod, {"spec", list});
    if (!cs.is_array()) continue;
    for (const api::Object& c : cs) images.push_back(api::NestedString(c, {"image"}));
  }
  std::optional<std::string> image = scheduling::FirstUnsupportedImage(host_images, images);
  if (!image) return {};
  return {false, std::string(scheduling::kHostImageRejectReason), HostImageRefusal(*image, node_name, host_images)};
}

std::string HostImageRefusal(const std::string& image, const std::string& node_name,
                             const std::optional<std::vector<std::string>>& host_images) {
  if (!host_images || scheduling::HostImageAllowed(*host_images, image)) return "";
  return "image \"" + image + "\" is not one the node " + node_name + " runs on its host (" +
         std::string(scheduling::kHostImagesAnnotation) + ": " + scheduling::FormatHostImages(*host_images) + ")";
}

}  // namespace berth::agent
