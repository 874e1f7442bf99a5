// PGN of a match or tournament run's counted games, read back from the store.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/games_run.h"
#include "coordinator/store.h"
#include "proto/arbiter/v1/run_service.pb.h"

namespace arbiter::coordinator {

struct PgnRequest {
  uint64_t run_id = 0;
  PgnSource source;
  std::vector<uint64_t> job_ids;  // the run's jobs by index (empty for a run loaded finished)
  // A run that had finished before this process started: its counted results are the first
  // result of each job, in commit order, up to the games its final status counted (results
  // committed after the run finished were stored but not counted).
  bool from_store = false;
  uint64_t final_games = 0;
};

absl::StatusOr<v1::GetPgnResponse> ExportPgn(const PgnRequest& request, Store& store);

}  // namespace arbiter::coordinator
