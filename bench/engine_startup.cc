// Engine start-up time with and without the sandbox: N times start the engine, run the UCI
// handshake (uci/uciok, isready/readyok) and quit it, through match::UciEngine as a game does.
//
//   build/bench/engine_startup [ENGINE] [N]     # default /usr/games/stockfish, 50
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "match/sandbox.h"
#include "match/uci_engine.h"

using namespace arbiter::match;

namespace {

// Milliseconds per start (handshake included) and per quit, as medians over `n` runs.
bool Measure(const EngineSpec& spec, const SandboxOptions& box, int n, double& start_ms,
             double& quit_ms) {
  std::vector<double> starts, quits;
  for (int i = 0; i < n; ++i) {
    UciEngine e(spec, {}, {}, {}, box);
    const auto t0 = std::chrono::steady_clock::now();
    if (absl::Status st = e.Start(); !st.ok()) {
      fprintf(stderr, "%s\n", st.ToString().c_str());
      return false;
    }
    const auto t1 = std::chrono::steady_clock::now();
    e.Quit();
    const auto t2 = std::chrono::steady_clock::now();
    starts.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    quits.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
  }
  std::sort(starts.begin(), starts.end());
  std::sort(quits.begin(), quits.end());
  start_ms = starts[starts.size() / 2];
  quit_ms = quits[quits.size() / 2];
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string engine = argc > 1 ? argv[1] : "/usr/games/stockfish";
  const int n = argc > 2 ? std::max(1, atoi(argv[2])) : 50;
  const EngineSpec spec{.name = "engine", .cmd = engine};
  for (Isolation iso : {Isolation::kNone, Isolation::kLimits, Isolation::kNamespaces}) {
    if (iso == Isolation::kNamespaces && !ProbeNamespaces("/usr/bin/bwrap").ok()) continue;
    double start_ms = 0, quit_ms = 0;
    if (!Measure(spec, SandboxOptions{.isolation = iso}, n, start_ms, quit_ms)) return 1;
    printf("%-10s start+handshake %7.2f ms  quit %6.2f ms  (median of %d, %s)\n",
           std::string(IsolationName(iso)).c_str(), start_ms, quit_ms, n, engine.c_str());
  }
  return 0;
}
