// Helpers for tests that drive controllers synchronously over FakeClient:
// informer options that react within milliseconds, and a wait until every
// informer cache matches what the server lists (the precondition of a
// deterministic reconcile round).
//
// The wait is bounded real time (30 s per informer at most) and asserts
// nothing about timing: a cache that never catches up makes the caller's
// next assertion fail, and WaitForCachesToMatch returns false.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"
#include "client/indexer.h"
#include "client/informer.h"

namespace berth::client::testing {

inline InformerOptions FastInformerOptions() {
  InformerOptions o;
  o.clock_poll_interval = std::chrono::milliseconds(5);
  o.min_backoff = std::chrono::milliseconds(5);
  return o;
}

// True when each informer's cache holds exactly the objects, at the same
// resourceVersions, that `client` lists for its resource, and every change in
// it has been delivered to its handlers (which run after the cache is updated).
inline bool WaitForCachesToMatch(Client& client, const std::vector<Informer*>& informers) {
  for (Informer* inf : informers) {
    bool matched = false;
    // Bounded by real time, not by a count of tries: under a loaded machine (CI's two cores
    // running the e2e tests beside) one try can take far longer than its millisecond.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!matched && std::chrono::steady_clock::now() < deadline) {
      auto list = client.List(inf->resource());
      if (!list.ok()) return false;
      std::map<std::string, std::string> want, have;
      for (const auto& o : list.value().items) want[MetaNamespaceKey(o)] = api::ResourceVersion(o);
      for (const auto& o : inf->GetIndexer().List()) have[MetaNamespaceKey(*o)] = api::ResourceVersion(*o);
      matched = want == have && inf->NotificationsDelivered();
      if (!matched) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!matched) return false;
  }
  return true;
}

}  // namespace berth::client::testing
