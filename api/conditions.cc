#include "api/conditions.h"

#include "api/unstructured.h"

namespace berth::api {

const Object* FindCondition(const Object& obj, std::string_view type) {
  auto st = obj.find("status");
  if (st == obj.end() || !st->is_object()) return nullptr;
  auto conds = st->find("conditions");
  if (conds == st->end() || !conds->is_array()) return nullptr;
  for (const Object& c : *conds) {
    if (StringAt(c, "type") == type) return &c;
  }
  return nullptr;
}

bool IsConditionTrue(const Object& obj, std::string_view type) {
  const Object* c = FindCondition(obj, type);
  return c != nullptr && c->value("status", "") == "True";
}

std::string ConditionField(const Object& obj, std::string_view type, std::string_view key) {
  const Object* c = FindCondition(obj, type);
  return c == nullptr ? std::string() : StringAt(*c, key);
}

std::optional<Time> ConditionTransitionTime(const Object& obj, std::string_view type) {
  const Object* c = FindCondition(obj, type);
  if (c == nullptr) return std::nullopt;
  Time t;
  if (!ParseRfc3339(c->value("lastTransitionTime", ""), &t)) return std::nullopt;
  return t;
}

namespace {

// metadata.generation when the condition kind records it and the object has one.
std::optional<int64_t> ObservedGeneration(const Object& obj, ConditionKind kind) {
  if (kind != ConditionKind::kMetaV1) return std::nullopt;
  if (auto m = obj.find("metadata"); m != obj.end() && m->is_object()) {
    if (auto g = m->find("generation"); g != m->end() && g->is_number_integer()) return g->get<int64_t>();
  }
  return std::nullopt;
}

}  // namespace

bool ConditionHolds(const Object& obj, const Condition& c, ConditionKind kind) {
  const Object* existing = FindCondition(obj, c.type);
  if (existing == nullptr || existing->value("status", "") != c.status || existing->value("reason", "") != c.reason ||
      existing->value("message", "") != c.message) {
    return false;
  }
  if (std::optional<int64_t> generation = ObservedGeneration(obj, kind)) {
    auto og = existing->find("observedGeneration");
    return og != existing->end() && og->is_number_integer() && og->get<int64_t>() == *generation;
  }
  return true;
}

bool SetCondition(Object* obj, const Condition& c, Time now, ConditionKind kind) {
  const std::optional<int64_t> generation = ObservedGeneration(*obj, kind);
  Object& status = (*obj)["status"];
  if (!status.is_object()) status = Object::object();
  Object& conds = status["conditions"];
  if (!conds.is_array()) conds = Object::array();
  for (Object& existing : conds) {
    if (!existing.is_object() || StringAt(existing, "type") != c.type) continue;
    Object updated = existing;
    if (StringAt(updated, "status") != c.status) {
      updated["status"] = c.status;
      updated["lastTransitionTime"] = FormatRfc3339(now);
    }
    updated["reason"] = c.reason;
    updated["message"] = c.message;
    if (generation) updated["observedGeneration"] = *generation;
    if (updated == existing) return false;
    existing = std::move(updated);
    return true;
  }
  Object added = {{"type", c.type},
                  {"status", c.status},
                  {"reason", c.reason},
                  {"message", c.message},
                  {"lastTransitionTime", FormatRfc3339(now)}};
  if (generation) added["observedGeneration"] = *generation;
  conds.push_back(std::move(added));
  return true;
}

bool RemoveCondition(Object* obj, std::string_view type) {
  auto st = obj->find("status");
  if (st == obj->end() || !st->is_object()) return false;
  auto conds = st->find("conditions");
  if (conds == st->end() || !conds->is_array()) return false;
  for (auto it = conds->begin(); it != conds->end(); ++it) {
    if (it->is_object() && it->value("type", "") == type) {
      conds->erase(it);
      return true;
    }
  }
  return false;
}

}  // namespace berth::api
