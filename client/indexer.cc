#include "client/indexer.h"

#include <mutex>

namespace berth::client {

std::vector<std::string> NamespaceIndexFunc(const api::Object& obj) {
  const std::string& ns = api::Namespace(obj);
  if (ns.empty()) return {};
  return {ns};
}

IndexFunc LabelIndexFunc(std::string label_key) {
  return [key = std::move(label_key)](const api::Object& obj) -> std::vector<std::string> {
    auto m = obj.find("metadata");
    if (m == obj.end() || !m->is_object()) return {};
    auto labels = m->find("labels");
    if (labels == m->end() || !labels->is_object()) return {};
    auto v = labels->find(key);
    if (v == labels->end() || !v->is_string()) return {};
    return {v->get<std::string>()};
  };
}

IndexFunc OwnerUidIndexFunc() {
  return [](const api::Object& obj) -> std::vector<std::string> {
    std::vector<std::string> uids;
    auto m = obj.find("metadata");
    if (m == obj.end() || !m->is_object()) return uids;
    auto refs = m->find("ownerReferences");
    if (refs == m->end() || !refs->is_array()) return uids;
    for (const auto& r : *refs) {
      if (r.is_object() && r.contains("uid") && r["uid"].is_string()) uids.push_back(r["uid"].get<std::string>());
    }
    return uids;
  };
}

std::string MetaNamespaceKey(std::string_view ns, std::string_view name) {
  if (ns.empty()) return std::string(name);
  std::string key(ns);
  key += '/';
  key += name;
  return key;
}

std::string MetaNamespaceKey(const api::Object& obj) {
  return MetaNamespaceKey(api::Namespace(obj), api::Name(obj));
}

std::pair<std::string, std::string> SplitMetaNamespaceKey(std::string_view key) {
  auto slash = key.find('/');
  if (slash == std::string_view::npos) return {"", std::string(key)};
  return {std::string(key.substr(0, slash)), std::string(key.substr(slash + 1))};
}

void Indexer::IndexLocked(Index& index, const std::string& key, const api::Object& obj, bool add) {
  for (const std::string& value : index.fn(obj)) {
    if (add) {
      index.keys_by_value[value].insert(key);
    } else {
      auto it = index.keys_by_value.find(value);
      if (it == index.keys_by_value.end()) continue;
      it->second.erase(key);
      if (it->second.empty()) index.keys_by_value.erase(it);
    }
  }
}

void Indexer::UpdateIndexesLocked(const std::string& key, const api::Object* old_obj,
                                  const api::Object* new_obj) {
  for (auto& [name, index] : indexes_) {
    if (old_obj) IndexLocked(index, key, *old_obj, /*add=*/false);
    if (new_obj) IndexLocked(index, key, *new_obj, /*add=*/true);
  }
}

Status Indexer::AddIndex(const std::string& name, IndexFunc fn) {
  std::unique_lock l(mu_);
  if (indexes_.count(name)) return AlreadyExistsError("indexer conflict: " + name);
  Index& index = indexes_[name];
  index.fn = std::move(fn);
  for (const auto& [key, obj] : items_) IndexLocked(index, key, *obj, /*add=*/true);
  return Status::Ok();
}

ObjectPtr Indexer::Upsert(ObjectPtr obj) {
  std::string key = MetaNamespaceKey(*obj);
  std::unique_lock l(mu_);
  ObjectPtr& slot = items_[key];
  ObjectPtr old = std::move(slot);
  UpdateIndexesLocked(key, old.get(), obj.get());
  slot = std::move(obj);
  return old;
}

ObjectPtr Indexer::Remove(const std::string& key) {
  std::unique_lock l(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return nullptr;
  ObjectPtr old = std::move(it->second);
  items_.erase(it);
  UpdateIndexesLocked(key, old.get(), nullptr);
  return old;
}

void Indexer::Replace(const std::vector<ObjectPtr>& objects) {
  std::unique_lock l(mu_);
  items_.clear();
  for (auto& [name, index] : indexes_) index.keys_by_value.clear();
  for (const auto& obj : objects) {
    std::string key = MetaNamespaceKey(*obj);
    auto [it, inserted] = items_.emplace(key, obj);
    if (!inserted) {
      UpdateIndexesLocked(key, it->second.get(), nullptr);
      it->second = obj;
    }
    UpdateIndexesLocked(key, nullptr, obj.get());
  }
}

ObjectPtr Indexer::Get(const std::string& key) const {
  std::shared_lock l(mu_);
  auto it = items_.find(key);
  return it == items_.end() ? nullptr : it->second;
}

ObjectPtr Indexer::Get(std::string_view ns, std::string_view name) const {
  return Get(MetaNamespaceKey(ns, name));
}

std::vector<ObjectPtr> Indexer::List() const {
  std::shared_lock l(mu_);
  std::vector<ObjectPtr> out;
  out.reserve(items_.size());
  for (const auto& [key, obj] : items_) out.push_back(obj);
  return out;
}

std::vector<std::string> Indexer::ListKeys() const {
  std::shared_lock l(mu_);
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const auto& [key, obj] : items_) out.push_back(key);
  return out;
}

size_t Indexer::Size() const {
  std::shared_lock l(mu_);
  return items_.size();
}

StatusOr<std::vector<std::string>> Indexer::IndexKeys(const std::string& index_name,
                                                      const std::string& value) const {
  std::shared_lock l(mu_);
  auto idx = indexes_.find(index_name);
  if (idx == indexes_.end()) return NotFoundError("Index with name " + index_name + " does not exist");
  auto it = idx->second.keys_by_value.find(value);
  if (it == idx->second.keys_by_value.end()) return std::vector<std::string>{};
  return std::vector<std::string>(it->second.begin(), it->second.end());
}

StatusOr<size_t> Indexer::IndexCount(const std::string& index_name, const std::string& value) const {
  std::shared_lock l(mu_);
  auto idx = indexes_.find(index_name);
  if (idx == indexes_.end()) return NotFoundError("Index with name " + index_name + " does not exist");
  auto it = idx->second.keys_by_value.find(value);
  return it == idx->second.keys_by_value.end() ? size_t{0} : it->second.size();
}

StatusOr<std::vector<ObjectPtr>> Indexer::ByIndex(const std::string& index_name,
                                                  const std::string& value) const {
  std::shared_lock l(mu_);
  auto idx = indexes_.find(index_name);
  if (idx == indexes_.end()) return NotFoundError("Index with name " + index_name + " does not exist");
  std::vector<ObjectPtr> out;
  auto it = idx->second.keys_by_value.find(value);
  if (it == idx->second.keys_by_value.end()) return out;
  for (const auto& key : it->second) out.push_back(items_.at(key));
  return out;
}

StatusOr<std::vector<std::string>> Indexer::IndexValues(const std::string& index_name) const {
  std::shared_lock l(mu_);
  auto idx = indexes_.find(index_name);
  if (idx == indexes_.end()) return NotFoundError("Index with name " + index_name + " does not exist");
  std::vector<std::string> out;
  for (const auto& [value, keys] : idx->second.keys_by_value) out.push_back(value);
  return out;
}

}  // namespace berth::client
