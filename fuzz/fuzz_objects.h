// Valid objects of the kinds the fuzz targets start from (a Pod, a batch Job, a
// ConfigMap, a Kueue ClusterQueue and LocalQueue, a JobSet), each admitted once through
// the admission pipeline so that it is exactly what the API server would have stored.
//
// Thread-safety: built on first use; the fuzz targets are single-threaded.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "api/admission_pipeline.h"
#include "api/conversion.h"
#include "api/registry.h"
#include "api/strategy.h"
#include "api/yaml_codec.h"
#include "fuzz/fuzz_check.h"

namespace berth::fuzz {

inline constexpr std::string_view kSeedObjects[] = {
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default","labels":{"app":"x"},
        "annotations":{"a":"b"},"finalizers":["x/y"]},
        "spec":{"restartPolicy":"Never","nodeSelector":{"k":"v"},
        "tolerations":[{"key":"k","operator":"Exists","effect":"NoSchedule"}],
        "volumes":[{"name":"v","emptyDir":{}}],
        "containers":[{"name":"c","image":"busybox","command":["sleep","1"],
          "env":[{"name":"A","value":"1"},{"name":"B","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],
          "ports":[{"containerPort":80,"protocol":"TCP"}],"volumeMounts":[{"name":"v","mountPath":"/v"}],
          "resources":{"requests":{"cpu":"100m","memory":"64Mi"},"limits":{"cpu":"1","memory":"64Mi"}}}]}})",
    R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"default",
        "labels":{"kueue.x-k8s.io/queue-name":"lq"}},
        "spec":{"parallelism":2,"completions":4,"backoffLimit":3,"template":{"spec":{"restartPolicy":"Never",
          "containers":[{"name":"c","image":"busybox","command":["true"],
            "resources":{"requests":{"cpu":"1"}}}]}}}})",
    R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"default"},
        "data":{"a":"1","b":"two"}})",
    R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue","metadata":{"name":"cq"},
        "spec":{"namespaceSelector":{},"cohortName":"co","resourceGroups":[{"coveredResources":["cpu","memory"],
          "flavors":[{"name":"f","resources":[{"name":"cpu","nominalQuota":"5","borrowingLimit":"2"},
                                              {"name":"memory","nominalQuota":"10Gi"}]}]}]}})",
    R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"LocalQueue","metadata":{"name":"lq","namespace":"default"},
        "spec":{"clusterQueue":"cq"}})",
    R"({"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet","metadata":{"name":"js","namespace":"default"},
        "spec":{"replicatedJobs":[{"name":"w","replicas":2,"template":{"spec":{"parallelism":1,"completions":1,
          "template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}}]}})",
};

inline const api::AdmissionPipeline& Pipeline() {
  static const api::AdmissionPipeline* p =
      new api::AdmissionPipeline(api::Registry::Default(), api::StrategyRegistry::Default(), api::Convert);
  return *p;
}

// The seed objects after admission (storage version, defaulted). Aborts when one is
// refused: the fuzz target's starting point would be wrong.
inline const std::vector<api::AdmittedWrite>& SeedObjects() {
  static const std::vector<api::AdmittedWrite>* objects = [] {
    auto* out = new std::vector<api::AdmittedWrite>();
    for (std::string_view text : kSeedObjects) {
      auto obj = api::ParseJson(text);
      if (!obj.ok()) Violation("seed object does not parse: " + obj.status().ToString(), text);
      api::WriteRequest req;
      req.object = std::move(*obj);
      auto admitted = Pipeline().Admit(std::move(req));
      if (!admitted.ok()) Violation("seed object is refused: " + admitted.status().ToString(), text);
      out->push_back(std::move(*admitted));
    }
    return out;
  }();
  return *objects;
}

// An admitted object must be storable: valid UTF-8 (the store serialises it strictly),
// a JSON object with string apiVersion, kind and metadata.name.
inline void CheckStorable(const api::Object& obj, std::string_view input) {
  Check(obj.is_object(), "admitted object is not a JSON object", input);
  try {
    (void)obj.dump();
  } catch (const std::exception& e) {
    Violation(std::string("admitted object does not serialise: ") + e.what(), input);
  }
  Check(obj.contains("apiVersion") && obj["apiVersion"].is_string(), "admitted object has no apiVersion", input);
  Check(obj.contains("kind") && obj["kind"].is_string(), "admitted object has no kind", input);
}

// Admits `obj` as a create with `validation`. When admitted, checks that the object is
// storable, in the storage version of its definition, and that admitting it again as an
// unchanged update and (for kinds with a status subresource) as an unchanged status update succeeds (validation accepts
// what admission produced). A refused object is not checked further (admission answers 400/403/404/422 for valid
// reasons).
inline void AdmitChecked(api::Object obj, api::FieldValidation validation, std::string_view input) {
  api::WriteRequest create;
  create.object = std::move(obj);
  create.field_validation = validation;
  auto admitted = Pipeline().Admit(std::move(create));
  if (!admitted.ok()) return;
  CheckStorable(admitted->object, input);
  Check(admitted->definition != nullptr, "admitted without a definition", input);
  const auto& def = *admitted->definition;
  const std::string storage = (def.group.empty() ? "" : def.group + "/") + def.StorageVersion().name;
  Check(admitted->object["apiVersion"] == storage && admitted->object["kind"] == def.names.kind,
        "admitted object is not in its storage version " + storage, input);
  for (auto op : {api::Operation::kUpdate, api::Operation::kUpdateStatus}) {
    if (op == api::Operation::kUpdateStatus && !def.StorageVersion().status_subresource) continue;
    api::WriteRequest update;
    update.operation = op;
    update.object = admitted->object;
    update.old = &admitted->object;
    update.field_validation = api::FieldValidation::kStrict;
    auto again = Pipeline().Admit(std::move(update));
    Check(again.ok(), "an admitted object is refused as an unchanged update: " + again.status().ToString(), input);
  }
}

}  // namespace berth::fuzz
