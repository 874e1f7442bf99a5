// The CECP (xboard protocol 2) side of UciEngine, and the search output of both protocols
// (docs/rules.md, "CECP engines"). Arbiter keeps the engine in force mode except while it
// searches: each turn it sends the moves the engine has not seen, `time`/`otim` and `go`, reads
// `move X`, then sends `force` again, so that the engine never thinks on the opponent's time and
// every result is still arbiter's (claims, draw offers and `Error` lines decide nothing; `resign`
// loses; `Illegal move` for a legal move arbiter sent is the engine's fault).
#include <cctype>
#include <cstdio>

#include "base/numbers.h"
#include "base/status_macros.h"
#include "base/strings.h"
#include "engine/notation.h"
#include "match/uci_engine.h"

namespace arbiter::match {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The pairs of a `feature` line: name=value or name="quoted value".
std::vector<std::pair<std::string, std::string>> ParseFeatures(std::string_view line) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string_view s = line.substr(8);  // after "feature "
  while (!s.empty()) {
    s = Strip(s);
    const size_t eq = s.find('=');
    if (eq == std::string_view::npos) break;
    std::string name(Strip(s.substr(0, eq)));
    s.remove_prefix(eq + 1);
    std::string value;
    if (!s.empty() && s[0] == '"') {
      const size_t close = s.find('"', 1);
      value = std::string(s.substr(1, close == std::string_view::npos ? s.size() - 1 : close - 1));
      s.remove_prefix(close == std::string_view::npos ? s.size() : close + 1);
    } else {
      const size_t space = s.find(' ');
      value = std::string(s.substr(0, space));
      s.remove_prefix(space == std::string_view::npos ? s.size() : space);
    }
    out.emplace_back(std::move(name), std::move(value));
  }
  return out;
}

// `level` wants its base as minutes or minutes:seconds (whole seconds; at least one).
std::string LevelBase(Millis time) {
  const int64_t seconds = std::max<int64_t>(1, (time.count() + 999) / 1000);
  return seconds % 60 == 0 ? Cat(seconds / 60)
                           : Cat(seconds / 60, ":", seconds % 60 < 10 ? "0" : "", seconds % 60);
}

std::string SecondsText(Millis t) {
  if (t.count() % 1000 == 0) return Cat(t.count() / 1000);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", double(t.count()) / 1000);
  return buf;
}

// CECP thinking output: "ply score time nodes pv..." (time in centiseconds); the ply may carry
// a trailing '.' or '&'. Scores are centipawns from the engine's side.
bool ParseThinking(std::string_view line, InfoLine& out) {
  std::vector<std::string_view> w = SplitWords(line);
  if (w.size() < 4) return false;
  std::string_view ply = w[0];
  while (!ply.empty() && (ply.back() == '.' || ply.back() == '&')) ply.remove_suffix(1);
  InfoLine info;
  int64_t cs = 0;
  if (!ParseNumber(ply, info.depth) || !ParseNumber(w[1], info.score.value) ||
      !ParseNumber(w[2], cs) || !ParseNumber(w[3], info.nodes))
    return false;
  info.score.kind = UciScore::kCp;
  info.time_ms = cs * 10;
  for (size_t i = 4; i < w.size(); ++i) info.pv.emplace_back(w[i]);
  out = std::move(info);
  return true;
}

// The castling rights `edit` implies for a FEN board: a king and a rook on their home squares.
std::string EditCastling(std::string_view board) {
  char sq[8][8] = {};  // [rank 8..1][file a..h]
  int rank = 0, file = 0;
  for (char c : board) {
    if (c == '/') {
      ++rank;
      file = 0;
    } else if (c >= '1' && c <= '8') {
      file += c - '0';
    } else if (rank < 8 && file < 8) {
      sq[rank][file++] = c;
    }
  }
  std::string r;
  if (sq[7][4] == 'K' && sq[7][7] == 'R') r += 'K';
  if (sq[7][4] == 'K' && sq[7][0] == 'R') r += 'Q';
  if (sq[0][4] == 'k' && sq[0][7] == 'r') r += 'k';
  if (sq[0][4] == 'k' && sq[0][0] == 'r') r += 'q';
  return r.empty() ? "-" : r;
}

}  // namespace

