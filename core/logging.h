// Logging through spdlog. Every component logs through the named logger it
// gets from Logger("component"); the level is set once for the process with
// SetLogLevel (from the --v / --log-level flags of cmd/berth) and defaults to
// "info". Output goes to stderr with a timestamp, level and component name.
//
// Thread-safety: spdlog loggers are thread-safe; Logger() may be called from
// any thread.
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace berth {

// Returns the process-wide logger for a component, creating it on first use.
std::shared_ptr<spdlog::logger> Logger(const std::string& component);

// "trace", "debug", "info", "warn", "error", "off". Returns false for an unknown name.
bool SetLogLevel(const std::string& level);

}  // namespace berth
