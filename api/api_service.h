// A group-version served by a delegate instead of the API server's generic
// storage: what kube-aggregator's APIService registers
// (staging/src/k8s.io/kube-aggregator/pkg/apis/apiregistration/v1/types.go).
// Kueue's visibility API (visibility.kueue.x-k8s.io, pkg/visibility/server.go)
// is one: an aggregated server answering from the Kueue controller's queues.
//
// The API server lists the group in discovery after every group of the
// Registry (an APIService's groupPriorityMinimum below the CRDs' 1000, as
// Kueue's visibility APIService sets 100), parses its requests as resource
// requests, authenticates and authorizes them, and hands them to the
// delegate (apiserver/api_server.h ApiService).
//
// Thread-safety: plain data.
#pragma once

#include <string>
#include <vector>

namespace berth::api {

// One resource or subresource as discovery lists it (metav1.APIResource).
struct ApiServiceResource {
  std::string name;      // "clusterqueues" or "clusterqueues/pendingworkloads"
  std::string singular;  // "" for a subresource
  std::string kind;
  bool namespaced = false;
  std::vector<std::string> verbs;  // may be empty, as for a resource only its subresources serve
};

struct ApiServiceDescription {
  std::string group;
  std::vector<std::string> versions;          // most preferred first
  std::vector<ApiServiceResource> resources;  // the same in every version
};

}  // namespace berth::api
