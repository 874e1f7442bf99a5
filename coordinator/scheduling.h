// Checks of what a caller asks of a run's scheduling (coordinator/scheduling.cc has the rest of
// the scheduling half of the Coordinator facade).
#pragma once

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "coordinator/auth.h"
#include "proto/arbiter/v1/run.pb.h"

namespace arbiter::coordinator {

// The priority and throughput a caller may give a run: bounds (INVALID_ARGUMENT), priority above
// 0 only for an admin (PERMISSION_DENIED). Unset values are not checked.
absl::Status CheckScheduling(std::optional<int> priority, std::optional<uint32_t> throughput,
                             const Caller& caller);
// The same for a submitted run, with its requirements.
absl::Status CheckScheduling(const v1::Scheduling& s, const Caller& caller);

}  // namespace arbiter::coordinator
