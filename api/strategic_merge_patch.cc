#include "api/strategic_merge_patch.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

namespace berth::api {

namespace {

using ListField = StrategicMergeSchema::ListField;
using ListTable = std::map<std::string, ListField, std::less<>>;

// ---------------------------------------------------------------------------
// The list tables: k8s.io/api struct tags (patchStrategy / patchMergeKey) of the
// types the built-in kinds are made of. One function per upstream type, called
// with the path prefix where the type appears, so PodSpec is written once for a
// Pod ("spec.") and a Job's pod template ("spec.template.spec.").

void AddObjectMeta(const std::string& p, ListTable* t) {
  t->emplace(p + "finalizers", ListField{""});
  t->emplace(p + "ownerReferences", ListField{"uid"});
}

void AddContainer(const std::string& p, ListTable* t) {
  t->emplace(p + "ports", ListField{"containerPort"});
  t->emplace(p + "env", ListField{"name"});
  t->emplace(p + "volumeMounts", ListField{"mountPath"});
  t->emplace(p + "volumeDevices", ListField{"devicePath"});
}

void AddPodSpec(const std::string& p, ListTable* t) {
  // volumes and resourceClaims are "merge,retainKeys": retainKeys only matters
  // when a client computes a patch; applying honours any $retainKeys given.
  t->emplace(p + "volumes", ListField{"name"});
  for (const char* list : {"containers", "initContainers", "ephemeralContainers"}) {
    t->emplace(p + list, ListField{"name"});
    AddContainer(p + list + ".", t);
  }
  t->emplace(p + "imagePullSecrets", ListField{"name"});
  t->emplace(p + "hostAliases", ListField{"ip"});
  t->emplace(p + "topologySpreadConstraints", ListField{"topologyKey"});
  t->emplace(p + "schedulingGates", ListField{"name"});
  t->emplace(p + "resourceClaims", ListField{"name"});
  // tolerations, readinessGates, hostAliases[].hostnames: atomic.
}

void AddPodStatus(const std::string& p, ListTable* t) {
  t->emplace(p + "conditions", ListField{"type"});
  t->emplace(p + "podIPs", ListField{"ip"});
  t->emplace(p + "hostIPs", ListField{"ip"});
  t->emplace(p + "resourceClaimStatuses", ListField{"name"});
  // containerStatuses and friends: atomic.
}

ListTable BuildTable(std::string_view group, std::string_view kind) {
  ListTable t;
  AddObjectMeta("metadata.", &t);
  if (group.empty() && kind == "Pod") {
    AddPodSpec("spec.", &t);
    AddPodStatus("status.", &t);
  } else if (group.empty() && kind == "Node") {
    t.emplace("spec.podCIDRs", ListField{""});
    t.emplace("status.conditions", ListField{"type"});
    t.emplace("status.addresses", ListField{"type"});
    // spec.taints, status.images, status.volumesAttached: atomic.
  } else if (group.empty() && kind == "Namespace") {
    t.emplace("status.conditions", ListField{"type"});
  } else if (group.empty() && kind == "Service") {
    t.emplace("spec.ports", ListField{"port"});
    t.emplace("status.conditions", ListField{"type"});
  } else if (group == "batch" && kind == "Job") {
    AddObjectMeta("spec.template.metadata.", &t);
    AddPodSpec("spec.template.spec.", &t);
    t.emplace("status.conditions", ListField{"type"});
  }
  // Event, ConfigMap, PriorityClass, Lease and anything else: metadata only.
  return t;
}

// ---------------------------------------------------------------------------
// Applying a patch.

constexpr std::string_view kDirectiveMarker = "$patch";
constexpr std::string_view kRetainKeys = "$retainKeys";
constexpr std::string_view kDeleteFromPrimitiveList = "$deleteFromPrimitiveList/";
constexpr std::string_view kSetElementOrder = "$setElementOrder/";

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

std::string Child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

Status ErrBadPatchType(const Object& directive, const Object& map) {
  std::string d = directive.is_string() ? directive.get<std::string>() : directive.dump();
  return BadRequestError("unknown patch type: " + d + " in map: " + map.dump());
}
Status ErrNoMergeKey(const Object& map, std::string_view key) {
  return BadRequestError("map: " + map.dump() + " does not contain declared merge key: " + std::string(key));
}
Status ErrRetainKeys() { return BadRequestError("invalid patch format of retainKeys"); }
Status ErrPrimitiveList() { return BadRequestError("invalid patch format of primitive list"); }
Status ErrSetElementOrder() { return BadRequestError("invalid patch format of setElementOrder list"); }
Status ErrNotAList(std::string_view field, const Object& value) {
  return BadRequestError("expected a list for " + std::string(field) + ", but received a " + value.type_name());
}

// The value an element is ordered and matched by: its merge key for maps, itself
// for primitives. Missing keys read as null (as Go's map lookup gives nil).
const Object& KeyOf(const Object& item, const std::string& merge_key) {
  static const Object kNull;
  if (merge_key.empty()) return item;
  if (!item.is_object()) return kNull;
  auto it = item.find(merge_key);
  return it == item.end() ? kNull : *it;
}

// Index of `item` in `list` by KeyOf, or npos.
std::size_t IndexIn(const Object& list, const Object& item, const std::string& merge_key) {
  const Object& key = KeyOf(item, merge_key);
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (KeyOf(list[i], merge_key) == key) return i;
  }
  return std::string::npos;
}

bool IsDeleteElement(const Object& item) {
  if (!item.is_object()) return false;
  auto it = item.find(kDirectiveMarker);
  return it != item.end() && *it == "delete";
}

// Stable sort of `items` by their position in `order` (items not in it keep
// their place after those that are).
std::vector<Object> SortByOrder(std::vector<Object> items, const Object& order, const std::string& merge_key) {
  std::stable_sort(items.begin(), items.end(), [&](const Object& a, const Object& b) {
    return IndexIn(order, a, merge_key) < IndexIn(order, b, merge_key);
  });
  return items;
}

// upstream normalizeElementOrder + mergeSortedSlice: patch items in patch order,
// server-only items in live order, interleaved where the live order decides.
Object NormalizeElementOrder(std::vector<Object> patch_items, std::vector<Object> server_only,
                             const Object& patch_order, const Object& server_order,
                             const std::string& merge_key) {
  patch_items = SortByOrder(std::move(patch_items), patch_order, merge_key);
  server_only = SortByOrder(std::move(server_only), server_order, merge_key);
  Object out = Object::array();
  std::size_t i = 0, j = 0;
  while (i < server_only.size() || j < patch_items.size()) {
    if (i >= server_only.size()) {
      out.push_back(std::move(patch_items[j++]));
    } else if (j >= patch_items.size()) {
      out.push_back(std::move(server_only[i++]));
    } else {
      std::size_t li = IndexIn(server_order, server_only[i], merge_key);
      std::size_t ri = IndexIn(server_order, patch_items[j], merge_key);
      if (li != std::string::npos && ri != std::string::npos && li < ri) {
        out.push_back(std::move(server_only[i++]));
      } else {
        out.push_back(std::move(patch_items[j++]));
      }
    }
  }
  return out;
}

// Splits `merged` into the items present in `by` and the others.
Status Partition(const Object& merged, const Object& by, const std::string& merge_key,
                 std::vector<Object>* in, std::vector<Object>* out) {
  for (const Object& v : merged) {
    if (!merge_key.empty()) {
      if (!v.is_object()) return BadRequestError("list element types are not identical: " + merged.dump());
      if (!v.contains(merge_key)) return ErrNoMergeKey(v, merge_key);
    }
    (IndexIn(by, v, merge_key) == std::string::npos ? out : in)->push_back(v);
  }
  return Status::Ok();
}

// Every element an object, or none: upstream refuses mixed lists and lists of lists.
StatusOr<bool> ElementsAreMaps(const Object& a, const Object& b) {
  int maps = 0, others = 0;
  for (const Object* list : {&a, &b}) {
    for (const Object& v : *list) {
      if (v.is_array()) return BadRequestError("lists of lists are not supported");
      (v.is_object() ? maps : others)++;
    }
  }
  if (maps > 0 && others > 0) {
    return BadRequestError("list element types are not identical: " + a.dump() + ", " + b.dump());
  }
  return maps > 0;
}

// upstream validatePatchWithSetOrderList: the patch's elements must appear in
// the $setElementOrder list, in the same relative order.
Status ValidateSetElementOrder(const Object& patch_list, const Object& order, const std::string& merge_key) {
  if (order.empty() || patch_list.empty()) return Status::Ok();
  std::vector<const Object*> non_delete;
  for (const Object& v : patch_list) {
    if (!merge_key.empty() && !v.is_object()) return BadRequestError("list element types are not identical");
    if (!merge_key.empty() && IsDeleteElement(v)) continue;
    non_delete.push_back(&v);
  }
  std::size_t pi = 0, oi = 0;
  while (pi < non_delete.size() && oi < order.size()) {
    const Object& item = *non_delete[pi];
    if (item.is_object() && item.contains(kDirectiveMarker)) {
      ++pi;
      continue;
    }
    if (!merge_key.empty()) {
      if (!item.contains(merge_key)) return ErrNoMergeKey(item, merge_key);
      if (!order[oi].is_object() || !order[oi].contains(merge_key)) return ErrNoMergeKey(order[oi], merge_key);
    }
    if (KeyOf(item, merge_key) == KeyOf(order[oi], merge_key)) ++pi;
    ++oi;
  }
  if (pi < non_delete.size() && oi >= order.size()) {
    return BadRequestError("The order in patch list:\n" + patch_list.dump() + "\n doesn't match " +
                           std::string(kSetElementOrder.substr(0, kSetElementOrder.size() - 1)) +
                           " list:\n" + order.dump() + "\n");
  }
  return Status::Ok();
}

class Merger {
 public:
  explicit Merger(const StrategicMergeSchema& schema) : schema_(schema) {}

