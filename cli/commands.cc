#include "cli/commands.h"

#include <iostream>
#include <memory>
#include <optional>
#include <utility>

#include "api/yaml_codec.h"
#include "cli/describe.h"
#include "cli/errors.h"
#include "cli/manifest.h"
#include "cli/rest_mapper.h"
#include "cli/table_printer.h"
#include "client/api_status.h"
#include "client/http_client.h"
#include "client/kubeconfig.h"
#include "core/clock.h"

namespace berth::cli {

using nlohmann::json;
using Query = std::vector<std::pair<std::string, std::string>>;

namespace {

constexpr std::string_view kTableAccept =
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
    "application/json";
constexpr std::string_view kFieldManager = "berth";

struct ConnectionFlags {
  std::string kubeconfig;
  std::string context;
  std::string ns;
  bool all_namespaces = false;
};

void AddConnectionFlags(CLI::App* cmd, ConnectionFlags* f, bool all_namespaces) {
  cmd->add_option("--kubeconfig", f->kubeconfig, "Path to the kubeconfig file to use");
  cmd->add_option("--context", f->context, "The name of the kubeconfig context to use");
  cmd->add_option("-n,--namespace", f->ns, "If present, the namespace scope for this request");
  if (all_namespaces) {
    cmd->add_flag("-A,--all-namespaces", f->all_namespaces, "List the requested object(s) across all namespaces");
  }
}

std::string WithQuery(std::string path, Query q) {
  if (q.empty()) return path;
  return path + "?" + client::EncodeQuery(std::move(q));
}

// A connection to the API server plus the discovered resources.
class Session {
 public:
  static StatusOr<std::unique_ptr<Session>> Open(const ConnectionFlags& flags) {
    BERTH_ASSIGN_OR_RETURN(client::RestConfig config,
                           client::LoadKubeconfig({flags.kubeconfig, flags.context}));
    auto s = std::unique_ptr<Session>(new Session(std::move(config)));
    s->ns_explicit_ = !flags.ns.empty();
    s->ns_ = flags.ns.empty() ? s->http_.config().ns : flags.ns;
    if (s->ns_.empty()) s->ns_ = "default";
    s->all_namespaces_ = flags.all_namespaces;
    return s;
  }

  client::HttpClient& http() { return http_; }
  const std::string& ns() const { return ns_; }
  bool ns_explicit() const { return ns_explicit_; }
  bool all_namespaces() const { return all_namespaces_; }

  // The namespace a request for `r` uses ("" for cluster-scoped resources
  // and for -A).
  std::string RequestNamespace(const ApiResource& r) const {
    return r.namespaced && !all_namespaces_ ? ns_ : "";
  }

  StatusOr<const RestMapper*> Mapper() {
    if (!mapper_) {
      BERTH_ASSIGN_OR_RETURN(RestMapper m, Discover(http_));
      mapper_ = std::move(m);
    }
    return &*mapper_;
  }

  StatusOr<ApiResource> Resource(std::string_view typed) {
    BERTH_ASSIGN_OR_RETURN(const RestMapper* m, Mapper());
    auto r = m->ResourceFor(typed);
    if (!r.ok()) return ClientError(r.status().message());
    return r;
  }

  // One request whose success answer is JSON; failures decoded as client-go does.
  StatusOr<json> Call(const std::string& method, const std::string& target, const ApiResource& r,
                      const std::string& name, std::string_view accept = "application/json",
                      std::string body = "", std::string content_type = "") {
    client::RawRequest req{method, target, {{"Accept", std::string(accept)}}, std::move(body)};
    if (!content_type.empty()) req.headers.emplace_back("Content-Type", content_type);
    BERTH_ASSIGN_OR_RETURN(client::RawResponse res, http_.Do(req));
    if (res.status < 200 || res.status >= 300) {
      std::string verb = method;
      for (char& c : verb) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return client::StatusFromResponse(res.status, res.body, verb, r.GroupResource(), name);
    }
    json out = json::parse(res.body, nullptr, false);
    if (out.is_discarded()) return InternalError("unable to decode the response of " + method + " " + target);
    return out;
  }

 private:
  explicit Session(client::RestConfig config) : http_(std::move(config)) {}

