// What workers report about a run's engines (coordinator/engine_reports.cc).
#pragma once

#include "coordinator/run_handler.h"
#include "proto/arbiter/v1/cluster.pb.h"

namespace arbiter::coordinator {

// The run's engines as submitted and as the workers found them, its clock scales and refusals,
// into `out` (whose kind's request is already filled).
void FillEngineReports(const Run& run, v1::Run& out);

}  // namespace arbiter::coordinator
