#include "engine/epd.h"

#include <cctype>
#include <charconv>
#include <fstream>
#include <sstream>

#include "base/strings.h"

namespace arbiter {

absl::StatusOr<PerftSuiteLine> ParsePerftSuiteLine(std::string_view line, int line_number) {
  PerftSuiteLine out;
  out.line_number = line_number;
  std::string_view stripped = Strip(line);
  if (stripped.empty() || stripped[0] == '#') return out;
  std::vector<std::string_view> parts = Split(stripped, ';');
  out.fen = std::string(Strip(parts[0]));
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string_view p = Strip(parts[i]);
    if (p.empty()) continue;
    std::vector<std::string_view> kv = SplitWords(p);
    int depth = 0;
    uint64_t nodes = 0;
    bool ok = kv.size() == 2 && kv[0].size() >= 2 && kv[0][0] == 'D';
    if (ok) {
      auto r1 = std::from_chars(kv[0].data() + 1, kv[0].data() + kv[0].size(), depth);
      auto r2 = std::from_chars(kv[1].data(), kv[1].data() + kv[1].size(), nodes);
      ok = r1.ec == std::errc() && r1.ptr == kv[0].data() + kv[0].size() && r2.ec == std::errc() &&
           r2.ptr == kv[1].data() + kv[1].size() && depth >= 1 && depth <= 20;
    }
    if (!ok)
      return absl::InvalidArgumentError(
          Cat("line ", line_number, ": '", p, "' is not a depth entry like 'D3 8902'"));
    out.expected.emplace_back(depth, nodes);
  }
  return out;
}

}  // namespace arbiter

namespace arbiter {
namespace {

bool IsNumber(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// Removes and returns the first whitespace-separated word of `s`.
std::string_view TakeWord(std::string_view& s) {
  s = Strip(s);
  size_t end = 0;
  while (end < s.size() && !std::isspace(static_cast<unsigned char>(s[end]))) ++end;
  std::string_view word = s.substr(0, end);
  s.remove_prefix(end);
  return word;
}

absl::Status EpdError(int line_number, std::string_view what) {
  return absl::InvalidArgumentError(Cat("EPD line ", line_number, ": ", what));
}

}  // namespace

absl::StatusOr<std::optional<EpdEntry>> ParseEpdLine(std::string_view line, int line_number) {
  std::string_view rest = Strip(line);
  if (rest.empty() || rest[0] == '#') return std::optional<EpdEntry>();
  std::string fen;
  for (int i = 0; i < 4; ++i) {
    std::string_view word = TakeWord(rest);
    if (word.empty()) return EpdError(line_number, Cat("has ", i, " FEN fields; expected 4"));
    fen += i ? Cat(" ", word) : std::string(word);
  }
  // An optional pair of move counters (a full 6-field FEN).
  std::string halfmove = "0", fullmove = "1";
  {
    std::string_view probe = rest;
    std::string_view a = TakeWord(probe), b = TakeWord(probe);
    if (IsNumber(a) && IsNumber(b)) {
      halfmove = std::string(a);
      fullmove = std::string(b);
      rest = probe;
    }
  }
  EpdEntry entry;
  entry.line_number = line_number;
  // Opcodes end with ';' (outside quoted strings); the last one may omit it.
  std::vector<std::string_view> ops;
  {
    size_t start = 0;
    bool quoted = false;
    for (size_t i = 0; i <= rest.size(); ++i) {
      if (i < rest.size() && rest[i] == '"') quoted = !quoted;
      if (i == rest.size() || (rest[i] == ';' && !quoted)) {
        std::string_view op = Strip(rest.substr(start, i - start));
        if (!op.empty()) ops.push_back(op);
        start = i + 1;
      }
    }
    if (quoted) return EpdError(line_number, "quoted operand is never closed");
  }
  for (std::string_view op : ops) {
    std::string_view operands = op;
    std::string_view name = TakeWord(operands);
    operands = Strip(operands);
    if (!std::isalpha(static_cast<unsigned char>(name[0])))
      return EpdError(line_number,
                      Cat("'", op, "' is not an opcode (opcodes start with a letter)"));
    if (operands.size() >= 2 && operands.front() == '"' && operands.back() == '"' &&
        operands.substr(1, operands.size() - 2).find('"') == std::string_view::npos)
      operands = operands.substr(1, operands.size() - 2);
    if (name == "hmvc" || name == "fmvn") {
      if (!IsNumber(operands))
        return EpdError(line_number, Cat("opcode ", name, " needs a number, got '", operands, "'"));
      (name == "hmvc" ? halfmove : fullmove) = std::string(operands);
    }
    entry.opcodes.emplace_back(std::string(name), std::string(operands));
  }
  absl::StatusOr<Position> pos = Position::FromFen(Cat(fen, " ", halfmove, " ", fullmove));
  if (!pos.ok()) return EpdError(line_number, std::string(pos.status().message()));
  entry.position = *pos;
  return std::optional<EpdEntry>(std::move(entry));
}

absl::StatusOr<std::vector<EpdEntry>> ReadEpd(std::string_view text) {
  std::vector<EpdEntry> out;
  int line_number = 0;
  for (std::string_view line : Split(text, '\n')) {
    absl::StatusOr<std::optional<EpdEntry>> entry = ParseEpdLine(line, ++line_number);
    if (!entry.ok()) return entry.status();
    if (*entry) out.push_back(std::move(**entry));
  }
  return out;
}

absl::StatusOr<std::vector<EpdEntry>> ReadEpdFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(Cat("cannot open EPD file ", path));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  absl::StatusOr<std::vector<EpdEntry>> entries = ReadEpd(buffer.str());
  if (!entries.ok())
    return absl::Status(entries.status().code(),
                        Cat(path, ": ", std::string(entries.status().message())));
  return entries;
}

}  // namespace arbiter
