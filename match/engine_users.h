// Users of their own for the engines of a root process. Each engine (and each source build) runs
// as a user taken from a range for its lifetime, so that RLIMIT_NPROC, which Linux counts per
// user across the host, bounds that engine alone: one engine's fork bomb no longer stops every
// other engine (and every other process of `nobody`) from starting. When the engine ends, every
// process of its user is killed before the user is handed out again, so nothing it started,
// even in a session of its own, outlives it. Outside a root process (or with an empty range)
// engines keep the box's single user (SandboxOptions::root_drops_to).
//
//   ConfigureEngineUsers(*ParseUidRange("2000000000-2000000255"));
//   ASSIGN_OR_RETURN(std::optional<uid_t> uid, AcquireEngineUser());
//   ...
//   if (uid) ReleaseEngineUser(*uid);  // kills what is left of it, then frees it
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace arbiter::match {

struct UidRange {
  uint32_t first = 0;
  uint32_t count = 0;  // 0: no range, engines share one user
};

// Far from the users of a Debian system (below 60000), systemd's dynamic users (61184-65519)
// and the subordinate ranges of rootless containers (from 100000, 65536 each).
inline constexpr UidRange kDefaultEngineUids{2'000'000'000u, 256};

// "FIRST-LAST" (at most 65536 users, within 1000..4294967294) or "none".
absl::StatusOr<UidRange> ParseUidRange(std::string_view text);
std::string UidRangeText(UidRange range);

// The range engines take their users from (the process-wide default is kDefaultEngineUids).
void ConfigureEngineUsers(UidRange range);
// A free user of the range with no process left, held until ReleaseEngineUser (also against
// other processes: a lock file per user under /run/arbiter/engine-users). nullopt when the range
// is empty or this process is not root; RESOURCE_EXHAUSTED when every user runs an engine.
absl::StatusOr<std::optional<uid_t>> AcquireEngineUser();
// Whether `uid` is a user of the range that this process holds.
bool IsEngineUser(uid_t uid);
// Kills every process of `uid` (a user this process holds; others are left alone).
void KillEngineUser(uid_t uid);
// KillEngineUser, then `uid` is free again.
void ReleaseEngineUser(uid_t uid);

}  // namespace arbiter::match
