#include "client/testing/fake_client.h"

#include <charconv>
#include <deque>

#include "api/conditions.h"
#include "api/patch.h"
#include "api/selectors.h"
#include "api/unstructured.h"
#include "client/api_status.h"

namespace berth::client::testing {

namespace {

// An ERROR watch event as kube-apiserver sends it: the Status document of `s`.
WatchEvent ErrorEvent(const Status& s) {
  WatchEvent e;
  e.type = WatchEventType::kError;
  e.object = std::make_shared<const api::Object>(FailureStatusObject(s));
  e.error = s;
  return e;
}

// `current` with the status of `source` (none when `source` has none): what a
// write to the status subresource stores.
api::Object WithStatusOf(const api::Object& current, const api::Object& source) {
  api::Object out = current;
  if (source.contains("status")) {
    out["status"] = source["status"];
  } else {
    out.erase("status");
  }
  return out;
}

StatusOr<int64_t> ParseRevision(const std::string& rv) {
  if (rv.empty()) return int64_t{0};
  int64_t v = 0;
  auto [p, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), v);
  if (ec != std::errc() || p != rv.data() + rv.size() || v < 0) {
    return BadRequestError("invalid resource version \"" + rv + "\"");
  }
  return v;
}

// The store predicate for a list or watch (every field path is accepted; a
// real server only allows each kind's selectable fields).
StatusOr<store::Predicate> BuildPredicate(const std::string& label_selector,
                                          const std::string& field_selector) {
  BERTH_ASSIGN_OR_RETURN(api::LabelSelector labels, api::LabelSelector::Parse(label_selector));
  BERTH_ASSIGN_OR_RETURN(api::FieldSelector fields, api::FieldSelector::Parse(field_selector));
  if (labels.IsEverything() && fields.IsEverything()) return store::Predicate{};
  return store::Predicate([labels = std::move(labels), fields = std::move(fields)](const api::Object& obj) {
    return labels.MatchesObject(obj) && fields.Matches(obj);
  });
}

// Puts the request's namespace on the object, as the API server does.
StatusOr<api::Object> InNamespace(const ResourceRef& ref, api::Object obj) {
  if (!obj.is_object()) return BadRequestError("the object is not a JSON object");
  api::Object& meta = obj["metadata"];
  if (!meta.is_object()) meta = api::Object::object();
  const std::string& ns = api::Namespace(obj);
  if (!ns.empty() && !ref.ns.empty() && ns != ref.ns) {
    return BadRequestError("the namespace of the provided object does not match the namespace sent on the request");
  }
  if (ref.ns.empty()) {
    meta.erase("namespace");
  } else {
    meta["namespace"] = ref.ns;
  }
  return obj;
}

class FakeWatchStream final : public WatchStream {
 public:
  FakeWatchStream(std::deque<WatchEvent> initial, std::shared_ptr<store::Watcher> watcher,
                  std::function<void(const WatchEvent&)> before_event)
      : initial_(std::move(initial)), watcher_(std::move(watcher)), before_event_(std::move(before_event)) {}
  ~FakeWatchStream() override { Stop(); }

  StatusOr<std::optional<WatchEvent>> Next(Duration timeout) override {
    StatusOr<std::optional<WatchEvent>> e = NextEvent(timeout);
    if (e.ok() && e->has_value() && before_event_) before_event_(**e);
    return e;
  }

  void Stop() override {
    if (watcher_) watcher_->Stop();
  }

 private:
  StatusOr<std::optional<WatchEvent>> NextEvent(Duration timeout) {
    if (!initial_.empty()) {
      WatchEvent e = std::move(initial_.front());
      initial_.pop_front();
      return std::optional<WatchEvent>(std::move(e));
    }
    if (!watcher_ || ended_) return UnavailableError("watch closed");
    StatusOr<std::optional<store::WatchEvent>> next = watcher_->Next(timeout);
    if (!next.ok()) {
      ended_ = true;
      // The store closes a watcher that fell behind with kGone: a server
      // reports that as an ERROR event before closing the stream.
      if (next.status().code() == Code::kGone) return std::optional<WatchEvent>(ErrorEvent(next.status()));
      return UnavailableError("watch closed");
    }
    if (!next->has_value()) return std::optional<WatchEvent>();
    const store::WatchEvent& se = **next;
    WatchEvent e;
    e.type = se.type == store::EventType::kAdded      ? WatchEventType::kAdded
             : se.type == store::EventType::kModified ? WatchEventType::kModified
                                                      : WatchEventType::kDeleted;
    e.object = se.object;  // shared, as the in-process client shares the server's
    return std::optional<WatchEvent>(std::move(e));
  }

  std::deque<WatchEvent> initial_;
  std::shared_ptr<store::Watcher> watcher_;
  std::function<void(const WatchEvent&)> before_event_;
  bool ended_ = false;
};

}  // namespace

FakeClient::FakeClient(Clock& clock, const store::StoreOptions& options) : clock_(clock), store_(clock, options) {}

FakeClient::~FakeClient() { CloseWatches(); }

