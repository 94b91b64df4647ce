#include "client/http_client.h"

// Boost 1.74's Asio needs <utility> before its headers with GCC 12.
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "client/api_status.h"

namespace berth::client {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using SteadyTime = std::chrono::steady_clock::time_point;

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

// "GET" -> "Get", as Go's net/http error messages print the method.
std::string GoMethod(std::string_view method) {
  std::string out;
  for (size_t i = 0; i < method.size(); ++i) {
    out += static_cast<char>(i == 0 ? std::toupper(method[i]) : std::tolower(method[i]));
  }
  return out;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void AddWriteOptions(const WriteOptions& o, std::vector<std::pair<std::string, std::string>>* q) {
  if (o.dry_run) q->emplace_back("dryRun", "All");
  if (!o.field_manager.empty()) q->emplace_back("fieldManager", o.field_manager);
  if (!o.field_validation.empty()) q->emplace_back("fieldValidation", o.field_validation);
}

std::string WithQuery(std::string path, std::vector<std::pair<std::string, std::string>> q) {
  if (q.empty()) return path;
  return path + "?" + EncodeQuery(std::move(q));
}

// One keep-alive connection. Every operation runs on the connection's own
// io_context on the calling thread, bounded by the tcp_stream's deadline.
struct Connection {
  asio::io_context ioc;
  beast::tcp_stream stream{ioc};
  beast::flat_buffer buffer;
  bool reused = false;

  template <class Initiate>
  beast::error_code Run(SteadyTime deadline, Initiate initiate) {
    beast::error_code result = asio::error::would_block;
    if (deadline == SteadyTime::max()) {
      stream.expires_never();
    } else {
      stream.expires_at(deadline);
    }
    initiate([&result](beast::error_code ec, auto&&...) { result = ec; });
    ioc.restart();
    ioc.run();
    return result;
  }

  // False when the server closed the idle connection (EOF readable) or sent
  // something unexpected.
  bool Alive() {
    auto& s = stream.socket();
    if (!s.is_open()) return false;
    beast::error_code ec, ignored;
    s.non_blocking(true, ec);
    if (ec) return false;
    char byte;
    s.read_some(asio::buffer(&byte, 1), ec);
    s.non_blocking(false, ignored);
    return ec == asio::error::would_block || ec == asio::error::try_again;
  }
};

bool IsEof(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe;
}

// Watch events from a chunked response body, read by a thread of their own.
class HttpWatchStream final : public WatchStream {
 public:
  explicit HttpWatchStream(std::unique_ptr<Connection> conn) : conn_(std::move(conn)) {
    parser_.body_limit(std::numeric_limits<std::uint64_t>::max());
  }
  ~HttpWatchStream() override {
    Stop();
    if (reader_.joinable()) reader_.join();
  }

  http::response_parser<http::buffer_body>& parser() { return parser_; }
  Connection& conn() { return *conn_; }
  void StartReader() { reader_ = std::thread([this] { ReadLoop(); }); }

  StatusOr<std::optional<WatchEvent>> Next(Duration timeout) override {
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

  void Stop() override {
    std::lock_guard<std::mutex> l(mu_);
    if (stop_requested_) return;
    stop_requested_ = true;
    // Runs inside the reader's io_context: closing the socket there aborts a
    // pending read safely (sockets are not thread-safe).
    asio::post(conn_->ioc, [conn = conn_.get()] {
      beast::error_code ec;
      conn->stream.socket().shutdown(tcp::socket::shutdown_both, ec);
      conn->stream.socket().close(ec);
    });
  }

 private:
  void Finish(Status s) {
    std::lock_guard<std::mutex> l(mu_);
    if (!end_) end_ = std::move(s);
    cv_.notify_all();
  }

  // Returns false on an undecodable line.
  bool Emit(std::string_view line) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    std::optional<WatchEventType> type;
    if (j.is_object() && j.contains("type") && j["type"].is_string()) {
      type = ParseWatchEventType(j["type"].get<std::string>());
    }
    if (!type || !j.contains("object")) return false;
    WatchEvent e;
    e.type = *type;
    e.object = std::move(j["object"]);
    if (e.type == WatchEventType::kError) {
      e.error = StatusFromObject(e.object, 500);
      if (e.error.ok()) e.error = InternalError("watch ERROR event with a Success status");
    }
    std::lock_guard<std::mutex> l(mu_);
    events_.push_back(std::move(e));
    cv_.notify_all();
    return true;
  }

  void ReadLoop() {
    std::string pending;
    char chunk[16384];
    for (;;) {
      if (parser_.is_done()) return Finish(UnavailableError("watch closed"));
      parser_.get().body().data = chunk;
      parser_.get().body().size = sizeof chunk;
      beast::error_code ec = conn_->Run(SteadyTime::max(), [&](auto handler) {
        http::async_read_some(conn_->stream, conn_->buffer, parser_, std::move(handler));
      });
      if (ec == http::error::need_buffer) ec = {};
      size_t got = sizeof chunk - parser_.get().body().size;
      pending.append(chunk, got);
      size_t start = 0;
      for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
        std::string_view line(pending.data() + start, nl - start);
        if (line.find_first_not_of(" \r\t") == std::string_view::npos) continue;
        if (!Emit(line)) return Finish(InternalError("unable to decode watch event: " + std::string(line)));
      }
      pending.erase(0, start);
      if (ec) {
        bool stopping;
        {
          std::lock_guard<std::mutex> l(mu_);
          stopping = stop_requested_;
        }
        if (stopping || IsEof(ec) || ec == asio::error::operation_aborted) {
          return Finish(UnavailableError("watch closed"));
        }
        return Finish(UnavailableError("watch stream: " + ec.message()));
      }
    }
  }

  std::unique_ptr<Connection> conn_;
  http::response_parser<http::buffer_body> parser_;
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<WatchEvent> events_;
  std::optional<Status> end_;
  bool stop_requested_ = false;
};

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

struct HttpClient::Impl {
  RestConfig cfg;
  HttpClientOptions opt;
  std::mutex mu;
  std::vector<std::unique_ptr<Connection>> idle;  // most recently used last

