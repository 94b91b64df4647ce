#include "controllers/common/reconcile_loop.h"

#include <utility>

#include "client/indexer.h"
#include "core/logging.h"
#include "core/this_thread.h"

namespace berth::controllers {

KeyFunc ObjectKey() {
  return [](const api::Object& obj) { return std::vector<std::string>{client::MetaNamespaceKey(obj)}; };
}

const api::Object* ControllerOwnerReference(const api::Object& obj) {
  auto m = obj.find("metadata");
  if (m == obj.end() || !m->is_object()) return nullptr;
  auto refs = m->find("ownerReferences");
  if (refs == m->end() || !refs->is_array()) return nullptr;
  for (const api::Object& ref : *refs) {
    if (ref.is_object() && ref.value("controller", false)) return &ref;
  }
  return nullptr;
}

KeyFunc ControllerOwnerKey(std::string api_version, std::string kind) {
  return [api_version = std::move(api_version), kind = std::move(kind)](const api::Object& obj) {
    const api::Object* owner = ControllerOwnerReference(obj);
    if (owner == nullptr || owner->value("apiVersion", "") != api_version || owner->value("kind", "") != kind) {
      return std::vector<std::string>{};
    }
    return std::vector<std::string>{client::MetaNamespaceKey(api::Namespace(obj), owner->value("name", ""))};
  };
}

ReconcileLoop::ReconcileLoop(std::string name, Clock& clock, ReconcileFunc reconcile, ReconcileLoopOptions options)
    : name_(std::move(name)),
      clock_(clock),
      reconcile_(std::move(reconcile)),
      options_(options),
      queue_(std::make_unique<client::WorkQueue>(clock, nullptr, client::WorkQueueOptions{name_})) {}

ReconcileLoop::~ReconcileLoop() { Stop(); }

void ReconcileLoop::Watch(client::Informer& informer, KeyFunc keys) {
  auto enqueue = [q = queue_.get(), keys](const client::ObjectPtr& obj) {
    if (!obj) return;
    for (const std::string& k : keys(*obj)) q->Add(k);
  };
  informer.AddEventHandler({[enqueue](const client::ObjectPtr& o, bool) { enqueue(o); },
                            [enqueue](const client::ObjectPtr& old_obj, const client::ObjectPtr& o) {
                              // An owner change moves the object between keys.
                              if (old_obj != o) enqueue(old_obj);
                              enqueue(o);
                            },
                            [enqueue](const client::ObjectPtr& o, bool) { enqueue(o); }});
  std::lock_guard<std::mutex> lock(mu_);
  sources_.emplace_back(&informer, std::move(keys));
}

void ReconcileLoop::EnqueueAll() {
  std::vector<std::pair<client::Informer*, KeyFunc>> sources;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sources = sources_;
  }
  for (const auto& [informer, keys] : sources) {
    for (const client::ObjectPtr& obj : informer->GetIndexer().List()) {
      for (const std::string& k : keys(*obj)) queue_->Add(k);
    }
  }
}

Status ReconcileLoop::ProcessOne(const std::string& key) {
  Status s;
  bool threw = false;
  try {
    s = reconcile_(key);
  } catch (const std::exception& e) {
    // controller-runtime's RecoverPanic: one object that trips its reconciler (hostile
    // input, a bug) is retried with backoff and logged; it must not take the control
    // plane down, nor, stored, again at every start.
    s = InternalError(std::string("reconcile threw: ") + e.what());
    threw = true;
  }
  if (s.ok()) {
    queue_->Forget(key);
  } else {
    // Conflicts are the normal cost of optimistic concurrency: retry quietly.
    if (threw) {
      Logger(name_)->error("{}: {} (retrying with backoff)", key, s.message());
    } else if (s.code() == Code::kConflict) {
      Logger(name_)->debug("{}: {}", key, s.ToString());
    } else {
      Logger(name_)->info("{}: {} (retrying)", key, s.ToString());
    }
    queue_->AddRateLimited(key);
  }
  queue_->Done(key);
  return s;
}

int ReconcileLoop::ProcessQueued() {
  int processed = 0;
  while (auto key = queue_->TryGet()) {
    (void)ProcessOne(*key);  // errors are requeued inside
    ++processed;
  }
  return processed;
}

void ReconcileLoop::Start(int workers) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!threads_.empty() || stopping_) return;
  for (int i = 0; i < workers; ++i) {
    threads_.emplace_back([this] {
      SetCurrentThreadName(name_);
      if (options_.lower_priority_by > 0) LowerCurrentThreadPriority(options_.lower_priority_by);
      while (auto key = queue_->Get()) (void)ProcessOne(*key);
    });
  }
  if (options_.resync_period > Duration::zero()) threads_.emplace_back([this] { ResyncLoop(); });
}

void ReconcileLoop::ResyncLoop() {
  Time next = clock_.Now() + options_.resync_period;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      // Real-time pacing; the Clock decides when a period has passed.
      cv_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stopping_; });
      if (stopping_) return;
    }
    if (clock_.Now() < next) continue;
    next = clock_.Now() + options_.resync_period;
    EnqueueAll();
  }
}

void ReconcileLoop::Stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    threads.swap(threads_);
  }
  cv_.notify_all();
  queue_->ShutDown();
  for (auto& t : threads) {
    if (t.joinable()) t.join();
  }
}

}  // namespace berth::controllers
