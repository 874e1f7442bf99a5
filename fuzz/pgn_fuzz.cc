// PGN: any bytes read or fail cleanly; every game read writes a PGN that reads back to the same
// start position and moves.
#include <cstdint>

#include "engine/pgn.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1 << 16) return 0;
  absl::StatusOr<std::vector<arbiter::PgnGame>> games = arbiter::ReadPgn(AsText(data, size));
  if (!games.ok()) return 0;
  for (const arbiter::PgnGame& g : *games) {
    absl::StatusOr<std::vector<arbiter::PgnGame>> again = arbiter::ReadPgn(arbiter::WritePgn(g));
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(again->size() == 1);
    FUZZ_CHECK((*again)[0].start.Fen() == g.start.Fen());
    FUZZ_CHECK((*again)[0].moves == g.moves);
  }
  return 0;
}
