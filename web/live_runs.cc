#include "web/live_runs.h"

#include "base/strings.h"
#include "google/protobuf/util/json_util.h"
#include "proto/run_states.h"

namespace arbiter::web {

LiveRuns::LiveRuns(coordinator::Coordinator* coordinator, size_t max_followers,
                   absl::Duration keepalive)
    : coordinator_(coordinator), max_followers_(max_followers), keepalive_(keepalive) {}

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
  std::string json;
  if (run.ok()) {
    google::protobuf::util::JsonPrintOptions opts;
    opts.always_print_primitive_fields = true;
    opts.preserve_proto_field_names = true;
    (void)google::protobuf::util::MessageToJsonString(*run, &json, opts);
  }
  bool rearm = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = channels_.find(run_id);
    if (it == channels_.end() || it->second->generation != generation) return;
    Channel& ch = *it->second;
    ch.watch_id = 0;
    if (!run.ok()) {
      ch.error = run.status();
      ch.ended = true;
    } else {
      ch.json = std::move(json);
      ch.version = version;
      ch.ended = IsTerminal(run->state());
      rearm = !ch.ended && !closed_;
    }
    changed_.SignalAll();
  }
  if (rearm) Arm(run_id, generation, version);
}

absl::Status LiveRuns::Follow(uint64_t run_id, const std::function<bool(const std::string&)>& send,
                              const std::function<bool()>& keepalive) {
  uint64_t generation = 0;
  bool fresh = false;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::UnavailableError("the coordinator is shutting down");
    if (followers_ >= max_followers_)
      return absl::ResourceExhaustedError(
          Cat("too many live pages open (", max_followers_, "); close some or reload later"));
    auto& slot = channels_[run_id];
    if (!slot) {
      slot = std::make_unique<Channel>();
      slot->generation = next_generation_++;
      fresh = true;
    }
    ++slot->followers;
    ++followers_;
    generation = slot->generation;
  }
  if (fresh) Arm(run_id, generation, 0);

  absl::Status result;
  uint64_t seen = 0;
  for (;;) {
    std::string json;
    bool ended = false;
    {
      absl::MutexLock lock(&mu_);
      Channel& ch = *channels_.at(run_id);
      const absl::Time deadline = absl::Now() + keepalive_;
      while (!closed_ && ch.version <= seen && ch.error.ok()) {
        if (changed_.WaitWithDeadline(&mu_, deadline)) break;
      }
      if (closed_) break;
      if (!ch.error.ok() && ch.version <= seen) {
        result = ch.error;
        break;
      }
      if (ch.version > seen) {
        json = ch.json;
        seen = ch.version;
        ended = ch.ended;
      }
    }
    if (!json.empty()) {
      if (!send(json) || ended) break;
    } else if (!keepalive()) {
      break;
    }
  }

  uint64_t cancel = 0;
  {
    absl::MutexLock lock(&mu_);
    --followers_;
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
