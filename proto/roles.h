// Names of v1::Role as users type them ("viewer", "submitter", "worker", "admin"), shared by the
// coordinator (token checks, logs) and the CLI (`arbiter tokens`).
//
//   absl::StatusOr<v1::Role> role = ParseRole("submitter");
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "proto/arbiter/v1/admin_service.pb.h"

// In namespace arbiter, as proto/run_states.h.
namespace arbiter {

inline std::string RoleName(v1::Role role) {
  switch (role) {
    case v1::ROLE_VIEWER:
      return "viewer";
    case v1::ROLE_SUBMITTER:
      return "submitter";
    case v1::ROLE_WORKER:
      return "worker";
    case v1::ROLE_ADMIN:
      return "admin";
    default:
      return "none";
  }
}

inline absl::StatusOr<v1::Role> ParseRole(std::string_view name) {
  for (v1::Role r : {v1::ROLE_VIEWER, v1::ROLE_SUBMITTER, v1::ROLE_WORKER, v1::ROLE_ADMIN})
    if (name == RoleName(r)) return r;
  return absl::InvalidArgumentError("unknown role '" + std::string(name) +
                                    "' (viewer, submitter, worker or admin)");
}

}  // namespace arbiter
