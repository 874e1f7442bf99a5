// The UCI front end of the builtin engine (`arbiter uci`): reads commands line by line, runs the
// search on its own thread so that `stop`, `isready` and `ponderhit` are answered while it
// thinks, and prints `info` and `bestmove`. Malformed commands are ignored (with an
// `info string` saying why), never fatal. Protocol: https://www.chessprogramming.org/UCI.
//
//   std::istringstream in("uci\nisready\nposition startpos moves e2e4\ngo depth 8\nquit\n");
//   arbiter::search::RunUci(in, std::cout);
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "engine/position.h"
#include "engine/search/search.h"

namespace arbiter::search {

inline constexpr std::string_view kEngineName = "arbiter 0.1";

class UciEngine {
 public:
  explicit UciEngine(std::ostream& out);
  ~UciEngine();
  UciEngine(const UciEngine&) = delete;
  UciEngine& operator=(const UciEngine&) = delete;

  // Handles one command line; returns false after `quit`.
  bool Handle(std::string_view line);
  // Stops a running search (it still prints its bestmove) and waits for its thread.
  void StopAndJoin();

 private:
  struct SpinOption {
    std::string name;
    int default_value, min, max;
    int* target;
  };

  void Print(std::string_view line);
  void PrintOptions();
  void SetOption(const std::vector<std::string_view>& words);
  void SetPosition(const std::vector<std::string_view>& words);
  void Go(const std::vector<std::string_view>& words);
  void GoPerft(int depth);
  void SearchThread(Position pos, std::vector<uint64_t> keys, GoLimits limits);
  std::string FormatInfo(const Position& root, const SearchInfo& info) const;

  std::ostream& out_;
  absl::Mutex out_mu_;

  Searcher searcher_;
  std::vector<SpinOption> spins_;
  int hash_mb_ = 16;
  int threads_ = 1;
  int move_overhead_ms_ = 30;
  bool chess960_ = false;

  Position pos_;
  std::vector<uint64_t> keys_;  // keys of the game positions before pos_, for repetitions

  std::thread search_thread_;
  SearchControl control_;
  absl::Mutex wait_mu_;  // guards the wait of an infinite/ponder search for stop or ponderhit
};

// Runs the protocol until `quit` or the end of `in`.
void RunUci(std::istream& in, std::ostream& out);

// Fixed-depth searches over a fixed set of positions with a fresh 16 MB table: the total node
// count is a signature of the search; nodes per second measures the machine.
struct BenchResult {
  uint64_t nodes = 0;
  int64_t ms = 0;
  int positions = 0;
};
inline constexpr int kBenchDepth = 9;
BenchResult RunBench(int depth, std::ostream& out);

}  // namespace arbiter::search
