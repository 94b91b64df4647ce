#include "client/kubeconfig.h"

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "api/yaml_codec.h"
#include "core/base64.h"

namespace berth::client {

namespace {

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("stat " + path + ": no such file or directory");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A string field of a kubeconfig: "" when absent or null (Go leaves the string unset), an
// error in encoding/json's wording for any other type, as clientcmd answers (it decodes
// a kubeconfig into typed structs: `server: 8080` does not load). `go_field` is Go's
// "Struct.path.to.field".
StatusOr<std::string> StringField(const api::Object& obj, const char* key, std::string_view go_field) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::string();
  if (it->is_string()) return it->get<std::string>();
  const char* type = it->is_number() ? "number" : it->is_boolean() ? "bool" : it->is_array() ? "array" : "object";
  return BadRequestError("json: cannot unmarshal " + std::string(type) + " into Go struct field " +
                         std::string(go_field) + " of type string");
}

// A bool field (insecure-skip-tls-verify): false when absent or null.
StatusOr<bool> BoolField(const api::Object& obj, const char* key, std::string_view go_field) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return false;
  if (it->is_boolean()) return it->get<bool>();
  const char* type = it->is_number() ? "number" : it->is_string() ? "string" : it->is_array() ? "array" : "object";
  return BadRequestError("json: cannot unmarshal " + std::string(type) + " into Go struct field " +
                         std::string(go_field) + " of type bool");
}

// Standard base64 (line breaks and spaces ignored), as encoding/json decodes a
// []byte field.
StatusOr<std::string> Base64Decode(std::string_view text, const std::string& what) {
  std::string in;
  for (char c : text) {
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') in += c;
  }
  std::optional<std::string> out = berth::Base64Decode(in);
  if (!out) return BadRequestError("illegal base64 data in " + what);
  return *std::move(out);
}

// PEM text from a `<key>-data` field (base64) or, when that is empty, the file
// named by `<key>`; "" when neither is set. `owner` names the cluster or user.
StatusOr<std::string> DataOrFile(const api::Object& obj, const std::string& key, const std::string& go_struct,
                                 const std::string& owner) {
  BERTH_ASSIGN_OR_RETURN(std::string data, StringField(obj, (key + "-data").c_str(), go_struct + "." + key + "-data"));
  if (!data.empty()) return Base64Decode(data, key + "-data of " + owner);
  BERTH_ASSIGN_OR_RETURN(std::string path, StringField(obj, key.c_str(), go_struct + "." + key));
  if (path.empty()) return std::string();
  StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) {
    return BadRequestError("unable to read " + key + " " + path + " for " + owner + " due to open " + path +
                           ": no such file or directory");
  }
  return text;
}

// Makes the relative file paths of one kubeconfig file absolute against
// `dir`, as clientcmd's ResolveLocalPaths does before files are merged.
void ResolveLocalPaths(api::Object* doc, const std::string& dir) {
  auto fix = [&](api::Object& owner, const char* key) {
    auto it = owner.find(key);
    if (it == owner.end() || !it->is_string()) return;
    const std::string path = it->get<std::string>();
    if (!path.empty() && path.front() != '/') *it = dir + "/" + path;
  };
  auto each = [&](const char* list, const char* field, std::initializer_list<const char*> keys) {
    auto l = doc->find(list);
    if (l == doc->end() || !l->is_array()) return;
    for (auto& entry : *l) {
      if (!entry.is_object()) continue;
      auto f = entry.find(field);
      if (f == entry.end() || !f->is_object()) continue;
      for (const char* key : keys) fix(*f, key);
    }
  };
  each("clusters", "cluster", {"certificate-authority"});
  each("users", "user", {"client-certificate", "client-key", "tokenFile"});
}

// The entry called `name` in a named list (clusters, contexts, users) whose names were
// checked by MergeNamed.
const api::Object* FindNamed(const api::Object& list, std::string_view name, const char* field) {
  if (!list.is_array()) return nullptr;
  for (const auto& entry : list) {
    auto n = entry.find("name");
    if (n != entry.end() && n->is_string() && *n == name) {
      auto f = entry.find(field);
      return f != entry.end() && f->is_object() ? &*f : nullptr;
    }
  }
  return nullptr;
}

// merged[list], or null when absent (a reference: FindNamed returns pointers into it).
const api::Object& ListOf(const api::Object& merged, const char* list) {
  static const api::Object kNull;
  auto it = merged.find(list);
  return it == merged.end() ? kNull : *it;
}

