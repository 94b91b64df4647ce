// The supervisor program's image (supervisor_image.h), linked into the berth
// binary: the bytes of berth-supervisor, put in .rodata by `ld -r -b binary`
// (agent/shim/CMakeLists.txt), or nothing in a build without the program.
#include "agent/shim/supervisor_image.h"

#ifdef BERTH_EMBEDDED_SUPERVISOR
extern "C" const unsigned char _binary_berth_supervisor_start[];
extern "C" const unsigned char _binary_berth_supervisor_end[];
#endif

namespace berth::agent::shim {

std::span<const unsigned char> EmbeddedSupervisorImage() {
#ifdef BERTH_EMBEDDED_SUPERVISOR
  return {_binary_berth_supervisor_start, _binary_berth_supervisor_end};
#else
  return {};
#endif
}

}  // namespace berth::agent::shim
