#include "admission/admission_fair_sharing.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace berth::admission {

namespace {

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

UsageAmounts Scaled(const UsageAmounts& amounts, double factor) {
  UsageAmounts out;
  for (const auto& [name, v] : amounts) out[name] = v * factor;
  return out;
}

}  // namespace

double AfsAlphaRate(double elapsed_seconds, double half_life_seconds) {
  if (half_life_seconds == 0) return 0.0;
  return 1.0 - std::pow(0.5, elapsed_seconds / half_life_seconds);
}

UsageAmounts DecayedConsumed(const UsageAmounts& old, const UsageAmounts& current, double elapsed_seconds,
                             double half_life_seconds) {
  const double alpha = AfsAlphaRate(std::max(0.0, elapsed_seconds), half_life_seconds);
  UsageAmounts out = Scaled(old, 1 - alpha);
  for (const auto& [name, v] : current) out[name] += v * alpha;
  return out;
}

UsageAmounts EntryPenalty(const UsageAmounts& total_requests, const AdmissionFairSharingConfig& config) {
  return Scaled(total_requests,
                AfsAlphaRate(Seconds(config.usage_sampling_interval), Seconds(config.usage_half_life_time)));
}

double LocalQueueUsage(const UsageAmounts& consumed, double local_queue_weight,
                       const std::map<std::string, double>& resource_weights) {
  if (local_queue_weight <= 0) return std::numeric_limits<double>::infinity();
  double usage = 0;
  for (const auto& [name, milli] : consumed) {
    auto w = resource_weights.find(name);
    usage += (w == resource_weights.end() ? 1.0 : w->second) * milli / 1000.0;
  }
  const double result = usage / local_queue_weight;
  // Never NaN (∞/∞ with an infinite weight and an infinite resource weight): a NaN
  // breaks the queue's ordering, so such a LocalQueue goes last.
  return std::isnan(result) ? std::numeric_limits<double>::infinity() : result;
}

const AfsUsageLedger::Entry* AfsUsageLedger::Get(const std::string& local_queue) const {
  auto it = entries_.find(local_queue);
  return it == entries_.end() ? nullptr : &it->second;
}

bool AfsUsageLedger::Seed(const std::string& local_queue, const UsageAmounts& persisted, Time now) {
  return !entries_.try_emplace(local_queue, Entry{persisted, now}).second;
}

const AfsUsageLedger::Entry& AfsUsageLedger::Sample(const std::string& local_queue, const UsageAmounts& admitted,
                                                    Time now, const AdmissionFairSharingConfig& config) {
  auto [it, created] = entries_.try_emplace(local_queue, Entry{{}, now});
  Entry& e = it->second;
  if (config.usage_half_life_time == Duration::zero()) {
    e.consumed.clear();
  } else {
    e.consumed = DecayedConsumed(e.consumed, admitted, Seconds(now - e.last_update),
                                 Seconds(config.usage_half_life_time));
  }
  e.last_update = std::max(e.last_update, now);
  return e;
}

const AfsUsageLedger::Entry& AfsUsageLedger::Settle(const std::string& local_queue, const UsageAmounts& admitted,
                                                    const UsageAmounts& penalty, Time now,
                                                    const AdmissionFairSharingConfig& config) {
  auto [it, created] = entries_.try_emplace(local_queue, Entry{{}, now});
  Entry& e = it->second;
  e.consumed = DecayedConsumed(e.consumed, admitted, Seconds(now - e.last_update),
                               Seconds(config.usage_half_life_time));
  for (const auto& [name, v] : penalty) e.consumed[name] += v;
  e.last_update = std::max(e.last_update, now);
  return e;
}

}  // namespace berth::admission
