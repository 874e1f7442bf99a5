#include "engine/search/uci.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <istream>
#include <new>
#include <ostream>

#include "base/numbers.h"
#include "base/strings.h"
#include "engine/movegen.h"
#include "engine/notation.h"
#include "engine/perft.h"

namespace arbiter::search {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string Join(const std::vector<std::string_view>& words, size_t from, size_t to) {
  std::string s;
  for (size_t i = from; i < to && i < words.size(); ++i) {
    if (!s.empty()) s += ' ';
    s += words[i];
  }
  return s;
}

std::string FormatScore(int score) {
  if (score >= kMateBound) return Cat("mate ", (kMate - score + 1) / 2);
  if (score <= -kMateBound) return Cat("mate -", (kMate + score) / 2);
  return Cat("cp ", score);
}

// Positions of the bench: openings, middlegames with tactics, endgames (standard test FENs).
constexpr std::string_view kBenchFens[] = {
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    "rnbq1rk1/ppp1bppp/4pn2/3p4/2PP4/2N2N2/PP2PPPP/R1BQKB1R w KQ - 4 6",
    "r1bq1rk1/pp2ppbp/2np1np1/8/3NP3/2N1BP2/PPPQ2PP/R3KB1R w KQ - 3 9",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    "2r3k1/pp3ppp/2n1b3/3pP3/3P4/P1r2N2/1P3PPP/R2R2K1 w - - 0 20",
    "r1b2rk1/2q1b1pp/p2ppn2/1p6/3QP3/1BN1B3/PPP3PP/R4RK1 w - - 0 14",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "8/8/4k3/8/2p5/8/B2P2K1/8 w - - 0 1",
    "6k1/5p2/6p1/8/7p/8/6PP/6K1 b - - 0 40",
    "8/3k4/8/8/8/4R3/4K3/8 w - - 0 1",
    "4rrk1/pp1n3p/3q2pQ/2p1pb2/2PP4/2P3N1/P2B2PP/4RRK1 b - - 7 19",
    "r3r1k1/2p2ppp/p1p1bn2/8/1q2P3/2NPQN2/PPP3PP/R4RK1 b - - 2 15",
};

}  // namespace

UciEngine::UciEngine(std::ostream& out)
    : out_(out), searcher_(16), pos_(Position::StartPosition()) {
  EvalParams& e = searcher_.eval_params();
  SearchParams& s = searcher_.params();
  const char* names[6] = {"Pawn", "Knight", "Bishop", "Rook", "Queen", "King"};
  for (int pt = kPawn; pt <= kQueen; ++pt) {
    spins_.push_back({Cat(names[pt], "ValueMg"), e.piece_mg[pt], 0, 3000, &e.piece_mg[pt]});
    spins_.push_back({Cat(names[pt], "ValueEg"), e.piece_eg[pt], 0, 3000, &e.piece_eg[pt]});
  }
  spins_.push_back({"MobilityWeight", e.mobility_percent, 0, 400, &e.mobility_percent});
  spins_.push_back(
      {"PawnStructureWeight", e.pawn_structure_percent, 0, 400, &e.pawn_structure_percent});
  spins_.push_back({"KingSafetyWeight", e.king_safety_percent, 0, 400, &e.king_safety_percent});
  spins_.push_back({"Tempo", e.tempo, 0, 100, &e.tempo});
  spins_.push_back({"FutilityMargin", s.futility_margin, 0, 1000, &s.futility_margin});
  spins_.push_back({"NullMoveReduction", s.null_move_reduction, 1, 6, &s.null_move_reduction});
  spins_.push_back({"LmrPercent", s.lmr_percent, 0, 300, &s.lmr_percent});
  spins_.push_back({"AspirationWindow", s.aspiration_window, 0, 1000, &s.aspiration_window});
}

UciEngine::~UciEngine() { StopAndJoin(); }

void UciEngine::Print(std::string_view line) {
  absl::MutexLock lock(&out_mu_);
  out_ << line << '\n';
  out_.flush();
}

void UciEngine::StopAndJoin() {
  {
    absl::MutexLock lock(&wait_mu_);
    control_.stop = true;
  }
  if (search_thread_.joinable()) search_thread_.join();
}

