#include "match/movegen_check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <future>
#include <sstream>

#include "base/status_macros.h"
#include "base/strings.h"
#include "engine/epd.h"
#include "engine/movegen.h"
#include "engine/notation.h"
#include "engine/perft.h"
#include "engine/position.h"

namespace arbiter::match {
namespace {

constexpr size_t kMaxFaultsKept = 100;

// CPU time of the calling thread: arbiter's count shares the cores with the engine, so its wall
// time would say more about the engine than about the count.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

std::string Join(const google::protobuf::RepeatedPtrField<std::string>& v) {
  std::string s;
  for (const auto& m : v) s += Cat(s.empty() ? "" : " ", m);
  return s.empty() ? "(none)" : s;
}

}  // namespace

v1::PerftDialectSpec DialectToProto(const PerftDialect& d) {
  v1::PerftDialectSpec p;
  p.set_name(d.name);
  p.set_command(d.command);
  p.set_total_regex(d.total_regex);
  p.set_divide_regex(d.divide_regex);
  return p;
}

absl::StatusOr<PerftDialect> DialectFromProto(const v1::PerftDialectSpec& d) {
  return MakePerftDialect(d.name().empty() ? "go-perft" : d.name(), d.command(), d.total_regex(),
                          d.divide_regex());
}

MovegenChecker::MovegenChecker(UciEngine& engine, PerftDialect dialect, Millis timeout)
    : engine_(engine), dialect_(std::move(dialect)), timeout_(timeout) {}

absl::StatusOr<v1::MovegenPositionResult> MovegenChecker::Check(const v1::MovegenPosition& p) {
  const size_t plies = size_t(p.moves_size());
  if (p.depth() < 1 || p.depth() + plies > uint32_t(kMaxMovegenDepth))
    return absl::InvalidArgumentError(Cat("depth ", p.depth() + plies, " is outside 1..",
                                          kMaxMovegenDepth, " (", p.source(), ")"));
  absl::StatusOr<Position> parsed = Position::FromFen(p.fen());
  if (!parsed.ok())
    return absl::InvalidArgumentError(
        Cat(p.source(), ": ", std::string(parsed.status().message())));
  const std::string root_fen = parsed->Fen();
  // The part's position: the moves applied, each checked legal.
  Position pos = *parsed;
  std::vector<std::string> moves;
  std::string setup = Cat("position fen ", root_fen);
  const std::vector<std::string> given(p.moves().begin(), p.moves().end());
  if (absl::Status st = ApplyUciMoves(pos, given, moves, setup); !st.ok())
    return absl::InvalidArgumentError(Cat(p.source(), ": ", std::string(st.message())));
  const int depth = int(p.depth());
  v1::MovegenPositionResult out;
  out.set_fen(p.fen());
  out.set_depth(p.depth());
  out.set_source(p.source());

  // Arbiter's count on a thread of its own while the engine counts; deep positions with the
  // hash table kept across positions, shallow ones without.
  if (depth >= 5 && !table_) table_ = MakePerftTable(16);
  double ours_seconds = 0;
  std::future<absl::StatusOr<uint64_t>> ours =
      std::async(std::launch::async,
                 [&pos, &ours_seconds, depth, table = table_.get()]() -> absl::StatusOr<uint64_t> {
                   const double start = ThreadCpuSeconds();
                   absl::StatusOr<uint64_t> n;
                   if (depth < 5 || !table) {
                     n = PerftCount(pos, depth);
                   } else if (absl::StatusOr<PerftResult> r =
                                  Perft(pos, PerftOptions{.depth = depth, .table = table});
                              r.ok()) {
                     n = r->nodes;
                   } else {
                     n = r.status();
                   }
                   ours_seconds = ThreadCpuSeconds() - start;
                   return n;
                 });
  auto counted = [&]() -> absl::StatusOr<uint64_t> {
    absl::StatusOr<uint64_t> n = ours.get();
    out.set_arbiter_seconds(ours_seconds);
    if (n.ok()) out.set_arbiter_nodes(*n);
    return n;
  };
  auto fault = [&](const absl::Status& st) -> absl::StatusOr<v1::MovegenPositionResult> {
    if (ours.valid()) RETURN_IF_ERROR(counted().status());
    if (st.code() == absl::StatusCode::kFailedPrecondition) return st;
    out.set_fault(std::string(st.message()));
    engine_.Kill();
    return out;
  };
  if (absl::Status st = engine_.EnsureRunning(); !st.ok()) return fault(st);
  if (engine_.protocol() == Protocol::kXboard) return fault(CecpCannotCount(engine_));
  // A fresh process (the first, or one started again after a fault) is probed and set up once.
  if (engine_.starts() != ready_starts_ || chess960_ != int(pos.IsChess960())) {
    if (absl::Status st = engine_.NewGame(pos.IsChess960()); !st.ok()) return fault(st);
    chess960_ = int(pos.IsChess960());
  }
  if (engine_.starts() != ready_starts_) {
    if (absl::Status st = ProbePerftDialect(engine_, dialect_, root_fen, timeout_); !st.ok())
      return fault(st);
    ready_starts_ = engine_.starts();
  }
  auto engine_count = [&](int d) -> absl::StatusOr<EngineDivide> {
    RETURN_IF_ERROR(engine_.Send(setup));
    return RunEnginePerft(engine_, dialect_, d, timeout_);
  };
  absl::StatusOr<EngineDivide> theirs = engine_count(depth);
  if (!theirs.ok()) return fault(theirs.status());
  out.set_engine_nodes(theirs->total);
  out.set_engine_seconds(theirs->seconds);
  ASSIGN_OR_RETURN(const uint64_t expected, counted());
  if (theirs->total == expected) return out;

  // The shallowest depth at which the engine is wrong, then the descent from there.
  int wrong_depth = depth;
  for (int d = 1; d < depth; ++d) {
    absl::StatusOr<EngineDivide> t = engine_count(d);
    if (!t.ok()) return fault(t.status());
    if (t->total != PerftCount(pos, d)) {
      wrong_depth = d;
      break;
    }
  }
  absl::StatusOr<PerftDiffReport> diff =
      PerftDiff(engine_, root_fen, wrong_depth, timeout_, dialect_, moves);
  if (!diff.ok()) return fault(diff.status());
  v1::MovegenFailure* f = out.mutable_failure();
  f->set_fen(diff->fen);
  f->set_depth(diff->depth);
  for (const auto& m : diff->missing) f->add_missing_moves(m);
  for (const auto& m : diff->extra) f->add_extra_moves(m);
  for (const auto& m : diff->wrong_counts) f->add_wrong_count_moves(m);
  f->set_root_fen(root_fen);
  f->set_root_depth(uint32_t(wrong_depth + int(plies)));
  for (const auto& m : diff->path) f->add_path(m);
  f->set_root_source(p.source());
  f->set_positions(1);
  return out;
}

absl::StatusOr<v1::MovegenPositionResult> CheckMovegenPosition(UciEngine& engine,
                                                               const v1::MovegenPosition& p,
                                                               const PerftDialect& dialect,
                                                               Millis timeout) {
  return MovegenChecker(engine, dialect, timeout).Check(p);
}

std::vector<v1::MovegenPosition> SplitMovegenPosition(const v1::MovegenPosition& p,
                                                      uint32_t index) {
  std::vector<v1::MovegenPosition> parts;
  absl::StatusOr<Position> pos = Position::FromFen(p.fen());
  if (!pos.ok() || p.depth() < 2 || p.moves_size() > 0) return parts;
  MoveList list;
  GenerateLegal(*pos, list);
  const int probe = std::min<int>(int(p.depth()) - 1, 2);
  std::vector<double> weight;
  double total = 0;
  for (Move m : list) {
    UndoInfo undo;
    pos->DoMove(m, undo);
    weight.push_back(double(std::max<uint64_t>(1, PerftCount(*pos, probe))));
    pos->UndoMove(m, undo);
    total += weight.back();
  }
  const double estimate =
      p.estimate_nodes() ? double(p.estimate_nodes()) : std::pow(30.0, p.depth());
  size_t i = 0;
  for (Move m : list) {
    v1::MovegenPosition& part = parts.emplace_back();
    part.set_fen(p.fen());
    part.set_source(p.source());
    part.set_depth(p.depth() - 1);
    part.add_moves(MoveToUci(*pos, m));
    part.set_estimate_nodes(uint64_t(std::max(1.0, estimate * weight[i++] / total)));
    part.set_index(index);
    part.set_parts(uint32_t(list.size));
  }
  return parts;
}

std::optional<v1::MovegenPositionResult> MovegenParts::Add(const v1::MovegenPosition& part,
                                                           const v1::MovegenPositionResult& r) {
  Pending& p = pending_[part.index()];
  v1::MovegenPositionResult& sum = p.sum;
  if (p.seen++ == 0) {
    sum.set_fen(part.fen());
    sum.set_depth(part.depth() + uint32_t(part.moves_size()));
    sum.set_source(part.source());
  }
  sum.set_arbiter_nodes(sum.arbiter_nodes() + r.arbiter_nodes());
  sum.set_engine_nodes(sum.engine_nodes() + r.engine_nodes());
  sum.set_arbiter_seconds(sum.arbiter_seconds() + r.arbiter_seconds());
  sum.set_engine_seconds(sum.engine_seconds() + r.engine_seconds());
  if (!r.fault().empty() && sum.fault().empty()) {
    std::string after;
    for (const auto& m : part.moves()) after += Cat(after.empty() ? "" : " ", m);
    sum.set_fault(Cat("after ", after, ": ", r.fault()));
  }
  if (r.has_failure() &&
      (!sum.has_failure() || r.failure().path_size() < sum.failure().path_size() ||
       (r.failure().path_size() == sum.failure().path_size() &&
        r.failure().root_depth() < sum.failure().root_depth())))
    *sum.mutable_failure() = r.failure();
  if (p.seen < part.parts()) return std::nullopt;
  v1::MovegenPositionResult done = std::move(sum);
  pending_.erase(part.index());
  return done;
}

void MovegenAggregate::Add(const v1::MovegenPositionResult& r) {
  if (!r.fault().empty()) {
    sum_.set_positions_faulted(sum_.positions_faulted() + 1);
    if (size_t(sum_.faults_size()) < kMaxFaultsKept) {
      v1::MovegenFault* f = sum_.add_faults();
      f->set_fen(r.fen());
      f->set_depth(r.depth());
      f->set_source(r.source());
      f->set_message(r.fault());
    }
    return;
  }
  sum_.set_positions_checked(sum_.positions_checked() + 1);
  sum_.set_nodes_compared(sum_.nodes_compared() + r.arbiter_nodes());
  sum_.set_engine_seconds(sum_.engine_seconds() + r.engine_seconds());
  sum_.set_arbiter_seconds(sum_.arbiter_seconds() + r.arbiter_seconds());
  if (!r.has_failure()) {
    sum_.set_positions_clean(sum_.positions_clean() + 1);
    return;
  }
  const v1::MovegenFailure& f = r.failure();
  // Same bug = same final position (board, side, castling, en passant) and same move sets.
  std::string key;
  for (std::string_view field : Split(f.fen(), ' ', true)) {
    if (key.size() && std::count(key.begin(), key.end(), ' ') >= 3) break;
    key += Cat(key.empty() ? "" : " ", field);
  }
  for (const auto* list : {&f.missing_moves(), &f.extra_moves(), &f.wrong_count_moves()}) {
    std::vector<std::string> v(list->begin(), list->end());
    std::sort(v.begin(), v.end());
    key += "|";
    for (const auto& m : v) key += Cat(m, " ");
  }
  auto [it, fresh] = failure_index_.emplace(key, sum_.failures_size());
  if (fresh) {
    *sum_.add_failures() = f;
    return;
  }
  v1::MovegenFailure* seen = sum_.mutable_failures(it->second);
  seen->set_positions(seen->positions() + 1);
  // Keep the smallest example: the shortest path.
  if (f.path_size() < seen->path_size()) {
    const uint32_t n = seen->positions();
    *seen = f;
    seen->set_positions(n);
  }
}

v1::MovegenCheckResult MovegenAggregate::Result(uint32_t positions) const {
  v1::MovegenCheckResult r = sum_;
  r.set_positions(positions);
  if (r.engine_seconds() > 0)
    r.set_engine_nodes_per_second(r.nodes_compared() / r.engine_seconds());
  if (r.arbiter_seconds() > 0)
    r.set_arbiter_nodes_per_second(r.nodes_compared() / r.arbiter_seconds());
  std::stable_sort(r.mutable_failures()->begin(), r.mutable_failures()->end(),
                   [](const v1::MovegenFailure& a, const v1::MovegenFailure& b) {
                     return a.positions() > b.positions();
                   });
  return r;
}

absl::StatusOr<std::vector<v1::MovegenPosition>> MovegenSuitePositions(const std::string& path,
                                                                       int depth,
                                                                       uint64_t max_nodes) {
  if (depth < 0 || depth > kMaxMovegenDepth)
    return absl::InvalidArgumentError(Cat("--depth ", depth, " is outside 1..", kMaxMovegenDepth));
  if (depth == 0 && max_nodes == 0)
    return absl::InvalidArgumentError("give --depth N or --max-nodes N");
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(Cat(path, ": cannot read"));
  const int max_depth = depth ? depth : 6;
  std::vector<v1::MovegenPosition> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    ASSIGN_OR_RETURN(PerftSuiteLine l, ParsePerftSuiteLine(line, n));
    if (l.fen.empty()) continue;
    if (out.size() >= kMaxMovegenPositions)
      return absl::InvalidArgumentError(
          Cat(path, ": more than ", kMaxMovegenPositions, " positions"));
    absl::StatusOr<Position> pos = Position::FromFen(l.fen);
    if (!pos.ok())
      return absl::InvalidArgumentError(
          Cat(path, ":", n, ": ", std::string(pos.status().message())));
    int d = max_depth;
    uint64_t estimate = 0;
    for (auto& [kd, kn] : l.expected)
      if (kd == d) estimate = kn;
    if (max_nodes) {
      d = 1;
      for (int k = 1; k <= max_depth; ++k) {
        uint64_t count = 0;
        bool known = false;
        for (auto& [kd, kn] : l.expected)
          if (kd == k) count = kn, known = true;
        if (!known) count = PerftCount(*pos, k);
        if (k > 1 && count > max_nodes) break;
        d = k;
        estimate = count;
      }
    }
    v1::MovegenPosition p;
    p.set_estimate_nodes(estimate);
    p.set_fen(l.fen);
    p.set_depth(d);
    p.set_source(Cat(path, ":", n));
    out.push_back(std::move(p));
  }
  if (out.empty()) return absl::InvalidArgumentError(Cat(path, ": no positions"));
  return out;
}

