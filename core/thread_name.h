// Names the calling thread as `top -H`, `ps -L`, gdb and perf show it
// (Linux's comm, /proc/self/task/<tid>/comm): at most 15 bytes, longer names
// are cut to their first 15. Best effort: a failure changes nothing.
//
// Thread-safety: names only the calling thread.
#pragma once

#include <string_view>

namespace berth {

void SetCurrentThreadName(std::string_view name);

}  // namespace berth
