// UCI and SAN moves on a few positions (standard, Kiwipete, a Chess960 start, promotions and en
// passant): any text parses or fails cleanly, and a parsed move is one of the legal moves whose
// UCI and SAN texts parse back to it.
#include <cstdint>

#include "engine/movegen.h"
#include "engine/notation.h"
#include "engine/position.h"
#include "fuzz/fuzz_util.h"

namespace {

const char* const kFens[] = {
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
    "8/8/8/2k5/3Pp3/8/8/4K3 b - d3 0 1",
};

bool InLegalList(const arbiter::Position& pos, arbiter::Move m) {
  arbiter::MoveList legal;
  arbiter::GenerateLegal(pos, legal);
  for (arbiter::Move l : legal)
    if (l == m) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 64) return 0;
  const arbiter::Position pos = *arbiter::Position::FromFen(kFens[data[0] % 5]);
  const std::string_view text = AsText(data + 1, size - 1);
  for (bool san : {false, true}) {
    absl::StatusOr<arbiter::Move> m =
        san ? arbiter::ParseSanMove(pos, text) : arbiter::ParseUciMove(pos, text);
    if (!m.ok()) continue;
    FUZZ_CHECK(InLegalList(pos, *m));
    FUZZ_CHECK(*arbiter::ParseUciMove(pos, arbiter::MoveToUci(pos, *m)) == *m);
    FUZZ_CHECK(*arbiter::ParseSanMove(pos, arbiter::MoveToSan(pos, *m)) == *m);
  }
  return 0;
}
