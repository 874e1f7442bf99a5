#include "engine/pgn.h"

#include <cctype>
#include <fstream>
#include <sstream>

#include "base/strings.h"
#include "engine/movegen.h"
#include "engine/notation.h"

namespace arbiter {
namespace {

// Export format keeps lines within 79 characters (so they fit 80 columns).
constexpr size_t kMaxLineLength = 79;

std::string EscapeTagValue(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    // Tag values are one line; control characters become spaces.
    out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  }
  return out;
}

bool IsResultToken(std::string_view s) {
  return s == "1-0" || s == "0-1" || s == "1/2-1/2" || s == "*";
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

// SAN for the reader: the legal moves are narrowed to the named piece type and destination before
// any SAN is written (ParseSanMove writes the SAN of every legal move); anything unusual (castling,
// long forms, errors) goes to ParseSanMove.
absl::StatusOr<Move> ReadSanMove(const Position& pos, std::string_view token) {
  std::string_view core = token;
  while (!core.empty() &&
         (core.back() == '+' || core.back() == '#' || core.back() == '!' || core.back() == '?'))
    core.remove_suffix(1);
  size_t dest_at = std::string_view::npos;
  for (size_t i = 0; i + 1 < core.size(); ++i)
    if (core[i] >= 'a' && core[i] <= 'h' && core[i + 1] >= '1' && core[i + 1] <= '8') dest_at = i;
  if (core.empty() || dest_at == std::string_view::npos) return ParseSanMove(pos, token);
  const Square dest = MakeSquare(core[dest_at] - 'a', core[dest_at + 1] - '1');
  PieceType pt = kPawn;
  if (const size_t idx = std::string_view("PNBRQK").find(core[0]); idx != std::string_view::npos)
    pt = PieceType(idx);
  MoveList list;
  GenerateLegal(pos, list);
  Move found;
  int matches = 0;
  for (Move m : list) {
    if (m.To() != dest || m.KindOf() == Move::kCastling || TypeOf(pos.PieceOn(m.From())) != pt)
      continue;
    std::string san = MoveToSan(pos, m);
    while (!san.empty() && (san.back() == '+' || san.back() == '#')) san.pop_back();
    std::string no_eq = san;
    if (const size_t eq = no_eq.find('='); eq != std::string::npos) no_eq.erase(eq, 1);
    if (core == san || core == no_eq) {
      found = m;
      ++matches;
    }
  }
  if (matches == 1) return found;
  return ParseSanMove(pos, token);
}

// Appends whitespace-separated units to lines of at most kMaxLineLength characters.
class LineWrapper {
 public:
  void Add(std::string_view unit) {
    if (!line_.empty() && line_.size() + 1 + unit.size() > kMaxLineLength) Flush();
    if (!line_.empty()) line_ += ' ';
    line_ += unit;
  }
  std::string Finish() {
    Flush();
    return std::move(out_);
  }

 private:
  void Flush() {
    if (line_.empty()) return;
    out_ += line_;
    out_ += '\n';
    line_.clear();
  }
  std::string out_, line_;
};

}  // namespace

std::optional<std::string> PgnGame::Tag(std::string_view name) const {
  const std::pair<std::string_view, const std::string*> roster[] = {
      {"Event", &event}, {"Site", &site},   {"Date", &date},    {"Round", &round},
      {"White", &white}, {"Black", &black}, {"Result", &result}};
  for (const auto& [tag, value] : roster)
    if (name == tag) return *value;
  if (name == "TimeControl" && !time_control.empty()) return time_control;
  if (name == "Termination" && !termination.empty()) return termination;
  for (const auto& [tag, value] : extra_tags)
    if (tag == name) return value;
  return std::nullopt;
}

std::string WritePgn(const PgnGame& game) {
  std::string out;
  auto tag = [&out](std::string_view name, std::string_view value) {
    out += Cat("[", name, " \"", EscapeTagValue(value), "\"]\n");
  };
  const std::string result = game.result.empty() ? "*" : game.result;
  tag("Event", game.event);
  tag("Site", game.site);
  tag("Date", game.date);
  tag("Round", game.round);
  tag("White", game.white);
  tag("Black", game.black);
  tag("Result", result);
  if (!game.time_control.empty()) tag("TimeControl", game.time_control);
  const std::string start_fen = game.start.Fen();
  if (game.start.IsChess960()) tag("Variant", "Chess960");
  if (game.start.IsChess960() || start_fen != Position::kStartFen) {
    tag("SetUp", "1");
    tag("FEN", start_fen);
  }
  if (!game.termination.empty()) tag("Termination", game.termination);
  tag("PlyCount", std::to_string(game.moves.size()));
  for (const auto& [name, value] : game.extra_tags) tag(name, value);
  out += '\n';

  LineWrapper text;
  Position pos = game.start;
  bool after_comment = false;
  for (size_t i = 0; i < game.moves.size(); ++i) {
    const Move m = game.moves[i];
    std::string unit;
    if (pos.SideToMove() == kWhite)
      unit = Cat(pos.FullmoveNumber(), ". ");
    else if (i == 0 || after_comment)
      unit = Cat(pos.FullmoveNumber(), "... ");
    unit += MoveToSan(pos, m);
    text.Add(unit);
    UndoInfo undo;
    pos.DoMove(m, undo);
    after_comment = false;
    if (i < game.comments.size()) {
      std::vector<std::string_view> words = SplitWords(game.comments[i]);
      for (size_t w = 0; w < words.size(); ++w) {
        std::string word(words[w]);
        for (char& c : word)
          if (c == '}') c = ')';  // a comment cannot contain its own terminator
        if (w == 0) word.insert(0, 1, '{');
        if (w + 1 == words.size()) word += "}";
        text.Add(word);
      }
      after_comment = !words.empty();
    }
  }
  // The movetext ends in a game termination marker; a Result tag read from elsewhere may hold
  // anything, which would not read back as one.
  text.Add(IsResultToken(result) ? result : "*");
  out += text.Finish();
  out += '\n';
  return out;
}

// One lexical token of PGN (see the PGN standard, section 7).
struct PgnReader::Token {
  enum Kind {
    kEnd,
    kError,
    kSymbol,
    kString,
    kComment,
    kNag,
    kPeriod,
    kOpenBracket,
    kCloseBracket,
    kOpenParen,
    kCloseParen,
    kAnnotation,  // !, ?, !!, ?!, ... and "e.p."
  };
  Kind kind = kEnd;
  std::string text;  // symbol, unescaped string, comment body, or the error message
  int line = 0;
};

PgnReader::PgnReader(std::string_view text, PgnReadOptions options)
    : text_(text), options_(options) {
  // Files saved by some Windows tools start with a UTF-8 byte order mark.
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") text_.remove_prefix(3);
}

PgnReader::Token PgnReader::NextToken() {
  auto at_line_start = [this](size_t p) { return p == 0 || text_[p - 1] == '\n'; };
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == '\n') {
      ++line_;
      ++pos_;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++pos_;
    } else if ((c == '%' && at_line_start(pos_)) || c == ';') {
      // Escape lines and rest-of-line comments.
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
  Token tok;
  tok.line = line_;
  if (pos_ >= text_.size()) return tok;
  const char c = text_[pos_];
  auto single = [&](Token::Kind kind) {
    tok.kind = kind;
    tok.text = std::string(1, c);
    ++pos_;
    return tok;
  };
  switch (c) {
    case '[':
      return single(Token::kOpenBracket);
    case ']':
      return single(Token::kCloseBracket);
    case '(':
      return single(Token::kOpenParen);
    case ')':
      return single(Token::kCloseParen);
    case '.':
      return single(Token::kPeriod);
    case '*':
      return single(Token::kSymbol);
    case '{': {
      size_t end = text_.find('}', pos_ + 1);
      if (end == std::string_view::npos) {
        tok.kind = Token::kError;
        tok.text = "comment '{' is never closed";
        pos_ = text_.size();
        return tok;
      }
      std::string_view body = text_.substr(pos_ + 1, end - pos_ - 1);
      for (char b : body) line_ += b == '\n';
      tok.kind = Token::kComment;
      // Line breaks inside a comment are layout: whitespace runs become one space.
      for (std::string_view word : SplitWords(body)) {
        if (!tok.text.empty()) tok.text += ' ';
        tok.text += word;
      }
      pos_ = end + 1;
      return tok;
    }
    case '"': {
      tok.kind = Token::kString;
      ++pos_;
      while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n') {
        if (text_[pos_] == '\\' && pos_ + 1 < text_.size() && text_[pos_ + 1] != '\n') ++pos_;
        tok.text += text_[pos_++];
      }
      if (pos_ >= text_.size() || text_[pos_] != '"') {
        tok.kind = Token::kError;
        tok.text = "string is not closed on its line";
        return tok;
      }
      ++pos_;
      return tok;
    }
    case '$': {
      size_t end = pos_ + 1;
      while (end < text_.size() && std::isdigit(static_cast<unsigned char>(text_[end]))) ++end;
      tok.kind = end > pos_ + 1 ? Token::kNag : Token::kError;
      tok.text = std::string(text_.substr(pos_, end - pos_));
      if (tok.kind == Token::kError) tok.text = "'$' is not followed by a number";
      pos_ = end;
      return tok;
    }
    case '<': {
      // Reserved for future expansion: skipped up to the matching '>'.
      size_t end = text_.find('>', pos_);
      pos_ = end == std::string_view::npos ? text_.size() : end + 1;
      return NextToken();
    }
    default:
      break;
  }
  if (c == '!' || c == '?') {
    size_t end = pos_;
    while (end < text_.size() && (text_[end] == '!' || text_[end] == '?')) ++end;
    tok.kind = Token::kAnnotation;
    tok.text = std::string(text_.substr(pos_, end - pos_));
    pos_ = end;
    return tok;
  }
  if (text_.substr(pos_, 4) == "e.p.") {
    tok.kind = Token::kAnnotation;
    tok.text = "e.p.";
    pos_ += 4;
    return tok;
  }
  if (std::isalnum(static_cast<unsigned char>(c))) {
    size_t end = pos_;
    while (end < text_.size()) {
      const char s = text_[end];
      if (!std::isalnum(static_cast<unsigned char>(s)) && s != '_' && s != '+' && s != '#' &&
          s != '=' && s != ':' && s != '-' && s != '/' && s != '!' && s != '?')
        break;
      ++end;
    }
    tok.kind = Token::kSymbol;
    tok.text = std::string(text_.substr(pos_, end - pos_));
    pos_ = end;
    return tok;
  }
  tok.kind = Token::kError;
  tok.text = Cat("unexpected character '", std::string(1, c), "'");
  ++pos_;
  return tok;
}

