#include "agent/finished_pods.h"

#include <utility>

namespace berth::agent {

FinishedPods::Entry* FinishedPods::FindObject(const api::Object* object) {
  auto it = by_object_.find(object);
  return it == by_object_.end() ? nullptr : it->second;
}

FinishedPods::Entry* FinishedPods::Find(const std::string& uid) {
  auto it = by_uid_.find(uid);
  return it == by_uid_.end() ? nullptr : &it->second;
}

FinishedPods::Entry& FinishedPods::Mark(const std::string& uid, client::ObjectPtr object, uint64_t pass,
                                        bool deleting) {
  auto [it, inserted] = by_uid_.try_emplace(uid);
  Entry& entry = it->second;
  if (inserted) entry.uid = uid;
  See(entry, pass);
  if (object == nullptr || object == entry.object) {
    if (object != nullptr) entry.deleting = deleting;
    return entry;
  }
  Unindex(entry);
  entry.object = std::move(object);
  entry.deleting = deleting;
  // An object another entry holds keeps that entry's slot; this one is found by uid.
  by_object_.try_emplace(entry.object.get(), &entry);
  return entry;
}

void FinishedPods::Unindex(const Entry& entry) {
  if (entry.object == nullptr) return;
  auto it = by_object_.find(entry.object.get());
  if (it != by_object_.end() && it->second == &entry) by_object_.erase(it);
}

void FinishedPods::See(Entry& entry, uint64_t pass) {
  if (entry.seen_pass == pass) return;
  entry.seen_pass = pass;
  if (counted_pass_ != pass) {
    counted_pass_ = pass;
    seen_in_counted_pass_ = 0;
  }
  ++seen_in_counted_pass_;
}

size_t FinishedPods::ForgetUnseen(uint64_t pass) {
  if (counted_pass_ == pass && seen_in_counted_pass_ == by_uid_.size()) return 0;
  size_t forgotten = 0;
  for (auto it = by_uid_.begin(); it != by_uid_.end();) {
    if (it->second.seen_pass == pass) {
      ++it;
      continue;
    }
    Unindex(it->second);
    it = by_uid_.erase(it);
    ++forgotten;
  }
  return forgotten;
}

}  // namespace berth::agent