// Merges named lists: the first file to define a name wins. `go_struct` names the
// element type for errors ("NamedCluster").
Status MergeNamed(const api::Object& from, api::Object* into, const char* list, std::string_view go_struct) {
  auto src = from.find(list);
  if (src == from.end() || !src->is_array()) return Status::Ok();
  api::Object& dst = (*into)[list];
  if (!dst.is_array()) dst = api::Object::array();
  for (const auto& entry : *src) {
    if (!entry.is_object()) continue;
    BERTH_ASSIGN_OR_RETURN(std::string name, StringField(entry, "name", std::string(go_struct) + "." + list + ".name"));
    bool taken = false;
    for (const auto& e : dst) taken = taken || e["name"] == name;
    if (taken) continue;
    dst.push_back(entry);
    dst.back()["name"] = name;
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ServerUrl> ParseServerUrl(std::string_view url) {
  ServerUrl out;
  auto sep = url.find("://");
  if (sep == std::string_view::npos) return BadRequestError("invalid server URL \"" + std::string(url) + "\"");
  out.scheme = std::string(url.substr(0, sep));
  if (out.scheme != "http" && out.scheme != "https") {
    return BadRequestError("unsupported scheme \"" + out.scheme + "\" in server \"" + std::string(url) +
                           "\": only http:// and https:// are supported");
  }
  if (out.scheme == "https") out.port = 443;
  std::string_view rest = url.substr(sep + 3);
  auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view path = rest.substr(slash);
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    out.path_prefix = std::string(path);
  }
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {  // [v6]:port
    auto close = authority.find(']');
    if (close == std::string_view::npos) return BadRequestError("invalid server URL \"" + std::string(url) + "\"");
    out.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return BadRequestError("invalid server URL \"" + std::string(url) + "\"");
      port_text = after.substr(1);
    }
  } else {
    auto colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (out.host.empty()) return BadRequestError("invalid server URL \"" + std::string(url) + "\": no host");
  if (!port_text.empty()) {
    int port = 0;
    auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || p != port_text.data() + port_text.size() || port <= 0 || port > 65535) {
      return BadRequestError("invalid port in server URL \"" + std::string(url) + "\"");
    }
    out.port = port;
  }
  return out;
}

