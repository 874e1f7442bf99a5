// Random legal positions for checking move generators: playouts from the standard start and
// from Chess960 starts, with move choice biased toward what move generators get wrong.
//
// How the bias works: every legal move gets a weight and one is drawn in proportion. Weight 1 for
// a plain move; +12 for a double pawn push that lands next to an enemy pawn (an en passant
// chance) and +12 for an en passant capture; +10 for a promotion, +10 more for one that captures
// and +10 for one that gives check; +6 for a move that gives check and +20 for a double check;
// +8 for a rook move back onto the square of a castling rook of its side that lost its right (a
// rook "moved and back": the square is right, the right is not), +6 for a king or rook move that
// keeps a right available (castling positions stay alive) and +8 for castling itself; +3 for a
// capture of a rook still on its castling square; +4 per rank beyond the fourth for a pawn move
// (pawns run toward promotion). A playout stops after a random 6..80 plies, or earlier with
// probability 1/2 right after a double push with an en passant capture available, a check, or a
// move that makes a promotion or castling available next; never on a position without legal moves.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/position.h"

namespace arbiter {

// The Chess960 start position number `n` (0..959, Scharnagl numbering; 518 is the standard one).
Position Chess960Start(int n);

// `count` positions from `seed`; the odd-numbered ones start from a random Chess960 position.
std::vector<Position> RandomPositions(int count, uint64_t seed);

}  // namespace arbiter
