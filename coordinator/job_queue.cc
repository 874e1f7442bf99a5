#include "coordinator/job_queue.h"

#include <algorithm>

namespace arbiter::coordinator {

SteadyClock::duration Seconds(double seconds) {
  return std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(seconds));
}

JobQueue::JobQueue(double lease_seconds, NowFn now)
    : lease_(Seconds(lease_seconds)), now_(std::move(now)), rng_(std::random_device{}()) {}

void JobQueue::SetRun(uint64_t run_id, const std::string& owner, int priority, int throughput) {
  RunQueue& run = RunOf(run_id);
  run.owner = owner;
  run.priority = priority;
  run.throughput = std::max(1, throughput);
}

void JobQueue::RemoveRun(uint64_t run_id) {
  auto it = runs_.find(run_id);
  if (it == runs_.end()) return;
  ready_entries_ -= it->second.ready.size();
  runs_.erase(it);
}

Job& JobQueue::Add(std::unique_ptr<Job> job) {
  RunQueue& run = RunOf(job->run_id);
  for (int i = 0; i < job->want; ++i) run.ready.push_back(job->id);
  ready_entries_ += size_t(std::max(0, job->want));
  Job& out = *job;
  jobs_[job->id] = std::move(job);
  return out;
}

Job* JobQueue::Find(uint64_t job_id) {
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

void JobQueue::Requeue(uint64_t job_id) {
  const Job* job = Find(job_id);
  if (!job) return;
  auto run = runs_.find(job->run_id);
  if (run == runs_.end()) return;  // the run finished
  run->second.ready.push_front(job_id);
  ++ready_entries_;
}

void JobQueue::Unready(uint64_t job_id) {
  const Job* job = Find(job_id);
  if (!job) return;
  auto run = runs_.find(job->run_id);
  if (run == runs_.end()) return;
  std::deque<uint64_t>& ready = run->second.ready;
  auto slot = std::find(ready.begin(), ready.end(), job_id);
  if (slot == ready.end()) return;
  ready.erase(slot);
  --ready_entries_;
}

uint32_t JobQueue::LeasesOf(uint64_t run_id) const {
  auto it = runs_.find(run_id);
  return it == runs_.end() ? 0 : it->second.leases;
}

Job* JobQueue::TakeFrom(uint64_t run_id, RunQueue& run, const std::string& worker_id,
                        const std::string& token, const LaneOf& lane_of, const Eligible& eligible,
                        const MaySteal& may_steal) {
  // The other lanes' queued jobs this worker could take: how many, and the last one.
  struct Other {
    uint32_t lane;
    uint64_t queued, last;
  };
  std::vector<Other> others;  // one per lane seen (up to 64 lanes of jobs)
  size_t at = 0;              // the entry of the last job seen: a lane's jobs are contiguous
  bool lane_known = false;
  uint32_t mine = kNoLane;
  std::deque<uint64_t>& ready = run.ready;
  for (auto it = ready.begin(); it != ready.end();) {
    auto j = jobs_.find(*it);
    if (j == jobs_.end() || !j->second->open()) {
      it = ready.erase(it);
      --ready_entries_;
      continue;
    }
    Job& job = *j->second;
    // A verified job goes to different workers.
    if ((job.want > 1 && HeldBy(job, worker_id, token)) || (eligible && !eligible(job))) {
      ++it;
      continue;
    }
    if (job.lane != kNoLane) {
      if (!lane_known) {
        mine = lane_of(run_id);
        lane_known = true;
      }
      if (mine != job.lane) {
        if (at >= others.size() || others[at].lane != job.lane) {
          at = size_t(std::find_if(others.begin(), others.end(),
                                   [&](const Other& x) { return x.lane == job.lane; }) -
                      others.begin());
          if (at == others.size()) others.push_back({job.lane, 0, 0});
        }
        ++others[at].queued;
        others[at].last = job.id;
        ++it;
        continue;
      }
    }
    ready.erase(it);
    --ready_entries_;
    return &job;
  }
  // The far end of the fullest lane that may be taken from.
  std::stable_sort(others.begin(), others.end(),
                   [](const Other& a, const Other& b) { return a.queued > b.queued; });
  uint64_t steal_job = 0;
  for (const Other& o : others) {
    if (may_steal && !may_steal(*jobs_[o.last], o.queued)) continue;
    steal_job = o.last;
    break;
  }
  if (!steal_job) return nullptr;
  auto last = std::find(ready.rbegin(), ready.rend(), steal_job);
  ready.erase(std::next(last).base());
  --ready_entries_;
  return jobs_[steal_job].get();
}

Job* JobQueue::Take(const std::string& worker_id, const std::string& token, const LaneOf& lane_of,
                    const Eligible& eligible, const RunEligible& run_eligible,
                    const MaySteal& may_steal) {
  if (ready_entries_ == 0) return nullptr;
  // Each owner's leases and weight, per priority, over its active runs.
  struct OwnerLoad {
    uint64_t leases = 0;
    int weight = 1;
  };
  std::map<std::pair<int, std::string>, OwnerLoad> owners;
  for (const auto& [id, run] : runs_) {
    if (run.ready.empty() && run.leases == 0) continue;
    OwnerLoad& o = owners[{run.priority, run.owner}];
    o.leases += run.leases;
    o.weight = std::max(o.weight, run.throughput);
  }
  struct Candidate {
    int priority;
    double owner_load, run_load;
    uint64_t run_id;
    RunQueue* run;
  };
  std::vector<Candidate> candidates;
  for (auto& [id, run] : runs_) {
    if (run.ready.empty()) continue;
    const OwnerLoad& o = owners[{run.priority, run.owner}];
    candidates.push_back(
        {run.priority, double(o.leases) / o.weight, double(run.leases) / run.throughput, id, &run});
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.owner_load != b.owner_load) return a.owner_load < b.owner_load;
    if (a.run_load != b.run_load) return a.run_load < b.run_load;
    return a.run_id < b.run_id;
  });
  for (const Candidate& c : candidates) {
    if (run_eligible && !run_eligible(c.run_id)) continue;
    if (Job* job = TakeFrom(c.run_id, *c.run, worker_id, token, lane_of, eligible, may_steal))
      return job;
  }
  return nullptr;
}