  std::string HostPort() const {
    std::string host = cfg.url.host.find(':') != std::string::npos ? "[" + cfg.url.host + "]" : cfg.url.host;
    return host + ":" + std::to_string(cfg.url.port);
  }
  std::string Url(const std::string& target) const { return "http://" + HostPort() + target; }

  Status TransportError(const RawRequest& r, const std::string& target, const beast::error_code& ec,
                        bool connecting) const {
    std::string msg = GoMethod(r.method) + " \"" + Url(target) + "\": ";
    if (connecting) msg += "dial tcp " + HostPort() + ": connect: ";
    if (ec == beast::error::timeout) {
      return TimeoutError(msg + "context deadline exceeded (Client.Timeout exceeded)");
    }
    return UnavailableError(msg + ec.message());
  }

  std::unique_ptr<Connection> TakeIdle() {
    std::lock_guard<std::mutex> l(mu);
    while (!idle.empty()) {
      std::unique_ptr<Connection> c = std::move(idle.back());
      idle.pop_back();
      if (c->Alive()) return c;
    }
    return nullptr;
  }

  void ReturnIdle(std::unique_ptr<Connection> c) {
    c->reused = true;
    std::lock_guard<std::mutex> l(mu);
    if (idle.size() >= opt.max_idle_connections) idle.erase(idle.begin());
    idle.push_back(std::move(c));
  }

  StatusOr<std::unique_ptr<Connection>> Connect(const RawRequest& r, const std::string& target,
                                                SteadyTime deadline) {
    auto c = std::make_unique<Connection>();
    tcp::resolver resolver(c->ioc);
    beast::error_code ec;
    auto endpoints = resolver.resolve(cfg.url.host, std::to_string(cfg.url.port), ec);
    if (ec) return TransportError(r, target, ec, true);
    ec = c->Run(deadline, [&](auto handler) {
      c->stream.async_connect(endpoints, [h = std::move(handler)](beast::error_code e, const tcp::endpoint&) mutable {
        h(e);
      });
    });
    if (ec) return TransportError(r, target, ec, true);
    c->stream.socket().set_option(tcp::no_delay(true), ec);
    return c;
  }

  http::request<http::string_body> Build(const RawRequest& r, const std::string& target) const {
    http::request<http::string_body> req;
    req.method_string(r.method);
    req.target(target);
    req.version(11);
    req.set(http::field::host, HostPort());
    req.set(http::field::user_agent, opt.user_agent);
    req.set(http::field::accept, "application/json");
    if (!cfg.bearer_token.empty()) req.set(http::field::authorization, "Bearer " + cfg.bearer_token);
    if (!r.body.empty()) req.set(http::field::content_type, "application/json");
    for (const auto& [k, v] : r.headers) req.set(k, v);
    req.keep_alive(true);
    req.body() = r.body;
    req.prepare_payload();
    return req;
  }