absl::Status UciEngine::StartCecp() {
  protocol_ = Protocol::kXboard;
  cecp_ = CecpFeatures{};
  cecp_moves_known_ = -1;
  process_->SetSearchEnd({"move ", "resign", "Illegal move", "My move is"});
  RETURN_IF_ERROR(Send("xboard"));
  RETURN_IF_ERROR(Send("protover 2"));
  // A protocol 2 engine ends its features with done=1 (done=0 asks for the whole handshake
  // timeout); an engine that sends no done= is given two seconds, as the protocol says.
  const SteadyTime start = SteadyClock::now();
  SteadyTime deadline = start + std::min(timeouts_.handshake, Millis(2000));
  bool done = false;
  for (OutputLine line; !done;) {
    const ReadResult r = process_->ReadLine(deadline, line);
    if (r == ReadResult::kEof) return ExitedWhileWaiting("feature done=1", deadline);
    if (r == ReadResult::kTimeout) break;
    std::string_view s = Strip(line.text);
    if (!StartsWith(s, "feature ")) continue;  // banners, "tellics", errors for `uci`
    for (const auto& [name, value] : ParseFeatures(s)) {
      const bool on = value == "1";
      bool accepted = true;
      if (name == "done") {
        done = on;
        if (!on) deadline = start + timeouts_.handshake;
      } else if (name == "ping") {
        cecp_.ping = on;
      } else if (name == "setboard") {
        cecp_.setboard = on;
      } else if (name == "san") {
        cecp_.san = on;
      } else if (name == "usermove") {
        cecp_.usermove = on;
      } else if (name == "time") {
        cecp_.time = on;
      } else if (name == "variants") {
        cecp_.variants = value;
      } else if (name == "myname") {
        id_name_ = value;
      } else if (name == "option") {
        options_.push_back({.name = std::string(Strip(value.substr(0, value.find(" -"))))});
      } else {
        // Asked for and harmless to accept: arbiter uses none of these.
        accepted = name == "sigint" || name == "sigterm" || name == "reuse" || name == "analyze" ||
                   name == "colors" || name == "draw" || name == "name" || name == "ics" ||
                   name == "pause" || name == "nps" || name == "debug" || name == "memory" ||
                   name == "smp" || name == "egt" || name == "exclude" || name == "setscore" ||
                   name == "highlight" || name == "playother" || name == "xedit";
      }
      RETURN_IF_ERROR(Send(Cat(accepted ? "accepted " : "rejected ", name)));
    }
  }
  for (const auto& [name, value] : spec_.options)
    RETURN_IF_ERROR(Send(Cat("option ", name, "=", value)));
  return IsReadyCecp(timeouts_.ready);
}

absl::Status UciEngine::IsReadyCecp(Millis timeout) {
  if (!cecp_.ping) return absl::OkStatus();
  const std::string token = Cat("pong ", ++cecp_ping_);
  RETURN_IF_ERROR(Send(Cat("ping ", cecp_ping_)));
  return WaitFor(token, timeout, nullptr);
}

absl::Status UciEngine::NewGameCecp(bool chess960) {
  RETURN_IF_ERROR(Send("new"));
  if (chess960) {
    if (cecp_.variants.find("fischerandom") == std::string::npos)
      return absl::FailedPreconditionError(
          Cat(spec_.name,
              ": a CECP engine without \"fischerandom\" in its variants cannot play "
              "Chess960"));
    RETURN_IF_ERROR(Send("variant fischerandom"));
  }
  chess960_ = chess960;
  // Force mode until its first `go`; thinking output on; no pondering.
  RETURN_IF_ERROR(Send("force"));
  RETURN_IF_ERROR(Send("post"));
  RETURN_IF_ERROR(Send("easy"));
  cecp_moves_known_ = -1;
  cecp_control_sent_ = false;
  return IsReadyCecp(timeouts_.ready);
}

absl::Status UciEngine::SendEditCecp(const Position& start) {
  // `edit` knows no castling rights, en passant square or Chess960: the engine assumes castling
  // with a king and rook on their home squares. A position it would so misread is refused.
  const std::string fen = start.Fen();
  std::vector<std::string_view> f = SplitWords(fen);
  const std::string implied = EditCastling(f[0]);
  if (start.IsChess960() || f.size() < 4 || implied != f[2] ||
      (f[3] != "-" && start.EpCaptureLegal()))
    return absl::FailedPreconditionError(
        Cat(spec_.name, ": this CECP engine has no setboard=1, and `edit` cannot give it ", fen,
            " (it would assume castling rights '", implied,
            "' and no en passant); use a book of "
            "moves from the standard start"));
  // `edit` keeps the side to move: a first move from the start position makes it Black's.
  if (start.SideToMove() == kBlack) {
    const Position initial = Position::StartPosition();
    const Move a3 = ParseUciMove(initial, "a2a3").value();
    const std::string text = cecp_.san ? MoveToSan(initial, a3) : MoveToUci(initial, a3);
    RETURN_IF_ERROR(Send(cecp_.usermove ? Cat("usermove ", text) : text));
  }
  RETURN_IF_ERROR(Send("edit"));
  RETURN_IF_ERROR(Send("#"));
  for (Color c : {kWhite, kBlack}) {
    if (c == kBlack) RETURN_IF_ERROR(Send("c"));
    for (int sq = 0; sq < 64; ++sq) {
      const Piece p = start.PieceOn(Square(sq));
      if (p == kNoPiece || ColorOf(p) != c) continue;
      RETURN_IF_ERROR(Send(Cat(std::string(1, "PNBRQK"[TypeOf(p)]), SquareToString(Square(sq)))));
    }
  }
  return Send(".");
}