const Lease& JobQueue::Grant(Job& job, const std::string& worker_id, const std::string& token,
                             SteadyClock::duration progress_bound) {
  const auto now = now_();
  job.leases.push_back({rng_() | 1, worker_id, token, now + lease_, 0,
                        progress_bound > SteadyClock::duration::zero()
                            ? now + progress_bound
                            : SteadyClock::time_point::max()});
  job.past_leases.push_back(job.leases.back().id);
  leased_.insert(job.id);
  if (auto run = runs_.find(job.run_id); run != runs_.end()) ++run->second.leases;
  return job.leases.back();
}

void JobQueue::LeaseGone(const Job& job) {
  auto run = runs_.find(job.run_id);
  if (run != runs_.end() && run->second.leases > 0) --run->second.leases;
}

bool JobQueue::RemoveLease(Job& job, size_t index) {
  job.leases.erase(job.leases.begin() + std::ptrdiff_t(index));
  LeaseGone(job);
  if (!job.leases.empty()) return false;
  leased_.erase(job.id);
  return true;
}

void JobQueue::ClearLeases(Job& job) {
  if (!job.leases.empty()) leased_.erase(job.id);
  for (size_t i = 0; i < job.leases.size(); ++i) LeaseGone(job);
  job.leases.clear();
}

void JobQueue::Progress(Job& job, size_t index, uint64_t progress,
                        SteadyClock::duration progress_bound) {
  Lease& lease = job.leases[index];
  if (progress <= lease.progress || lease.stalls == SteadyClock::time_point::max()) return;
  lease.progress = progress;
  lease.stalls = now_() + progress_bound;
}

std::vector<std::pair<Job*, Lease>> JobQueue::Expire() {
  const auto now = now_();
  std::vector<Job*> expired_jobs;
  for (uint64_t id : leased_) {
    Job* job = Find(id);
    if (!job) continue;
    for (const Lease& l : job->leases) {
      if (l.expiry < now || l.stalls < now) {
        expired_jobs.push_back(job);
        break;
      }
    }
  }
  std::vector<std::pair<Job*, Lease>> out;
  for (Job* job : expired_jobs) {
    for (size_t i = job->leases.size(); i-- > 0;) {
      if (job->leases[i].expiry >= now && job->leases[i].stalls >= now) continue;
      out.emplace_back(job, job->leases[i]);
      RemoveLease(*job, i);
      Requeue(job->id);
    }
  }
  return out;
}

size_t JobQueue::LeaseIndex(const Job& job, uint64_t lease_id) {
  for (size_t i = 0; i < job.leases.size(); ++i)
    if (job.leases[i].id == lease_id) return i;
  return job.leases.size();
}

bool JobQueue::WasIssued(const Job& job, uint64_t lease_id) {
  return std::find(job.past_leases.begin(), job.past_leases.end(), lease_id) !=
         job.past_leases.end();
}

bool JobQueue::HeldBy(const Job& job, const std::string& worker_id, const std::string& token) {
  auto same = [&](const std::string& id, const std::string& t) {
    return id == worker_id || (!token.empty() && t == token);
  };
  for (const Lease& l : job.leases)
    if (same(l.worker_id, l.token)) return true;
  for (const Result& r : job.results)
    if (same(r.worker_id, r.token)) return true;
  return false;
}

}  // namespace arbiter::coordinator
