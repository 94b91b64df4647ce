// ReconcileLoop: a reconciler that throws (controller-runtime's RecoverPanic) is logged and
// retried with backoff; the loop, its workers and the other keys go on.
#include "controllers/common/reconcile_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "core/clock.h"

namespace berth::controllers {
namespace {

TEST(ReconcileLoopTest, AThrowingReconcileIsRetriedAndTheLoopGoesOn) {
  RealClock& clock = RealClock::Get();
  std::atomic<int> bad_attempts{0}, good{0};
  ReconcileLoop loop("test", clock, [&](const std::string& key) -> Status {
    if (key == "ns/bad") {
      ++bad_attempts;
      throw std::out_of_range("stoll");
    }
    ++good;
    return Status::Ok();
  });
  // On the calling thread: the exception becomes an error status and the key is requeued.
  const Status s = loop.ProcessOne("ns/bad");
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_EQ(s.message(), "reconcile threw: stoll");
  EXPECT_EQ(bad_attempts, 1);
  // On the workers: the bad key keeps failing, the others are reconciled.
  loop.Start(1);
  loop.Add("ns/good-1");
  loop.Add("ns/good-2");
  for (int i = 0; i < 200 && (good < 2 || bad_attempts < 2); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  loop.Stop();
  EXPECT_EQ(good, 2);
  EXPECT_GE(bad_attempts, 2);  // retried (rate limited: 5 ms, then doubling)
}

}  // namespace
}  // namespace berth::controllers
