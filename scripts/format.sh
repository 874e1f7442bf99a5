#!/usr/bin/env bash
# Formats the project's C++ and proto files with clang-format 14 and the checked-in
# .clang-format (Debian 12's clang-format; other versions format some constructs differently).
# Usage: scripts/format.sh [--check] [FILE...]
#   --check   change nothing; list the files that differ and exit 1 if any does.
#   FILE...   only these files (default: every tracked *.cc, *.h and *.proto outside build dirs).
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
files=()
for arg in "$@"; do
  case "$arg" in
    --check) check=1 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) files+=("$arg") ;;
  esac
done
clang_format=$(command -v clang-format-14 || command -v clang-format || true)
if [[ -z "$clang_format" ]]; then
  echo "clang-format not found: run scripts/install-deps.sh" >&2
  exit 2
fi
if ((${#files[@]} == 0)); then
  # Tracked and new (not ignored) files, so build*/ and bazel-*/ never appear.
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.cc' '*.h' '*.proto' |
                         grep -vE '^(build[^/]*|bazel-[^/]*)/' | sort -u)
fi
if ((check)); then
  differ=0
  for f in "${files[@]}"; do
    [[ -f "$f" ]] || continue
    if ! "$clang_format" --style=file "$f" | cmp -s - "$f"; then
      echo "$f"
      differ=$((differ + 1))
    fi
  done
  if ((differ)); then
    echo "$differ of ${#files[@]} files are not formatted (scripts/format.sh fixes them)" >&2
    exit 1
  fi
  exit 0
fi
"$clang_format" --style=file -i "${files[@]}"
