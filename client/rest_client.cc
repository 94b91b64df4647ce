#include "client/rest_client.h"

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

#include "client/api_status.h"

namespace berth::client {

namespace {

bool Unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~';
}

// Go's url.QueryEscape (space_as_plus) or url.PathEscape for one segment.
std::string Escape(std::string_view s, bool query) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (Unreserved(c) || (!query && (c == ':' || c == '@' || c == '&' || c == '=' || c == '+' ||
                                     c == '$' || c == ','))) {
      out += static_cast<char>(c);
    } else if (query && c == ' ') {
      out += '+';
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

using Query = std::vector<std::pair<std::string, std::string>>;

void AddWriteOptions(const WriteOptions& o, Query* q) {
  if (o.dry_run) q->emplace_back("dryRun", "All");
  if (!o.field_manager.empty()) q->emplace_back("fieldManager", o.field_manager);
  if (!o.field_validation.empty()) q->emplace_back("fieldValidation", o.field_validation);
}

std::string WithQuery(std::string path, Query q) {
  if (q.empty()) return path;
  return path + "?" + EncodeQuery(std::move(q));
}

// Newline-delimited watch events -> a queue of WatchEvents. The transport
// feeds it (BodySink); the WatchStream consumer takes from it.
class WatchDecoder final : public BodySink {
 public:
  bool OnBytes(std::string_view bytes) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (end_) return false;  // stopped or failed: take no more
    }
    pending_.append(bytes);  // only the transport thread touches pending_
    size_t start = 0;
    for (size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string_view line(pending_.data() + start, nl - start);
      if (line.find_first_not_of(" \r\t") == std::string_view::npos) continue;
      std::optional<WatchEvent> event = Decode(line);
      if (!event) {
        End(InternalError("unable to decode watch event: " + std::string(line)));
        return false;
      }
      std::lock_guard<std::mutex> l(mu_);
      if (end_) return false;
      events_.push_back(std::move(*event));
      cv_.notify_all();
    }
    pending_.erase(0, start);
    return true;
  }

  bool TakesWatchEvents() const override { return true; }
  bool OnWatchEvent(WatchEventType type, ObjectPtr object) override {
    std::lock_guard<std::mutex> l(mu_);
    if (end_) return false;
    events_.push_back(WatchEvent{type, std::move(object), Status::Ok()});
    cv_.notify_all();
    return true;
  }

  void OnEnd(Status status) override {
    End(status.ok() ? UnavailableError("watch closed") : std::move(status));
  }

  // The first end wins: a Stop, a decoding failure, or the transport's end.
  void End(Status status) {
    std::lock_guard<std::mutex> l(mu_);
    if (!end_) end_ = std::move(status);
    cv_.notify_all();
  }

  StatusOr<std::optional<WatchEvent>> Next(Duration timeout) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_for(l, timeout, [&] { return !events_.empty() || end_.has_value(); });
    if (!events_.empty()) {
      WatchEvent e = std::move(events_.front());
      events_.pop_front();
      return std::optional<WatchEvent>(std::move(e));
    }
    if (end_) return *end_;
    return std::optional<WatchEvent>();
  }

 private:
  static std::optional<WatchEvent> Decode(std::string_view line) {
    api::Object j = api::Object::parse(line, nullptr, /*allow_exceptions=*/false);
    std::optional<WatchEventType> type;
    if (j.is_object() && j.contains("type") && j["type"].is_string()) {
      type = ParseWatchEventType(j["type"].get<std::string>());
    }
    if (!type || !j.contains("object")) return std::nullopt;
    WatchEvent e;
    e.type = *type;
    e.object = std::make_shared<const api::Object>(std::move(j["object"]));
    if (e.type == WatchEventType::kError) {
      e.error = StatusFromObject(*e.object, 500);
      if (e.error.ok()) e.error = InternalError("watch ERROR event with a Success status");
    }
    return e;
  }

  std::string pending_;  // an incomplete last line
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<WatchEvent> events_;
  std::optional<Status> end_;
};

