// FEN / X-FEN / Shredder-FEN: any bytes parse or fail cleanly; a parsed position writes a FEN that
// parses back to the same position (FEN -> position -> FEN is a fixed point).
#include <cstdint>

#include "engine/movegen.h"
#include "engine/position.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 512) return 0;
  absl::StatusOr<arbiter::Position> pos = arbiter::Position::FromFen(AsText(data, size));
  if (!pos.ok()) return 0;
  const std::string fen = pos->Fen();
  absl::StatusOr<arbiter::Position> again = arbiter::Position::FromFen(fen);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->Fen() == fen);
  arbiter::MoveList legal;
  arbiter::GenerateLegal(*pos, legal);  // must not crash on any accepted position
  return 0;
}