  StatusOr<Object> MergeMap(Object original, Object patch, const std::string& path) const {
    if (auto d = patch.find(kDirectiveMarker); d != patch.end()) {
      if (*d == "replace") {
        patch.erase(d);
        return MergeMap(Object::object(), std::move(patch), path);
      }
      if (*d == "delete") return Object::object();
      if (*d != "merge") return ErrBadPatchType(*d, patch);
      patch.erase(d);
    }
    if (!original.is_object()) original = Object::object();
    BERTH_RETURN_IF_ERROR(ApplyRetainKeys(&original, &patch));
    BERTH_RETURN_IF_ERROR(ApplySetElementOrder(&original, &patch, path));

    for (auto& [key, value] : patch.items()) {
      std::string field = key;
      const bool delete_list = StartsWith(key, kDeleteFromPrimitiveList);
      if (delete_list) {
        field = key.substr(kDeleteFromPrimitiveList.size());
        if (field.empty()) return ErrPrimitiveList();
      }
      if (value.is_null()) {
        original.erase(field);
        continue;
      }
      if (delete_list) {
        if (!value.is_array()) return ErrPrimitiveList();
        auto it = original.find(field);
        if (it == original.end() || !it->is_array()) continue;
        Object kept = Object::array();
        for (Object& v : *it) {
          if (std::find(value.begin(), value.end(), v) == value.end()) kept.push_back(std::move(v));
        }
        *it = std::move(kept);
        continue;
      }
      const std::string child = Child(path, field);
      auto it = original.find(field);
      if (it != original.end() && it->is_object() && value.is_object()) {
        BERTH_ASSIGN_OR_RETURN(*it, MergeMap(std::move(*it), std::move(value), child));
      } else if (it != original.end() && it->is_array() && value.is_array()) {
        if (const ListField* f = schema_.Lookup(child)) {
          BERTH_ASSIGN_OR_RETURN(*it, MergeList(std::move(*it), std::move(value), f->merge_key, child));
        } else {
          *it = std::move(value);
        }
      } else {
        // Absent, or of another type: the patch's value, its directives applied.
        BERTH_ASSIGN_OR_RETURN(original[field], Fresh(std::move(value), child));
      }
    }
    return original;
  }

