// What workers report about a run's engines (coordinator/engine_reports.cc).
#pragma once

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "coordinator/run_handler.h"
#include "proto/arbiter/v1/engine.pb.h"
#include "proto/arbiter/v1/run.pb.h"

namespace arbiter::coordinator {

// The run's engines as submitted and as the workers found them, its clock scales and refusals,
// into `out` (whose kind's request is already filled).
void FillEngineReports(const Run& run, v1::Run& out);

// A source engine's fields (EngineSpec.source_tree): a known upload, a build command without
// control characters but tabs, a binary inside the tree; INVALID_ARGUMENT naming the field, or
// NOT_FOUND for an archive never uploaded (`unknown_is_invalid`: INVALID_ARGUMENT).
absl::Status CheckSourceTree(const v1::EngineSpec& e,
                             const std::function<bool(const std::string&)>& engine_known,
                             bool unknown_is_invalid);

}  // namespace arbiter::coordinator