  client::HttpClient http_;
  std::string ns_;
  bool ns_explicit_ = false;
  bool all_namespaces_ = false;
  std::optional<RestMapper> mapper_;
};

// Runs a command body: prints the error as kubectl does and sets the exit code.
template <class Body>
void Run(int* exit_code, const ConnectionFlags& flags, Body body) {
  auto session = Session::Open(flags);
  Status s = session.ok() ? body(**session) : ClientError(session.status().message());
  if (!s.ok()) {
    std::cout.flush();
    std::cerr << ErrorText(s);
    *exit_code = 1;
  }
}

// "KIND NAME..." or "KIND/NAME ...": the resource/name pairs of a command line.
struct Target {
  ApiResource resource;
  std::string name;
};
StatusOr<std::vector<Target>> ResolveArgs(Session& s, const std::vector<std::string>& args, bool allow_no_name,
                                          ApiResource* kind_only) {
  if (args.empty()) {
    return ClientError("You must provide one or more resources by argument or filename.");
  }
  std::vector<Target> out;
  if (args[0].find('/') != std::string::npos) {
    for (const auto& a : args) {
      auto slash = a.find('/');
      if (slash == std::string::npos) {
        return ClientError("there is no need to specify a resource type as a separate argument when passing "
                           "arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' "
                           "instead of 'kubectl get resource resource/<resource_name>'");
      }
      BERTH_ASSIGN_OR_RETURN(ApiResource r, s.Resource(a.substr(0, slash)));
      out.push_back({std::move(r), a.substr(slash + 1)});
    }
    return out;
  }
  BERTH_ASSIGN_OR_RETURN(ApiResource r, s.Resource(args[0]));
  if (args.size() == 1) {
    if (!allow_no_name) return ClientError("resource(s) were provided, but no name was specified");
    *kind_only = r;
    return out;
  }
  for (size_t i = 1; i < args.size(); ++i) out.push_back({r, args[i]});
  return out;
}

// A list (following continue tokens) of `r` in the session's scope.
StatusOr<json> ListAll(Session& s, const ApiResource& r, std::string_view accept, const std::string& labels,
                       const std::string& fields) {
  json merged;
  std::string cont;
  do {
    Query q{{"limit", "500"}};
    if (!labels.empty()) q.emplace_back("labelSelector", labels);
    if (!fields.empty()) q.emplace_back("fieldSelector", fields);
    if (!cont.empty()) q.emplace_back("continue", cont);
    const std::string path = client::ResourcePath(client::ResourceRef(r.Gvr(), s.RequestNamespace(r)));
    BERTH_ASSIGN_OR_RETURN(json page, s.Call("GET", WithQuery(path, std::move(q)), r, "", accept));
    cont = page.contains("metadata") ? page["metadata"].value("continue", "") : "";
    const char* items = page.value("kind", "") == "Table" ? "rows" : "items";
    if (merged.is_null()) {
      merged = std::move(page);
    } else if (page.contains(items) && page[items].is_array()) {
      for (auto& item : page[items]) merged[items].push_back(std::move(item));
    }
  } while (!cont.empty());
  if (merged.contains("metadata")) merged["metadata"].erase("continue");
  return merged;
}

std::string ObjectName(const ApiResource& r, const json& obj) { return r.KindGroup() + "/" + api::Name(obj); }

// The wire items of a list lack apiVersion/kind for built-in kinds.
void FillTypeMeta(const ApiResource& r, json* obj) {
  if (!obj->contains("apiVersion")) (*obj)["apiVersion"] = r.ApiVersion();
  if (!obj->contains("kind")) (*obj)["kind"] = r.kind;
}

std::string PrintObjects(const std::string& format, const std::vector<json>& objects, bool as_list) {
  json doc;
  if (as_list) {
    doc = {{"apiVersion", "v1"}, {"items", objects}, {"kind", "List"}, {"metadata", {{"resourceVersion", ""}}}};
  } else {
    doc = objects.at(0);
  }
  if (format == "json") return doc.dump(4) + "\n";
  return api::EmitYaml(doc);
}

// ---------------------------------------------------------------------------
// get

struct GetFlags {
  ConnectionFlags conn;
  std::vector<std::string> args;
  std::string output;
  std::string selector;
  std::string field_selector;
  bool show_labels = false;
  bool no_headers = false;
  bool watch = false;
};

Status Watch(Session& s, const ApiResource& r, const std::string& rv, const GetFlags& f, TablePrinter* printer) {
  Query q{{"watch", "true"}};
  if (!rv.empty()) q.emplace_back("resourceVersion", rv);
  if (!f.selector.empty()) q.emplace_back("labelSelector", f.selector);
  if (!f.field_selector.empty()) q.emplace_back("fieldSelector", f.field_selector);
  const std::string path = client::ResourcePath(client::ResourceRef(r.Gvr(), s.RequestNamespace(r)));
  std::string pending;
  Status stream_error;
  auto on_body = [&](std::string_view chunk) {
    pending.append(chunk);
    size_t start = 0;
    for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      json event = json::parse(pending.substr(start, nl - start), nullptr, false);
      if (!event.is_object() || !event.contains("object")) continue;
      if (event.value("type", "") == "ERROR") {
        stream_error = client::StatusFromObject(event["object"], 500);
        return false;
      }
      if (event.value("type", "") == "BOOKMARK") continue;
      std::cout << printer->Print(event["object"]) << std::flush;
    }
    pending.erase(0, start);
    return true;
  };
  BERTH_ASSIGN_OR_RETURN(client::RawResponse res,
                         s.http().DoStream({"GET", WithQuery(path, std::move(q)), {{"Accept", std::string(kTableAccept)}}, ""},
                                           on_body));
  if (res.status < 200 || res.status >= 300) {
    return client::StatusFromResponse(res.status, res.body, "get", r.GroupResource(), "");
  }
  return stream_error;
}

Status RunGet(Session& s, const GetFlags& f) {
  ApiResource kind;
  BERTH_ASSIGN_OR_RETURN(std::vector<Target> targets, ResolveArgs(s, f.args, true, &kind));
  const bool list = targets.empty();
  if (!list) kind = targets[0].resource;
  const std::string& o = f.output;
  if (!o.empty() && o != "wide" && o != "yaml" && o != "json" && o != "name") {
    return ClientError("unable to match a printer suitable for the output format \"" + o +
                       "\", allowed formats are: json,name,wide,yaml");
  }
  if (f.watch && (o == "yaml" || o == "json" || o == "name")) {
    return ClientError("--watch is only supported with table output (-o wide or none) in berth");
  }
  const bool table = o.empty() || o == "wide";
  std::vector<json> objects;  // non-table formats
  json merged_table;
  Status first_error;
  if (list) {
    BERTH_ASSIGN_OR_RETURN(json result, ListAll(s, kind, table ? kTableAccept : "application/json", f.selector,
                                                f.field_selector));
    if (table) {
      merged_table = std::move(result);
    } else if (result.contains("items")) {
      for (auto& item : result["items"]) {
        FillTypeMeta(kind, &item);
        objects.push_back(std::move(item));
      }
    }
  } else {
    for (const auto& t : targets) {
      const std::string path =
          client::ResourcePath(client::ResourceRef(t.resource.Gvr(), s.RequestNamespace(t.resource)), t.name);
      auto got = s.Call("GET", path, t.resource, t.name, table ? kTableAccept : "application/json");
      if (!got.ok()) {
        // kubectl prints what it found, then the errors.
        if (first_error.ok()) first_error = got.status();
        continue;
      }
      if (!table) {
        objects.push_back(std::move(*got));
      } else if (merged_table.is_null()) {
        merged_table = std::move(*got);
      } else {
        for (auto& row : (*got)["rows"]) merged_table["rows"].push_back(std::move(row));
      }
    }
  }
  if (table) {
    TablePrintOptions options;
    options.wide = o == "wide";
    options.with_namespace = s.all_namespaces() && kind.namespaced;
    options.show_labels = f.show_labels;
    options.no_headers = f.no_headers;
    TablePrinter printer(options);
    std::cout << printer.Print(merged_table);
    if (printer.rows_printed() == 0 && list && first_error.ok()) {
      std::cout.flush();
      std::cerr << NoResourcesFound(kind.namespaced && !s.all_namespaces() ? s.ns() : "");
    }
    if (f.watch && first_error.ok()) {
      std::string rv = merged_table.contains("metadata") ? merged_table["metadata"].value("resourceVersion", "") : "";
      GetFlags wf = f;
      if (!list) {
        if (targets.size() != 1) return ClientError("watch is only supported on individual resources and resource collections, but 2 resources were found");
        wf.field_selector = "metadata.name=" + targets[0].name;
      }
      return Watch(s, kind, rv, wf, &printer);
    }
    return first_error;
  }
  if (o == "name") {
    for (const auto& obj : objects) std::cout << ObjectName(kind, obj) << "\n";
  } else if (!objects.empty() || list) {
    std::cout << PrintObjects(o, objects, list || objects.size() > 1);
  }
  return first_error;
}

// ---------------------------------------------------------------------------
// describe

struct DescribeFlags {
  ConnectionFlags conn;
  std::vector<std::string> args;
  std::string selector;
};

Status RunDescribe(Session& s, const DescribeFlags& f) {
  ApiResource kind;
  BERTH_ASSIGN_OR_RETURN(std::vector<Target> targets, ResolveArgs(s, f.args, true, &kind));
  std::vector<std::pair<ApiResource, json>> objects;
  if (targets.empty()) {
    BERTH_ASSIGN_OR_RETURN(json listed, ListAll(s, kind, "application/json", f.selector, ""));
    for (auto& item : listed["items"]) {
      FillTypeMeta(kind, &item);
      objects.emplace_back(kind, std::move(item));
    }
    if (objects.empty()) {
      std::cerr << NoResourcesFound(kind.namespaced && !s.all_namespaces() ? s.ns() : "");
      return Status::Ok();
    }
  } else {
    for (const auto& t : targets) {
      const std::string path =
          client::ResourcePath(client::ResourceRef(t.resource.Gvr(), s.RequestNamespace(t.resource)), t.name);
      BERTH_ASSIGN_OR_RETURN(json obj, s.Call("GET", path, t.resource, t.name));
      objects.emplace_back(t.resource, std::move(obj));
    }
  }
  BERTH_ASSIGN_OR_RETURN(ApiResource events, s.Resource("events"));
  bool first = true;
  for (const auto& [r, obj] : objects) {
    // Events of the object (errors are ignored, as kubectl does).
    std::vector<json> items;
    const std::string path = client::ResourcePath(client::ResourceRef(events.Gvr(), api::Namespace(obj)));
    auto listed = s.Call("GET", WithQuery(path, {{"fieldSelector", EventFieldSelector(obj)}, {"limit", "500"}}),
                         events, "");
    if (listed.ok() && listed->contains("items")) {
      for (auto& e : (*listed)["items"]) items.push_back(std::move(e));
    }
    std::string text = DescribeObject(obj, items, RealClock::Get().Now());
    std::cout << (first ? "" : "\n\n") << text;
    first = false;
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// wait (also used by delete --wait)

// Parses a Go duration as kubectl's --timeout takes it ("30s", "1m30s",
// "500ms", "1h"); a bare number is seconds.
StatusOr<Duration> ParseDuration(const std::string& text) {
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
    return std::chrono::duration_cast<Duration>(std::chrono::seconds(std::stoll(text)));
  }
  Duration total{0};
  size_t i = 0;
  auto bad = [&] { return ClientError("time: invalid duration \"" + text + "\""); };
  if (text.empty()) return bad();
  while (i < text.size()) {
    size_t j = i;
    while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.')) ++j;
    if (j == i) return bad();
    const double value = std::stod(text.substr(i, j - i));
    size_t k = j;
    while (k < text.size() && std::isalpha(static_cast<unsigned char>(text[k]))) ++k;
    const std::string unit = text.substr(j, k - j);
    double ns;
    if (unit == "h") ns = 3600e9;
    else if (unit == "m") ns = 60e9;
    else if (unit == "s") ns = 1e9;
    else if (unit == "ms") ns = 1e6;
    else if (unit == "us" || unit == "µs") ns = 1e3;
    else if (unit == "ns") ns = 1;
    else return bad();
    total += Duration(static_cast<int64_t>(value * ns));
    i = k;
  }
  return total;
}

// What `wait` waits for.
struct WaitCondition {
  bool for_delete = false;
  std::string type;           // condition type (compared case-insensitively)
  std::string value = "True";

  // True when obj satisfies the condition (never for deletion: that is the
  // object's absence).
  bool MetBy(const json& obj) const {
    if (for_delete) return false;
    const json& conditions = obj.contains("status") && obj["status"].is_object() && obj["status"].contains("conditions")
                                 ? obj["status"]["conditions"]
                                 : json();
    if (!conditions.is_array()) return false;
    const int64_t generation = obj["metadata"].value("generation", int64_t{0});
    for (const auto& c : conditions) {
      if (!c.is_object() || !EqualFold(c.value("type", ""), type)) continue;
      if (c.contains("observedGeneration") && c["observedGeneration"].is_number_integer() &&
          c["observedGeneration"].get<int64_t>() < generation) {
        continue;  // stale: kubectl ignores it
      }
      return EqualFold(c.value("status", ""), value);
    }
    return false;
  }
  static bool EqualFold(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
    }
    return true;
  }
};

StatusOr<WaitCondition> ParseFor(const std::string& text) {
  WaitCondition c;
  if (WaitCondition::EqualFold(text, "delete")) {
    c.for_delete = true;
    return c;
  }
  if (text.rfind("condition=", 0) == 0) {
    std::string rest = text.substr(10);
    if (auto eq = rest.find('='); eq != std::string::npos) {
      c.value = rest.substr(eq + 1);
      rest.resize(eq);
    }
    if (rest.empty()) return ClientError("--for=condition requires a condition name");
    c.type = rest;
    return c;
  }
  return ClientError("unrecognized condition: \"" + text + "\"");
}

// Waits until `name` satisfies `cond` (or is gone, for deletion) using list +
// watch by metadata.name, as kubectl's wait does. Returns true when met,
// false at the deadline.
StatusOr<bool> WaitFor(Session& s, const ApiResource& r, const std::string& ns, const std::string& name,
                       const WaitCondition& cond, Time deadline) {
  Clock& clock = RealClock::Get();
  const client::ResourceRef ref(r.Gvr(), ns);
  const std::string selector = "metadata.name=" + name;
  const std::string* uid_seen = nullptr;
  std::string uid;
  for (;;) {
    client::ListOptions lo;
    lo.field_selector = selector;
    BERTH_ASSIGN_OR_RETURN(client::ObjectList listed, s.http().List(ref, lo));
    if (listed.items.empty()) {
      if (cond.for_delete) return true;
    } else {
      const json& obj = listed.items[0];
      if (uid_seen && api::Uid(obj) != *uid_seen && cond.for_delete) return true;
      uid = api::Uid(obj);
      uid_seen = &uid;
      if (cond.MetBy(obj)) return true;
    }
    const Time now = clock.Now();
    if (now >= deadline) return false;
    client::WatchOptions wo;
    wo.resource_version = listed.resource_version;
    wo.field_selector = selector;
    wo.allow_watch_bookmarks = true;
    wo.timeout_seconds = std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::seconds>(deadline - now).count() + 1);
    BERTH_ASSIGN_OR_RETURN(std::unique_ptr<client::WatchStream> watch, s.http().Watch(ref, wo));
    for (;;) {
      const Time t = clock.Now();
      if (t >= deadline) return false;
      auto next = watch->Next(std::chrono::duration_cast<Duration>(deadline - t));
      if (!next.ok()) break;  // ended: list again
      if (!next->has_value()) continue;
      const client::WatchEvent& e = **next;
      if (e.type == client::WatchEventType::kError) break;
      if (e.type == client::WatchEventType::kBookmark) continue;
      if (e.type == client::WatchEventType::kDeleted) {
        if (cond.for_delete) return true;
        continue;
      }
      if (cond.for_delete && uid_seen && api::Uid(*e.object) != *uid_seen) return true;
      if (cond.MetBy(*e.object)) return true;
    }
  }
}