 private:
  // A patch value with nothing under it: its own directives applied to an empty value.
  StatusOr<Object> Fresh(Object value, const std::string& path) const {
    if (value.is_object()) return MergeMap(Object::object(), std::move(value), path);
    if (value.is_array()) {
      if (const ListField* f = schema_.Lookup(path)) {
        return MergeList(Object::array(), std::move(value), f->merge_key, path);
      }
    }
    return value;
  }

  // upstream mergeSlice for a list with patchStrategy merge.
  StatusOr<Object> MergeList(Object original, Object patch, const std::string& merge_key,
                             const std::string& path) const {
    if (original.empty() && patch.empty()) return original;
    BERTH_ASSIGN_OR_RETURN(bool maps, ElementsAreMaps(original, patch));
    std::vector<Object> patch_items, server_only;
    if (!maps) {
      // A set of primitives: the union, without duplicates, in order.
      Object merged = Object::array();
      for (const Object* list : {&original, &patch}) {
        for (const Object& v : *list) {
          if (std::find(merged.begin(), merged.end(), v) == merged.end()) merged.push_back(v);
        }
      }
      BERTH_RETURN_IF_ERROR(Partition(merged, patch, "", &patch_items, &server_only));
      return NormalizeElementOrder(std::move(patch_items), std::move(server_only), patch, original, "");
    }
    if (merge_key.empty()) {
      return BadRequestError("cannot merge lists without merge key for " + path);
    }
    // Special elements first: deletions and replace.
    Object plain = Object::array();
    bool replace = false;
    for (Object& v : patch) {
      auto d = v.find(kDirectiveMarker);
      if (d == v.end()) {
        plain.push_back(std::move(v));
      } else if (*d == "delete") {
        auto key = v.find(merge_key);
        if (key == v.end()) return ErrNoMergeKey(v, merge_key);
        Object kept = Object::array();
        for (Object& o : original) {
          if (!o.is_object()) return BadRequestError("list element types are not identical: " + original.dump());
          auto ok = o.find(merge_key);
          if (ok == o.end() || *ok != *key) kept.push_back(std::move(o));
        }
        original = std::move(kept);
      } else if (*d == "replace") {
        replace = true;
      } else if (*d == "merge") {
        return BadRequestError("merging lists cannot yet be specified in the patch");
      } else {
        return ErrBadPatchType(*d, v);
      }
    }
    if (replace) {
      Object out = Object::array();
      for (Object& v : plain) {
        BERTH_ASSIGN_OR_RETURN(Object item, MergeMap(Object::object(), std::move(v), path));
        out.push_back(std::move(item));
      }
      return out;
    }
    Object merged = original;
    for (const Object& v : plain) {
      auto key = v.find(merge_key);
      if (key == v.end()) return ErrNoMergeKey(v, merge_key);
      bool found = false;
      for (Object& o : merged) {
        if (!o.is_object()) return BadRequestError("list element types are not identical: " + merged.dump());
        auto ok = o.find(merge_key);
        if (ok != o.end() && *ok == *key) {
          BERTH_ASSIGN_OR_RETURN(o, MergeMap(std::move(o), v, path));
          found = true;
          break;
        }
      }
      if (!found) {
        BERTH_ASSIGN_OR_RETURN(Object item, MergeMap(Object::object(), v, path));
        merged.push_back(std::move(item));
      }
    }
    BERTH_RETURN_IF_ERROR(Partition(merged, plain, merge_key, &patch_items, &server_only));
    return NormalizeElementOrder(std::move(patch_items), std::move(server_only), plain, original, merge_key);
  }

