// The disk an engine's (or a build's) private directory may use. RLIMIT_FSIZE bounds one file;
// this bounds them together: one thread measures every watched directory twice a second and
// kills the process group (and the engine's own user, match/engine_users.h) of one that passes
// its limit. What an engine can write between two measurements is the overshoot.
//
//   DiskWatch watch(dir, 512 << 20, pid, uid);
//   ...
//   if (watch.exceeded()) reason += watch.Describe();
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace arbiter::match {

// The disk blocks under `root` (symbolic links not followed), or nullopt when a directory of it
// cannot be read (a tree hidden from its measurer is treated as over any limit). What disappears
// during the walk is simply not counted.
std::optional<uint64_t> TreeBytes(const std::string& root);

class DiskWatch {
 public:
  // Watches `dir` until destroyed; over `limit_bytes` (0: not watched), kills the process group
  // of `pgid` and every process of `uid` when it is an engine user of its own (-1: none).
  DiskWatch(std::string dir, uint64_t limit_bytes, pid_t pgid, int uid = -1);
  ~DiskWatch() { Stop(); }
  // No more measuring or killing (call it before the process is reaped: its pid may be reused).
  void Stop();
  DiskWatch(const DiskWatch&) = delete;
  DiskWatch& operator=(const DiskWatch&) = delete;
  bool exceeded() const { return state_->exceeded.load(); }
  // "its directory passed the disk limit of N MiB" (or that it could not be measured).
  std::string Describe() const;

  struct State {
    std::string dir;
    uint64_t limit = 0;
    pid_t pgid = 0;
    int uid = -1;
    std::atomic<bool> exceeded{false};
    std::atomic<bool> unreadable{false};
  };

 private:
  std::shared_ptr<State> state_;
};

}  // namespace arbiter::match
