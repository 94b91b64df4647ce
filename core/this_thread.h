// Attributes of the calling thread, as the kernel sees it (Linux: both are
// per thread, not per process).
//
// SetCurrentThreadName: the name `top -H`, `ps -L`, gdb and perf show
// (/proc/self/task/<tid>/comm): at most 15 bytes, a longer name is cut to its
// first 15.
//
// LowerCurrentThreadPriority: adds `by` (> 0) to the thread's nice value
// (getpriority/setpriority(2) on the thread id; 19 at most), so a process
// started at nice N runs the thread at N + by. Under CFS a thread's CPU share
// when the CPUs are contended is proportional to its weight: 5 nice steps
// weigh about a third. An unprivileged thread may raise its own nice, not
// lower it, so this cannot be undone by the thread. Idle CPUs are used
// whatever the nice.
//
// Both are best effort: a failure changes nothing and is not reported.
// Thread-safety: each changes only the calling thread.
#pragma once

#include <string_view>

namespace berth {

// How far the threads that only report are lowered (queue status, informational
// conditions, Events). When the CPUs are saturated, the threads on the path
// to admission (the scheduler, quota release, the API) get about three times
// the share of each of them, and their batched writes absorb more changes
// each; when a CPU is free it makes no difference.
inline constexpr int kReportingNice = 5;

void SetCurrentThreadName(std::string_view name);
void LowerCurrentThreadPriority(int by);

}  // namespace berth
