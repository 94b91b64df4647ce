#include "core/this_thread.h"

#include <algorithm>
#include <cerrno>
#include <pthread.h>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

namespace berth {

void SetCurrentThreadName(std::string_view name) {
  const std::string cut(name.substr(0, 15));  // the kernel's TASK_COMM_LEN is 16, with the NUL
  pthread_setname_np(pthread_self(), cut.c_str());
}

void LowerCurrentThreadPriority(int by) {
  // PRIO_PROCESS with a thread id reads and sets that thread's nice (Linux:
  // a thread is a task; see setpriority(2), BUGS). -1 is a valid nice:
  // errno tells a failed read.
  const id_t tid = static_cast<id_t>(gettid());
  errno = 0;
  const int current = getpriority(PRIO_PROCESS, tid);
  if (errno != 0 || by <= 0) return;
  setpriority(PRIO_PROCESS, tid, std::min(current + by, 19));
}

}  // namespace berth
