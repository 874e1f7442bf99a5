// ThreadSanitizer builds only (ARBITER_SANITIZE=thread). Debian's Abseil is not built with
// TSan, so TSan cannot see that absl::Mutex orders memory, and reports every access guarded by
// one as a race. The linker wraps each call our code makes to the Mutex and CondVar functions
// below (ld --wrap, set up in CMakeLists.txt, which finds the mangled names' inline namespace in
// the installed library) and the wrappers tell TSan what the call did: taking the mutex (a lock,
// the return of a wait) acquires it, giving it up (an unlock, the start of a wait) releases it.
#include <sanitizer/tsan_interface.h>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

#ifndef ARBITER_ABSL_NS
#error "ARBITER_ABSL_NS (the mangled inline namespace of absl, e.g. 7debian3) must be defined"
#endif

#define ARBITER_CAT3(a, b, c) a##b##c
#define ARBITER_SYM(prefix, ns, name) ARBITER_CAT3(prefix, ns, name)
#define REAL(name) ARBITER_SYM(__real__ZN4absl, ARBITER_ABSL_NS, name)
#define WRAP(name) ARBITER_SYM(__wrap__ZN4absl, ARBITER_ABSL_NS, name)

using absl::Condition;
using absl::CondVar;
using absl::Duration;
using absl::Mutex;
using absl::Time;

extern "C" {

void REAL(5Mutex4LockEv)(Mutex* mu);
void WRAP(5Mutex4LockEv)(Mutex* mu) {
  REAL(5Mutex4LockEv)(mu);
  __tsan_acquire(mu);
}

void REAL(5Mutex6UnlockEv)(Mutex* mu);
void WRAP(5Mutex6UnlockEv)(Mutex* mu) {
  __tsan_release(mu);
  REAL(5Mutex6UnlockEv)(mu);
}

bool REAL(5Mutex7TryLockEv)(Mutex* mu);
bool WRAP(5Mutex7TryLockEv)(Mutex* mu) {
  const bool locked = REAL(5Mutex7TryLockEv)(mu);
  if (locked) __tsan_acquire(mu);
  return locked;
}

void REAL(5Mutex10ReaderLockEv)(Mutex* mu);
void WRAP(5Mutex10ReaderLockEv)(Mutex* mu) {
  REAL(5Mutex10ReaderLockEv)(mu);
  __tsan_acquire(mu);
}

void REAL(5Mutex12ReaderUnlockEv)(Mutex* mu);
void WRAP(5Mutex12ReaderUnlockEv)(Mutex* mu) {
  __tsan_release(mu);
  REAL(5Mutex12ReaderUnlockEv)(mu);
}

// The LockWhen family: the condition's state, written before the call, is read by whichever
// thread evaluates the condition: released first.
void REAL(5Mutex8LockWhenERKNS0_9ConditionE)(Mutex* mu, const Condition& c);
void WRAP(5Mutex8LockWhenERKNS0_9ConditionE)(Mutex* mu, const Condition& c) {
  __tsan_release(mu);
  REAL(5Mutex8LockWhenERKNS0_9ConditionE)(mu, c);
  __tsan_acquire(mu);
}

bool REAL(5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE)(Mutex* mu,
                                                                       const Condition& c,
                                                                       Duration d);
bool WRAP(5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE)(Mutex* mu,
                                                                       const Condition& c,
                                                                       Duration d) {
  __tsan_release(mu);
  const bool met = REAL(5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE)(mu, c, d);
  __tsan_acquire(mu);
  return met;
}

bool REAL(5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE)(Mutex* mu, const Condition& c,
                                                                    Time t);
bool WRAP(5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE)(Mutex* mu, const Condition& c,
                                                                    Time t) {
  __tsan_release(mu);
  const bool met = REAL(5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE)(mu, c, t);
  __tsan_acquire(mu);
  return met;
}

void REAL(5Mutex5AwaitERKNS0_9ConditionE)(Mutex* mu, const Condition& c);
void WRAP(5Mutex5AwaitERKNS0_9ConditionE)(Mutex* mu, const Condition& c) {
  __tsan_release(mu);
  REAL(5Mutex5AwaitERKNS0_9ConditionE)(mu, c);
  __tsan_acquire(mu);
}

bool REAL(5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE)(Mutex* mu, const Condition& c,
                                                                    Duration d);
bool WRAP(5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE)(Mutex* mu, const Condition& c,
                                                                    Duration d) {
  __tsan_release(mu);
  const bool met = REAL(5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE)(mu, c, d);
  __tsan_acquire(mu);
  return met;
}

bool REAL(5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE)(Mutex* mu, const Condition& c,
                                                                 Time t);
bool WRAP(5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE)(Mutex* mu, const Condition& c,
                                                                 Time t) {
  __tsan_release(mu);
  const bool met = REAL(5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE)(mu, c, t);
  __tsan_acquire(mu);
  return met;
}

void REAL(7CondVar4WaitEPNS0_5MutexE)(CondVar* cv, Mutex* mu);
void WRAP(7CondVar4WaitEPNS0_5MutexE)(CondVar* cv, Mutex* mu) {
  __tsan_release(mu);
  REAL(7CondVar4WaitEPNS0_5MutexE)(cv, mu);
  __tsan_acquire(mu);
}

bool REAL(7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE)(CondVar* cv, Mutex* mu, Duration d);
bool WRAP(7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE)(CondVar* cv, Mutex* mu,
                                                                Duration d) {
  __tsan_release(mu);
  const bool timed_out = REAL(7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE)(cv, mu, d);
  __tsan_acquire(mu);
  return timed_out;
}

}  // extern "C"
