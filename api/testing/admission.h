// Test helpers: a create or update through the default admission pipeline (every kind's
// schema and strategy, offline: no cluster lookups) and the causes of a refused write.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "api/admission_pipeline.h"
#include "api/registry.h"
#include "api/strategy.h"

namespace berth::api::testing {

inline StatusOr<AdmittedWrite> AdmitCreate(Object obj) {
  AdmissionPipeline pipeline(Registry::Default(), StrategyRegistry::Default());
  WriteRequest req;
  req.operation = Operation::kCreate;
  req.object = std::move(obj);
  return pipeline.Admit(std::move(req));
}

// `stored` is the object as stored, `body` the update's body; `operation` kUpdate or
// kUpdateStatus.
inline StatusOr<AdmittedWrite> AdmitUpdate(const Object& stored, Object body,
                                           Operation operation = Operation::kUpdate) {
  AdmissionPipeline pipeline(Registry::Default(), StrategyRegistry::Default());
  WriteRequest req;
  req.operation = operation;
  req.object = std::move(body);
  req.old = &stored;
  return pipeline.Admit(std::move(req));
}

// "<field>: <message>" of each cause of a refused write, in order; empty when admitted.
inline std::vector<std::string> CauseStrings(const StatusOr<AdmittedWrite>& w) {
  std::vector<std::string> out;
  if (w.ok()) return out;
  for (const StatusCause& c : w.status().causes()) out.push_back(c.field + ": " + c.message);
  return out;
}

}  // namespace berth::api::testing
