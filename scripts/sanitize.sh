#!/usr/bin/env bash
# The sanitizer test runs, as CI runs them (README: Sanitizers, fuzzing, formatting).
#   scripts/sanitize.sh asan   AddressSanitizer + UBSan: the whole default test set (-LE slow)
#   scripts/sanitize.sh tsan   ThreadSanitizer: the tests whose code runs threads in-process
#                              (the coordinator's, the worker's match jobs, the match runner and
#                              game loop, perft's threads, the search thread, tournaments); not
#                              those that run gRPC in-process (cluster tests, the worker's reports
#                              and engine cache): Debian's libgrpc is not built with TSan, and
#                              its own threads' polling reads as races (Epoll1Poller::DoEpollWait)
#   scripts/sanitize.sh        both, one after the other
# Builds in build-asan / build-tsan (scripts/build.sh --asan / --tsan) and prints the time of
# each step. A finding fails the test that hit it (halt_on_error), with its report in the log.
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
TSAN_TESTS=(perft_test search_test uci_engine_test game_test runner_test tournament_test
  match_job_test lanes_test lease_restart_test limits_test scheduling_test streamed_split_test
  verification_test worker_engines_test commit_log_test residuals_test lease_progress_test
  quarantine_test)
step() { echo "sanitize: $1 in $(($SECONDS - $2)) s"; }

if [[ "$what" == asan || "$what" == all ]]; then
  t=$SECONDS
  scripts/build.sh --asan
  step "asan build" $t
  t=$SECONDS
  # The deployment tests (labels netns, prometheus) drive whole binaries through network faults
  # and an outside Prometheus, and the browser tests (label browser) drive the dashboard's pages
  # through Chromium; they run once, in the Release build (scripts/test.sh), not here. The C++
  # they reach (the HTTP API, matches to an SPRT verdict) runs here in dashboard_api_test and
  # the cluster tests.
  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan -LE 'slow|netns|prometheus|browser' --output-on-failure -j 2 \
      --timeout 1800
  step "asan tests" $t
fi
if [[ "$what" == tsan || "$what" == all ]]; then
  t=$SECONDS
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cmake -S . -B build-tsan "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DARBITER_SANITIZE=thread \
    -DARBITER_WERROR=OFF >/dev/null
  # The tests, and the test engine they start (none of them starts the arbiter binary).
  cmake --build build-tsan -j "$(nproc)" --target "${TSAN_TESTS[@]}" arbiter_fake_uci_engine
  step "tsan build" $t
  t=$SECONDS
  regex=$(IFS='|'; echo "^(${TSAN_TESTS[*]})\$")
  # history_size=7 (the most a thread's accesses TSan keeps, 4 M): base/tsan.supp matches a
  # report by the stack of the earlier access, which TSan can only restore while it is in the
  # thread's history; with the default, a long-idle thread's stack was lost once (a report with
  # "failed to restore the stack" on a condition's read, tearing down a coordinator) and CI failed.
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:history_size=7:suppressions=$PWD/base/tsan.supp" \
    ctest --test-dir build-tsan -R "$regex" --output-on-failure -j 2 --timeout 1800
  step "tsan tests" $t
fi
