#include "engine/epd.h"

#include <charconv>

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
      return absl::InvalidArgumentError(Cat(
          "line ", line_number, ": '", p, "' is not a depth entry like 'D3 8902'"));
    out.expected.emplace_back(depth, nodes);
  }
  return out;
}

}  // namespace arbiter
