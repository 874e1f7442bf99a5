#include "match/disk_watch.h"

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "base/strings.h"
#include "match/engine_users.h"

namespace arbiter::match {
namespace fs = std::filesystem;
namespace {

// The watched directories and the one thread that measures them (started with the first).
struct Watcher {
  absl::Mutex mu;
  std::vector<std::shared_ptr<DiskWatch::State>> watched ABSL_GUARDED_BY(mu);
  bool running ABSL_GUARDED_BY(mu) = false;

  void Loop() {
    for (;;) {
      std::vector<std::shared_ptr<DiskWatch::State>> now;
      {
        absl::MutexLock lock(&mu);
        now = watched;
      }
      for (const auto& w : now) {
        if (w->exceeded) continue;
        const std::optional<uint64_t> used = TreeBytes(w->dir);
        if (used && *used <= w->limit) continue;
        // Killed only while still watched: once stopped, its process may be reaped and the pid
        // reused.
        absl::MutexLock lock(&mu);
        if (std::find(watched.begin(), watched.end(), w) == watched.end()) continue;
        w->unreadable = !used;
        w->exceeded = true;
        if (w->pgid > 0) kill(-w->pgid, SIGKILL);
        if (w->uid >= 0 && IsEngineUser(uid_t(w->uid))) KillEngineUser(uid_t(w->uid));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }
};

Watcher& TheWatcher() {
  static Watcher* w = new Watcher;  // its thread outlives every caller: never destroyed
  return *w;
}

}  // namespace

std::optional<uint64_t> TreeBytes(const std::string& root) {
  uint64_t bytes = 0;
  std::vector<fs::path> dirs = {root};
  while (!dirs.empty()) {
    const fs::path dir = std::move(dirs.back());
    dirs.pop_back();
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      struct stat st;
      if (lstat(it->path().c_str(), &st) != 0) continue;
      bytes += uint64_t(st.st_blocks) * 512;
      if (S_ISDIR(st.st_mode)) dirs.push_back(it->path());
    }
    if (ec == std::errc::permission_denied) return std::nullopt;
  }
  return bytes;
}

DiskWatch::DiskWatch(std::string dir, uint64_t limit_bytes, pid_t pgid, int uid)
    : state_(std::make_shared<State>()) {
  state_->dir = std::move(dir);
  state_->limit = limit_bytes;
  state_->pgid = pgid;
  state_->uid = uid;
  if (limit_bytes == 0 || state_->dir.empty()) return;
  Watcher& w = TheWatcher();
  absl::MutexLock lock(&w.mu);
  w.watched.push_back(state_);
  if (!w.running) {
    w.running = true;
    std::thread([&w] { w.Loop(); }).detach();
  }
}

void DiskWatch::Stop() {
  Watcher& w = TheWatcher();
  absl::MutexLock lock(&w.mu);
  std::erase(w.watched, state_);
}

std::string DiskWatch::Describe() const {
  if (state_->unreadable) return "part of its directory could not be read to measure its disk use";
  return Cat("its directory passed the disk limit of ", state_->limit >> 20, " MiB");
}

}  // namespace arbiter::match