struct WaitFlags {
  ConnectionFlags conn;
  std::vector<std::string> args;
  std::string for_condition;
  std::string timeout = "30s";
};

Status RunWait(Session& s, const WaitFlags& f) {
  if (f.for_condition.empty()) return ClientError("--for must be specified");
  BERTH_ASSIGN_OR_RETURN(WaitCondition cond, ParseFor(f.for_condition));
  BERTH_ASSIGN_OR_RETURN(Duration timeout, ParseDuration(f.timeout));
  ApiResource kind;
  BERTH_ASSIGN_OR_RETURN(std::vector<Target> targets, ResolveArgs(s, f.args, false, &kind));
  const Time deadline = RealClock::Get().Now() + timeout;
  for (const auto& t : targets) {
    const std::string ns = s.RequestNamespace(t.resource);
    const std::string path = client::ResourcePath(client::ResourceRef(t.resource.Gvr(), ns), t.name);
    auto got = s.Call("GET", path, t.resource, t.name);
    if (!got.ok()) {
      if (cond.for_delete && got.status().code() == Code::kNotFound) continue;  // already gone
      return got.status();
    }
    BERTH_ASSIGN_OR_RETURN(bool met, WaitFor(s, t.resource, ns, t.name, cond, deadline));
    if (!met) {
      return ClientError("timed out waiting for the condition on " + t.resource.resource + "/" + t.name);
    }
    std::cout << t.resource.KindGroup() << "/" << t.name << " condition met\n" << std::flush;
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// apply and delete -f

// The namespace an object of a manifest goes to.
StatusOr<std::string> ManifestNamespace(Session& s, const ApiResource& r, const json& obj) {
  if (!r.namespaced) return std::string();
  const std::string& ns = api::Namespace(obj);
  if (ns.empty()) return s.ns();
  if (s.ns_explicit() && ns != s.ns()) {
    return ClientError("the namespace from the provided object \"" + ns + "\" does not match the namespace \"" +
                       s.ns() + "\". You must pass '--namespace=" + ns + "' to perform this operation.");
  }
  return ns;
}

StatusOr<ApiResource> ManifestResource(Session& s, const ManifestObject& m) {
  BERTH_ASSIGN_OR_RETURN(const RestMapper* mapper, s.Mapper());
  auto r = mapper->KindFor(m.object.value("apiVersion", ""), m.object.value("kind", ""));
  if (!r.ok()) {
    return ClientError("resource mapping not found for name: \"" + api::Name(m.object) + "\" namespace: \"" +
                       api::Namespace(m.object) + "\" from \"" + m.source + "\": " + r.status().message() +
                       "\nensure CRDs are installed first");
  }
  return r;
}

// Prints every error (as kubectl apply does, after trying every object);
// returns a Status only to make the command fail.
Status ReportAll(const std::vector<Status>& errors) {
  if (errors.empty()) return Status::Ok();
  std::cout.flush();
  for (size_t i = 0; i + 1 < errors.size(); ++i) std::cerr << ErrorText(errors[i]);
  return errors.back();
}

struct ApplyFlags {
  ConnectionFlags conn;
  std::vector<std::string> files;
};

Status ApplyOne(Session& s, const ManifestObject& m) {
  BERTH_ASSIGN_OR_RETURN(ApiResource r, ManifestResource(s, m));
  BERTH_ASSIGN_OR_RETURN(std::string ns, ManifestNamespace(s, r, m.object));
  const std::string& name = api::Name(m.object);
  if (name.empty()) return ClientError("error when retrieving current configuration of:\nResource: \"" +
                                       r.GroupResource() + "\", GroupVersionKind: \"" + r.ApiVersion() + ", Kind=" +
                                       r.kind + "\"\nName: \"\", Namespace: \"" + ns +
                                       "\"\nfrom server for: \"" + m.source + "\": resource name may not be empty");
  const std::string path = client::ResourcePath(client::ResourceRef(r.Gvr(), ns), name);
  auto current = s.Call("GET", path, r, name);
  if (!current.ok() && current.status().code() != Code::kNotFound) {
    return AddSource(current.status(), "retrieving current configuration of", m.source);
  }
  const bool exists = current.ok();
  json body = m.object;
  if (!ns.empty()) body["metadata"]["namespace"] = ns;
  // kubectl apply validates strictly by default (--validate=strict): unknown and
  // duplicate fields are errors, not silently dropped.
  auto applied = s.Call("PATCH", WithQuery(path, {{"fieldManager", std::string(kFieldManager)},
                                                  {"fieldValidation", "Strict"},
                                                  {"force", "true"}}),
                        r, name, "application/json", body.dump(), "application/apply-patch+yaml");
  if (!applied.ok()) return AddSource(applied.status(), exists ? "patching" : "creating", m.source);
  const char* verb = !exists ? "created"
                     : api::ResourceVersion(*applied) == api::ResourceVersion(*current) ? "unchanged"
                                                                                        : "configured";
  std::cout << r.KindGroup() << "/" << name << " " << verb << "\n";
  return Status::Ok();
}

Status RunApply(Session& s, const ApplyFlags& f) {
  if (f.files.empty()) return ClientError("must specify one of -f and -k");
  BERTH_ASSIGN_OR_RETURN(std::vector<ManifestObject> objects, ReadManifests(f.files, std::cin));
  if (objects.empty()) return ClientError("no objects passed to apply");
  std::vector<Status> errors;
  for (const auto& m : objects) {
    Status st = ApplyOne(s, m);
    if (!st.ok()) errors.push_back(std::move(st));
  }
  return ReportAll(errors);
}

struct DeleteFlags {
  ConnectionFlags conn;
  std::vector<std::string> args;
  std::vector<std::string> files;
  bool ignore_not_found = false;
  bool wait = true;
  std::string timeout = "0s";
};

Status RunDelete(Session& s, const DeleteFlags& f) {
  struct Item {
    ApiResource resource;
    std::string ns, name, source;
  };
  std::vector<Item> items;
  if (!f.files.empty()) {
    if (!f.args.empty()) return ClientError("cannot specify both resource arguments and -f");
    BERTH_ASSIGN_OR_RETURN(std::vector<ManifestObject> objects, ReadManifests(f.files, std::cin));
    for (const auto& m : objects) {
      BERTH_ASSIGN_OR_RETURN(ApiResource r, ManifestResource(s, m));
      BERTH_ASSIGN_OR_RETURN(std::string ns, ManifestNamespace(s, r, m.object));
      items.push_back({r, ns, api::Name(m.object), m.source});
    }
  } else {
    ApiResource kind;
    BERTH_ASSIGN_OR_RETURN(std::vector<Target> targets, ResolveArgs(s, f.args, false, &kind));
    for (auto& t : targets) items.push_back({t.resource, s.RequestNamespace(t.resource), t.name, ""});
  }
  BERTH_ASSIGN_OR_RETURN(Duration timeout, ParseDuration(f.timeout));
  // --timeout=0: wait as long as it takes (a week stands for "forever").
  const Time deadline = RealClock::Get().Now() + (timeout.count() > 0 ? timeout : std::chrono::hours(24 * 7));
  std::vector<Status> errors;
  std::vector<const Item*> deleted;
  for (const auto& it : items) {
    client::DeleteOptions options;
    options.propagation_policy = client::PropagationPolicy::kBackground;
    Status st = s.http().Delete(client::ResourceRef(it.resource.Gvr(), it.ns), it.name, options);
    if (st.code() == Code::kNotFound && f.ignore_not_found) continue;
    if (!st.ok()) {
      errors.push_back(AddSource(st, "deleting", it.source));
      continue;
    }
    std::cout << it.resource.KindGroup() << " \"" << it.name << "\" deleted\n" << std::flush;
    deleted.push_back(&it);
  }
  if (f.wait) {
    WaitCondition gone;
    gone.for_delete = true;
    for (const Item* it : deleted) {
      BERTH_ASSIGN_OR_RETURN(bool met, WaitFor(s, it->resource, it->ns, it->name, gone, deadline));
      if (!met) {
        errors.push_back(ClientError("timed out waiting for the condition on " + it->resource.resource + "/" +
                                     it->name));
      }
    }
  }
  return ReportAll(errors);
}

// ---------------------------------------------------------------------------
// logs

struct LogsFlags {
  ConnectionFlags conn;
  std::vector<std::string> args;
  std::string container;
  bool follow = false;
  bool timestamps = false;
  bool previous = false;
  int64_t tail = -1;
};

Status RunLogs(Session& s, const LogsFlags& f) {
  if (f.args.empty() || f.args.size() > 2) {
    return ClientError("expected POD or TYPE/NAME and optionally a container name");
  }
  std::string pod_name = f.args[0];
  std::string container = f.container;
  if (f.args.size() == 2) container = f.args[1];
  BERTH_ASSIGN_OR_RETURN(ApiResource pods, s.Resource("pods"));
  if (auto slash = pod_name.find('/'); slash != std::string::npos) {
    BERTH_ASSIGN_OR_RETURN(ApiResource r, s.Resource(pod_name.substr(0, slash)));
    if (r.group != pods.group || r.resource != pods.resource) {
      return ClientError("cannot get the logs from " + r.GroupResource() + ": selector for " + r.GroupResource() +
                         " not implemented");
    }
    pod_name = pod_name.substr(slash + 1);
  }
  const client::ResourceRef ref(pods.Gvr(), s.ns());
  auto got = s.Call("GET", client::ResourcePath(ref, pod_name), pods, pod_name);
  if (got.status().code() == Code::kNotFound) {
    // kubectl logs finds the pod through its polymorphic helpers, which word it so.
    return ClientError("error from server (NotFound): pods \"" + pod_name + "\" not found in namespace \"" +
                       s.ns() + "\"");
  }
  if (!got.ok()) return got.status();
  json pod = std::move(*got);
  std::vector<std::string> names;
  if (pod.contains("spec") && pod["spec"].contains("containers") && pod["spec"]["containers"].is_array()) {
    for (const auto& c : pod["spec"]["containers"]) names.push_back(c.value("name", ""));
  }
  if (container.empty()) {
    const json& ann = pod["metadata"].contains("annotations") ? pod["metadata"]["annotations"] : json();
    if (ann.is_object() && ann.contains("kubectl.kubernetes.io/default-container")) {
      container = ann["kubectl.kubernetes.io/default-container"].get<std::string>();
    } else if (!names.empty()) {
      container = names[0];
      if (names.size() > 1) {
        std::string all;
        for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
        std::cerr << "Defaulted container \"" << container << "\" out of: " << all << "\n";
      }
    }
  } else if (std::find(names.begin(), names.end(), container) == names.end()) {
    bool init = false;
    if (pod["spec"].contains("initContainers") && pod["spec"]["initContainers"].is_array()) {
      for (const auto& c : pod["spec"]["initContainers"]) init = init || c.value("name", "") == container;
    }
    if (!init) return ClientError("container " + container + " is not valid for pod " + pod_name);
  }
  Query q;
  if (!container.empty()) q.emplace_back("container", container);
  if (f.follow) q.emplace_back("follow", "true");
  if (f.previous) q.emplace_back("previous", "true");
  if (f.tail >= 0) q.emplace_back("tailLines", std::to_string(f.tail));
  if (f.timestamps) q.emplace_back("timestamps", "true");
  client::RawRequest req{"GET", WithQuery(client::ResourcePath(ref, pod_name, "log"), std::move(q)),
                         {{"Accept", "application/json, */*"}}, ""};
  BERTH_ASSIGN_OR_RETURN(client::RawResponse res, s.http().DoStream(req, [](std::string_view chunk) {
    std::cout.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    std::cout.flush();
    return static_cast<bool>(std::cout);
  }));
  if (res.status < 200 || res.status >= 300) {
    return client::StatusFromResponse(res.status, res.body, "get", "pods", pod_name);
  }
  return Status::Ok();
}

// Adds the subcommand `name` over a fresh Flags (whose `conn` member takes the
// connection flags, -A too when `all_namespaces`) that opens a Session and
// runs `run` when invoked. Returns the subcommand, for its own options, and
// the flags they fill.
template <class Flags>
std::pair<CLI::App*, std::shared_ptr<Flags>> AddSessionCommand(CLI::App& app, int* exit_code, const std::string& name,
                                                               const std::string& description, bool all_namespaces,
                                                               Status (*run)(Session&, const Flags&)) {
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(name, description);
  AddConnectionFlags(cmd, &f->conn, all_namespaces);
  cmd->callback([f, exit_code, run] { Run(exit_code, f->conn, [&](Session& s) { return run(s, *f); }); });
  return {cmd, f};
}

}  // namespace

void AddClientCommands(CLI::App& app, int* exit_code) {
  {
    auto [cmd, f] = AddSessionCommand(app, exit_code, "apply",
                                      "Create or update objects from files (server-side apply)", false, RunApply);
    cmd->add_option("-f,--filename", f->files, "Files, directories (*.yaml, *.yml, *.json) or - for stdin");
  }
  {
    auto [cmd, f] = AddSessionCommand(app, exit_code, "get", "Display one or many resources as the server's tables",
                                      true, RunGet);
    cmd->add_option("args", f->args, "KIND [NAME...] or KIND/NAME...");
    cmd->add_option("-o,--output", f->output, "wide|yaml|json|name");
    cmd->add_option("-l,--selector", f->selector, "Label selector");
    cmd->add_option("--field-selector", f->field_selector, "Field selector");
    cmd->add_flag("--show-labels", f->show_labels, "Show all labels as the last column");
    cmd->add_flag("--no-headers", f->no_headers, "Don't print headers");
    cmd->add_flag("-w,--watch", f->watch, "After listing, watch for changes");
  }
  {
    auto [cmd, f] = AddSessionCommand(app, exit_code, "describe", "Show details of a resource and its events", true,
                                      RunDescribe);
    cmd->add_option("args", f->args, "KIND [NAME...] or KIND/NAME...");
    cmd->add_option("-l,--selector", f->selector, "Label selector");
  }
  {
    auto [cmd, f] = AddSessionCommand(app, exit_code, "delete", "Delete resources by name or from files", false,
                                      RunDelete);
    cmd->add_option("args", f->args, "KIND NAME... or KIND/NAME...");
    cmd->add_option("-f,--filename", f->files, "Files, directories or - for stdin");
    cmd->add_flag("--ignore-not-found", f->ignore_not_found, "Treat \"resource not found\" as a successful delete");
    cmd->add_flag("--wait,!--no-wait", f->wait, "Wait for the objects to be gone (default true)");
    cmd->add_option("--timeout", f->timeout, "How long to wait for the deletion (0: as long as it takes)");
  }
  {
    auto [cmd, f] = AddSessionCommand(app, exit_code, "logs", "Print the logs of a container in a pod", false, RunLogs);
    cmd->add_option("args", f->args, "POD [CONTAINER]");
    cmd->add_option("-c,--container", f->container, "Container name");
    cmd->add_flag("-f,--follow", f->follow, "Stream the logs");
    cmd->add_flag("--timestamps", f->timestamps, "Prefix each line with its RFC3339 timestamp");
    cmd->add_flag("-p,--previous", f->previous, "The previous terminated container's logs");
    cmd->add_option("--tail", f->tail, "Lines of recent log to show (-1: all)");
  }
  {
    auto [cmd, f] = AddSessionCommand(app, exit_code, "wait",
                                      "Wait for a condition on a resource, or for its deletion", false, RunWait);
    cmd->add_option("args", f->args, "KIND/NAME... or KIND NAME...");
    cmd->add_option("--for", f->for_condition, "condition=NAME[=VALUE] or delete");
    cmd->add_option("--timeout", f->timeout, "How long to wait (Go duration, default 30s)");
  }
}

}  // namespace berth::cli
