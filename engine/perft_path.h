// Which copy of the perft counting core runs: the best one this binary carries and this CPU runs,
// chosen once (cpuid), or the one ARBITER_PERFT_PATH=v2|v3|v4 names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "engine/perft_core.h"

namespace arbiter {

// The path every count uses.
const PerftPath& ActivePerftPath();

// The copies this binary carries, best first; and those of them this CPU can run.
std::vector<const PerftPath*> BuiltPerftPaths();
std::vector<const PerftPath*> RunnablePerftPaths();

// Makes `name` ("v2", "v3", "v4"; empty: the best this CPU runs) the active path. An error names
// what is wrong: an unknown name, a path this binary does not carry, or one the CPU cannot run.
absl::Status UsePerftPath(std::string_view name);

// UsePerftPath($ARBITER_PERFT_PATH), when the variable is set (a start-up check of the command).
absl::Status UsePerftPathFromEnvironment();

// "v4 (pext sliders, avx-512 counter)", for reports.
std::string PerftPathDescription(const PerftPath& path);

}  // namespace arbiter