std::string MovegenReportText(const v1::MovegenCheckResult& r) {
  std::ostringstream o;
  o << "Engine: " << r.engine() << " (dialect " << r.dialect().name() << ": `"
    << r.dialect().command() << "`)\n";
  o << "Positions: " << r.positions() << " asked, " << r.positions_checked() << " checked, "
    << r.positions_clean() << " clean, " << r.positions_checked() - r.positions_clean()
    << " wrong, " << r.positions_faulted() << " engine faults\n";
  if (r.parts())
    o << "Split: " << r.positions_split() << " deep position"
      << (r.positions_split() == 1 ? "" : "s") << " into " << r.parts()
      << " parts (one per root move), spread over the workers\n";
  char speed[200];
  snprintf(speed, sizeof speed,
           "Nodes compared: %llu; engine %.2f s (%.1f Mnodes/s), arbiter %.2f s (%.1f Mnodes/s); "
           "wall %.2f s\n",
           (unsigned long long)r.nodes_compared(), r.engine_seconds(),
           r.engine_nodes_per_second() / 1e6, r.arbiter_seconds(),
           r.arbiter_nodes_per_second() / 1e6, r.wall_seconds());
  o << speed;
  if (r.failures().empty() && r.positions_faulted() == 0 && r.positions_checked() > 0)
    o << "Clean: every count agrees\n";
  int i = 0;
  for (const v1::MovegenFailure& f : r.failures()) {
    o << "\nFailure " << ++i << " (" << f.positions() << " position"
      << (f.positions() == 1 ? "" : "s") << ")\n"
      << "  FEN:   " << f.fen() << "\n  depth: " << f.depth()
      << "\n  missing moves (legal, not reported): " << Join(f.missing_moves())
      << "\n  extra moves (reported, not legal): " << Join(f.extra_moves()) << "\n";
    if (f.wrong_count_moves_size())
      o << "  moves with wrong counts: " << Join(f.wrong_count_moves()) << "\n";
    o << "  from:  " << f.root_fen() << " (" << f.root_source() << "), first wrong at depth "
      << f.root_depth() << ", path " << Join(f.path()) << "\n";
  }
  for (const v1::MovegenFault& f : r.faults())
    o << "\nEngine fault at " << f.source() << " (" << f.fen() << ", depth " << f.depth()
      << "): " << f.message() << "\n";
  return o.str();
}

}  // namespace arbiter::match