bool UciEngine::Handle(std::string_view line) {
  const std::vector<std::string_view> words = SplitWords(line);
  if (words.empty()) return true;
  const std::string_view cmd = words[0];
  if (cmd == "uci") {
    Print(Cat("id name ", kEngineName));
    Print("id author the arbiter authors");
    PrintOptions();
    Print("uciok");
  } else if (cmd == "isready") {
    Print("readyok");
  } else if (cmd == "setoption") {
    StopAndJoin();
    SetOption(words);
  } else if (cmd == "ucinewgame") {
    StopAndJoin();
    searcher_.NewGame();
  } else if (cmd == "position") {
    SetPosition(words);
  } else if (cmd == "go") {
    StopAndJoin();
    Go(words);
  } else if (cmd == "stop") {
    absl::MutexLock lock(&wait_mu_);
    control_.stop = true;
  } else if (cmd == "ponderhit") {
    absl::MutexLock lock(&wait_mu_);
    control_.pondering = false;
  } else if (cmd == "quit") {
    StopAndJoin();
    return false;
  } else if (cmd == "bench") {
    StopAndJoin();
    int depth = kBenchDepth;
    if (words.size() > 1 && (!ParseNumber(words[1], depth) || depth < 1 || depth > 30)) {
      Print(Cat("info string bench: depth '", words[1], "' is not a number from 1 to 30"));
      return true;
    }
    absl::MutexLock lock(&out_mu_);
    RunBench(depth, out_);
  } else if (cmd == "d") {
    Print(Cat("info string fen ", pos_.Fen()));
  } else if (cmd == "eval") {
    Print(Cat("info string eval ", Evaluate(pos_, searcher_.eval_params()), " cp (side to move)"));
  } else if (cmd == "debug" || cmd == "register") {
    // Accepted and ignored.
  } else {
    Print(Cat("info string unknown command '", cmd, "'"));
  }
  return true;
}

void UciEngine::PrintOptions() {
  Print(Cat("option name Hash type spin default 16 min 1 max 16384"));
  Print("option name Threads type spin default 1 min 1 max 256");
  Print("option name Move Overhead type spin default 30 min 0 max 5000");
  Print("option name Ponder type check default false");
  Print("option name UCI_Chess960 type check default false");
  for (const SpinOption& o : spins_)
    Print(Cat("option name ", o.name, " type spin default ", o.default_value, " min ", o.min,
              " max ", o.max));
}

void UciEngine::SetOption(const std::vector<std::string_view>& words) {
  // setoption name <words...> [value <words...>]
  auto name_it = std::find(words.begin(), words.end(), "name");
  auto value_it = std::find(words.begin(), words.end(), "value");
  if (name_it == words.end() || name_it > value_it) {
    Print("info string setoption: expected 'setoption name <name> value <value>'");
    return;
  }
  const size_t name_from = name_it - words.begin() + 1, value_at = value_it - words.begin();
  const std::string name = Join(words, name_from, value_at);
  const std::string value = value_it == words.end() ? "" : Join(words, value_at + 1, words.size());
  auto spin = [&](int min, int max, int& target) {
    int v;
    if (!ParseNumber(std::string_view(value), v) || v < min || v > max) {
      Print(Cat("info string setoption ", name, ": value '", value, "' is not a number from ", min,
                " to ", max));
      return false;
    }
    target = v;
    return true;
  };
  if (EqualsIgnoreCase(name, "Hash")) {
    if (spin(1, 16384, hash_mb_)) {
      try {
        searcher_.SetHashSize(hash_mb_);
      } catch (const std::bad_alloc&) {
        Print(Cat("info string setoption Hash: cannot allocate ", hash_mb_, " MB; using 16"));
        hash_mb_ = 16;
        searcher_.SetHashSize(hash_mb_);
      }
    }
  } else if (EqualsIgnoreCase(name, "Threads")) {
    // Accepted for compatibility; the search itself is single-threaded.
    spin(1, 256, threads_);
  } else if (EqualsIgnoreCase(name, "Move Overhead")) {
    spin(0, 5000, move_overhead_ms_);
  } else if (EqualsIgnoreCase(name, "UCI_Chess960") || EqualsIgnoreCase(name, "Ponder")) {
    if (value != "true" && value != "false") {
      Print(Cat("info string setoption ", name, ": value '", value, "' is not true or false"));
      return;
    }
    if (EqualsIgnoreCase(name, "UCI_Chess960")) chess960_ = value == "true";
  } else {
    for (SpinOption& o : spins_)
      if (EqualsIgnoreCase(name, o.name)) {
        spin(o.min, o.max, *o.target);
        return;
      }
    Print(Cat("info string setoption: no option named '", name, "'"));
  }
}

