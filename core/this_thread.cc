#include "core/this_thread.h"

#include <pthread.h>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

namespace berth {

void SetCurrentThreadName(std::string_view name) {
  const std::string cut(name.substr(0, 15));  // the kernel's TASK_COMM_LEN is 16, with the NUL
  pthread_setname_np(pthread_self(), cut.c_str());
}

void SetCurrentThreadNice(int nice) {
  // PRIO_PROCESS with a thread id sets that thread's nice (Linux: a thread is
  // a task; see setpriority(2), BUGS).
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), nice);
}

}  // namespace berth
