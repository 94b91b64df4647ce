// Pod host names and rendezvous ports on a host network.
//
// In a cluster, a pod with spec.hostname H and spec.subdomain S (JobSet sets
// H = "<jobset>-<replicatedJob>-<jobIndex>-<podIndex>", S = the JobSet name;
// the Training Operator uses "<job>-master-0" under a Service of the job's
// name) is reachable as "H.S", "H.S.<ns>", "H.S.<ns>.svc" and
// "H.S.<ns>.svc.cluster.local" through the headless Service's DNS. A pod
// without spec.hostname uses its metadata.name as H. berth runs pods on the
// host network without cluster DNS, so the agent rewrites such names found in
// env values (PET_MASTER_ADDR=trainjob-node-0-0.trainjob, MASTER_ADDR,
// "--rdzv_endpoint=h.s:29500" style values) to the address of the node that
// runs the named pod, before the container starts.
//
// Service names too: the Training Operator (PyTorchJob) sets
// MASTER_ADDR=<job>-master-0, the name of a headless Service it creates per
// replica whose selector picks that one pod; in a cluster the pod's DNS search
// path resolves "S", "S.<ns>", "S.<ns>.svc" and "S.<ns>.svc.cluster.local" to
// the selected pods. Such a name (S a DNS-1035 label: it starts with a letter)
// becomes the address of the node running the first selected pod, by pod
// name. The "H.S" pod form is tried first.
//
// HOSTNAME (the container's own host name, as the kubelet sets it) is never
// rewritten. Only pods of the container's own namespace are rewritten (a name with a
// different namespace part is left alone), and only names the lookup knows as
// pods or Services; anything else (example.com, localhost) is untouched. A
// known pod that has no node yet, or a known Service none of whose pods is
// placed, is reported in `pending`: the agent waits (the container stays
// ContainerCreating) rather than start a process that cannot resolve it.
//
// Rendezvous ports. Pods share the host network, so two jobs whose masters
// land on one host would both bind MASTER_PORT 29500. The scheme:
//   - The port belongs to the master's host: the key of an allocation is
//     (address of the node running the master pod, "<ns>/<H>.<S>:<port>").
//     Every pod of a job names the same master, so every pod — on any node —
//     maps the port to the same value.
//   - Rewritten values: MASTER_PORT and PET_MASTER_PORT (paired with
//     MASTER_ADDR / PET_MASTER_ADDR in the same env), and the ":<port>" after
//     a rewritten host name in any value.
//   - RendezvousPortAllocator hands out ports in [first, last] (default
//     20000–32000, below Linux's ephemeral range 32768–60999 so outgoing
//     connections never hold them): preferred = first + FNV-1a(key) mod size,
//     then the next free port of that host, wrapping. The same key always gets
//     the same port while held; distinct keys on one host never share one.
//   - Holders: each pod whose environment mapped a key holds it (the agent
//     passes the pod's uid) until the agent releases the pod: once it is
//     finished and nothing of it runs, or it is gone. A key no pod holds any
//     more frees its port, so the range serves any number of jobs over time,
//     12,001 of them at once per host. While one pod of a job holds the key,
//     the job's other pods (started later, or restarted) get the same port.
//   - One allocator must decide for a host: the agent of the master's host
//     when agents allocate, or the server. (Agents on other hosts learn the
//     decision through the pod; see the note in agent/README.md.)
//
// Thread-safety: RewriteHostNames and RewriteEnvForHostNetwork are pure;
// RendezvousPortAllocator and PodHostDirectory need external synchronisation.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "agent/container_env.h"
#include "api/object.h"

namespace berth::agent {

// What a lookup knows about "H.S" (or, with an empty subdomain, the Service
// named H) in the container's namespace.
struct HostAnswer {
  enum class Kind { kNotAPod, kPending, kResolved };
  Kind kind = Kind::kNotAPod;
  std::string address;  // kResolved: the node's address
};
using HostLookup = std::function<HostAnswer(std::string_view hostname, std::string_view subdomain)>;

// Pods of one namespace by their DNS identity (H, S), and the Services of
// that namespace by name, built from Pod and Service objects.
class PodHostDirectory {
 public:
  // Adds a pod; `node_address` is "" when the pod is not placed yet (or is
  // no endpoint: being deleted). Pods without spec.subdomain have no "H.S"
  // name (they may still be selected by a Service). Of two pods with one
  // "H.S", a placed one answers.
  void Add(const api::Object& pod, std::string node_address);
  // Adds a Service; one without a spec.selector (no endpoints berth can
  // derive) is ignored.
  void AddService(const api::Object& service);
  // subdomain "" = the Service named `hostname`: resolved to the node of the
  // first placed pod its selector matches (pods in name order), pending when
  // none of them is placed (or none exists yet), kNotAPod for no such Service.
  HostAnswer Find(std::string_view hostname, std::string_view subdomain) const;
  HostLookup AsLookup() const {
    return [this](std::string_view h, std::string_view s) { return Find(h, s); };
  }