void UciEngine::SetPosition(const std::vector<std::string_view>& words) {
  // position startpos|fen <fields> [moves m1 m2 ...]
  auto moves_it = std::find(words.begin(), words.end(), "moves");
  const size_t moves_at = moves_it - words.begin();
  absl::StatusOr<Position> pos = absl::InvalidArgumentError("expected 'startpos' or 'fen <FEN>'");
  if (words.size() >= 2 && words[1] == "startpos")
    pos = Position::StartPosition();
  else if (words.size() >= 3 && words[1] == "fen")
    pos = Position::FromFen(Join(words, 2, moves_at));
  if (!pos.ok()) {
    Print(Cat("info string position ignored: ", std::string(pos.status().message())));
    return;
  }
  std::vector<uint64_t> keys;
  for (size_t i = moves_at + 1; i < words.size(); ++i) {
    absl::StatusOr<Move> m = ParseUciMove(*pos, words[i]);
    if (!m.ok()) {
      Print(Cat("info string position ignored: move ", i - moves_at, ": ",
                std::string(m.status().message())));
      return;
    }
    keys.push_back(pos->Key().lo);
    UndoInfo undo;
    pos->DoMove(*m, undo);
    if (pos->HalfmoveClock() == 0) keys.clear();
  }
  pos_ = *pos;
  keys_ = std::move(keys);
}

void UciEngine::Go(const std::vector<std::string_view>& words) {
  GoLimits limits;
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string_view w = words[i];
    if (w == "infinite") {
      limits.infinite = true;
      continue;
    }
    if (w == "ponder") {
      limits.ponder = true;
      continue;
    }
    if (w == "searchmoves") {
      // Not supported: the moves that follow are skipped.
      while (i + 1 < words.size() && words[i + 1].size() >= 4 && words[i + 1][1] >= '1' &&
             words[i + 1][1] <= '8')
        ++i;
      continue;
    }
    if (i + 1 >= words.size()) {
      Print(Cat("info string go: '", w, "' needs a value"));
      continue;
    }
    const std::string_view v = words[++i];
    int64_t n = 0;
    if (!ParseNumber(v, n)) {
      Print(Cat("info string go: value '", v, "' of '", w, "' is not a number"));
      continue;
    }
    if (w == "perft") {
      if (n < 1 || n > kMaxPerftDepth) {
        Print(Cat("info string go perft: depth must be 1 to ", kMaxPerftDepth));
        return;
      }
      GoPerft(int(n));
      return;
    }
    if (w == "wtime") {
      limits.time[kWhite] = std::max<int64_t>(0, n);
    } else if (w == "btime") {
      limits.time[kBlack] = std::max<int64_t>(0, n);
    } else if (w == "winc") {
      limits.inc[kWhite] = std::max<int64_t>(0, n);
    } else if (w == "binc") {
      limits.inc[kBlack] = std::max<int64_t>(0, n);
    } else if (w == "movestogo") {
      limits.movestogo = int(std::clamp<int64_t>(n, 0, 1000));
    } else if (w == "movetime") {
      limits.movetime = std::max<int64_t>(0, n);
    } else if (w == "depth") {
      limits.depth = int(std::clamp<int64_t>(n, 1, kMaxPly - 1));
    } else if (w == "nodes") {
      limits.nodes = uint64_t(std::max<int64_t>(1, n));
    } else if (w == "mate") {
      limits.depth = int(std::clamp<int64_t>(2 * n + 1, 1, kMaxPly - 1));
    } else {
      Print(Cat("info string go: unknown parameter '", w, "'"));
    }
  }
  Position pos = pos_;
  pos.SetChess960(chess960_ || pos.IsChess960());
  control_.stop = false;
  control_.pondering = limits.ponder;
  search_thread_ = std::thread(&UciEngine::SearchThread, this, pos, keys_, limits);
}

