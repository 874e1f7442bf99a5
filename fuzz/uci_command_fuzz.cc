// The `arbiter uci` command loop: any lines of bytes are handled or answered with an `info
// string`, never fatal. Properties: a `go` without `perft` gives exactly one `bestmove` once
// stopped, and every line printed is a UCI reply. Lines that would only take long (bench, perft
// deeper than 3, a large Hash) are skipped and searches get a node limit, so that each input
// runs in milliseconds.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "base/strings.h"
#include "engine/search/uci.h"
#include "fuzz/fuzz_util.h"

namespace {

bool Slow(const std::vector<std::string_view>& words) {
  if (words.empty()) return false;
  if (words[0] == "bench") return true;
  for (size_t i = 0; i < words.size(); ++i) {
    std::string lower(words[i]);
    for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (words[0] == "setoption" && lower == "hash") return true;
    if (words[0] == "go" && words[i] == "perft" &&
        !(i + 1 < words.size() &&
          (words[i + 1] == "1" || words[i + 1] == "2" || words[i + 1] == "3")))
      return true;
  }
  return false;
}

size_t CountBestmoves(const std::string& out) {
  size_t n = 0;
  for (size_t at = 0; (at = out.find("bestmove ", at)) != std::string::npos; at += 9)
    n += at == 0 || out[at - 1] == '\n';
  return n;
}

bool IsReply(std::string_view line) {
  static constexpr std::string_view kStarts[] = {"id ",   "option ",   "uciok",           "readyok",
                                                 "info ", "bestmove ", "Nodes searched: "};
  if (line.empty()) return true;
  for (std::string_view s : kStarts)
    if (line.substr(0, s.size()) == s) return true;
  // perft divide: "<move>: <count>"
  const size_t colon = line.find(": ");
  return colon >= 4 && colon <= 5;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  // One engine for every input (a new one would allocate and clear its hash each time), reset
  // to the same state before each.
  static std::ostringstream out;
  static arbiter::search::UciEngine engine(out);
  static const bool once = engine.Handle("setoption name Hash value 1");
  (void)once;
  for (const char* reset :
       {"setoption name UCI_Chess960 value false", "setoption name Move Overhead value 30",
        "ucinewgame", "position startpos"})
    engine.Handle(reset);
  out.str("");
  {
    std::istringstream in{std::string(AsText(data, size))};
    int lines = 0;
    for (std::string line; lines < 64 && std::getline(in, line); ++lines) {
      const std::vector<std::string_view> words = arbiter::SplitWords(line);
      if (Slow(words)) continue;
      const size_t before = CountBestmoves(out.str());
      // Every search is bounded by nodes (the last value given wins), then stopped.
      const std::string command = !words.empty() && words[0] == "go" ? line + " nodes 300" : line;
      if (!engine.Handle(command)) break;
      if (!words.empty() && words[0] == "go") {
        engine.StopAndJoin();
        const size_t added = CountBestmoves(out.str()) - before;
        const bool perft = std::find(words.begin(), words.end(), "perft") != words.end();
        FUZZ_CHECK(perft ? added <= 1 : added == 1);
      }
    }
    engine.StopAndJoin();
  }
  std::istringstream printed(out.str());
  for (std::string line; std::getline(printed, line);) FUZZ_CHECK(IsReply(line));
  return 0;
}