 private:
  struct PodEntry {
    std::map<std::string, std::string> labels;
    std::string node_address;
  };
  std::map<std::pair<std::string, std::string>, std::string, std::less<>> hosts_;
  std::map<std::string, PodEntry, std::less<>> pods_;                                // by pod name
  std::map<std::string, std::map<std::string, std::string>, std::less<>> services_;  // name → selector
};

struct HostRewrite {
  std::string value;
  // Host names ("H.S") of known pods that are not placed yet.
  std::vector<std::string> pending;
  // Each rewritten name, in order: its "H.S" form, the address it became and
  // the offset in `value` just past that address.
  struct Resolved {
    std::string name;
    std::string address;
    size_t end = 0;
  };
  std::vector<Resolved> resolved;
};

// Rewrites pod host names in one value (see above). A bare Service name (one
// label, "S") is rewritten only with `bare_service_names`: a single word is too
// often something else (JOB_NAME=<job> names the JobSet's headless Service;
// a path segment may equal one). RewriteEnvForHostNetwork allows it for
// variables that hold an address (AddressVariable).
HostRewrite RewriteHostNames(std::string_view value, std::string_view pod_namespace, const HostLookup& lookup,
                             bool bare_service_names = false);

// Whether an environment variable's name says it holds a host address: it ends
// in ADDR, ADDRESS, HOST, HOSTNAME or ENDPOINT (case-insensitive), as
// MASTER_ADDR, PET_MASTER_ADDR, RDZV_HOST, --rdzv-endpoint style variables.
bool AddressVariable(std::string_view name);

class RendezvousPortAllocator {
 public:
  explicit RendezvousPortAllocator(uint16_t first = 20000, uint16_t last = 32000);
  // The port for `key` on `host`, now held by `holder` too (idempotent per
  // holder). nullopt, and nothing held, when every port of the range is held
  // on that host.
  std::optional<uint16_t> Allocate(const std::string& host, const std::string& key, const std::string& holder);
  // Holds `port` for `key` on `host` again for `holder` (a run adopted after
  // an agent restart keeps the port it was given). False, and nothing
  // changes, when the key holds another port or the port is held by another
  // key.
  bool Restore(const std::string& host, const std::string& key, uint16_t port, const std::string& holder);
  // `holder` holds nothing any more; each key it was the last holder of frees
  // its port.
  void ReleaseHolder(const std::string& holder);
  // Ports held on `host`.
  size_t held(const std::string& host) const;
  // Holders that hold a key (on any host).
  size_t holders() const { return by_holder_.size(); }

 private:
  struct Held {
    uint16_t port = 0;
    std::set<std::string> holders;
  };
  // Records `holder` on `host`/`key` (which holds a port).
  void Hold(const std::string& host, const std::string& key, Held& held, const std::string& holder);

  uint16_t first_, last_;
  std::map<std::string, std::map<std::string, Held>> by_host_;                      // host → key → port, holders
  std::map<std::string, std::set<uint16_t>> used_;                                  // host → ports
  std::map<std::string, std::set<std::pair<std::string, std::string>>> by_holder_;  // holder → (host, key)
};

// The most distinct rendezvous ports one container's environment may map (a job needs one
// or two): past it the container gets a config error instead of taking a host's range.
inline constexpr size_t kMaxRendezvousPortsPerContainer = 16;

struct EnvRewrite {
  std::vector<EnvVar> env;
  // As HostRewrite::pending, over all values; also "a free rendezvous port on <host>" while
  // that host's range is full (the container waits, as for a pod not placed).
  std::vector<std::string> pending;
  // Set when the environment maps more than kMaxRendezvousPortsPerContainer ports.
  std::string error;
  // Every port mapped: (host, key, port), to be recorded with the run.
  struct Port {
    std::string host;
    std::string key;
    uint16_t port = 0;
  };
  std::vector<Port> ports;
};

// Applies the host-name and port rewriting to a container's environment.
// `ports` is the cluster's allocator for the master's host (see above); the
// ports mapped are held for `holder` (the pod's uid). When it has no port left
// the value keeps the port as written and `pending` says so: the caller does
// not start the container.
EnvRewrite RewriteEnvForHostNetwork(const std::vector<EnvVar>& env, std::string_view pod_namespace,
                                    const HostLookup& lookup, RendezvousPortAllocator& ports,
                                    const std::string& holder);

}  // namespace berth::agent
