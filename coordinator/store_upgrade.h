// Conversions of the records an older schema stored into today's shapes, applied to every row
// when Store::Open upgrades a database in place (schema versions in coordinator/store.h).
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace arbiter::coordinator {

// A run's spec (runs.spec, of kind `kind`, a v1::RunKind) as schema 6 stores it: a match's or a
// tournament's request with its shared fields in GamesSettings. Other kinds come back as they
// are. DATA_LOSS when the bytes are not the record their kind says.
absl::StatusOr<std::string> UpgradeRunSpec(int kind, const std::string& spec);

// A finished run's status (runs.result, a v1::Run) with its request converted as above.
absl::StatusOr<std::string> UpgradeRunResult(const std::string& result);

}  // namespace arbiter::coordinator
