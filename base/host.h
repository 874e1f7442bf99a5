// This machine's host name: what a worker reports at registration and what the coordinator
// compares it with (workers on the coordinator's own host share its cores).
#pragma once

#include <unistd.h>

#include <string>

namespace arbiter {

// The host name, or "" when the system gives none.
inline std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

}  // namespace arbiter
