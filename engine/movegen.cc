#include "engine/movegen.h"

namespace arbiter {

int GenerateLegal(const Position& pos, MoveList& list) {
  using namespace movegen_detail;
  int n = pos.SideToMove() == kWhite ? Generate<kWhite, kAll>(pos, list.moves + list.size)
                                     : Generate<kBlack, kAll>(pos, list.moves + list.size);
  list.size += n;
  return n;
}

int GenerateTactical(const Position& pos, MoveList& list) {
  using namespace movegen_detail;
  int n = pos.SideToMove() == kWhite ? Generate<kWhite, kTactical>(pos, list.moves + list.size)
                                     : Generate<kBlack, kTactical>(pos, list.moves + list.size);
  list.size += n;
  return n;
}

bool IsLegal(const Position& pos, Move m) {
  if (m.IsNone()) return false;
  MoveList list;
  GenerateLegal(pos, list);
  return list.Contains(m);
}

}  // namespace arbiter