void UciEngine::GoPerft(int depth) {
  Position pos = pos_;
  pos.SetChess960(chess960_ || pos.IsChess960());
  absl::StatusOr<PerftResult> r = Perft(pos, {.depth = depth, .divide = true});
  if (!r.ok()) {
    Print(Cat("info string go perft: ", std::string(r.status().message())));
    return;
  }
  std::string text;
  for (const PerftDivide& d : r->divide) text += Cat(MoveToUci(pos, d.move), ": ", d.nodes, "\n");
  text += Cat("\nNodes searched: ", r->nodes, "\n");
  Print(text);
}

std::string UciEngine::FormatInfo(const Position& root, const SearchInfo& info) const {
  std::string line = Cat("info depth ", info.depth, " seldepth ", info.seldepth,
                         " multipv 1 score ", FormatScore(info.score), " nodes ", info.nodes,
                         " nps ", info.nodes * 1000 / uint64_t(std::max<int64_t>(1, info.time_ms)),
                         " hashfull ", info.hashfull, " time ", info.time_ms, " pv");
  Position pos = root;
  for (Move m : info.pv) {
    if (!IsLegal(pos, m)) break;
    line += Cat(" ", MoveToUci(pos, m));
    UndoInfo undo;
    pos.DoMove(m, undo);
  }
  return line;
}

void UciEngine::SearchThread(Position pos, std::vector<uint64_t> keys, GoLimits limits) {
  SearchResult r = searcher_.Search(pos, keys, limits, move_overhead_ms_, control_,
                                    [&](const SearchInfo& info) { Print(FormatInfo(pos, info)); });
  // `go infinite` and `go ponder` may not answer before `stop` (or `ponderhit`).
  {
    absl::MutexLock lock(&wait_mu_);
    auto may_answer = [&] {
      return control_.stop.load() || (!limits.infinite && !control_.pondering.load());
    };
    wait_mu_.Await(absl::Condition(&may_answer));
  }
  MoveList legal;
  GenerateLegal(pos, legal);
  if (legal.size == 0) {
    Print(Cat("info depth 0 score ", pos.InCheck() ? "mate 0" : "cp 0"));
    Print("bestmove (none)");
    return;
  }
  if (!legal.Contains(r.best)) r.best = legal.moves[0];
  std::string answer = Cat("bestmove ", MoveToUci(pos, r.best));
  UndoInfo undo;
  pos.DoMove(r.best, undo);
  if (!r.ponder.IsNone() && IsLegal(pos, r.ponder))
    answer += Cat(" ponder ", MoveToUci(pos, r.ponder));
  Print(answer);
}

void RunUci(std::istream& in, std::ostream& out) {
  // A tied input stream would flush `out` from this thread while the search thread prints.
  in.tie(nullptr);
  UciEngine engine(out);
  std::string line;
  while (std::getline(in, line))
    if (!engine.Handle(line)) return;
  engine.StopAndJoin();
}

BenchResult RunBench(int depth, std::ostream& out) {
  Searcher searcher(16);
  BenchResult result;
  const auto start = std::chrono::steady_clock::now();
  GoLimits limits;
  limits.depth = depth;
  for (std::string_view fen : kBenchFens) {
    absl::StatusOr<Position> pos = Position::FromFen(fen);
    if (!pos.ok()) continue;
    searcher.NewGame();
    SearchControl control;
    SearchResult r = searcher.Search(*pos, {}, limits, 0, control, nullptr);
    ++result.positions;
    result.nodes += r.nodes;
    out << "Position " << result.positions << "/" << std::size(kBenchFens) << ": " << r.nodes
        << " nodes, bestmove " << MoveToUci(*pos, r.best) << "\n";
  }
  result.ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  out << "\n===========================\n"
      << "Total time (ms) : " << result.ms << "\n"
      << "Nodes searched  : " << result.nodes << "\n"
      << "Nodes/second    : " << result.nodes * 1000 / uint64_t(std::max<int64_t>(1, result.ms))
      << "\n";
  out.flush();
  return result;
}

}  // namespace arbiter::search
