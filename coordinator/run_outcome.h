// A run's verdict (v1::RunOutcome), derived from its state and its details: what the run found,
// apart from how it ran. Computed whenever a run is read, so runs stored before the field existed
// get one too.
//
//   v1::Run run = ...;
//   *run.mutable_outcome() = OutcomeOf(run);  // "rejected: H0 accepted (LLR -2.96 <= -2.94)"
#pragma once

#include "proto/arbiter/v1/run.pb.h"

namespace arbiter::coordinator {

v1::RunOutcome OutcomeOf(const v1::Run& run);

}  // namespace arbiter::coordinator
