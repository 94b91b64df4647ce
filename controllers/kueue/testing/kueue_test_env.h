// KueueTestEnv: a KueueController over a FakeClient on a FakeClock (with metrics in a
// Registry of its own), for the tests of Kueue and of the job kinds that go through it.
//
// A test fixture derives from it, adds its job integrations, then calls StartInformers().
// Settle() drives everything synchronously: rounds of Kueue reconciles, one scheduling
// cycle and its pending verdicts, then `after_cycle` (e.g. the job kinds' ReconcileAll),
// until a round writes nothing to the store; the test fails when `max_rounds` are not
// enough. Create() advances the clock by a second, so creation order is queue order.
//
// Thread-safety: one test thread; the informers run their own threads.
#pragma once

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <functional>
#include <memory>
#include <string>

#include "client/testing/fake_client.h"
#include "client/testing/informer_sync.h"
#include "controllers/kueue/kueue_controller.h"

namespace berth::controllers::kueue::testing {

class KueueTestEnv : public ::testing::Test {
 protected:
  // `options` other than metrics and config (estimate passes: off unless set).
  explicit KueueTestEnv(KueueConfiguration config = {}, KueueControllerOptions options = {})
      : client_(clock_),
        factory_(client_, clock_, client::testing::FastInformerOptions()),
        kueue_(client_, factory_, clock_, WithMetricsAndConfig(std::move(options), std::move(config))) {}
  ~KueueTestEnv() override {
    kueue_.Stop();
    factory_.Shutdown();
  }

  // Starts Kueue's informers and waits for their caches; call after AddJobIntegration.
  void StartInformers() {
    for (client::Informer* inf : kueue_.informers()) inf->Start();
    factory_.Start();
    EXPECT_TRUE(factory_.WaitForCacheSync(std::chrono::seconds(10)));
  }

  // Waits (bounded, real time) until every informer cache matches the server;
  // false (and a test failure) when one never does.
  bool WaitCaches() {
    const bool matched = client::testing::WaitForCachesToMatch(client_, kueue_.informers());
    EXPECT_TRUE(matched) << "an informer cache never matched the server (its difference is printed above)";
    return matched;
  }

  // Rounds of reconcile and scheduling until a round writes nothing. Gives up
  // at the first cache that never matches: every later round would wait for it
  // again (30 s per informer), holding the test for many minutes.
  void Settle(int max_rounds, const std::function<void()>& after_cycle = {}) {
    for (int round = 0; round < max_rounds; ++round) {
      if (!WaitCaches()) return;
      const int64_t rev = client_.store().CurrentRevision();
      kueue_.EnqueueAll();
      kueue_.ProcessQueued();
      if (!WaitCaches()) return;
      kueue_.ScheduleOnce();
      kueue_.ProcessQueued();  // the cycle's pending verdicts
      if (after_cycle) after_cycle();
      if (client_.store().CurrentRevision() == rev) return;
    }
    ADD_FAILURE() << "controllers did not settle";
  }

  void Create(const client::GroupVersionResource& gvr, const std::string& ns, const api::Object& obj) {
    auto res = client_.Create(gvr.Namespace(ns), obj);
    ASSERT_TRUE(res.ok()) << res.status().ToString();
    clock_.Advance(std::chrono::seconds(1));
  }
  api::Object Get(const client::GroupVersionResource& gvr, const std::string& ns, const std::string& name) {
    auto res = client_.Get(gvr.Namespace(ns), name);
    EXPECT_TRUE(res.ok()) << name << ": " << res.status().ToString();
    return res.ok() ? res.value() : api::Object();
  }
  // The Workload of a job of `gvr` (found by the job-uid label); a test failure unless there
  // is exactly one.
  api::Object WorkloadOf(const client::GroupVersionResource& gvr, const std::string& ns, const std::string& job) {
    api::Object j = Get(gvr, ns, job);
    client::ListOptions options;
    options.label_selector = std::string(kJobUidLabel) + "=" + api::Uid(j);
    auto list = client_.List(kWorkloads.Namespace(ns), options);
    EXPECT_TRUE(list.ok());
    EXPECT_EQ(list.value().items.size(), 1u) << "workloads of " << job;
    return list.value().items.empty() ? api::Object() : list.value().items[0];
  }

  KueueControllerOptions WithMetricsAndConfig(KueueControllerOptions options, KueueConfiguration config) {
    options.metrics = metrics_;
    options.config = std::move(config);
    return options;
  }

  FakeClock clock_;
  client::testing::FakeClient client_;
  client::SharedInformerFactory factory_;
  prometheus::Registry registry_;
  std::shared_ptr<KueueMetrics> metrics_ = std::make_shared<KueueMetrics>(registry_);
  KueueController kueue_;
};

}  // namespace berth::controllers::kueue::testing
