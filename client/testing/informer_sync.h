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
#include <iostream>
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

// Prints, to stderr, how `inf`'s cache differs from what `client` lists: the
// keys only one side holds, the resourceVersions that differ, and whether its
// notifications are delivered. The diagnosis of a failed WaitForCachesToMatch.
inline void ReportMismatch(Client& client, Informer& inf) {
  auto list = client.List(inf.resource());
  std::map<std::string, std::string> want, have;
  if (list.ok()) {
    for (const auto& o : list.value().items) want[MetaNamespaceKey(o)] = api::ResourceVersion(o);
  }
  for (const auto& o : inf.GetIndexer().List()) have[MetaNamespaceKey(*o)] = api::ResourceVersion(*o);
  std::cerr << "informer " << inf.resource().gvr.String() << ": cache does not match the list (list rv "
            << (list.ok() ? list.value().resource_version : list.status().ToString()) << ", informer rv "
            << inf.LastSyncResourceVersion() << ", delivered " << inf.NotificationsDelivered() << ")\n";
  for (const auto& [key, rv] : want) {
    auto it = have.find(key);
    if (it == have.end()) {
      std::cerr << "  missing from the cache: " << key << " rv " << rv << "\n";
    } else if (it->second != rv) {
      std::cerr << "  stale in the cache: " << key << " rv " << it->second << ", listed " << rv << "\n";
    }
  }
  for (const auto& [key, rv] : have) {
    if (!want.count(key)) std::cerr << "  only in the cache: " << key << " rv " << rv << "\n";
  }
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
    if (!matched) {
      ReportMismatch(client, *inf);
      return false;
    }
  }
  return true;
}

}  // namespace berth::client::testing
