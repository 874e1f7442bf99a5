// Engine options that name files. Under the limits-only box the engine sees the host's whole
// filesystem, so a string option set by whoever submitted the run (Stockfish's `Debug Log File`,
// `SyzygyPath`, `EvalFile`, any UCI option of type string) could make it write or read host
// files. Such a value may name only the engine's own private directory or the box's read-only
// additions; the confining boxes (namespaces, Landlock) confine the engine itself.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "match/sandbox.h"
#include "match/uci_engine.h"

namespace arbiter::match {

// OK unless `isolation` is limits-only, `declared` is a string option, and a part of `value`
// (split at ':' and ';', as path lists are) names a path outside every directory of `allowed`
// (the engine's private directory and the box's read-only ones); relative parts are taken from
// `cwd`, the engine's working directory. Then INVALID_ARGUMENT naming the option, the path and
// what to do. Symlinks that exist are followed before the comparison.
absl::Status CheckOptionPath(const UciOption& declared, std::string_view value, Isolation isolation,
                             const std::string& cwd, const std::vector<std::string>& allowed);

}  // namespace arbiter::match
