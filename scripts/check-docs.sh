#!/usr/bin/env bash
# Checks the repository's prose so that a fresh clone reads on its own:
#   - README.md has at most 300 lines;
#   - no tracked file names a numbered work period (the word "session" or "sitting" followed by
#     a number: history lives in git, not in files);
#   - nothing points outside the repository: no path into the "shared" folder beside it in any
#     tracked file, and every relative Markdown link resolves to a tracked path inside it;
#   - every `arbiter ...` line in README.md's code blocks names a real subcommand (and
#     sub-subcommand) and only flags that its --help lists.
# Prints each finding and exits 1 if there is any. CI runs it (.ci/run).
# Usage: scripts/check-docs.sh   (env: ARBITER, default build/cli/arbiter)
set -euo pipefail
cd "$(dirname "$0")/.."
cli="${ARBITER:-build/cli/arbiter}"
[[ -x "$cli" ]] || { echo "check-docs: no $cli (scripts/build.sh first)" >&2; exit 2; }
exec python3 - "$cli" <<'PY'
import os, re, shlex, subprocess, sys

cli = sys.argv[1]
failures = []
tracked = subprocess.run(["git", "ls-files", "-z"], capture_output=True, text=True,
                         check=True).stdout.split("\0")
tracked = [f for f in tracked if f]
tracked_set = set(tracked)
tracked_dirs = {os.path.dirname(f) for f in tracked}
for f in tracked:  # every ancestor folder of a tracked file is a folder of the repository
    d = os.path.dirname(f)
    while d:
        tracked_dirs.add(d)
        d = os.path.dirname(d)

def text_of(path):
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None  # binary
    return data.decode("utf-8", errors="replace")

# README length.
readme = text_of("README.md") or ""
lines = readme.count("\n")
if lines > 300:
    failures.append(f"README.md: {lines} lines, at most 300")

# Numbered work periods and paths outside the repository, in every tracked text file.
period = re.compile(r"\b(sessions?|sittings?|work periods?)\s+#?\d+\b", re.IGNORECASE)
outside = re.compile(r"\.\./shared\b")
for f in tracked:
    text = text_of(f)
    if text is None:
        continue
    for n, line in enumerate(text.splitlines(), 1):
        if period.search(line):
            failures.append(f"{f}:{n}: numbered work period: {line.strip()[:100]}")
        if outside.search(line):
            failures.append(f"{f}:{n}: path outside the repository: {line.strip()[:100]}")

# Relative Markdown links must land on a tracked file or folder.
link = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
for f in tracked:
    if not f.endswith(".md"):
        continue
    text = text_of(f) or ""
    in_code = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        for target in link.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("#"):
                continue  # a URL, mailto: or an anchor on the same page
            path = target.split("#", 1)[0]
            if not path:
                continue
            resolved = os.path.normpath(os.path.join(os.path.dirname(f), path))
            if resolved == ".." or resolved.startswith("../") or os.path.isabs(path):
                failures.append(f"{f}:{n}: link outside the repository: {target}")
            elif resolved not in tracked_set and resolved not in tracked_dirs and resolved != ".":
                failures.append(f"{f}:{n}: link to a path the repository does not have: {target}")

# `arbiter ...` lines of README.md's code blocks against the binary's --help.
help_cache = {}
def help_of(words):
    key = tuple(words)
    if key not in help_cache:
        r = subprocess.run([cli, *words, "--help"], capture_output=True, text=True)
        help_cache[key] = r.stdout if r.returncode == 0 else None
    return help_cache[key]

def subcommands(text):
    out, on = set(), False
    for line in text.splitlines():
        if line.startswith("Subcommands:"):
            on = True
            continue
        if on:
            m = re.match(r"^  ([a-z][a-z0-9-]*)", line)
            if m:
                out.add(m.group(1))
            elif not line.strip():
                on = False
    return out

def flags(text):
    return set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", text))

blocks, in_code, current = [], False, []
for n, line in enumerate(readme.splitlines(), 1):
    if line.lstrip().startswith("```"):
        in_code = not in_code
        continue
    if not in_code:
        continue
    if current:  # a continued command
        current[1] += " " + line.strip().rstrip("\\")
        if not line.rstrip().endswith("\\"):
            blocks.append(current)
            current = []
        continue
    m = re.match(r"^\s*(?:\$\s+)?(?:\S*/)?arbiter\s+(.*)$", line)
    if not m:
        continue
    cmd = [n, m.group(1).rstrip("\\").strip()]
    if line.rstrip().endswith("\\"):
        current = cmd
    else:
        blocks.append(cmd)

top = help_of([])
if top is None:
    failures.append(f"{cli} --help failed")
    blocks = []
for n, cmd in blocks:
    cmd = re.sub(r"\s#.*$", "", cmd).strip().rstrip("&").strip()
    try:
        words = shlex.split(cmd)
    except ValueError as e:
        failures.append(f"README.md:{n}: cannot parse '{cmd}': {e}")
        continue
    if not words or words[0] not in subcommands(top):
        failures.append(f"README.md:{n}: 'arbiter {words[0] if words else ''}' is no subcommand")
        continue
    path = [words[0]]
    rest = words[1:]
    text = help_of(path)
    known = flags(top)  # a parent's options may follow its subcommand's name
    while text is not None and rest and rest[0] in subcommands(text):
        known |= flags(text)
        path.append(rest.pop(0))
        text = help_of(path)
    if text is None:
        failures.append(f"README.md:{n}: 'arbiter {' '.join(path)} --help' failed")
        continue
    known |= flags(text)
    for w in rest:
        if not w.startswith("-") or w == "-" or re.match(r"^-\d", w):
            continue
        flag = w.split("=", 1)[0]
        if flag not in known:
            failures.append(f"README.md:{n}: 'arbiter {' '.join(path)}' has no flag {flag}")

for f in failures:
    print(f)
print(f"check-docs: {len(failures)} finding(s)" if failures else "check-docs: ok")
sys.exit(1 if failures else 0)
PY
