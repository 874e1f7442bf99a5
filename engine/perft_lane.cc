#include "engine/perft_lane.h"

namespace arbiter {

uint64_t HashWords(std::initializer_list<uint64_t> words) {
  uint64_t h = 0x243f6a8885a308d3;
  for (uint64_t w : words) h = Fold(h ^ w, 0x9e3779b97f4a7c15);
  return h;
}

uint64_t ShardKey(const Position& pos) {
  const Color them = ~pos.SideToMove();
  return HashWords({pos.Pieces(them, kPawn), pos.Pieces(them, kKnight), pos.Pieces(them, kBishop),
                    pos.Pieces(them, kRook), pos.Pieces(them, kQueen), pos.Pieces(them, kKing)}) >>
         1;
}

}  // namespace arbiter
