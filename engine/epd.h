// EPD perft suites: lines of the form "FEN ;D1 20 ;D2 400 ...".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace arbiter {

struct PerftSuiteLine {
  int line_number = 0;
  std::string fen;
  std::vector<std::pair<int, uint64_t>> expected;  // (depth, nodes), in file order
};

// Parses one suite line; blank lines and '#' comments give an empty fen.
absl::StatusOr<PerftSuiteLine> ParsePerftSuiteLine(std::string_view line, int line_number);

}  // namespace arbiter