  StatusOr<RawResponse> Do(const RawRequest& r) {
    const std::string target = cfg.url.path_prefix + r.target;
    const SteadyTime deadline =
        std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(opt.request_timeout);
    const bool idempotent = r.method == "GET" || r.method == "PUT" || r.method == "DELETE" || r.method == "HEAD";
    http::request<http::string_body> req = Build(r, target);
    for (int attempt = 0;; ++attempt) {
      std::unique_ptr<Connection> c = attempt == 0 ? TakeIdle() : nullptr;
      if (!c) {
        BERTH_ASSIGN_OR_RETURN(c, Connect(r, target, deadline));
      }
      const bool retriable = c->reused && attempt == 0;
      beast::error_code ec = c->Run(deadline, [&](auto handler) {
        http::async_write(c->stream, req, std::move(handler));
      });
      if (ec) {
        if (retriable && ec != beast::error::timeout) continue;
        return TransportError(r, target, ec, false);
      }
      http::response_parser<http::string_body> parser;
      parser.body_limit(opt.max_response_bytes);
      ec = c->Run(deadline, [&](auto handler) {
        http::async_read(c->stream, c->buffer, parser, std::move(handler));
      });
      if (ec) {
        if (retriable && idempotent && !parser.got_some() && IsEof(ec)) continue;
        return TransportError(r, target, ec, false);
      }
      http::response<http::string_body> res = parser.release();
      RawResponse out;
      out.status = static_cast<int>(res.result_int());
      out.content_type = std::string(res[http::field::content_type]);
      out.body = std::move(res.body());
      if (res.keep_alive()) ReturnIdle(std::move(c));
      return out;
    }
  }

