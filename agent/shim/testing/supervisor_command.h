// The supervisor command the shim tests start, as berth starts it: the
// supervisor program the build embeds (supervisor_image.h), installed once per
// test binary; in a build that embeds none (sanitizers), this test binary
// itself (`/proc/self/exe shim`: its main dispatches it, as berth's does).
// Header-only; test code only. A function, not a global, so that supervisors
// exec'd from a test binary do not install it at their start.
#pragma once

#include <string>
#include <vector>

#include "agent/shim/supervisor_image.h"

namespace berth::agent::shim::testing {

inline const std::vector<std::string>& SupervisorCommand() {
  static const std::vector<std::string> command = [] {
    StatusOr<std::vector<std::string>> installed = InstallSupervisorImage(EmbeddedSupervisorImage());
    return installed.ok() ? *installed : std::vector<std::string>{"/proc/self/exe", "shim"};
  }();
  return command;
}

}  // namespace berth::agent::shim::testing