StatusOr<RestConfig> ResolveKubeconfig(const std::vector<api::Object>& files, std::string_view context) {
  api::Object merged = api::Object::object();
  std::string current;
  for (const auto& f : files) {
    if (!f.is_object()) continue;
    BERTH_ASSIGN_OR_RETURN(std::string file_current, StringField(f, "current-context", "Config.current-context"));
    if (current.empty()) current = file_current;
    BERTH_RETURN_IF_ERROR(MergeNamed(f, &merged, "clusters", "NamedCluster"));
    BERTH_RETURN_IF_ERROR(MergeNamed(f, &merged, "contexts", "NamedContext"));
    BERTH_RETURN_IF_ERROR(MergeNamed(f, &merged, "users", "NamedAuthInfo"));
  }
  RestConfig cfg;
  cfg.context = context.empty() ? current : std::string(context);
  if (cfg.context.empty()) return BadRequestError("invalid configuration: no configuration has been provided");
  const api::Object* ctx = FindNamed(ListOf(merged, "contexts"), cfg.context, "context");
  if (!ctx) return BadRequestError("context was not found for specified context: " + cfg.context);
  BERTH_ASSIGN_OR_RETURN(cfg.cluster, StringField(*ctx, "cluster", "Context.contexts.context.cluster"));
  BERTH_ASSIGN_OR_RETURN(cfg.user, StringField(*ctx, "user", "Context.contexts.context.user"));
  BERTH_ASSIGN_OR_RETURN(std::string ns, StringField(*ctx, "namespace", "Context.contexts.context.namespace"));
  if (!ns.empty()) cfg.ns = ns;
  const api::Object* cluster = FindNamed(ListOf(merged, "clusters"), cfg.cluster, "cluster");
  if (!cluster) return BadRequestError("cluster \"" + cfg.cluster + "\" not found");
  BERTH_ASSIGN_OR_RETURN(cfg.server, StringField(*cluster, "server", "Cluster.clusters.cluster.server"));
  if (cfg.server.empty()) return BadRequestError("no server found for cluster \"" + cfg.cluster + "\"");
  BERTH_ASSIGN_OR_RETURN(cfg.url, ParseServerUrl(cfg.server));
  const std::string cluster_go = "Cluster.clusters.cluster";
  BERTH_ASSIGN_OR_RETURN(cfg.certificate_authority_pem,
                         DataOrFile(*cluster, "certificate-authority", cluster_go, "cluster \"" + cfg.cluster + "\""));
  BERTH_ASSIGN_OR_RETURN(cfg.insecure_skip_tls_verify,
                         BoolField(*cluster, "insecure-skip-tls-verify", cluster_go + ".insecure-skip-tls-verify"));
  BERTH_ASSIGN_OR_RETURN(cfg.tls_server_name,
                         StringField(*cluster, "tls-server-name", cluster_go + ".tls-server-name"));
  if (cfg.insecure_skip_tls_verify && !cfg.certificate_authority_pem.empty()) {
    // clientcmd's validateClusterInfo refuses the pair.
    return BadRequestError("specifying a root certificates file with the insecure flag is not allowed");
  }
  if (!cfg.user.empty()) {
    if (const api::Object* user = FindNamed(ListOf(merged, "users"), cfg.user, "user")) {
      const std::string user_go = "AuthInfo.users.user";
      const std::string owner = "user \"" + cfg.user + "\"";
      BERTH_ASSIGN_OR_RETURN(cfg.client_certificate_pem, DataOrFile(*user, "client-certificate", user_go, owner));
      BERTH_ASSIGN_OR_RETURN(cfg.client_key_pem, DataOrFile(*user, "client-key", user_go, owner));
      // clientcmd's validateAuthInfo: a certificate needs its key and a key its certificate.
      if (!cfg.client_certificate_pem.empty() && cfg.client_key_pem.empty()) {
        return BadRequestError("client-key-data or client-key must be specified for " + cfg.user +
                               " to use the clientCert authentication method.");
      }
      if (cfg.client_certificate_pem.empty() && !cfg.client_key_pem.empty()) {
        return BadRequestError("client-cert-data or client-cert must be specified for " + cfg.user +
                               " to use the clientCert authentication method.");
      }
      BERTH_ASSIGN_OR_RETURN(cfg.bearer_token, StringField(*user, "token", "AuthInfo.users.user.token"));
      BERTH_ASSIGN_OR_RETURN(std::string token_file, StringField(*user, "tokenFile", "AuthInfo.users.user.tokenFile"));
      if (cfg.bearer_token.empty() && !token_file.empty()) {
        BERTH_ASSIGN_OR_RETURN(std::string token, ReadFile(token_file));
        while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' '))
          token.pop_back();
        cfg.bearer_token = token;
      }
    }
  }
  return cfg;
}

StatusOr<RestConfig> ParseKubeconfig(std::string_view yaml, std::string_view context, std::string_view source_name) {
  BERTH_ASSIGN_OR_RETURN(api::Object doc, api::ParseYaml(yaml, source_name));
  return ResolveKubeconfig({doc}, context);
}

StatusOr<RestConfig> LoadKubeconfig(const KubeconfigOptions& options) {
  std::vector<std::string> paths;
  bool skip_missing = false;
  if (!options.path.empty()) {
    paths.push_back(options.path);
  } else if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    std::string_view list(env);
    while (!list.empty()) {
      auto colon = list.find(':');
      std::string_view p = list.substr(0, colon);
      if (!p.empty()) paths.emplace_back(p);
      if (colon == std::string_view::npos) break;
      list.remove_prefix(colon + 1);
    }
    skip_missing = true;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    paths.push_back(std::string(home) + "/.kube/config");
    skip_missing = true;
  }
  std::vector<api::Object> docs;
  for (const auto& path : paths) {
    StatusOr<std::string> text = ReadFile(path);
    if (!text.ok()) {
      if (skip_missing) continue;
      return text.status();
    }
    BERTH_ASSIGN_OR_RETURN(api::Object doc, api::ParseYaml(*text, path));
    const auto slash = path.rfind('/');
    ResolveLocalPaths(&doc, slash == std::string::npos ? "." : slash == 0 ? "" : path.substr(0, slash));
    docs.push_back(std::move(doc));
  }
  return ResolveKubeconfig(docs, options.context);
}

}  // namespace berth::client