  // upstream applyRetainKeysDirective.
  static Status ApplyRetainKeys(Object* original, Object* patch) {
    auto it = patch->find(kRetainKeys);
    if (it == patch->end()) return Status::Ok();
    Object retain = std::move(*it);
    patch->erase(it);
    if (!retain.is_array()) return ErrRetainKeys();
    std::set<std::string> keys;
    for (const Object& k : retain) {
      if (k.is_string()) keys.insert(k.get<std::string>());
    }
    for (const auto& [k, v] : patch->items()) {
      if (v.is_null() || StartsWith(k, kDeleteFromPrimitiveList) || StartsWith(k, kSetElementOrder)) continue;
      if (!keys.contains(k)) return ErrRetainKeys();
    }
    for (auto o = original->begin(); o != original->end();) {
      o = keys.contains(o.key()) ? std::next(o) : original->erase(o);
    }
    return Status::Ok();
  }

  // upstream mergePatchIntoOriginal: merges each list that has a
  // $setElementOrder directive and puts it in the directive's order.
  Status ApplySetElementOrder(Object* original, Object* patch, const std::string& path) const {
    std::vector<std::string> directives;
    for (const auto& [k, v] : patch->items()) {
      if (StartsWith(k, kSetElementOrder)) directives.push_back(k);
    }
    for (const std::string& directive : directives) {
      Object order = std::move((*patch)[directive]);
      patch->erase(directive);
      if (!order.is_array()) return ErrSetElementOrder();
      const std::string field = directive.substr(kSetElementOrder.size());
      if (field.empty()) return ErrSetElementOrder();
      const std::string child = Child(path, field);
      const ListField* f = schema_.Lookup(child);
      const std::string merge_key = f ? f->merge_key : "";
      auto orig_it = original->find(field);
      auto patch_it = patch->find(field);
      const bool in_original = orig_it != original->end();
      const bool in_patch = patch_it != patch->end();
      if (in_original && !orig_it->is_array()) return ErrNotAList(field, *orig_it);
      if (in_patch && !patch_it->is_array()) return ErrNotAList(field, *patch_it);
      if (!in_original && !in_patch) continue;
      const Object original_list = in_original ? *orig_it : Object::array();
      Object patch_list = in_patch ? std::move(*patch_it) : Object::array();
      if (in_patch) patch->erase(field);
      BERTH_RETURN_IF_ERROR(ValidateSetElementOrder(patch_list, order, merge_key));
      Object merged;
      if (!in_patch) {
        merged = original_list;
      } else if (f != nullptr) {
        BERTH_ASSIGN_OR_RETURN(merged, MergeList(original_list, std::move(patch_list), merge_key, child));
      } else {
        merged = std::move(patch_list);
      }
      std::vector<Object> patch_items, server_only;
      BERTH_RETURN_IF_ERROR(Partition(merged, order, merge_key, &patch_items, &server_only));
      (*original)[field] =
          NormalizeElementOrder(std::move(patch_items), std::move(server_only), order, original_list, merge_key);
    }
    return Status::Ok();
  }