  // A request whose success answer is one JSON object.
  StatusOr<api::Object> JsonCall(RawRequest r, const ResourceRef& ref, std::string_view name) {
    BERTH_ASSIGN_OR_RETURN(RawResponse res, Do(r));
    if (res.status < 200 || res.status >= 300) {
      return StatusFromResponse(res.status, res.body, Lower(r.method), ref.gvr.GroupResource().String(), name);
    }
    api::Object obj = api::Object::parse(res.body, nullptr, /*allow_exceptions=*/false);
    if (obj.is_discarded() || !obj.is_object()) {
      return InternalError("unable to decode the response of " + r.method + " " + r.target + " as JSON");
    }
    return obj;
  }
};

HttpClient::HttpClient(RestConfig config, HttpClientOptions options)
    : config_(std::move(config)), impl_(std::make_unique<Impl>()) {
  impl_->cfg = config_;
  impl_->opt = std::move(options);
}

HttpClient::~HttpClient() = default;

StatusOr<RawResponse> HttpClient::Do(const RawRequest& request) { return impl_->Do(request); }

StatusOr<api::Object> HttpClient::Get(const ResourceRef& ref, const std::string& name, const GetOptions& options) {
  std::vector<std::pair<std::string, std::string>> q;
  if (!options.resource_version.empty()) q.emplace_back("resourceVersion", options.resource_version);
  return impl_->JsonCall({"GET", WithQuery(ResourcePath(ref, name), std::move(q)), {}, ""}, ref, name);
}

StatusOr<ObjectList> HttpClient::List(const ResourceRef& ref, const ListOptions& options) {
  std::vector<std::pair<std::string, std::string>> q;
  if (!options.label_selector.empty()) q.emplace_back("labelSelector", options.label_selector);
  if (!options.field_selector.empty()) q.emplace_back("fieldSelector", options.field_selector);
  if (options.limit > 0) q.emplace_back("limit", std::to_string(options.limit));
  if (!options.continue_token.empty()) q.emplace_back("continue", options.continue_token);
  if (!options.resource_version.empty()) q.emplace_back("resourceVersion", options.resource_version);
  BERTH_ASSIGN_OR_RETURN(api::Object list,
                         impl_->JsonCall({"GET", WithQuery(ResourcePath(ref), std::move(q)), {}, ""}, ref, ""));
  ObjectList out;
  if (auto m = list.find("metadata"); m != list.end() && m->is_object()) {
    out.resource_version = m->value("resourceVersion", "");
    out.continue_token = m->value("continue", "");
    if (auto r = m->find("remainingItemCount"); r != m->end() && r->is_number_integer()) {
      out.remaining_item_count = r->get<int64_t>();
    }
  }
  // Built-in kinds' list items carry no apiVersion/kind on the wire.
  std::string api_version = list.value("apiVersion", "");
  std::string kind = list.value("kind", "");
  if (kind.size() > 4 && kind.compare(kind.size() - 4, 4, "List") == 0) kind.resize(kind.size() - 4);
  if (auto items = list.find("items"); items != list.end() && items->is_array()) {
    out.items.reserve(items->size());
    for (auto& item : *items) {
      if (!item.is_object()) continue;
      if (!item.contains("apiVersion") && !api_version.empty()) item["apiVersion"] = api_version;
      if (!item.contains("kind") && !kind.empty()) item["kind"] = kind;
      out.items.push_back(std::move(item));
    }
  }
  return out;
}

StatusOr<api::Object> HttpClient::Create(const ResourceRef& ref, const api::Object& obj,
                                         const CreateOptions& options) {
  std::vector<std::pair<std::string, std::string>> q;
  AddWriteOptions(options, &q);
  return impl_->JsonCall({"POST", WithQuery(ResourcePath(ref), std::move(q)), {}, obj.dump()}, ref,
                         api::Name(obj));
}

StatusOr<api::Object> HttpClient::Update(const ResourceRef& ref, const api::Object& obj,
                                         const UpdateOptions& options) {
  std::vector<std::pair<std::string, std::string>> q;
  AddWriteOptions(options, &q);
  const std::string& name = api::Name(obj);
  if (name.empty()) return BadRequestError("resource name may not be empty");
  return impl_->JsonCall({"PUT", WithQuery(ResourcePath(ref, name), std::move(q)), {}, obj.dump()}, ref, name);
}

StatusOr<api::Object> HttpClient::UpdateStatus(const ResourceRef& ref, const api::Object& obj,
                                               const UpdateOptions& options) {
  std::vector<std::pair<std::string, std::string>> q;
  AddWriteOptions(options, &q);
  const std::string& name = api::Name(obj);
  if (name.empty()) return BadRequestError("resource name may not be empty");
  return impl_->JsonCall({"PUT", WithQuery(ResourcePath(ref, name, "status"), std::move(q)), {}, obj.dump()},
                         ref, name);
}

StatusOr<api::Object> HttpClient::Patch(const ResourceRef& ref, const std::string& name, PatchType type,
                                        std::string_view patch, const PatchOptions& options) {
  std::vector<std::pair<std::string, std::string>> q;
  AddWriteOptions(options, &q);
  if (options.force) q.emplace_back("force", *options.force ? "true" : "false");
  RawRequest r{"PATCH", WithQuery(ResourcePath(ref, name, options.subresource), std::move(q)),
               {{"Content-Type", std::string(PatchContentType(type))}}, std::string(patch)};
  return impl_->JsonCall(std::move(r), ref, name);
}

Status HttpClient::Delete(const ResourceRef& ref, const std::string& name, const DeleteOptions& options) {
  RawRequest r{"DELETE", ResourcePath(ref, name), {}, DeleteOptionsToJson(options).dump()};
  return impl_->JsonCall(std::move(r), ref, name).status();
}

StatusOr<std::unique_ptr<WatchStream>> HttpClient::Watch(const ResourceRef& ref, const WatchOptions& options) {
  std::vector<std::pair<std::string, std::string>> q{{"watch", "true"}};
  if (!options.resource_version.empty()) q.emplace_back("resourceVersion", options.resource_version);
  if (!options.label_selector.empty()) q.emplace_back("labelSelector", options.label_selector);
  if (!options.field_selector.empty()) q.emplace_back("fieldSelector", options.field_selector);
  if (options.timeout_seconds) q.emplace_back("timeoutSeconds", std::to_string(*options.timeout_seconds));
  if (options.allow_watch_bookmarks) q.emplace_back("allowWatchBookmarks", "true");
  RawRequest r{"GET", WithQuery(ResourcePath(ref), std::move(q)), {}, ""};
  const std::string target = config_.url.path_prefix + r.target;
  const SteadyTime deadline = std::chrono::steady_clock::now() +
                              std::chrono::duration_cast<std::chrono::steady_clock::duration>(impl_->opt.request_timeout);
  BERTH_ASSIGN_OR_RETURN(std::unique_ptr<Connection> c, impl_->Connect(r, target, deadline));
  auto req = impl_->Build(r, target);
  beast::error_code ec = c->Run(deadline, [&](auto handler) { http::async_write(c->stream, req, std::move(handler)); });
  if (ec) return impl_->TransportError(r, target, ec, false);
  auto stream = std::make_unique<HttpWatchStream>(std::move(c));
  Connection& conn = stream->conn();
  auto& parser = stream->parser();
  ec = conn.Run(deadline, [&](auto handler) { http::async_read_header(conn.stream, conn.buffer, parser, std::move(handler)); });
  if (ec) return impl_->TransportError(r, target, ec, false);
  int status = static_cast<int>(parser.get().result_int());
  if (status != 200) {
    // Read the (small) error body, then decode it.
    std::string body;
    char chunk[4096];
    while (!parser.is_done() && body.size() < (1u << 20)) {
      parser.get().body().data = chunk;
      parser.get().body().size = sizeof chunk;
      ec = conn.Run(deadline, [&](auto handler) { http::async_read_some(conn.stream, conn.buffer, parser, std::move(handler)); });
      if (ec == http::error::need_buffer) ec = {};
      body.append(chunk, sizeof chunk - parser.get().body().size);
      if (ec) break;
    }
    return StatusFromResponse(status, body, "get", ref.gvr.GroupResource().String(), "");
  }
  stream->StartReader();
  return std::unique_ptr<WatchStream>(std::move(stream));
}

}  // namespace berth::client
