// movegen-check runs: the positions are packed into jobs; each worker checks its engine's perft
// against arbiter's on its positions (descending on a difference) and the handler adds the
// results up, deduplicating failures (match/movegen_check.h).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "coordinator/run_handler.h"
#include "proto/arbiter/v1/run.pb.h"

namespace arbiter::coordinator {

absl::StatusOr<RunPlan> PlanMovegenCheckRun(const v1::SubmitMovegenCheckRequest& request,
                                            const PlanContext& context);

absl::StatusOr<std::unique_ptr<RunHandler>> LoadMovegenCheckRun(const std::string& spec);

}  // namespace arbiter::coordinator