Status FakeClient::Enter(const std::string& verb) {
  std::function<void()> before;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (verb != "get" && verb != "list" && verb != "watch") before = before_write_;
  }
  if (before) before();
  std::lock_guard<std::mutex> l(mu_);
  calls_[verb]++;
  auto it = injected_.find(verb);
  if (it == injected_.end() || it->second.empty()) return Status::Ok();
  Status s = std::move(it->second.front());
  it->second.erase(it->second.begin());
  return s;
}

void FakeClient::BeforeWrite(std::function<void()> fn) {
  std::lock_guard<std::mutex> l(mu_);
  before_write_ = std::move(fn);
}

void FakeClient::BeforeWatchEvent(std::function<void(const WatchEvent&)> fn) {
  std::lock_guard<std::mutex> l(before_watch_event_->mu);
  before_watch_event_->fn = std::move(fn);
}

void FakeClient::InjectError(const std::string& verb, Status status) {
  std::lock_guard<std::mutex> l(mu_);
  injected_[verb].push_back(std::move(status));
}

int FakeClient::CallCount(const std::string& verb) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = calls_.find(verb);
  return it == calls_.end() ? 0 : it->second;
}

void FakeClient::CloseWatches() {
  std::vector<std::shared_ptr<store::Watcher>> live;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (auto& w : watchers_) {
        if (auto p = w.lock()) live.push_back(std::move(p));
    }
    watchers_.clear();
  }
  for (auto& w : live) w->Stop();
}

int FakeClient::ActiveWatches() const {
  std::lock_guard<std::mutex> l(mu_);
  int n = 0;
  for (const auto& w : watchers_) n += w.expired() ? 0 : 1;
  return n;
}

StatusOr<api::Object> FakeClient::Get(const ResourceRef& ref, const std::string& name,
                                      const GetOptions& options) {
  BERTH_RETURN_IF_ERROR(Enter("get"));
  return store_.Get({ref.gvr.GroupResource(), ref.ns, name});
}

StatusOr<ObjectList> FakeClient::List(const ResourceRef& ref, const ListOptions& options) {
  BERTH_RETURN_IF_ERROR(Enter("list"));
  store::ListOptions lo;
  BERTH_ASSIGN_OR_RETURN(lo.predicate, BuildPredicate(options.label_selector, options.field_selector));
  lo.ns = ref.ns;
  lo.limit = options.limit;
  lo.continue_token = options.continue_token;
  if (options.resource_version != "0") {
    BERTH_ASSIGN_OR_RETURN(lo.revision, ParseRevision(options.resource_version));
  }
  BERTH_ASSIGN_OR_RETURN(store::ListResult r, store_.List(ref.gvr.GroupResource(), lo));
  ObjectList out;
  out.items.reserve(r.items.size());
  for (const auto& item : r.items) out.items.push_back(*item);
  out.resource_version = std::to_string(r.revision);
  out.continue_token = r.continue_token;
  out.remaining_item_count = r.remaining_item_count;
  return out;
}

StatusOr<api::Object> FakeClient::Create(const ResourceRef& ref, const api::Object& obj,
                                         const CreateOptions& options) {
  BERTH_RETURN_IF_ERROR(Enter("create"));
  BERTH_ASSIGN_OR_RETURN(api::Object placed, InNamespace(ref, obj));
  return store_.Create(ref.gvr.GroupResource(), std::move(placed));
}

StatusOr<api::Object> FakeClient::Update(const ResourceRef& ref, const api::Object& obj,
                                         const UpdateOptions& options) {
  BERTH_RETURN_IF_ERROR(Enter("update"));
  BERTH_ASSIGN_OR_RETURN(api::Object placed, InNamespace(ref, obj));
  return store_.Update(ref.gvr.GroupResource(), std::move(placed), store::UpdateOptions{});
}

StatusOr<api::Object> FakeClient::UpdateStatus(const ResourceRef& ref, const api::Object& obj,
                                               const UpdateOptions& options) {
  BERTH_RETURN_IF_ERROR(Enter("updatestatus"));
  {
    std::lock_guard<std::mutex> l(mu_);
    calls_["updatestatus " + ref.ns + "/" + api::Name(obj)]++;
  }
  BERTH_ASSIGN_OR_RETURN(api::Object placed, InNamespace(ref, obj));
  store::ObjectKey key{ref.gvr.GroupResource(), ref.ns, api::Name(placed)};
  const std::string wanted_rv = api::ResourceVersion(placed);
  StatusOr<api::Object> stored = store_.GuaranteedUpdate(key, [&](const api::Object& current) -> StatusOr<api::Object> {
    if (!wanted_rv.empty() && wanted_rv != api::ResourceVersion(current)) return store::ConflictModified(key);
    return WithStatusOf(current, placed);
  });
  std::function<void(const api::Object&)> hook;
  {
    std::lock_guard<std::mutex> l(mu_);
    hook = after_update_status_;
  }
  if (stored.ok() && hook) hook(*stored);
  return stored;
}

void FakeClient::AfterUpdateStatus(std::function<void(const api::Object& stored)> fn) {
  std::lock_guard<std::mutex> l(mu_);
  after_update_status_ = std::move(fn);
}

