#!/usr/bin/env bash
# Runs clang-tidy 14 with the checked-in .clang-tidy over the project's .cc files, using the
# compile commands of a CMake build (scripts/build.sh writes BUILD_DIR/compile_commands.json).
# Usage: scripts/lint.sh [--all] [--build-dir DIR] [FILE...]
#   default   the .cc files changed against origin/main (or main) and not yet committed; a
#             changed header is checked through the .cc files of its folder.
#   --all     every .cc file in the build's compile commands.
# Exits 1 if clang-tidy reports any warning.
set -euo pipefail
cd "$(dirname "$0")/.."
all=0
dir=build
files=()
while (($#)); do
  case "$1" in
    --all) all=1 ;;
    --build-dir) dir="$2"; shift ;;
    --build-dir=*) dir="${1#--build-dir=}" ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) files+=("$1") ;;
  esac
  shift
done
clang_tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
if [[ -z "$clang_tidy" ]]; then
  echo "clang-tidy not found: run scripts/install-deps.sh" >&2
  exit 2
fi
if [[ ! -f "$dir/compile_commands.json" ]]; then
  echo "no $dir/compile_commands.json: run scripts/build.sh $dir first" >&2
  exit 2
fi
# The .cc files the build compiles (generated protobuf code excluded), relative to the repo.
mapfile -t compiled < <(python3 - "$dir/compile_commands.json" "$PWD" <<'PY'
import json, os, sys
root = sys.argv[2]
for entry in json.load(open(sys.argv[1])):
    path = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
    if path.startswith(root + "/") and path.endswith(".cc"):
        rel = path[len(root) + 1:]
        if not rel.startswith(("build", "bazel-")):
            print(rel)
PY
)
if ((all)); then
  files=("${compiled[@]}")
elif ((${#files[@]} == 0)); then
  base=$(git merge-base HEAD origin/main 2>/dev/null || git merge-base HEAD main)
  mapfile -t changed < <( (git diff --name-only "$base" -- '*.cc' '*.h';
                           git ls-files --others --exclude-standard -- '*.cc' '*.h') | sort -u)
  for f in "${changed[@]}"; do
    [[ -f "$f" ]] || continue
    for c in "${compiled[@]}"; do
      if [[ "$f" == *.cc && "$c" == "$f" ]] || [[ "$f" == *.h && "$(dirname "$c")" == "$(dirname "$f")" ]]; then
        files+=("$c")
      fi
    done
  done
  mapfile -t files < <(printf '%s\n' "${files[@]}" | sort -u | sed '/^$/d')
fi
if ((${#files[@]} == 0)); then
  echo "lint: no files to check"
  exit 0
fi
echo "lint: clang-tidy on ${#files[@]} files" >&2
# The compile commands are GCC's: clang does not know some of its warning flags (-Wno-restrict),
# and warns where the code means it (movegen's branchless `bool & bool` in the hot path).
extra=(--extra-arg=-Wno-unknown-warning-option --extra-arg=-Wno-bitwise-instead-of-logical)
log=$(mktemp)
# Nor does it know GCC's -mmove-max/-mstore-max (the AVX-512 perft core's): a copy of the compile
# commands without them.
db=$(mktemp -d)
trap 'rm -rf "$log" "$db"' EXIT
python3 - "$dir/compile_commands.json" "$db/compile_commands.json" <<'PY'
import json, re, sys
entries = json.load(open(sys.argv[1]))
for e in entries:
    e["command"] = re.sub(r" -m(move|store)-max=\d+", "", e.get("command", ""))
json.dump(entries, open(sys.argv[2], "w"))
PY
status=0
printf '%s\n' "${files[@]}" |
  xargs -P "$(nproc)" -n 4 "$clang_tidy" -p "$db" --quiet "${extra[@]}" >"$log" 2>/dev/null ||
  status=$?
# A header's finding is reported once per file that includes it: each is listed once.
findings=$(grep -E ': (warning|error):' "$log" | sed "s|^$PWD/||" | sort -u || true)
if [[ -n "$findings" ]]; then
  echo "$findings"
  echo "lint: $(wc -l <<<"$findings") findings (see .clang-tidy)" >&2
  exit 1
fi
if ((status)); then
  cat "$log"
  exit 1
fi
echo "lint: clean" >&2
