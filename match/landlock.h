// Landlock (Linux >= 5.13): an unprivileged process restricts the files it and its descendants
// may touch, and on newer kernels their TCP (ABI 4) and their signals and abstract Unix sockets
// beyond their own domain (ABI 6). It needs no capability, no namespace and no setuid helper, so
// it works where bubblewrap cannot: a pod with every capability dropped under the runtime's
// default seccomp profile (which allows the three landlock system calls).
//
// The ruleset is built in the parent; the child only calls landlock_restrict_self on its
// descriptor after no_new_privs (ProcessSpec::landlock_fd), which is async-signal-safe.
//
//   ASSIGN_OR_RETURN(int fd, LandlockRuleset({{"/usr", kRead}, {dir, kReadWrite}}));
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace arbiter::match {

// The Landlock ABI version the kernel offers; 0 if none (an old kernel, Landlock not enabled at
// boot, or a seccomp profile that refuses the call).
int LandlockAbi();

struct LandlockPath {
  enum Access { kRead, kReadWrite };
  std::string path;  // a directory (its whole tree) or a single file; missing paths are skipped
  Access access = kRead;
};

// A ruleset descriptor (O_CLOEXEC) that allows reading and executing under the kRead paths,
// everything under the kReadWrite ones, and no other file access; where the ABI has them, no TCP
// bind or connect at all and no signal or abstract Unix socket outside the domain.
absl::StatusOr<int> LandlockRuleset(const std::vector<LandlockPath>& paths);

// landlock_restrict_self(fd): for the child between fork and exec (no allocation). 0 or -1.
int LandlockRestrictSelf(int ruleset_fd);

}  // namespace arbiter::match