void PgnReader::SkipToNextGame(bool in_movetext) {
  // Skip the rest of the bad game: up to a result, or to the tags of the next game.
  Token::Kind previous = Token::kEnd;
  while (true) {
    const size_t saved_pos = pos_;
    const int saved_line = line_;
    Token tok = NextToken();
    if (tok.kind == Token::kEnd) return;
    if (tok.kind == Token::kOpenBracket && in_movetext) {
      pos_ = saved_pos;
      line_ = saved_line;
      return;
    }
    if (tok.kind == Token::kSymbol && IsResultToken(tok.text)) return;
    // Tag pairs are '[', a name, a string and ']'; anything else is movetext.
    const bool tag_part = tok.kind == Token::kOpenBracket || tok.kind == Token::kCloseBracket ||
                          tok.kind == Token::kString ||
                          (tok.kind == Token::kSymbol && previous == Token::kOpenBracket);
    if (!tag_part) in_movetext = true;
    previous = tok.kind;
  }
}

absl::StatusOr<std::optional<PgnGame>> PgnReader::Next() {
  PgnGame game;
  const int number = game_number_ + 1;
  int error_line = line_;
  bool in_movetext = false;
  auto fail = [&](std::string_view what) -> absl::Status {
    SkipToNextGame(in_movetext);
    return absl::InvalidArgumentError(Cat("PGN game ", number, " (line ", error_line, "): ", what));
  };

  // Tag pairs.
  Token tok = NextToken();
  if (tok.kind == Token::kEnd) return std::optional<PgnGame>();
  game_number_ = number;
  game.game_number = number;
  std::optional<std::string> fen_tag;
  std::optional<std::string> variant_tag;
  while (tok.kind == Token::kOpenBracket) {
    error_line = tok.line;
    Token name = NextToken();
    Token value = NextToken();
    Token close = NextToken();
    for (const Token* t : {&name, &value, &close})
      if (t->kind == Token::kError) return fail(Cat("in tag pair: ", t->text));
    if (name.kind != Token::kSymbol)
      return fail(Cat("tag name expected after '[', found '", name.text, "'"));
    if (value.kind != Token::kString)
      return fail(Cat("tag ", name.text, ": quoted value expected, found '", value.text, "'"));
    if (close.kind != Token::kCloseBracket)
      return fail(Cat("tag ", name.text, ": ']' expected, found '", close.text, "'"));
    const std::string& n = name.text;
    std::string& v = value.text;
    if (n == "Event")
      game.event = v;
    else if (n == "Site")
      game.site = v;
    else if (n == "Date")
      game.date = v;
    else if (n == "Round")
      game.round = v;
    else if (n == "White")
      game.white = v;
    else if (n == "Black")
      game.black = v;
    else if (n == "Result")
      game.result = v;
    else if (n == "TimeControl")
      game.time_control = v;
    else if (n == "Termination")
      game.termination = v;
    else if (n == "FEN")
      fen_tag = v;
    else if (n == "Variant")
      variant_tag = v;
    else if (n != "SetUp" && n != "PlyCount")
      game.extra_tags.emplace_back(n, v);
    tok = NextToken();
  }
  if (fen_tag) {
    absl::StatusOr<Position> start = Position::FromFen(*fen_tag);
    if (!start.ok())
      return fail(Cat("tag FEN \"", *fen_tag, "\": ", std::string(start.status().message())));
    game.start = *start;
  }
  if (variant_tag) {
    const std::string& v = *variant_tag;
    if (EqualsIgnoreCase(v, "chess960") || EqualsIgnoreCase(v, "fischerandom") ||
        EqualsIgnoreCase(v, "fischer random") || EqualsIgnoreCase(v, "960"))
      game.start.SetChess960(true);
    else if (!v.empty() && !EqualsIgnoreCase(v, "standard") && !EqualsIgnoreCase(v, "chess") &&
             !EqualsIgnoreCase(v, "normal"))
      return fail(Cat("tag Variant \"", v, "\" is not supported (only standard and Chess960)"));
  }

  // Movetext, up to a result token, the next game's tags, or the end.
  in_movetext = true;
  auto finish = [&game]() {
    if (!game.comments.empty()) game.comments.resize(game.moves.size());
    return std::optional<PgnGame>(std::move(game));
  };
  Position pos = game.start;
  int plies = 0;  // moves read, kept or not
  bool truncated = false;
  while (true) {
    error_line = tok.line;
    switch (tok.kind) {
      case Token::kEnd:
        return finish();
      case Token::kError:
        return fail(tok.text);
      case Token::kOpenBracket:
        // The next game begins without this one's result token.
        pos_ -= 1;
        return finish();
      case Token::kComment:
        if (!truncated && !game.moves.empty()) {
          game.comments.resize(game.moves.size());
          std::string& c = game.comments.back();
          c = c.empty() ? tok.text : Cat(c, " ", tok.text);
        }
        break;
      case Token::kNag:
      case Token::kPeriod:
      case Token::kAnnotation:
        break;
      case Token::kOpenParen: {
        // Variations are skipped, nested ones included.
        int depth = 1;
        const int open_line = tok.line;
        while (depth > 0) {
          Token t = NextToken();
          if (t.kind == Token::kEnd) {
            error_line = open_line;
            return fail("variation '(' is never closed");
          }
          if (t.kind == Token::kError) {
            error_line = t.line;
            return fail(t.text);
          }
          depth += t.kind == Token::kOpenParen;
          depth -= t.kind == Token::kCloseParen;
        }
        break;
      }
      case Token::kCloseParen:
        return fail("')' without a variation to close");
      case Token::kCloseBracket:
      case Token::kString:
        return fail(Cat("unexpected '", tok.text, "' in movetext"));
      case Token::kSymbol: {
        if (IsResultToken(tok.text)) {
          game.result = tok.text;
          return finish();
        }
        if (AllDigits(tok.text)) break;  // move number
        ++plies;
        if (options_.max_plies >= 0 && plies > options_.max_plies) {
          truncated = true;
          break;
        }
        absl::StatusOr<Move> m = ReadSanMove(pos, tok.text);
        if (!m.ok())
          return fail(Cat("bad move '", tok.text, "' at ply ", plies, ": ",
                          std::string(m.status().message())));
        UndoInfo undo;
        pos.DoMove(*m, undo);
        game.moves.push_back(*m);
        break;
      }
    }
    tok = NextToken();
  }
}

absl::StatusOr<std::vector<PgnGame>> ReadPgn(std::string_view text, PgnReadOptions options) {
  PgnReader reader(text, options);
  std::vector<PgnGame> games;
  while (true) {
    absl::StatusOr<std::optional<PgnGame>> game = reader.Next();
    if (!game.ok()) return game.status();
    if (!*game) return games;
    games.push_back(std::move(**game));
  }
}

absl::StatusOr<std::vector<PgnGame>> ReadPgnFile(const std::string& path, PgnReadOptions options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(Cat("cannot open PGN file ", path));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  absl::StatusOr<std::vector<PgnGame>> games = ReadPgn(text, options);
  if (!games.ok())
    return absl::Status(games.status().code(),
                        Cat(path, ": ", std::string(games.status().message())));
  return games;
}

}  // namespace arbiter
