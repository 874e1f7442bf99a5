// Names and predicates of v1::RunState and v1::RunKind shared by the coordinator, the worker
// and the CLI ("SUCCEEDED" rather than "RUN_STATE_SUCCEEDED").
//
//   if (IsTerminal(run.state())) std::cout << "run ended " << RunStateName(run.state());
#pragma once

#include <string>
#include <string_view>

#include "proto/arbiter/v1/run.pb.h"

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

// How a run ran, in the dashboard's words: "queued", "running", "finished", "failed to run",
// "cancelled" (what it found is its verdict).
inline std::string RunStateWord(v1::RunState state) {
  switch (state) {
    case v1::RUN_STATE_QUEUED:
      return "queued";
    case v1::RUN_STATE_RUNNING:
      return "running";
    case v1::RUN_STATE_SUCCEEDED:
      return "finished";
    case v1::RUN_STATE_FAILED:
      return "failed to run";
    case v1::RUN_STATE_CANCELLED:
      return "cancelled";
    default:
      return "unknown";
  }
}

// "passed", "failed", "inconclusive", "pending", "measured", "none" (Prometheus labels, JSON).
inline std::string RunVerdictName(v1::RunVerdict verdict) {
  constexpr std::string_view kPrefix = "RUN_VERDICT_";
  std::string name = v1::RunVerdict_Name(verdict);
  if (name.starts_with(kPrefix)) name = name.substr(kPrefix.size());
  for (char& c : name) c = char(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return name;
}

// The verdict in one or two words, as the dashboard shows it: "accepted", "rejected",
// "failed", "exact", "mismatch", "inconclusive", "pending", "measured" (the part of the summary
// before its colon).
inline std::string VerdictWord(const v1::RunOutcome& outcome) {
  const std::string& s = outcome.summary();
  const size_t colon = s.find(':');
  if (!s.empty()) return colon == std::string::npos ? s : s.substr(0, colon);
  return RunVerdictName(outcome.verdict());
}

// The state, and the verdict once the run ended: "running", "finished, rejected".
inline std::string RunStatusWords(const v1::Run& run) {
  if (!IsTerminal(run.state())) return RunStateWord(run.state());
  return RunStateWord(run.state()) + ", " + VerdictWord(run.outcome());
}

}  // namespace arbiter
