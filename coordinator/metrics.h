// Prometheus series of the coordinator: base units, _total counters, a run label only while the
// run is active (RemoveRun drops a finished run's series).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "match/game.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace arbiter::coordinator {

class CoordinatorMetrics {
 public:
  explicit CoordinatorMetrics(prometheus::Registry& registry);

  // CompleteJob calls by outcome: "committed", "duplicate" or "rejected".
  void Completion(const char* outcome) { completions_.Add({{"outcome", outcome}}).Increment(); }
  void SetRuns(const std::map<std::string, double>& by_state);
  void SetJobs(double queued, double leased, double done, double cancelled);
  void SetRunProgress(uint64_t run, double progress, double nodes);
  void SetRunMatch(uint64_t run, double llr, double elo);
  // A run ended: its verdict gauge (until RemoveRun) and the ended-runs counter.
  void RunEnded(uint64_t run, const std::string& kind, const std::string& state,
                const std::string& verdict);
  void RemoveRun(uint64_t run);
  // A counted game: its result ("1-0", ...) and how it ended.
  void Game(std::string_view result, match::GameEnd end);

  prometheus::Histogram& duration;
  prometheus::Histogram& commit;
  prometheus::Counter& expiries;
  prometheus::Gauge& workers;
  prometheus::Gauge& jobs_held;
  prometheus::Counter& perft_nodes;
  prometheus::Counter& disagreements;
  prometheus::Counter& residual_flags;

 private:
  prometheus::Family<prometheus::Gauge>& runs_;
  prometheus::Family<prometheus::Gauge>& jobs_;
  prometheus::Family<prometheus::Counter>& completions_;
  prometheus::Family<prometheus::Gauge>& progress_family_;
  prometheus::Family<prometheus::Gauge>& run_nodes_family_;
  prometheus::Family<prometheus::Counter>& games_;
  prometheus::Family<prometheus::Counter>& endings_;
  prometheus::Family<prometheus::Gauge>& llr_family_;
  prometheus::Family<prometheus::Gauge>& elo_family_;
  prometheus::Family<prometheus::Gauge>& verdict_family_;
  prometheus::Family<prometheus::Counter>& ended_;
  std::map<uint64_t, std::pair<std::string, std::string>> verdicts_;  // run: kind, verdict
};

}  // namespace arbiter::coordinator