class RestWatchStream final : public WatchStream {
 public:
  RestWatchStream(std::shared_ptr<WatchDecoder> decoder, std::unique_ptr<BodyStream> body)
      : decoder_(std::move(decoder)), body_(std::move(body)) {}
  ~RestWatchStream() override {
    Stop();
    body_.reset();  // may join the transport's reader
  }

  StatusOr<std::optional<WatchEvent>> Next(Duration timeout) override { return decoder_->Next(timeout); }

  void Stop() override {
    // Ends the stream for the consumer at once (events already queued are
    // still returned), then for the transport and the server.
    decoder_->End(UnavailableError("watch closed"));
    body_->Cancel();
  }

 private:
  std::shared_ptr<WatchDecoder> decoder_;
  std::unique_ptr<BodyStream> body_;
};

// DoStream's sink: forwards pieces to the caller's callback, records the end.
class CallbackSink final : public BodySink {
 public:
  explicit CallbackSink(const std::function<bool(std::string_view)>& on_body) : on_body_(on_body) {}

  bool OnBytes(std::string_view bytes) override { return on_body_(bytes); }
  void OnEnd(Status status) override {
    std::lock_guard<std::mutex> l(mu_);
    end_ = std::move(status);
    cv_.notify_all();
  }
  Status Wait() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return end_.has_value(); });
    return *end_;
  }

 private:
  // Valid while DoStream waits, which is as long as the transport may call
  // OnBytes (never after OnEnd).
  const std::function<bool(std::string_view)>& on_body_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Status> end_;
};

// A create or update of a whole object: the object goes as RawRequest::object
// (a copy the transport may hand over decoded), the stored object comes back.
RawRequest WholeObjectRequest(std::string method, std::string target, const api::Object& obj) {
  RawRequest r{std::move(method), std::move(target), {}, "", /*take_objects=*/true};
  r.object = std::make_shared<const api::Object>(obj);
  return r;
}

}  // namespace

std::string ResourcePath(const ResourceRef& ref, std::string_view name, std::string_view subresource) {
  std::string path = ref.gvr.group.empty() ? "/api/" + ref.gvr.version
                                           : "/apis/" + ref.gvr.group + "/" + ref.gvr.version;
  if (!ref.ns.empty()) path += "/namespaces/" + Escape(ref.ns, false);
  path += "/" + ref.gvr.resource;
  if (!name.empty()) path += "/" + Escape(name, false);
  if (!subresource.empty()) path += "/" + std::string(subresource);
  return path;
}

