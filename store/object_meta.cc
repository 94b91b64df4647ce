#include "store/object_meta.h"

#include "core/ids.h"

#include <algorithm>
#include <chrono>
#include <string>

namespace berth::store {
namespace {

api::Object& Metadata(api::Object& obj) {
  api::Object& meta = obj["metadata"];
  if (!meta.is_object()) meta = api::Object::object();
  return meta;
}

const api::Object* FindMetadataField(const api::Object& obj, const char* field) {
  auto m = obj.find("metadata");
  if (m == obj.end() || !m->is_object()) return nullptr;
  auto f = m->find(field);
  return f == m->end() ? nullptr : &*f;
}

const api::Object* FindField(const api::Object* meta, const char* field) {
  if (meta == nullptr) return nullptr;
  auto f = meta->find(field);
  return f == meta->end() ? nullptr : &*f;
}

// Copies <field> from from_meta (null: no metadata) into to_meta, or erases it
// when from_meta has none. A value that is already equal is left alone (the
// usual case: clients send back what they read), so no string is copied.
void CopyField(const api::Object* from_meta, api::Object& to_meta, const char* field) {
  const api::Object* v = FindField(from_meta, field);
  auto it = to_meta.find(field);
  if (v == nullptr) {
    if (it != to_meta.end()) to_meta.erase(it);
  } else if (it == to_meta.end()) {
    to_meta.emplace(field, *v);
  } else if (*it != *v) {
    *it = *v;
  }
}

int64_t IntField(const api::Object* v, int64_t fallback) {
  return v != nullptr && v->is_number_integer() ? v->get<int64_t>() : fallback;
}

bool IsTopLevelMetaField(const std::string& key) {
  return key == "apiVersion" || key == "kind" || key == "metadata" || key == "status";
}

}  // namespace

void StampCreate(api::Object& obj, Time now) {
  api::Object& meta = Metadata(obj);
  // A uid the admission pipeline assigned (api/admission_pipeline.h) is kept.
  auto uid = meta.find("uid");
  if (uid == meta.end() || !uid->is_string() || uid->get_ref<const std::string&>().empty()) meta["uid"] = NewUid();
  meta["creationTimestamp"] = FormatRfc3339(now);
  meta["generation"] = 1;
  meta.erase("resourceVersion");
  meta.erase("deletionTimestamp");
  meta.erase("deletionGracePeriodSeconds");
}

bool StampUpdate(const api::Object& stored, api::Object& obj) {
  api::Object& meta = Metadata(obj);
  auto m = stored.find("metadata");
  const api::Object* stored_meta = m != stored.end() && m->is_object() ? &*m : nullptr;
  for (const char* field :
       {"uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion"}) {
    CopyField(stored_meta, meta, field);
  }
  const bool spec_changed = SpecChanged(stored, obj);
  const int64_t generation = IntField(FindField(stored_meta, "generation"), 0) + (spec_changed ? 1 : 0);
  auto g = meta.find("generation");
  if (g == meta.end()) {
    meta.emplace("generation", generation);
  } else if (!g->is_number_integer() || g->get<int64_t>() != generation) {
    *g = generation;
  }
  return spec_changed;
}

bool SpecChanged(const api::Object& a, const api::Object& b) {
  // Both are sorted maps: walk them together.
  auto ia = a.begin(), ib = b.begin();
  while (ia != a.end() || ib != b.end()) {
    if (ia != a.end() && IsTopLevelMetaField(ia.key())) { ++ia; continue; }
    if (ib != b.end() && IsTopLevelMetaField(ib.key())) { ++ib; continue; }
    if (ia == a.end() || ib == b.end()) return true;
    if (ia.key() != ib.key() || *ia != *ib) return true;
    ++ia;
    ++ib;
  }
  return false;
}

bool SameOutsideSpec(const api::Object& a, const api::Object& b) {
  for (const char* field : {"apiVersion", "kind", "metadata", "status"}) {
    auto ia = a.find(field), ib = b.find(field);
    const bool in_a = ia != a.end(), in_b = ib != b.end();
    if (in_a != in_b || (in_a && *ia != *ib)) return false;
  }
  return true;
}

void SetResourceVersion(api::Object& obj, int64_t revision) {
  Metadata(obj)["resourceVersion"] = std::to_string(revision);
}

bool HasFinalizers(const api::Object& obj) {
  const api::Object* f = FindMetadataField(obj, "finalizers");
  return f != nullptr && f->is_array() && !f->empty();
}

DeletePlan PlanDelete(const api::Object& stored, std::optional<int64_t> grace_period_seconds,
                      Time now) {
  const int64_t grace = std::max<int64_t>(0, grace_period_seconds.value_or(0));
  const bool finalizers = HasFinalizers(stored);
  const bool marked = FindMetadataField(stored, "deletionTimestamp") != nullptr;
  DeletePlan plan;
  if (!finalizers && grace == 0) {
    plan.action = DeletePlan::Action::kRemove;
    return plan;
  }
  if (marked) {
    // Already being deleted: only a shorter grace period changes anything
    // (rest.BeforeDelete never extends a deadline).
    const int64_t current = IntField(FindMetadataField(stored, "deletionGracePeriodSeconds"), 0);
    if (grace >= current) return plan;  // kNothing
    Time deadline = now + std::chrono::seconds(grace);
    Time existing;
    const api::Object* ts = FindMetadataField(stored, "deletionTimestamp");
    plan.action = DeletePlan::Action::kMark;
    plan.marked = stored;
    api::Object& meta = Metadata(plan.marked);
    if (!(ts != nullptr && ts->is_string() && ParseRfc3339(ts->get<std::string>(), &existing) &&
          existing <= deadline)) {
      meta["deletionTimestamp"] = FormatRfc3339(deadline);
    }
    meta["deletionGracePeriodSeconds"] = grace;
    return plan;
  }
  plan.action = DeletePlan::Action::kMark;
  plan.marked = stored;
  api::Object& meta = Metadata(plan.marked);
  meta["deletionTimestamp"] = FormatRfc3339(now + std::chrono::seconds(grace));
  meta["deletionGracePeriodSeconds"] = grace;
  return plan;
}

bool ShouldRemoveOnUpdate(const api::Object& stored, const api::Object& updated) {
  if (HasFinalizers(updated)) return false;
  if (FindMetadataField(stored, "deletionTimestamp") == nullptr) return false;
  return IntField(FindMetadataField(stored, "deletionGracePeriodSeconds"), 0) == 0;
}

}  // namespace berth::store
