// Indexer: the thread-safe, indexed object cache behind an informer, as
// client-go's cache.Indexer / threadSafeMap.
//
// Objects are stored by key: "namespace/name" for namespaced objects, "name"
// for cluster-scoped ones (client-go's MetaNamespaceKeyFunc). Stored objects
// are immutable and shared (ObjectPtr): readers get the same document the
// informer received, never a copy, and must not modify it.
//
// Named indexes map an index value to the keys of the objects whose IndexFunc
// returned that value (a function may return several values, or none). The
// built-in functions cover the common cases:
//   kNamespaceIndex ("namespace")   metadata.namespace
//   LabelIndexFunc("kueue.x-k8s.io/queue-name")  the label's value (absent: not indexed)
//   OwnerUidIndexFunc()             every metadata.ownerReferences[].uid
// Indexes are kept up to date on every write; adding an index to a cache that
// already holds objects indexes them at once.
//
// Ordering: List, ListKeys and ByIndex return objects sorted by key (byte-wise),
// so callers iterate deterministically.
//
// Thread-safety: every method may be called from any thread (readers share a
// lock; writers are exclusive). IndexFuncs run with the lock held: they must be
// pure and must not call back into the Indexer.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/object.h"
#include "client/client.h"
#include "core/status.h"

namespace berth::client {

// The values an object is indexed under.
using IndexFunc = std::function<std::vector<std::string>(const api::Object&)>;

inline constexpr char kNamespaceIndex[] = "namespace";
std::vector<std::string> NamespaceIndexFunc(const api::Object& obj);
IndexFunc LabelIndexFunc(std::string label_key);
IndexFunc OwnerUidIndexFunc();

// "namespace/name", or "name" when the object has no namespace.
std::string MetaNamespaceKey(const api::Object& obj);
std::string MetaNamespaceKey(std::string_view ns, std::string_view name);
// The inverse: {"ns", "name"} or {"", "name"}.
std::pair<std::string, std::string> SplitMetaNamespaceKey(std::string_view key);

class Indexer {
 public:
  Indexer() = default;
  Indexer(const Indexer&) = delete;
  Indexer& operator=(const Indexer&) = delete;

  // Adds a named index. kAlreadyExists when the name is taken.
  Status AddIndex(const std::string& name, IndexFunc fn);

  // Inserts or replaces the object under its key; returns the previous one
  // (nullptr when there was none).
  ObjectPtr Upsert(ObjectPtr obj);
  // Removes the key; returns the removed object (nullptr when absent).
  ObjectPtr Remove(const std::string& key);
  // Replaces the whole content.
  void Replace(const std::vector<ObjectPtr>& objects);

  ObjectPtr Get(const std::string& key) const;
  ObjectPtr Get(std::string_view ns, std::string_view name) const;
  std::vector<ObjectPtr> List() const;
  std::vector<std::string> ListKeys() const;
  size_t Size() const;

  // Objects whose index `index_name` holds `value`. kNotFound for an unknown index.
  StatusOr<std::vector<ObjectPtr>> ByIndex(const std::string& index_name,
                                           const std::string& value) const;
  StatusOr<std::vector<std::string>> IndexKeys(const std::string& index_name,
                                               const std::string& value) const;
  // How many objects index `index_name` holds under `value`, without copying
  // them. kNotFound for an unknown index.
  StatusOr<size_t> IndexCount(const std::string& index_name, const std::string& value) const;
  // Every value of the index that some object holds, sorted.
  StatusOr<std::vector<std::string>> IndexValues(const std::string& index_name) const;

 private:
  struct Index {
    IndexFunc fn;
    std::map<std::string, std::set<std::string>> keys_by_value;
  };
  void IndexLocked(Index& index, const std::string& key, const api::Object& obj, bool add);
  void UpdateIndexesLocked(const std::string& key, const api::Object* old_obj,
                           const api::Object* new_obj);

  mutable std::shared_mutex mu_;
  std::map<std::string, ObjectPtr> items_;
  std::map<std::string, Index> indexes_;
};

}  // namespace berth::client
