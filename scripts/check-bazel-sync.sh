#!/usr/bin/env bash
# Checks that the Bazel BUILD files follow the CMake ones: every folder with a CMakeLists.txt
# has a BUILD.bazel, and every .cc file and test name a CMakeLists.txt mentions appears in that
# folder's BUILD.bazel (a test NAME also as "NAME.cc": bazel/arbiter.bzl's arbiter_tests names
# each test after its source), and every .cc file a BUILD.bazel names appears in its folder's
# CMakeLists.txt. Needs no Bazel; prints what is missing and exits 1 if anything is.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=0
while IFS= read -r cmake; do
  dir=$(dirname "$cmake")
  [[ "$dir" == "." ]] && continue
  build="$dir/BUILD.bazel"
  code=$(sed -E 's/#.*//' "$cmake")
  words=$( (grep -oE '[A-Za-z0-9_/.-]+\.cc' <<<"$code" || true;
            grep -oE '^\s*(arbiter_test|match_test)\(\s*[A-Za-z0-9_]+' <<<"$code" |
              sed -E 's/.*\(\s*//' || true) | sort -u)
  [[ -z "$words" ]] && continue
  if [[ ! -f "$build" ]]; then
    echo "missing $build (mirror of $cmake)"
    missing=1
    continue
  fi
  for w in $words; do
    if ! grep -qF "\"$w\"" "$build" && { [[ "$w" == *.cc ]] || ! grep -qF "\"$w.cc\"" "$build"; }; then
      echo "$build: no \"$w\" (named in $cmake)"
      missing=1
    fi
  done
done < <(git ls-files '*CMakeLists.txt')
# And back: every .cc file a BUILD.bazel names is in its folder's CMakeLists.txt.
while IFS= read -r build; do
  dir=$(dirname "$build")
  cmake="$dir/CMakeLists.txt"
  [[ -f "$cmake" ]] || continue
  code=$(sed -E 's/#.*//' "$cmake")
  generated=$(grep -oE 'outs = \[[^]]*\]' "$build" || true)  # a genrule's outputs: built here
  for w in $(grep -oE '"[A-Za-z0-9_/.-]+\.cc"' "$build" | tr -d '"' | sort -u); do
    grep -qF "\"$w\"" <<<"$generated" && continue
    if ! grep -qE "(^|[^A-Za-z0-9_./-])$w([^A-Za-z0-9_./-]|\$)" <<<"$code"; then
      echo "$cmake: no $w (named in $build)"
      missing=1
    fi
  done
done < <(git ls-files '*BUILD.bazel')
exit $missing
