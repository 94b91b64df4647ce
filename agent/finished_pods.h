// FinishedPods: the node agent's record of the pods that are terminal in the API
// and have nothing left running on this node (no worker), kept so that the
// housekeeping pass neither restarts them nor reads them again.
//
// A node keeps its finished pods until the Job's TTL or the terminated-pod GC
// deletes them, so they are most of what the agent's informer caches; the
// housekeeping pass (every 2 s, as the kubelet's housekeepingPeriod) visits
// every cached pod. Each entry holds the cached object (client::ObjectPtr, an
// immutable revision) it was last seen as, so the pass recognises an unchanged
// finished pod by the object's address alone, without reading its JSON: while
// the entry holds the object, no other object can take that address, so a new
// pod (or a new revision of this one) never matches. A changed revision is
// looked up by uid and re-pointed (Mark).
//
// An entry remembers whether its pod was terminal and marked for deletion when
// last seen (`deleting`): the agent deletes such a pod on every pass until the
// API has it gone, as the kubelet retries its final status and delete.
//
// The agent owns a finished pod's status: when another client writes a
// different phase over it (Running over Succeeded, say), the agent keeps the
// terminal revision held (See, not Mark) and writes its status back
// (node_agent.cc, as the kubelet status manager's needsReconcile). A cached
// revision older than the held one (api/resource_version.h) is the informer
// not yet showing the agent's own terminal write, not another client's: the
// entry keeps the held revision and nothing is written.
//
// Costs: Find/FindObject/See/Mark O(1) expected; ForgetUnseen O(1) when every
// entry was seen, else O(entries), reading only the entries. Memory per
// finished pod: one entry (uid, a shared pointer, a pass number, a flag), its
// address-index node, and the revision it holds, which stays alive until a
// pass sees the pod's next revision or forgets the pod.
//
// Thread-safety: none; the agent's loop owns it (under its workers_mu_).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "api/object.h"
#include "client/client.h"

namespace berth::agent {

class FinishedPods {
 public:
  struct Entry {
    std::string uid;
    client::ObjectPtr object;  // the revision last seen; may be null (none seen)
    uint64_t seen_pass = 0;    // the last agent pass that saw the pod cached (set by See, Mark)
    bool deleting = false;     // `object` is terminal and has a deletionTimestamp
  };

  // The entry whose last seen revision is `object` itself (by address), or null.
  // Reads nothing of the object.
  Entry* FindObject(const api::Object* object);
  // The entry of `uid`, or null.
  Entry* Find(const std::string& uid);
  bool Contains(const std::string& uid) const { return by_uid_.contains(uid); }
  // Records `uid` as finished, last seen in `pass` as `object`, which is
  // `deleting` (terminal with a deletionTimestamp; the caller reads it). A null
  // `object` keeps the revision and `deleting` the entry holds, if any.
  Entry& Mark(const std::string& uid, client::ObjectPtr object, uint64_t pass, bool deleting);
  // Records that `pass` saw the entry's pod cached.
  void See(Entry& entry, uint64_t pass);
  // Forgets the entries `pass` did not see (seen_pass != pass): their pods left
  // the API. Returns how many were forgotten. O(1) when `pass` saw them all
  // (and saw no entry of an earlier pass afterwards: passes only grow).
  size_t ForgetUnseen(uint64_t pass);

  size_t size() const { return by_uid_.size(); }

 private:
  // Removes the entry's address slot if it is the entry's.
  void Unindex(const Entry& entry);

  std::unordered_map<std::string, Entry> by_uid_;
  // Address of an entry's held revision -> that entry (node-based map: stable);
  // a slot always names an entry holding that very object.
  std::unordered_map<const api::Object*, Entry*> by_object_;
  // How many entries pass `counted_pass_` has seen.
  uint64_t counted_pass_ = 0;
  size_t seen_in_counted_pass_ = 0;
};

}  // namespace berth::agent
