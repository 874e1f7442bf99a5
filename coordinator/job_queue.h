// The ready queue of jobs, their leases and their expiry, and the choice of which run a worker
// serves next. Not thread-safe: the Coordinator calls it under its lock. The clock is
// injectable so that tests can expire leases at will.
//
// Each run has its own queue: each result a job still wants and nobody works on is one entry,
// in job order; a re-queued job (a lost lease, a refused result) goes to the front of its run's.
// A worker asking for work is served from the run that most needs it (Scheduling in
// run.proto): the highest priority first; among runs of that priority, the owner whose
// leases are fewest for its weight (the largest throughput among its active runs), then that
// owner's run whose leases are fewest for its throughput, then the oldest. So equal runs of
// different owners alternate, 200 % gets twice the leases of 100 %, and fifty runs of one owner
// weigh like one. A job with a lane goes to its lane's worker; a worker whose lane is empty
// takes from the far end of another lane, the one with the most jobs queued, when the
// coordinator's `may_steal` lets it (in lanes of keys: when the lane's worker is gone or the lane
// has enough jobs left that counting one cold pays; docs/scaling.md and kStealMinQueued).
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "coordinator/run_handler.h"

namespace arbiter::coordinator {

class JobQueue {
 public:
  using NowFn = std::function<SteadyClock::time_point()>;
  // The worker's lane in run `run_id` (claiming one if it has none), or kNoLane.
  using LaneOf = std::function<uint32_t(uint64_t run_id)>;
  // Whether `far_end`, the last job queued in its lane, which has `queued` jobs queued, may go to
  // the asking worker (a worker of another lane).
  using MaySteal = std::function<bool(const Job& far_end, uint64_t queued)>;

  JobQueue(double lease_seconds, NowFn now);

  // How run `run_id` of `owner` shares the workers (before its jobs are added; a run never
  // announced gets priority 0, throughput 100 and no owner). Again later: a change.
  void SetRun(uint64_t run_id, const std::string& owner, int priority, int throughput);
  // Forgets the run's queue (it finished; its jobs take no more leases).
  void RemoveRun(uint64_t run_id);

  // Takes ownership of `job` and queues job.want entries for it at the back of its run's queue.
  Job& Add(std::unique_ptr<Job> job);
  Job* Find(uint64_t job_id);
  // Forgets a job of a removed run (RemoveRun): it holds no lease and no ready entry.
  void Erase(uint64_t job_id) { jobs_.erase(job_id); }
  // Jobs held (of every run, finished or not).
  size_t size() const { return jobs_.size(); }
  // One more entry for the job, at the front of its run's queue.
  void Requeue(uint64_t job_id);
  // Drops one entry of the job (a stored result consumed it).
  void Unready(uint64_t job_id);
  bool HasReady() const { return ready_entries_ > 0; }
  // Live leases of the run's jobs.
  uint32_t LeasesOf(uint64_t run_id) const;

  // Whether a job may go to the asking worker (e.g. uploaded engines only to isolated workers).
  using Eligible = std::function<bool(const Job&)>;

  // Whether the asking worker may take any job of a run (e.g. it has the CPU level the run
  // requires).
  using RunEligible = std::function<bool(uint64_t run_id)>;

  // The next job for `worker_id` of token `token` that `eligible` accepts, of a run that
  // `run_eligible` accepts (its entry removed), or null.
  // `may_steal` empty: a worker whose lane is empty takes from any other lane.
  Job* Take(const std::string& worker_id, const std::string& token, const LaneOf& lane_of,
            const Eligible& eligible = {}, const RunEligible& run_eligible = {},
            const MaySteal& may_steal = {});
  // A new lease of `job` for `worker_id` of token `token`; with `progress_bound` above zero it is
  // taken back (Expire) unless its progress grows within each such span.
  const Lease& Grant(Job& job, const std::string& worker_id, const std::string& token,
                     SteadyClock::duration progress_bound = SteadyClock::duration::zero());
  // Extends the lease at `index` by a lease period.
  void Extend(Job& job, size_t index) { job.leases[index].expiry = now_() + lease_; }
  // The lease at `index` reports `progress`: when it grew, it has another `progress_bound`.
  void Progress(Job& job, size_t index, uint64_t progress, SteadyClock::duration progress_bound);
  // Removes the lease at `index`; true when the job holds no lease afterwards.
  bool RemoveLease(Job& job, size_t index);
  void ClearLeases(Job& job);
  // Removes every expired lease (or one past its progress bound: Lease::stalls) and re-queues its
  // job at the front; returns them.
  std::vector<std::pair<Job*, Lease>> Expire();

  // Index of the job's live lease `lease_id`, or job.leases.size() when it has none such.
  static size_t LeaseIndex(const Job& job, uint64_t lease_id);
  // Whether `lease_id` was ever granted for the job (live or not).
  static bool WasIssued(const Job& job, uint64_t lease_id);
  // Whether `worker_id`, or another worker of the same (non-empty) identity, holds a lease of the
  // job or gave one of its results.
  static bool HeldBy(const Job& job, const std::string& worker_id, const std::string& token);

  double lease_seconds() const { return std::chrono::duration<double>(lease_).count(); }

 private:
  struct RunQueue {
    std::string owner;
    int priority = 0;
    int throughput = 100;
    std::deque<uint64_t> ready;  // job ids, one per wanted result
    uint32_t leases = 0;         // live leases of its jobs
  };
  RunQueue& RunOf(uint64_t run_id) { return runs_[run_id]; }
  void LeaseGone(const Job& job);
  // The next job of `run` for the worker, or null (the lane rules above).
  Job* TakeFrom(uint64_t run_id, RunQueue& run, const std::string& worker_id,
                const std::string& token, const LaneOf& lane_of, const Eligible& eligible,
                const MaySteal& may_steal);

  const SteadyClock::duration lease_;
  const NowFn now_;
  std::mt19937_64 rng_;
  absl::flat_hash_map<uint64_t, std::unique_ptr<Job>> jobs_;
  std::map<uint64_t, RunQueue> runs_;  // by run id: the oldest first
  size_t ready_entries_ = 0;
  absl::flat_hash_set<uint64_t> leased_;
};

// `seconds` as a steady-clock duration.
SteadyClock::duration Seconds(double seconds);

}  // namespace arbiter::coordinator
