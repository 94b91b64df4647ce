#include "agent/host_resolver.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/hash.h"

namespace berth::agent {
namespace {

bool IsTokenChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_'; }

bool IsDnsLabel(std::string_view l) {
  if (l.empty() || l.size() > 63 || l.front() == '-' || l.back() == '-') return false;
  return std::all_of(l.begin(), l.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// Whether labels[2..] are "", "<ns>", "<ns>.svc" or "<ns>.svc.cluster.local".
bool SameNamespaceSuffix(const std::vector<std::string_view>& labels, std::string_view ns) {
  size_t n = labels.size();
  if (n == 2) return true;
  if (labels[2] != ns) return false;
  if (n == 3) return true;
  if (labels[3] != "svc") return false;
  if (n == 4) return true;
  return n == 6 && labels[4] == "cluster" && labels[5] == "local";
}

// Whether labels name a Service of namespace ns: "S", "S.<ns>", "S.<ns>.svc"
// or "S.<ns>.svc.cluster.local", S a DNS-1035 label (starts with a letter).
bool IsServiceName(const std::vector<std::string_view>& labels, std::string_view ns) {
  size_t n = labels.size();
  if (n == 0 || n == 4 || n > 5 || labels[0].empty() || labels[0].front() < 'a' || labels[0].front() > 'z') {
    return false;
  }
  if (n >= 2 && labels[1] != ns) return false;
  if (n >= 3 && labels[2] != "svc") return false;
  return n != 5 || (labels[3] == "cluster" && labels[4] == "local");
}

std::map<std::string, std::string> StringMap(const api::Object& obj) {
  std::map<std::string, std::string> out;
  if (!obj.is_object()) return out;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (it->is_string()) out[it.key()] = it->get<std::string>();
  }
  return out;
}

bool ParsePort(std::string_view s, int* port) {
  if (s.empty() || s.size() > 5) return false;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v < 1 || v > 65535) return false;
  *port = v;
  return true;
}

std::string PortKey(std::string_view ns, std::string_view host, int port) {
  return std::string(ns) + "/" + std::string(host) + ":" + std::to_string(port);
}

}  // namespace

void PodHostDirectory::Add(const api::Object& pod, std::string node_address) {
  const api::Object* spec = pod.contains("spec") && pod["spec"].is_object() ? &pod["spec"] : nullptr;
  if (spec == nullptr) return;
  auto str = [&](const char* k) -> std::string {
    auto it = spec->find(k);
    return it != spec->end() && it->is_string() ? it->get<std::string>() : "";
  };
  const api::Object* meta = pod.contains("metadata") ? &pod["metadata"] : nullptr;
  pods_[api::Name(pod)] = {
      meta != nullptr && meta->contains("labels") ? StringMap((*meta)["labels"]) : std::map<std::string, std::string>{},
      node_address};
  std::string subdomain = str("subdomain");
  if (subdomain.empty()) return;
  std::string hostname = str("hostname");
  if (hostname.empty()) hostname = api::Name(pod);
  // Two pods with one DNS identity (one stopping, its successor placed): the placed one
  // answers, whatever order they are added in.
  auto [it, added] = hosts_.try_emplace({hostname, subdomain}, node_address);
  if (!added && it->second.empty()) it->second = std::move(node_address);
}

void PodHostDirectory::AddService(const api::Object& service) {
  const api::Object* spec = service.contains("spec") ? &service["spec"] : nullptr;
  if (spec == nullptr || !spec->contains("selector")) return;
  std::map<std::string, std::string> selector = StringMap((*spec)["selector"]);
  if (selector.empty()) return;
  services_[api::Name(service)] = std::move(selector);
}

HostAnswer PodHostDirectory::Find(std::string_view hostname, std::string_view subdomain) const {
  if (subdomain.empty()) {
    auto svc = services_.find(hostname);
    if (svc == services_.end()) return {};
    for (const auto& [name, pod] : pods_) {
      bool selected = std::all_of(svc->second.begin(), svc->second.end(), [&](const auto& kv) {
        auto l = pod.labels.find(kv.first);
        return l != pod.labels.end() && l->second == kv.second;
      });
      if (selected && !pod.node_address.empty()) return {HostAnswer::Kind::kResolved, pod.node_address};
    }
    return {HostAnswer::Kind::kPending, ""};
  }
  auto it = hosts_.find(std::pair<std::string, std::string>(hostname, subdomain));
  if (it == hosts_.end()) return {};
  if (it->second.empty()) return {HostAnswer::Kind::kPending, ""};
  return {HostAnswer::Kind::kResolved, it->second};
}

bool AddressVariable(std::string_view name) {
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (std::string_view suffix : {"ADDR", "ADDRESS", "HOST", "HOSTNAME", "ENDPOINT"}) {
    if (upper.size() >= suffix.size() && upper.compare(upper.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return true;
    }
  }
  return false;
}

HostRewrite RewriteHostNames(std::string_view value, std::string_view pod_namespace, const HostLookup& lookup,
                             bool bare_service_names) {
  HostRewrite out;
  size_t i = 0;
  while (i < value.size()) {
    if (!IsTokenChar(value[i])) {
      out.value += value[i++];
      continue;
    }
    size_t start = i;
    while (i < value.size() && IsTokenChar(value[i])) ++i;
    std::string_view token = value.substr(start, i - start);
    std::string_view name = token;
    if (!name.empty() && name.back() == '.') name.remove_suffix(1);  // absolute form "h.s."
    auto labels = Split(name, '.');
    bool candidate = labels.size() >= 2 && labels.size() <= 6 &&
                     std::all_of(labels.begin(), labels.end(), IsDnsLabel) &&
                     SameNamespaceSuffix(labels, pod_namespace);
    HostAnswer a;
    std::string short_name;
    if (candidate) {
      a = lookup(labels[0], labels[1]);
      short_name = std::string(labels[0]) + "." + std::string(labels[1]);
    }
    if (a.kind == HostAnswer::Kind::kNotAPod && IsServiceName(labels, pod_namespace) &&
        (labels.size() > 1 || bare_service_names) && std::all_of(labels.begin(), labels.end(), IsDnsLabel)) {
      a = lookup(labels[0], "");
      short_name = std::string(labels[0]);
      candidate = true;
    }
    if (candidate) {
      if (a.kind == HostAnswer::Kind::kResolved) {
        out.value += a.address;
        out.resolved.push_back({short_name, a.address, out.value.size()});
        continue;
      }
      if (a.kind == HostAnswer::Kind::kPending) out.pending.push_back(short_name);
    }
    out.value.append(token);
  }
  return out;
}

RendezvousPortAllocator::RendezvousPortAllocator(uint16_t first, uint16_t last) : first_(first), last_(last) {
  BERTH_CHECK(first <= last);
}

void RendezvousPortAllocator::Hold(const std::string& host, const std::string& key, Held& held,
                                   const std::string& holder) {
  held.holders.insert(holder);
  by_holder_[holder].emplace(host, key);
}

std::optional<uint16_t> RendezvousPortAllocator::Allocate(const std::string& host, const std::string& key,
                                                          const std::string& holder) {
  auto& keys = by_host_[host];
  if (auto it = keys.find(key); it != keys.end()) {
    Hold(host, key, it->second, holder);
    return it->second.port;
  }
  auto& used = used_[host];
  uint32_t size = static_cast<uint32_t>(last_ - first_) + 1;
  if (used.size() >= size) return std::nullopt;
  uint32_t offset = static_cast<uint32_t>(Fnv1a64(key) % size);
  for (uint32_t n = 0; n < size; ++n) {
    auto port = static_cast<uint16_t>(first_ + (offset + n) % size);
    if (used.insert(port).second) {
      Held& held = keys[key];
      held.port = port;
      Hold(host, key, held, holder);
      return port;
    }
  }
  return std::nullopt;
}

bool RendezvousPortAllocator::Restore(const std::string& host, const std::string& key, uint16_t port,
                                      const std::string& holder) {
  auto& keys = by_host_[host];
  if (auto it = keys.find(key); it != keys.end()) {
    if (it->second.port != port) return false;
    Hold(host, key, it->second, holder);
    return true;
  }
  if (port < first_ || port > last_ || !used_[host].insert(port).second) return false;
  Held& held = keys[key];
  held.port = port;
  Hold(host, key, held, holder);
  return true;
}

void RendezvousPortAllocator::ReleaseHolder(const std::string& holder) {
  auto h = by_holder_.find(holder);
  if (h == by_holder_.end()) return;
  for (const auto& [host, key] : h->second) {
    auto keys = by_host_.find(host);
    if (keys == by_host_.end()) continue;
    auto k = keys->second.find(key);
    if (k == keys->second.end()) continue;
    k->second.holders.erase(holder);
    if (!k->second.holders.empty()) continue;
    used_[host].erase(k->second.port);
    keys->second.erase(k);
    if (keys->second.empty()) {
      by_host_.erase(keys);
      used_.erase(host);
    }
  }
  by_holder_.erase(h);
}

size_t RendezvousPortAllocator::held(const std::string& host) const {
  auto it = used_.find(host);
  return it == used_.end() ? 0 : it->second.size();
}

EnvRewrite RewriteEnvForHostNetwork(const std::vector<EnvVar>& env, std::string_view pod_namespace,
                                    const HostLookup& lookup, RendezvousPortAllocator& ports,
                                    const std::string& holder) {
  EnvRewrite out;
  // Maps a port, at most kMaxRendezvousPortsPerContainer distinct ones: past that, or when
  // the host has none free, the container does not start (error / pending) rather than run
  // on the port as written, which another job on the host may hold.
  std::set<std::pair<std::string, std::string>> mapped_keys;
  auto map_port = [&](const std::string& host, const std::string& key) -> std::optional<uint16_t> {
    if (mapped_keys.insert({host, key}).second && mapped_keys.size() > kMaxRendezvousPortsPerContainer) {
      out.error = "more than " + std::to_string(kMaxRendezvousPortsPerContainer) +
                  " rendezvous ports (host:port values of pods and Services) in one container's environment";
      return std::nullopt;
    }
    std::optional<uint16_t> mapped = ports.Allocate(host, key, holder);
    if (!mapped) {
      out.pending.push_back("a free rendezvous port on " + host);
      return std::nullopt;
    }
    out.ports.push_back({host, key, *mapped});
    return mapped;
  };
  // Host names first, remembering which master each *_MASTER_ADDR named.
  std::map<std::string, std::pair<std::string, std::string>> master_of;  // ADDR var → (H.S, address)
  for (const auto& v : env) {
    if (v.name == "HOSTNAME") {  // the container's own name, never another host's address
      out.env.push_back(v);
      continue;
    }
    HostRewrite r = RewriteHostNames(v.value, pod_namespace, lookup, AddressVariable(v.name));
    std::string value = r.value;
    // ":<port>" right after a rewritten host: map the port on that host.
    if (!r.resolved.empty()) {
      std::string rebuilt;
      size_t pos = 0;
      for (const auto& res : r.resolved) {
        rebuilt.append(value, pos, res.end - pos);
        pos = res.end;
        if (pos < value.size() && value[pos] == ':') {
          size_t end = pos + 1;
          while (end < value.size() && std::isdigit(static_cast<unsigned char>(value[end]))) ++end;
          int port;
          if (ParsePort(std::string_view(value).substr(pos + 1, end - pos - 1), &port)) {
            const std::string key = PortKey(pod_namespace, res.name, port);
            auto mapped = map_port(res.address, key);
            rebuilt += ":" + std::to_string(mapped ? *mapped : port);
            pos = end;
          }
        }
      }
      rebuilt.append(value, pos, std::string::npos);
      value = std::move(rebuilt);
      if (r.resolved.size() == 1) master_of[v.name] = {r.resolved[0].name, r.resolved[0].address};
    }
    out.pending.insert(out.pending.end(), r.pending.begin(), r.pending.end());
    out.env.push_back({v.name, std::move(value)});
  }
  for (auto& v : out.env) {
    for (const char* prefix : {"", "PET_"}) {
      if (v.name != std::string(prefix) + "MASTER_PORT") continue;
      auto m = master_of.find(std::string(prefix) + "MASTER_ADDR");
      int port;
      if (m == master_of.end() || !ParsePort(v.value, &port)) continue;
      const std::string key = PortKey(pod_namespace, m->second.first, port);
      if (auto mapped = map_port(m->second.second, key)) v.value = std::to_string(*mapped);
    }
  }
  return out;
}

}  // namespace berth::agent
