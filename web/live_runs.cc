#include "web/live_runs.h"

#include "base/strings.h"
#include "proto/json.h"
#include "proto/run_states.h"

namespace arbiter::web {

// How often a follower is asked whether it is still allowed to follow.
constexpr absl::Duration kAliveCheck = absl::Seconds(1);

LiveRuns::LiveRuns(coordinator::Coordinator* coordinator, size_t max_followers, size_t max_per_key,
                   absl::Duration interval, absl::Duration keepalive)
    : coordinator_(coordinator),
      max_followers_(max_followers),
      max_per_key_(max_per_key),
      interval_(interval),
      keepalive_(keepalive) {}

void LiveRuns::Arm(uint64_t run_id, uint64_t generation, uint64_t seen) {
  const uint64_t id = coordinator_->WatchRun(
      run_id, seen, [this, run_id, generation](absl::StatusOr<v1::Run> run, uint64_t version) {
        OnChange(run_id, generation, std::move(run), version);
      });
  if (id == 0) return;
  absl::MutexLock lock(&mu_);
  auto it = channels_.find(run_id);
  if (it != channels_.end() && it->second->generation == generation && id > it->second->watch_id)
    it->second->watch_id = id;
}

void LiveRuns::OnChange(uint64_t run_id, uint64_t generation, absl::StatusOr<v1::Run> run,
                        uint64_t version) {
  auto shared = run.ok() ? std::make_shared<const v1::Run>(std::move(*run)) : nullptr;
  absl::MutexLock lock(&mu_);
  auto it = channels_.find(run_id);
  if (it == channels_.end() || it->second->generation != generation) return;
  Channel& ch = *it->second;
  ch.armed = false;
  ch.watch_id = 0;
  if (!shared) {
    ch.error = run.status();
    ch.ended = true;
  } else if (version > ch.version) {
    ch.run = std::move(shared);
    ch.version = version;
    ch.ended = IsTerminal(ch.run->state());
  }
  changed_.SignalAll();
}

std::shared_ptr<const std::string> LiveRuns::JsonOf(uint64_t run_id, uint64_t generation) {
  std::shared_ptr<const v1::Run> run;
  uint64_t version = 0;
  {
    absl::MutexLock lock(&mu_);
    Channel& ch = *channels_.at(run_id);
    if (ch.json_version == ch.version) return ch.json;
    run = ch.run;
    version = ch.version;
  }
  auto out = std::make_shared<const std::string>(ProtoToJson(*run));
  absl::MutexLock lock(&mu_);
  auto it = channels_.find(run_id);
  if (it != channels_.end() && it->second->generation == generation &&
      it->second->json_version < version) {
    it->second->json = out;
    it->second->json_version = version;
  }
  return out;
}

bool LiveRuns::HasRoom(const std::string& key) {
  absl::MutexLock lock(&mu_);
  auto it = per_key_.find(key);
  return followers_ < max_followers_ && (it == per_key_.end() || it->second < max_per_key_);
}

absl::Status LiveRuns::Follow(uint64_t run_id, const Follower& follower) {
  uint64_t generation = 0;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::UnavailableError("the coordinator is shutting down");
    if (followers_ >= max_followers_)
      return absl::ResourceExhaustedError(
          Cat("too many live pages open (", max_followers_, "); close some or reload later"));
    size_t& mine = per_key_[follower.key];
    if (mine >= max_per_key_)
      return absl::ResourceExhaustedError(Cat("too many live pages open for '", follower.key, "' (",
                                              max_per_key_, "); close some first"));
    ++mine;
    auto& slot = channels_[run_id];
    if (!slot) {
      slot = std::make_unique<Channel>();
      slot->generation = next_generation_++;
    }
    ++slot->followers;
    ++followers_;
    generation = slot->generation;
  }

  absl::Status result;
  uint64_t seen = 0;
  absl::Time last_sent = absl::Now();
  for (;;) {
    // Arm the channel's watch when no one has since its last change (at most one per channel).
    uint64_t arm_after = 0;
    bool arm = false;
    {
      absl::MutexLock lock(&mu_);
      Channel& ch = *channels_.at(run_id);
      if (!ch.armed && !ch.ended && !closed_ && ch.version <= seen) {
        ch.armed = arm = true;
        arm_after = ch.version;
      }
    }
    if (arm) Arm(run_id, generation, arm_after);
    bool changed = false, ended = false, quiet = false;
    {
      absl::MutexLock lock(&mu_);
      Channel& ch = *channels_.at(run_id);
      const absl::Time deadline = std::min(last_sent + keepalive_, absl::Now() + kAliveCheck);
      while (!closed_ && ch.version <= seen && ch.error.ok()) {
        if (changed_.WaitWithDeadline(&mu_, deadline)) break;
      }
      if (closed_) break;
      quiet = absl::Now() >= last_sent + keepalive_;
      if (!ch.error.ok() && ch.version <= seen) {
        result = ch.error;
        break;
      }
      if (ch.version > seen) {
        changed = true;
        seen = ch.version;
        ended = ch.ended;
      }
    }
    if (!follower.alive()) {
      result = absl::UnauthenticatedError("the token of this page was revoked");
      break;
    }
    if (!changed) {
      if (quiet) {
        if (!follower.keepalive()) break;
        last_sent = absl::Now();
      }
      continue;
    }
    std::shared_ptr<const std::string> json = JsonOf(run_id, generation);
    if (!follower.send(*json) || ended) break;
    last_sent = absl::Now();
    // The next update no sooner than `interval` from now (Close ends the wait).
    absl::MutexLock lock(&mu_);
    const absl::Time until = absl::Now() + interval_;
    while (!closed_ && !changed_.WaitWithDeadline(&mu_, until)) {
    }
    if (closed_) break;
  }

  uint64_t cancel = 0;
  {
    absl::MutexLock lock(&mu_);
    --followers_;
    if (auto mine = per_key_.find(follower.key); mine != per_key_.end() && --mine->second == 0)
      per_key_.erase(mine);
    auto it = channels_.find(run_id);
    if (it != channels_.end() && it->second->generation == generation &&
        --it->second->followers == 0) {
      cancel = it->second->watch_id;
      channels_.erase(it);
    }
  }
  if (cancel != 0) coordinator_->CancelWatch(cancel);
  return result;
}

void LiveRuns::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  changed_.SignalAll();
}

size_t LiveRuns::followers() {
  absl::MutexLock lock(&mu_);
  return followers_;
}

size_t LiveRuns::channels() {
  absl::MutexLock lock(&mu_);
  return channels_.size();
}

}  // namespace arbiter::web
