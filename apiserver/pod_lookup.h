// PodLookup: how the pod streaming servers (pod_log.h, pod_exec.h,
// pod_portforward.h, through pod_streams.h) find the pod a request names.
//
// The API server looks pods up in its store (StorePodLookup); a node agent's
// streaming server (node_streaming_server.h) in the agent's pod informer cache,
// which holds only the pods bound to that node.
//
// Returns the pod, or an error: kNotFound `pods "p" not found` when there is
// no such pod (the store's text, core/status.h); the servers answer it as a
// 404 Status with details {name, kind: pods}.
//
// Thread-safety: a PodLookup is called from any thread, concurrently; the
// object it returns is never modified (the store's and the informer's objects
// are immutable once handed out).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "api/object.h"
#include "core/status.h"
#include "store/store.h"

namespace berth::apiserver {

using PodLookup =
    std::function<StatusOr<std::shared_ptr<const api::Object>>(const std::string& ns, const std::string& name)>;

// Pods of `store` (which must outlive the lookup).
inline PodLookup StorePodLookup(store::Store& store) {
  return [&store](const std::string& ns, const std::string& name) {
    return store.GetShared({api::GroupResource{"", "pods"}, ns, name});
  };
}

// The 503 the servers answer for a pod whose node has no executor or log
// source here: its agent runs in another process, and the API server could not
// relay the request to it (node_proxy.h: the Node object is gone, or the server
// runs without a client certificate for nodes, --insecure-http). `what` names
// the request: "exec", "log", "attach", "port-forward".
inline Status NodeNotServedError(const std::string& what, const std::string& node) {
  return UnavailableError("no " + what + " source for node \"" + node +
                          "\": its agent runs in another process and cannot be reached from here (its Node is "
                          "gone, or the API server has no client certificate for nodes: --insecure-http)");
}

}  // namespace berth::apiserver
