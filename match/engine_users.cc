#include "match/engine_users.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "base/numbers.h"
#include "base/strings.h"

namespace arbiter::match {
namespace {

// Which users this process holds: an open, flock()ed file per user in kLockDir, so that two root
// processes on one host (two workers, a worker and a local match) never hand out the same user
// (the second would kill the first's engine). The kernel drops the locks of a process that dies.
constexpr const char* kLockDir = "/run/arbiter/engine-users";

struct Pool {
  absl::Mutex mu;
  UidRange range ABSL_GUARDED_BY(mu) = kDefaultEngineUids;
  std::vector<int> locks ABSL_GUARDED_BY(mu) = std::vector<int>(kDefaultEngineUids.count, -1);
};

Pool& ThePool() {
  static Pool* pool = new Pool;
  return *pool;
}

bool InRange(UidRange r, uid_t uid) {
  return r.count > 0 && uid >= r.first && uid - r.first < r.count;
}

// kLockDir, made root's and private; false when it cannot be (then engines share one user).
bool LockDirReady() {
  static const bool ready = [] {
    mkdir("/run/arbiter", 0755);
    mkdir(kLockDir, 0700);
    struct stat st;
    return lstat(kLockDir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0 &&
           (st.st_mode & 0077) == 0;
  }();
  return ready;
}

}  // namespace

absl::StatusOr<UidRange> ParseUidRange(std::string_view text) {
  if (text == "none") return UidRange{};
  const size_t dash = text.find('-');
  int64_t first = 0, last = 0;
  if (dash == std::string_view::npos || !ParseNumber(text.substr(0, dash), first) ||
      !ParseNumber(text.substr(dash + 1), last))
    return absl::InvalidArgumentError(Cat("'", text, "' is not FIRST-LAST or none"));
  if (first < 1000 || last > 4294967294LL || last < first || last - first >= 65536)
    return absl::InvalidArgumentError(
        Cat("'", text, "': want 1000 <= FIRST <= LAST <= 4294967294, at most 65536 users"));
  return UidRange{uint32_t(first), uint32_t(last - first + 1)};
}

std::string UidRangeText(UidRange range) {
  if (range.count == 0) return "none";
  return Cat(range.first, "-", uint64_t(range.first) + range.count - 1);
}

void ConfigureEngineUsers(UidRange range) {
  Pool& p = ThePool();
  absl::MutexLock lock(&p.mu);
  for (int fd : p.locks)
    if (fd >= 0) close(fd);
  p.range = range;
  p.locks.assign(range.count, -1);
}

absl::StatusOr<std::optional<uid_t>> AcquireEngineUser() {
  if (geteuid() != 0 || !LockDirReady()) return std::nullopt;
  Pool& p = ThePool();
  uid_t uid = 0;
  {
    absl::MutexLock lock(&p.mu);
    if (p.range.count == 0) return std::nullopt;
    size_t i = 0;
    for (; i < p.locks.size(); ++i) {
      if (p.locks[i] >= 0) continue;
      const int fd = open(Cat(kLockDir, "/", p.range.first + i).c_str(),
                          O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
      if (fd < 0) continue;
      if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
        p.locks[i] = fd;
        break;
      }
      close(fd);  // another process's engine
    }
    if (i == p.locks.size())
      return absl::ResourceExhaustedError(
          Cat("every engine user of ", UidRangeText(p.range), " runs an engine (--engine-uids)"));
    uid = uid_t(p.range.first + i);
  }
  KillEngineUser(uid);  // what a killed worker may have left under it
  return uid;
}

bool IsEngineUser(uid_t uid) {
  Pool& p = ThePool();
  absl::MutexLock lock(&p.mu);
  return InRange(p.range, uid) && p.locks[uid - p.range.first] >= 0;
}

void KillEngineUser(uid_t uid) {
  if (geteuid() != 0 || !IsEngineUser(uid)) return;
  // A child that becomes the user and signals every process it may: exactly that user's. The
  // kernel walks the process list under the lock fork() needs, so a fork bomb cannot outrun it.
  const pid_t pid = fork();
  if (pid == 0) {
    if (syscall(SYS_setresgid, gid_t(65534), gid_t(65534), gid_t(65534)) != 0 ||
        syscall(SYS_setresuid, uid, uid, uid) != 0)
      _exit(1);
    kill(-1, SIGKILL);
    _exit(0);
  }
  if (pid > 0)
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
}

void ReleaseEngineUser(uid_t uid) {
  KillEngineUser(uid);
  Pool& p = ThePool();
  absl::MutexLock lock(&p.mu);
  if (!InRange(p.range, uid)) return;
  int& fd = p.locks[uid - p.range.first];
  if (fd >= 0) close(fd);
  fd = -1;
}

}  // namespace arbiter::match