StatusOr<api::Object> FakeClient::Patch(const ResourceRef& ref, const std::string& name, PatchType type,
                                        std::string_view patch, const PatchOptions& options) {
  BERTH_RETURN_IF_ERROR(Enter("patch"));
  if (type == PatchType::kStrategicMerge || type == PatchType::kApply) {
    return UnsupportedMediaError("FakeClient supports only merge and JSON patches");
  }
  api::Object body = api::Object::parse(patch, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return BadRequestError("error decoding patch: invalid JSON");
  store::ObjectKey key{ref.gvr.GroupResource(), ref.ns, name};
  return store_.GuaranteedUpdate(key, [&](const api::Object& current) -> StatusOr<api::Object> {
    BERTH_ASSIGN_OR_RETURN(api::Object desired, type == PatchType::kMerge
                                                    ? api::ApplyMergePatch(current, body)
                                                    : api::ApplyJsonPatch(current, body));
    const std::string& rv = api::ResourceVersion(desired);
    if (!rv.empty() && rv != api::ResourceVersion(current)) return store::ConflictModified(key);
    if (options.subresource == "status") return WithStatusOf(current, desired);
    return desired;
  });
}

Status FakeClient::Bind(const ResourceRef& pods, const std::string& pod, const std::string& node,
                        const CreateOptions& options) {
  BERTH_RETURN_IF_ERROR(Enter("bind"));
  store::ObjectKey key{pods.gvr.GroupResource(), pods.ns, pod};
  return store_
      .GuaranteedUpdate(key,
                        [&](const api::Object& current) -> StatusOr<api::Object> {
                          const std::string& bound = api::NestedString(current, {"spec", "nodeName"});
                          if (!bound.empty()) {
                            return ConflictError("Operation cannot be fulfilled on pods/binding \"" + pod + "\": pod " +
                                                 pod + " is already assigned to node \"" + bound + "\"");
                          }
                          api::Object next = current;
                          next["spec"]["nodeName"] = node;
                          api::SetCondition(&next, api::Condition{"PodScheduled", "True", "", ""}, clock_.Now(),
                                            api::ConditionKind::kNoObservedGeneration);
                          return next;
                        })
      .status();
}

Status FakeClient::Delete(const ResourceRef& ref, const std::string& name, const DeleteOptions& options) {
  BERTH_RETURN_IF_ERROR(Enter("delete"));
  store::DeleteOptions d;
  d.preconditions.uid = options.preconditions.uid;
  d.preconditions.resource_version = options.preconditions.resource_version;
  d.grace_period_seconds = options.grace_period_seconds;
  return store_.Delete({ref.gvr.GroupResource(), ref.ns, name}, d).status();
}

StatusOr<std::unique_ptr<WatchStream>> FakeClient::Watch(const ResourceRef& ref, const WatchOptions& options) {
  BERTH_RETURN_IF_ERROR(Enter("watch"));
  BERTH_ASSIGN_OR_RETURN(store::Predicate predicate,
                         BuildPredicate(options.label_selector, options.field_selector));
  std::deque<WatchEvent> initial;
  // Reads the hook at each event, so one set after the watch started applies to it.
  auto before_event = [hook = before_watch_event_](const WatchEvent& e) {
    std::function<void(const WatchEvent&)> fn;
    {
      std::lock_guard<std::mutex> l(hook->mu);
      fn = hook->fn;
    }
    if (fn) fn(e);
  };
  // "" and any value that parses to 0: synthetic ADDED events for the current objects, then changes.
  BERTH_ASSIGN_OR_RETURN(int64_t from, ParseRevision(options.resource_version));
  if (from == 0) {
    store::ListOptions lo;
    lo.ns = ref.ns;
    lo.predicate = predicate;
    BERTH_ASSIGN_OR_RETURN(store::ListResult r, store_.List(ref.gvr.GroupResource(), lo));
    for (const auto& item : r.items) initial.push_back({WatchEventType::kAdded, item, Status::Ok()});
    from = r.revision;
  }
  store::WatchOptions wo;
  wo.ns = ref.ns;
  wo.from_revision = from;
  wo.predicate = predicate;
  StatusOr<std::unique_ptr<store::Watcher>> w = store_.Watch(ref.gvr.GroupResource(), wo);
  if (!w.ok()) {
    if (w.status().code() != Code::kGone) return w.status();
    initial.push_back(ErrorEvent(w.status()));
    return std::unique_ptr<WatchStream>(std::make_unique<FakeWatchStream>(std::move(initial), nullptr, before_event));
  }
  std::shared_ptr<store::Watcher> watcher(std::move(w).value());
  {
    std::lock_guard<std::mutex> l(mu_);
    std::erase_if(watchers_, [](const auto& w) { return w.expired(); });
    watchers_.push_back(watcher);
  }
  return std::unique_ptr<WatchStream>(
      std::make_unique<FakeWatchStream>(std::move(initial), std::move(watcher), before_event));
}

}  // namespace berth::client::testing