absl::Status UciEngine::StartSearchCecp(const SearchRequest& r) {
  // What it said since its last move (claims, draw offers, errors for commands it does not
  // know, e.g. `easy`) decides nothing: only what follows this search's commands counts.
  process_->DiscardPending();
  if (cecp_moves_known_ < 0) {
    if (r.start.Fen() != Position::StartPosition().Fen() || r.start.IsChess960()) {
      if (cecp_.setboard) {
        RETURN_IF_ERROR(Send(Cat("setboard ", r.start.Fen())));
      } else {
        RETURN_IF_ERROR(SendEditCecp(r.start));
      }
    }
    cecp_moves_known_ = 0;
  }
  if (!cecp_control_sent_) {
    const TimeControl& tc = r.tc;
    switch (tc.kind) {
      case TimeControl::Kind::kClock: {
        // The first period (the clock itself comes with every move in `time`/`otim`).
        const TcPeriod& p = tc.periods[0];
        RETURN_IF_ERROR(Send(Cat("level ", tc.sandclock ? 0 : p.moves, " ", LevelBase(p.time), " ",
                                 SecondsText(p.increment))));
        break;
      }
      case TimeControl::Kind::kMoveTime:
        if (tc.movetime.count() % 1000 != 0)
          return absl::FailedPreconditionError(Cat(
              spec_.name, ": CECP's `st` takes whole seconds; movetime=", SecondsText(tc.movetime),
              " cannot be sent"));
        RETURN_IF_ERROR(Send(Cat("st ", tc.movetime.count() / 1000)));
        break;
      case TimeControl::Kind::kDepth:
        RETURN_IF_ERROR(Send(Cat("sd ", tc.depth)));
        break;
      case TimeControl::Kind::kNodes:
        return absl::FailedPreconditionError(
            Cat(spec_.name, ": CECP has no node limit (nodes= needs a UCI engine)"));
    }
    cecp_control_sent_ = true;
  }
  Position pos = r.start;
  for (size_t i = 0; i < r.moves.size(); ++i) {
    const Move m = r.moves[i];
    if (int(i) >= cecp_moves_known_) {
      const std::string text = cecp_.san ? MoveToSan(pos, m) : MoveToUci(pos, m);
      RETURN_IF_ERROR(Send(cecp_.usermove ? Cat("usermove ", text) : text));
    }
    UndoInfo undo;
    pos.DoMove(m, undo);
  }
  cecp_moves_known_ = int(r.moves.size()) + 1;  // with the move it is about to make
  if (r.tc.kind == TimeControl::Kind::kClock && cecp_.time) {
    RETURN_IF_ERROR(Send(Cat("time ", std::max<int64_t>(0, r.own_time.count() / 10))));
    RETURN_IF_ERROR(Send(Cat("otim ", std::max<int64_t>(0, r.opponent_time.count() / 10))));
  }
  return Send("go");
}

SearchOutput UciEngine::ParseSearchLine(std::string_view line, InfoLine& info,
                                        std::string& text) const {
  if (protocol_ == Protocol::kUci) {
    if (ParseInfoLine(line, info)) return SearchOutput::kInfo;
    if (std::optional<std::string> best = ParseBestMove(line)) {
      text = *std::move(best);
      return SearchOutput::kMove;
    }
    return SearchOutput::kOther;
  }
  std::string_view s = Strip(line);
  if (StartsWith(s, "move ") || StartsWith(s, "My move is")) {
    std::vector<std::string_view> w = SplitWords(s.substr(s.find(s[0] == 'm' ? ' ' : ':') + 1));
    text = w.empty() ? "" : std::string(w[0]);
    return SearchOutput::kMove;
  }
  if (s == "resign" || StartsWith(s, "resign ")) return SearchOutput::kResign;
  if (StartsWith(s, "Illegal move")) {
    text = std::string(s);
    return SearchOutput::kRefusal;
  }
  return ParseThinking(s, info) ? SearchOutput::kInfo : SearchOutput::kOther;
}

absl::StatusOr<Move> UciEngine::ParseMove(const Position& pos, std::string_view text) const {
  absl::StatusOr<Move> m = ParseUciMove(pos, text);
  if (m.ok() || protocol_ == Protocol::kUci) return m;
  // CECP: "e7e8=q", "e7e8Q", or SAN ("Nf3", "O-O").
  std::string coord;
  for (char c : text)
    if (c != '=') coord += char(std::tolower(static_cast<unsigned char>(c)));
  if (absl::StatusOr<Move> c = ParseUciMove(pos, coord); c.ok()) return c;
  if (absl::StatusOr<Move> san = ParseSanMove(pos, text); san.ok()) return san;
  return m;
}

}  // namespace arbiter::match
