// Static evaluation of the builtin engine: tapered material and piece-square tables plus
// mobility, pawn structure, rooks on open files and king safety. Clear terms, hand-set values.
// See https://www.chessprogramming.org/Tapered_Eval.
#pragma once

#include "engine/position.h"

namespace arbiter::search {

// Every tunable number of the evaluation; the UCI layer exposes them as spin options so that two
// settings of the engine can be played against each other.
struct EvalParams {
  // Piece values in centipawns, middlegame and endgame, indexed by PieceType (king unused).
  int piece_mg[6] = {90, 330, 345, 470, 980, 0};
  int piece_eg[6] = {115, 300, 320, 530, 960, 0};
  // Scales in percent for the positional terms (100 = as tuned, 0 = off).
  int mobility_percent = 100;
  int pawn_structure_percent = 100;
  int king_safety_percent = 100;
  int tempo = 12;
};

// Score from the side to move's point of view, in centipawns.
int Evaluate(const Position& pos, const EvalParams& params);

// Game phase from 0 (only kings and pawns) to kMaxPhase (all pieces on the board).
inline constexpr int kMaxPhase = 24;
int GamePhase(const Position& pos);

}  // namespace arbiter::search
