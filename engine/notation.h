// Move notation: UCI long algebraic (standard and Chess960 castling) and SAN.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "engine/position.h"

namespace arbiter {

std::string SquareToString(Square s);

// UCI text of a move: e2e4, e7e8q; castling as e1g1, or king-takes-rook (e1h1) in Chess960.
std::string MoveToUci(const Position& pos, Move m);
// Parses a UCI move and checks that it is legal here; accepts both castling forms.
absl::StatusOr<Move> ParseUciMove(const Position& pos, std::string_view text);

// Standard Algebraic Notation with disambiguation, captures, =Q, O-O / O-O-O, + and #.
std::string MoveToSan(const Position& pos, Move m);
// Parses SAN (tolerates missing/extra +, #, !, ?, and 0-0 for O-O); the move must be legal.
absl::StatusOr<Move> ParseSanMove(const Position& pos, std::string_view text);

}  // namespace arbiter