  const StrategicMergeSchema& schema_;
};

}  // namespace

const StrategicMergeSchema& StrategicMergeSchema::ForKind(std::string_view group, std::string_view kind) {
  struct Known {
    std::string_view group, kind;
  };
  static constexpr Known kKnown[] = {{"", "Pod"},     {"", "Node"},    {"", "Namespace"},
                                     {"", "Service"}, {"batch", "Job"}};
  static const std::map<std::pair<std::string, std::string>, StrategicMergeSchema> kSchemas = [] {
    std::map<std::pair<std::string, std::string>, StrategicMergeSchema> m;
    for (const Known& k : kKnown) {
      m.emplace(std::make_pair(std::string(k.group), std::string(k.kind)),
                StrategicMergeSchema(BuildTable(k.group, k.kind)));
    }
    return m;
  }();
  static const StrategicMergeSchema kMetadataOnly(BuildTable("", ""));
  auto it = kSchemas.find(std::make_pair(std::string(group), std::string(kind)));
  return it == kSchemas.end() ? kMetadataOnly : it->second;
}

const StrategicMergeSchema::ListField* StrategicMergeSchema::Lookup(std::string_view path) const {
  auto it = lists_.find(path);
  return it == lists_.end() ? nullptr : &it->second;
}

StatusOr<Object> ApplyStrategicMergePatch(const Object& original, const Object& patch,
                                          const StrategicMergeSchema& schema) {
  if (!patch.is_object()) {
    return BadRequestError("strategic merge patch must be a JSON object, got " + std::string(patch.type_name()));
  }
  return Merger(schema).MergeMap(original.is_object() ? original : Object::object(), patch, "");
}

}  // namespace berth::api
