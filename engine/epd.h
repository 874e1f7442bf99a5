// EPD files: perft suites (lines "FEN ;D1 20 ;D2 400 ...") and opening books
// ("FEN-4-fields opcode operand; ...").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/position.h"

namespace arbiter {

struct PerftSuiteLine {
  int line_number = 0;
  std::string fen;
  std::vector<std::pair<int, uint64_t>> expected;  // (depth, nodes), in file order
};

// Parses one suite line; blank lines and '#' comments give an empty fen.
absl::StatusOr<PerftSuiteLine> ParsePerftSuiteLine(std::string_view line, int line_number);

}  // namespace arbiter

namespace arbiter {

// One line of an EPD opening book: "FEN-4-fields [opcode operands;]..." (a full 6-field FEN is
// accepted too). The hmvc and fmvn opcodes set the move counters.
struct EpdEntry {
  int line_number = 0;
  Position position = Position::StartPosition();
  // Opcodes in order, operands as written (a single quoted operand without its quotes).
  std::vector<std::pair<std::string, std::string>> opcodes;
};

// Parses one EPD line; blank lines and '#' comments give nullopt.
absl::StatusOr<std::optional<EpdEntry>> ParseEpdLine(std::string_view line, int line_number);
// Every position of an EPD text / file; errors name the line.
absl::StatusOr<std::vector<EpdEntry>> ReadEpd(std::string_view text);
absl::StatusOr<std::vector<EpdEntry>> ReadEpdFile(const std::string& path);

}  // namespace arbiter
