// Plays the builtin engine (`arbiter uci`) against Debian's Stockfish limited by UCI_Elo, with
// the match library's arbitrated game loop (clocks, legality, faults), game pairs from a fixed
// set of openings with colours reversed, and prints the score and any time losses or illegal
// moves. Usage: strength_match ARBITER STOCKFISH ELO GAMES TC [CONCURRENCY [OVERHEAD_MS]]
// Both engines get the same Move Overhead (default 100 ms: the test machines are shared).
#include <atomic>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/notation.h"
#include "match/game.h"
#include "match/time_control.h"
#include "match/uci_engine.h"

namespace {

using arbiter::Move;
using arbiter::Position;
namespace match = arbiter::match;

// Short, common, balanced opening lines (UCI moves from the start position).
constexpr const char* kOpenings[] = {
    "e2e4 e7e5 g1f3 b8c6 f1b5 a7a6", "e2e4 c7c5 g1f3 d7d6 d2d4 c5d4",
    "d2d4 d7d5 c2c4 e7e6 b1c3 g8f6", "d2d4 g8f6 c2c4 g7g6 b1c3 f8g7",
    "e2e4 e7e6 d2d4 d7d5 b1c3 g8f6", "e2e4 c7c6 d2d4 d7d5 e4e5 c8f5",
    "c2c4 e7e5 b1c3 g8f6 g2g3 d7d5", "g1f3 d7d5 g2g3 g8f6 f1g2 c7c6",
    "e2e4 e7e5 g1f3 b8c6 f1c4 f8c5", "d2d4 g8f6 c2c4 e7e6 g1f3 b7b6",
    "e2e4 c7c5 b1c3 b8c6 g2g3 g7g6", "d2d4 d7d5 g1f3 g8f6 c1f4 e7e6",
    "e2e4 d7d6 d2d4 g8f6 b1c3 g7g6", "c2c4 c7c5 g1f3 g8f6 b1c3 b8c6",
    "e2e4 e7e5 f2f4 e5f4 g1f3 g7g5", "d2d4 f7f5 g2g3 g8f6 f1g2 e7e6",
    "e2e4 c7c5 g1f3 e7e6 d2d4 c5d4", "d2d4 g8f6 c2c4 c7c5 d4d5 e7e6",
    "e2e4 g8f6 e4e5 f6d5 d2d4 d7d6", "c2c4 g8f6 b1c3 e7e6 e2e4 d7d5",
};

struct Tally {
  int wins = 0, draws = 0, losses = 0;  // for arbiter
  int time_losses = 0, illegal = 0, other_faults = 0;
  int opponent_time_losses = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::cerr
        << "usage: strength_match ARBITER STOCKFISH ELO GAMES TC [CONCURRENCY [OVERHEAD_MS]]\n";
    return 2;
  }
  const std::string arbiter_bin = argv[1], stockfish = argv[2], elo = argv[3];
  const int games = std::stoi(argv[4]);
  auto tc = match::ParseTimeControl(argv[5]);
  if (!tc.ok()) {
    std::cerr << "bad time control: " << tc.status() << "\n";
    return 2;
  }
  const int concurrency = argc > 6 ? std::stoi(argv[6]) : 1;
  const std::string overhead = argc > 7 ? argv[7] : "100";

  Tally tally;
  std::mutex mu;
  std::atomic<int> next{0};
  auto worker = [&] {
    match::EngineSpec ours{.name = "arbiter", .cmd = arbiter_bin, .args = {"uci"}};
    ours.options = {{"Hash", "16"}, {"Move Overhead", overhead}};
    match::EngineSpec sf{.name = "stockfish-" + elo, .cmd = stockfish};
    sf.options = {{"Threads", "1"},
                  {"Hash", "16"},
                  {"Move Overhead", overhead},
                  {"UCI_LimitStrength", "true"},
                  {"UCI_Elo", elo}};
    match::UciEngine a(ours), b(sf);
    for (int g; (g = next++) < games;) {
      match::Opening opening;
      const std::string line = kOpenings[(g / 2) % std::size(kOpenings)];
      Position pos = Position::StartPosition();
      for (size_t i = 0; i < line.size(); i += 5) {
        auto m = arbiter::ParseUciMove(pos, std::string_view(line).substr(i, 4));
        if (!m.ok()) break;
        opening.moves.push_back(*m);
        arbiter::UndoInfo u;
        pos.DoMove(*m, u);
      }
      const bool arbiter_white = g % 2 == 0;
      match::UciEngine* engines[2] = {arbiter_white ? &a : &b, arbiter_white ? &b : &a};
      match::GameSettings settings;
      settings.tc[0] = settings.tc[1] = *tc;
      match::GameRecord r = match::PlayGame(engines, opening, settings);
      std::lock_guard<std::mutex> lock(mu);
      const bool white_won = r.result == arbiter::GameResult::kWhiteWins;
      const bool black_won = r.result == arbiter::GameResult::kBlackWins;
      if (r.result == arbiter::GameResult::kDraw) {
        ++tally.draws;
      } else if ((white_won && arbiter_white) || (black_won && !arbiter_white)) {
        ++tally.wins;
      } else if (white_won || black_won) {
        ++tally.losses;
      }
      const bool arbiter_faulty = (r.faulty == arbiter::kWhite) == arbiter_white;
      if (r.end == match::GameEnd::kTimeForfeit && arbiter_faulty) ++tally.time_losses;
      if (r.end == match::GameEnd::kTimeForfeit && !arbiter_faulty) ++tally.opponent_time_losses;
      if (r.end == match::GameEnd::kIllegalMove && arbiter_faulty) ++tally.illegal;
      if ((r.end == match::GameEnd::kDisconnect || r.end == match::GameEnd::kStall) &&
          arbiter_faulty)
        ++tally.other_faults;
      const int played = tally.wins + tally.draws + tally.losses;
      std::printf("game %d (%s %s): %s %s | arbiter +%d =%d -%d  %.1f%%\n", g + 1,
                  arbiter_white ? "white" : "black", line.c_str(),
                  std::string(match::GameEndName(r.end)).c_str(), r.reason.c_str(), tally.wins,
                  tally.draws, tally.losses,
                  played ? 100.0 * (tally.wins + 0.5 * tally.draws) / played : 0.0);
      std::fflush(stdout);
    }
    a.Quit();
    b.Quit();
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < concurrency; ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  const int played = tally.wins + tally.draws + tally.losses;
  std::printf(
      "RESULT vs Stockfish UCI_Elo %s at %s: %d games, +%d =%d -%d, score %.1f%%; arbiter time "
      "losses %d, illegal moves %d, other faults %d; Stockfish time losses %d\n",
      elo.c_str(), argv[5], played, tally.wins, tally.draws, tally.losses,
      played ? 100.0 * (tally.wins + 0.5 * tally.draws) / played : 0.0, tally.time_losses,
      tally.illegal, tally.other_faults, tally.opponent_time_losses);
  return 0;
}