std::string EncodeQuery(std::vector<std::pair<std::string, std::string>> params) {
  std::stable_sort(params.begin(), params.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (const auto& [k, v] : params) {
    if (!out.empty()) out += '&';
    out += Escape(k, true);
    out += '=';
    out += Escape(v, true);
  }
  return out;
}

HeaderList RequestHeaders(const RawRequest& request) {
  HeaderList out;
  auto given = [&](std::string_view name) {
    return std::any_of(request.headers.begin(), request.headers.end(),
                       [&](const auto& h) { return EqualsIgnoreCase(h.first, name); });
  };
  if (!given("Accept")) out.emplace_back("Accept", "application/json");
  if ((!request.body.empty() || request.object) && !given("Content-Type")) {
    out.emplace_back("Content-Type", "application/json");
  }
  out.insert(out.end(), request.headers.begin(), request.headers.end());
  return out;
}

RestClient::RestClient(std::unique_ptr<Transport> transport) : transport_(std::move(transport)) {}

RestClient::~RestClient() = default;

StatusOr<RawResponse> RestClient::Do(const RawRequest& request) { return transport_->Do(request); }

StatusOr<RawResponse> RestClient::DoStream(const RawRequest& request,
                                           const std::function<bool(std::string_view)>& on_body) {
  auto sink = std::make_shared<CallbackSink>(on_body);
  BERTH_ASSIGN_OR_RETURN(StreamStart start, transport_->Stream(request, sink));
  if (!start.stream) return std::move(start.response);
  Status end = sink->Wait();
  start.stream.reset();
  if (!end.ok()) return end;
  return std::move(start.response);
}

StatusOr<api::Object> RestClient::JsonCall(const RawRequest& r, const ResourceRef& ref, std::string_view name,
                                           std::vector<ObjectPtr>* objects) {
  BERTH_ASSIGN_OR_RETURN(RawResponse res, transport_->Do(r));
  if (res.status < 200 || res.status >= 300) {
    return StatusFromResponse(res.status, res.body, Lower(r.method), ref.gvr.GroupResource().String(), name);
  }
  if (objects != nullptr) {
    *objects = std::move(res.objects);
  } else if (res.body.empty() && res.objects.size() == 1) {
    return *res.objects.front();  // the stored object, handed over: a copy, no parse
  }
  api::Object obj = api::Object::parse(res.body, nullptr, /*allow_exceptions=*/false);
  if (obj.is_discarded() || !obj.is_object()) {
    return InternalError("unable to decode the response of " + r.method + " " + r.target + " as JSON");
  }
  return obj;
}

StatusOr<api::Object> RestClient::Get(const ResourceRef& ref, const std::string& name, const GetOptions& options) {
  Query q;
  if (!options.resource_version.empty()) q.emplace_back("resourceVersion", options.resource_version);
  return JsonCall({"GET", WithQuery(ResourcePath(ref, name), std::move(q)), {}, "", /*take_objects=*/true}, ref, name);
}

Status RestClient::ListCall(const ResourceRef& ref, const ListOptions& options, bool take_objects,
                            SharedObjectList* metadata_out, std::vector<ObjectPtr>* handed,
                            const std::function<void(api::Object&&)>& add) {
  Query q;
  if (!options.label_selector.empty()) q.emplace_back("labelSelector", options.label_selector);
  if (!options.field_selector.empty()) q.emplace_back("fieldSelector", options.field_selector);
  if (options.limit > 0) q.emplace_back("limit", std::to_string(options.limit));
  if (!options.continue_token.empty()) q.emplace_back("continue", options.continue_token);
  if (!options.resource_version.empty()) q.emplace_back("resourceVersion", options.resource_version);
  RawRequest request{"GET", WithQuery(ResourcePath(ref), std::move(q)), {}, ""};
  request.take_objects = take_objects;
  BERTH_ASSIGN_OR_RETURN(api::Object list, JsonCall(request, ref, "", handed));
  if (auto m = list.find("metadata"); m != list.end() && m->is_object()) {
    metadata_out->resource_version = m->value("resourceVersion", "");
    metadata_out->continue_token = m->value("continue", "");
    if (auto r = m->find("remainingItemCount"); r != m->end() && r->is_number_integer()) {
      metadata_out->remaining_item_count = r->get<int64_t>();
    }
  }
  // Built-in kinds' list items carry no apiVersion/kind on the wire.
  std::string api_version = list.value("apiVersion", "");
  std::string kind = list.value("kind", "");
  if (kind.size() > 4 && kind.compare(kind.size() - 4, 4, "List") == 0) kind.resize(kind.size() - 4);
  if (auto items = list.find("items"); items != list.end() && items->is_array()) {
    for (auto& item : *items) {
      if (!item.is_object()) continue;
      if (!item.contains("apiVersion") && !api_version.empty()) item["apiVersion"] = api_version;
      if (!item.contains("kind") && !kind.empty()) item["kind"] = kind;
      add(std::move(item));
    }
  }
  return Status::Ok();
}

StatusOr<ObjectList> RestClient::List(const ResourceRef& ref, const ListOptions& options) {
  SharedObjectList metadata;
  ObjectList out;
  BERTH_RETURN_IF_ERROR(ListCall(ref, options, /*take_objects=*/false, &metadata, nullptr,
                                 [&](api::Object&& item) { out.items.push_back(std::move(item)); }));
  out.resource_version = std::move(metadata.resource_version);
  out.continue_token = std::move(metadata.continue_token);
  out.remaining_item_count = metadata.remaining_item_count;
  return out;
}

StatusOr<SharedObjectList> RestClient::ListShared(const ResourceRef& ref, const ListOptions& options) {
  SharedObjectList out;
  std::vector<ObjectPtr> handed;
  BERTH_RETURN_IF_ERROR(ListCall(ref, options, /*take_objects=*/true, &out, &handed, [&](api::Object&& item) {
    out.items.push_back(std::make_shared<const api::Object>(std::move(item)));
  }));
  // A transport hands the items over all or none (their body is then empty).
  if (!handed.empty()) out.items = std::move(handed);
  return out;
}

StatusOr<api::Object> RestClient::Create(const ResourceRef& ref, const api::Object& obj, const CreateOptions& options) {
  Query q;
  AddWriteOptions(options, &q);
  return JsonCall(WholeObjectRequest("POST", WithQuery(ResourcePath(ref), std::move(q)), obj), ref, api::Name(obj));
}

StatusOr<api::Object> RestClient::Update(const ResourceRef& ref, const api::Object& obj, const UpdateOptions& options) {
  Query q;
  AddWriteOptions(options, &q);
  const std::string& name = api::Name(obj);
  if (name.empty()) return BadRequestError("resource name may not be empty");
  return JsonCall(WholeObjectRequest("PUT", WithQuery(ResourcePath(ref, name), std::move(q)), obj), ref, name);
}

StatusOr<api::Object> RestClient::UpdateStatus(const ResourceRef& ref, const api::Object& obj,
                                               const UpdateOptions& options) {
  Query q;
  AddWriteOptions(options, &q);
  const std::string& name = api::Name(obj);
  if (name.empty()) return BadRequestError("resource name may not be empty");
  return JsonCall(WholeObjectRequest("PUT", WithQuery(ResourcePath(ref, name, "status"), std::move(q)), obj), ref,
                  name);
}

StatusOr<api::Object> RestClient::Patch(const ResourceRef& ref, const std::string& name, PatchType type,
                                        std::string_view patch, const PatchOptions& options) {
  Query q;
  AddWriteOptions(options, &q);
  if (options.force) q.emplace_back("force", *options.force ? "true" : "false");
  RawRequest r{"PATCH", WithQuery(ResourcePath(ref, name, options.subresource), std::move(q)),
               {{"Content-Type", std::string(PatchContentType(type))}}, std::string(patch), /*take_objects=*/true};
  return JsonCall(r, ref, name);
}

Status RestClient::Bind(const ResourceRef& pods, const std::string& pod, const std::string& node,
                        const CreateOptions& options) {
  Query q;
  AddWriteOptions(options, &q);
  const api::Object binding = {{"apiVersion", "v1"},
                               {"kind", "Binding"},
                               {"metadata", {{"name", pod}, {"namespace", pods.ns}}},
                               {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  return JsonCall(WholeObjectRequest("POST", WithQuery(ResourcePath(pods, pod, "binding"), std::move(q)), binding),
                  pods, pod)
      .status();
}

Status RestClient::Delete(const ResourceRef& ref, const std::string& name, const DeleteOptions& options) {
  RawRequest r{"DELETE", ResourcePath(ref, name), {}, DeleteOptionsToJson(options).dump()};
  return JsonCall(r, ref, name).status();
}

StatusOr<std::unique_ptr<WatchStream>> RestClient::Watch(const ResourceRef& ref, const WatchOptions& options) {
  Query q{{"watch", "true"}};
  if (!options.resource_version.empty()) q.emplace_back("resourceVersion", options.resource_version);
  if (!options.label_selector.empty()) q.emplace_back("labelSelector", options.label_selector);
  if (!options.field_selector.empty()) q.emplace_back("fieldSelector", options.field_selector);
  if (options.timeout_seconds) q.emplace_back("timeoutSeconds", std::to_string(*options.timeout_seconds));
  if (options.allow_watch_bookmarks) q.emplace_back("allowWatchBookmarks", "true");
  auto decoder = std::make_shared<WatchDecoder>();
  BERTH_ASSIGN_OR_RETURN(StreamStart start,
                         transport_->Stream({"GET", WithQuery(ResourcePath(ref), std::move(q)), {}, ""}, decoder));
  if (!start.stream) {
    return StatusFromResponse(start.response.status, start.response.body, "get", ref.gvr.GroupResource().String(), "");
  }
  return std::unique_ptr<WatchStream>(std::make_unique<RestWatchStream>(std::move(decoder), std::move(start.stream)));
}

}  // namespace berth::client
