// Names and predicates of v1::RunState and v1::RunKind shared by the coordinator, the worker
// and the CLI ("SUCCEEDED" rather than "RUN_STATE_SUCCEEDED").
//
//   if (IsTerminal(run.state())) std::cout << "run ended " << RunStateName(run.state());
#pragma once

#include <string>
#include <string_view>

#include "proto/arbiter/v1/cluster.pb.h"

// In namespace arbiter, not arbiter::v1: argument-dependent lookup on a v1 enum does not find
// these, so a file's own helper of the same name does not become ambiguous.
namespace arbiter {

// A run in this state does not change any more (succeeded, failed or cancelled).
inline bool IsTerminal(v1::RunState state) {
  return state == v1::RUN_STATE_SUCCEEDED || state == v1::RUN_STATE_FAILED ||
         state == v1::RUN_STATE_CANCELLED;
}

// "QUEUED", "RUNNING", "SUCCEEDED", ...
inline std::string RunStateName(v1::RunState state) {
  constexpr std::string_view kPrefix = "RUN_STATE_";
  std::string name = v1::RunState_Name(state);
  return name.starts_with(kPrefix) ? name.substr(kPrefix.size()) : name;
}

// "PERFT", "MATCH", "TOURNAMENT".
inline std::string RunKindName(v1::RunKind kind) {
  constexpr std::string_view kPrefix = "RUN_KIND_";
  std::string name = v1::RunKind_Name(kind);
  return name.starts_with(kPrefix) ? name.substr(kPrefix.size()) : name;
}

}  // namespace arbiter
