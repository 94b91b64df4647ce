#include "core/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <mutex>

namespace berth {
namespace {
std::mutex g_mu;
spdlog::level::level_enum g_level = spdlog::level::info;
}  // namespace

std::shared_ptr<spdlog::logger> Logger(const std::string& component) {
  std::lock_guard<std::mutex> l(g_mu);
  if (auto existing = spdlog::get(component)) return existing;
  auto logger = spdlog::stderr_color_mt(component);
  logger->set_level(g_level);
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%L%$ [%n] %v", spdlog::pattern_time_type::utc);
  return logger;
}

bool SetLogLevel(const std::string& level) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") return false;
  std::lock_guard<std::mutex> l(g_mu);
  g_level = lvl;
  spdlog::apply_all([&](std::shared_ptr<spdlog::logger> l) { l->set_level(lvl); });
  return true;
}

}  // namespace berth
