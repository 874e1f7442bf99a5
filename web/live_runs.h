// Live pages of runs: every open page of a run follows one shared channel, and each channel holds
// at most one coordinator watch (Coordinator::WatchRun, the mechanism behind gRPC WatchRun) and
// the run's JSON made once per version sent. A page gets at most one update per `interval` (the
// newest; changes in between are merged), and a channel's watch is armed again only when a page
// is ready for the next update. So N pages of one run cost the coordinator one watch, one run
// built and one conversion per interval, not N per change.
//
// Each follower belongs to a key (the token of the page), and one key holds at most
// `max_per_key` of the `max_followers`, so one viewer cannot lock the others out.
//
//   LiveRuns live(&coordinator, /*max_followers=*/256, /*max_per_key=*/64);
//   absl::Status st = live.Follow(run_id, {"alice", send_json, send_keepalive, still_valid});
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/coordinator.h"

namespace arbiter::web {

class LiveRuns {
 public:
  LiveRuns(coordinator::Coordinator* coordinator, size_t max_followers, size_t max_per_key,
           absl::Duration interval = absl::Milliseconds(500),
           absl::Duration keepalive = absl::Seconds(15));
  ~LiveRuns() { Close(); }

  struct Follower {
    std::string key;
    // The run as JSON; false ends the follow.
    std::function<bool(const std::string&)> send;
    // Called when nothing was sent for `keepalive`; false ends the follow.
    std::function<bool()> keepalive;
    // Asked at least every second; false ends the follow with UNAUTHENTICATED (a revoked token).
    std::function<bool()> alive = [] { return true; };
  };
  // Sends the run now and after every change, until a callback returns false, the run has ended
  // (its final state was sent), or Close. NOT_FOUND for an unknown run; RESOURCE_EXHAUSTED past
  // max_followers or the key's max_per_key.
  absl::Status Follow(uint64_t run_id, const Follower& follower);
  // Whether another page of `key` would be taken now.
  bool HasRoom(const std::string& key);
  // Ends every Follow and refuses new ones.
  void Close();
  size_t followers();
  size_t channels();

 private:
  struct Channel {
    uint64_t generation = 0;
    uint64_t version = 0;  // of `run`; 0 before the first
    std::shared_ptr<const v1::Run> run;
    uint64_t json_version = 0;  // of `json`
    std::shared_ptr<const std::string> json;
    bool ended = false;
    absl::Status error;
    size_t followers = 0;
    bool armed = false;  // a coordinator watch is waiting for a newer version
    uint64_t watch_id = 0;
  };
  // The JSON of the channel's newest run, made at most once per version.
  std::shared_ptr<const std::string> JsonOf(uint64_t run_id, uint64_t generation);
  void Arm(uint64_t run_id, uint64_t generation, uint64_t seen);
  void OnChange(uint64_t run_id, uint64_t generation, absl::StatusOr<v1::Run> run,
                uint64_t version);

  coordinator::Coordinator* const coordinator_;
  const size_t max_followers_;
  const size_t max_per_key_;
  const absl::Duration interval_;
  const absl::Duration keepalive_;
  absl::Mutex mu_;
  absl::CondVar changed_;
  std::map<uint64_t, std::unique_ptr<Channel>> channels_ ABSL_GUARDED_BY(mu_);
  size_t followers_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, size_t> per_key_ ABSL_GUARDED_BY(mu_);
  uint64_t next_generation_ ABSL_GUARDED_BY(mu_) = 1;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace arbiter::web
