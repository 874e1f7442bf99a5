#include "coordinator/job_queue.h"

#include <algorithm>

namespace arbiter::coordinator {

SteadyClock::duration Seconds(double seconds) {
  return std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(seconds));
}

JobQueue::JobQueue(double lease_seconds, NowFn now)
    : lease_(Seconds(lease_seconds)), now_(std::move(now)), rng_(std::random_device{}()) {}

Job& JobQueue::Add(std::unique_ptr<Job> job) {
  for (int i = 0; i < job->want; ++i) ready_.push_back(job->id);
  Job& out = *job;
  jobs_[job->id] = std::move(job);
  return out;
}

Job* JobQueue::Find(uint64_t job_id) {
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

void JobQueue::Unready(uint64_t job_id) {
  auto slot = std::find(ready_.begin(), ready_.end(), job_id);
  if (slot != ready_.end()) ready_.erase(slot);
}

Job* JobQueue::Take(const std::string& worker_id, const std::string& token, const LaneOf& lane_of,
                    const Eligible& eligible) {
  uint64_t steal_job = 0, steal_run = 0;  // the last job of another lane seen (0: none yet)
  uint64_t lane_run = 0;                  // the run whose lane `mine` is
  uint32_t mine = kNoLane;
  for (auto it = ready_.begin(); it != ready_.end();) {
    auto j = jobs_.find(*it);
    if (j == jobs_.end() || !j->second->open()) {
      it = ready_.erase(it);
      continue;
    }
    Job& job = *j->second;
    // A verified job goes to different workers.
    if ((job.want > 1 && HeldBy(job, worker_id, token)) || (eligible && !eligible(job))) {
      ++it;
      continue;
    }
    if (job.lane != kNoLane) {
      if (steal_job && steal_run != job.run_id) break;  // past the end of the lanes' run
      if (lane_run != job.run_id) {
        lane_run = job.run_id;
        mine = lane_of(job.run_id);
      }
      if (mine != job.lane) {
        steal_job = job.id;
        steal_run = job.run_id;
        ++it;
        continue;
      }
    } else if (steal_job) {
      break;  // the lanes' run comes first
    }
    ready_.erase(it);
    return &job;
  }
  if (!steal_job) return nullptr;
  auto last = std::find(ready_.rbegin(), ready_.rend(), steal_job);
  ready_.erase(std::next(last).base());
  return jobs_[steal_job].get();
}

const Lease& JobQueue::Grant(Job& job, const std::string& worker_id, const std::string& token) {
  job.leases.push_back({rng_() | 1, worker_id, token, now_() + lease_});
  job.past_leases.push_back(job.leases.back().id);
  leased_.insert(job.id);
  return job.leases.back();
}

bool JobQueue::RemoveLease(Job& job, size_t index) {
  job.leases.erase(job.leases.begin() + std::ptrdiff_t(index));
  if (!job.leases.empty()) return false;
  leased_.erase(job.id);
  return true;
}

void JobQueue::ClearLeases(Job& job) {
  if (!job.leases.empty()) leased_.erase(job.id);
  job.leases.clear();
}

std::vector<std::pair<Job*, Lease>> JobQueue::Expire() {
  const auto now = now_();
  std::vector<Job*> expired_jobs;
  for (uint64_t id : leased_) {
    Job* job = Find(id);
    if (!job) continue;
    for (const Lease& l : job->leases) {
      if (l.expiry < now) {
        expired_jobs.push_back(job);
        break;
      }
    }
  }
  std::vector<std::pair<Job*, Lease>> out;
  for (Job* job : expired_jobs) {
    for (size_t i = job->leases.size(); i-- > 0;) {
      if (job->leases[i].expiry >= now) continue;
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
