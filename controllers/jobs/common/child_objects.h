// Pieces of the objects the job kinds create: the controller ownerReference (metav1), env
// vars of the pod templates (core/v1 EnvVar).
//
// Shapes: api::Object (JSON) in the core/v1 form.
// Thread-safety: pure functions.
#pragma once

#include <string_view>

#include "api/object.h"
#include "api/unstructured.h"

namespace berth::controllers::jobs {

// The ownerReference a controller writes on the objects it creates:
// {apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true}
// (apimachinery metav1.NewControllerRef).
inline api::Object ControllerReference(const api::Object& owner) {
  return api::Object{{"apiVersion", api::StringAt(owner, "apiVersion")},
                     {"kind", api::StringAt(owner, "kind")},
                     {"name", api::Name(owner)},
                     {"uid", api::Uid(owner)},
                     {"controller", true},
                     {"blockOwnerDeletion", true}};
}

// {"name": name, "value": value}.
inline api::Object EnvVar(std::string_view name, std::string_view value) {
  return api::Object{{"name", name}, {"value", value}};
}

// {"name": name, "valueFrom": {"fieldRef": {"fieldPath": field_path}}} (downward API).
inline api::Object EnvVarFromField(std::string_view name, std::string_view field_path) {
  return api::Object{{"name", name}, {"valueFrom", {{"fieldRef", {{"fieldPath", field_path}}}}}};
}

}  // namespace berth::controllers::jobs
