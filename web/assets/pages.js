// arbiter's dashboard, part 4 of 6: the workers (#/workers), engines (#/engines) and ratings
// (#/ratings) pages.
"use strict";

// The CLI's spelling (base/cpu.h CpuLevelName): v1 is plain x86-64.
const cpuLevels = ["any", "v1", "v2", "v3", "v4"];
// The CLI's spellings of the enums (proto/wire_enums.h); unspecified shows as nothing.
const isolations = { ISOLATION_NONE: "none", ISOLATION_LIMITS: "limits", ISOLATION_LANDLOCK: "landlock",
  ISOLATION_NAMESPACES: "namespaces" };
const perftPaths = { PERFT_PATH_V2: "v2", PERFT_PATH_V3: "v3", PERFT_PATH_V4: "v4" };

async function showWorkers() {
  const data = await api("GET", "workers?all=1");
  const rows = (data.workers || []).map((w) => el("tr", { "data-worker": w.name },
    el("td", {}, w.name, w.draining ? el("span", { class: "muted" }, " (draining)") : "",
      w.quarantine ? el("span", { class: "muted", title: w.quarantine }, " (quarantined: " + w.quarantine + ")") : ""),
    el("td", { class: "hide-small" }, w.hostname || ""), el("td", { class: "num" }, w.threads),
    el("td", { class: "hide-small" }, cpuLevels[w.cpu_level] || "", perftPaths[(w.worker || {}).perft_core_path]
      ? el("span", { class: "muted" }, ` (perft ${perftPaths[w.worker.perft_core_path]})`) : ""),
    el("td", { class: "hide-small" }, isolations[(w.worker || {}).engine_isolation] || ""),
    el("td", {}, (w.leased_runs || []).map((r) => el("a", { href: `#/runs/${r}` }, `run ${r} `))),
    el("td", { class: "num" }, num(w.nodes_per_second) ? `${fmt(num(w.nodes_per_second) / 1e6)} Mnodes/s` : "—"),
    el("td", { class: "num" }, num(w.games_per_minute) ? `${fmt(w.games_per_minute)} games/min` : "—"),
    el("td", {}, w.connected ? `${fmt(w.last_seen_seconds_ago, 0)} s ago` : "disconnected")));
  setView(el("h1", {}, "Workers"),
    el("p", { class: "muted" }, "Speeds are each worker's own: the perft nodes it counted over its own work time, " +
      "and the games it finished, over the last 5 minutes."),
    table(["Name", "Host~", "Threads#", "CPU~", "Isolation~", "Working on", "Perft#", "Games#", "Last seen"], rows,
          { id: "workers" }),
    rows.length ? null : el("p", { class: "muted" }, "No workers."));
  const timer = setInterval(() => { if (!document.hidden) showWorkers().catch(() => {}); }, 5000);
  cleanup.push(() => clearInterval(timer));
}

async function showEngines() {
  const data = await api("GET", "engines");
  const rows = (data.engines || []).map((e) => el("tr", { "data-engine": e.sha256 },
    el("td", {}, e.name), el("td", {}, el("code", {}, e.sha256.slice(0, 16) + "…")),
    el("td", { class: "num" }, `${fmt(num(e.size_bytes) / 1048576, 1)} MiB`), el("td", {}, e.owner || ""),
    el("td", {}, ago(e.uploaded_unix)),
    el("td", {}, canSubmit() && (e.owner === session.name || isAdmin())
      ? el("button", { class: "danger", onclick: async () => {
          if (!confirm(`Delete engine ${e.name}?`)) return;
          try { await api("DELETE", `engines/${e.sha256}`); route(); } catch (err) { alert(err.message); }
        } }, "Delete") : "")));
  setView(el("h1", {}, "Engines"),
    el("p", { class: "muted", id: "upload-hint" }, "An engine is uploaded by the run that names it: ",
      el("code", { class: "command" }, "arbiter match --coordinator HOST:PORT --engine name=dev,cmd=upload:./dev " +
        "--engine name=base,cmd=builtin --tc 10+0.1 --games 100"),
      ". ", el("code", { class: "command" }, "arbiter engines list"), " lists the uploads."),
    table(["Name", "sha256", "Size#", "Owner", "Uploaded", ""], rows, { id: "engines" }),
    rows.length ? null : el("p", { class: "muted" }, "No uploaded engines."));
}

// Rating lists over the games of the newest 200 match and tournament runs: one per group of
// engines that played each other (engines that never met cannot be rated on one scale), each
// with its anchor at Elo 0, 95% intervals as error bars, and games; a name-prefix filter.
async function showRatings(params) {
  const q = new URLSearchParams(params);
  let prefix = q.get("name") || "";
  const runs = ((await api("GET", "runs?kind=MATCH,TOURNAMENT&page_size=200")).runs || [])
    .filter((r) => num((r.match && r.match.result || {}).games) > 0 || num((r.tournament || {}).games) > 0)
    .reverse();  // oldest first: a group's anchor is the first engine of its oldest run
  // Groups of engines joined by the runs they played in (union-find over names).
  const parent = {};
  const find = (n) => { while (parent[n] !== n) n = parent[n] = parent[parent[n]]; return n; };
  const namesOf = (r) => (((r.match || r.tournament).request.settings || {}).engines || []).map((e) => e.name);
  for (const r of runs) {
    const names = namesOf(r);
    for (const n of names) if (!(n in parent)) parent[n] = n;
    for (const n of names.slice(1)) parent[find(n)] = find(names[0]);
  }
  const groups = new Map();
  for (const r of runs) {
    const key = find(namesOf(r)[0]);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(r.id);
  }
  const lists = await Promise.all([...groups.values()].map((ids) => api("GET", "ratings?runs=" + ids.join(","))
    .catch((e) => ({ error: e.message, run_ids: ids }))));
  const errorBar = (s, lo, hi) => {
    const W = 200, H = 14, x = (v) => (v - lo) / (hi - lo || 1) * W;
    const b = svg("svg", { class: "errbar", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": plusMinus(s.elo, s.elo_error95) });
    b.append(svg("line", { class: "zero", x1: x(0), x2: x(0), y1: 0, y2: H }));
    if (Number.isFinite(Number(s.elo)) && Number.isFinite(Number(s.elo_error95))) {
      b.append(svg("line", { class: "range", x1: x(num(s.elo) - num(s.elo_error95)), x2: x(num(s.elo) + num(s.elo_error95)), y1: H / 2, y2: H / 2 }));
      b.append(svg("circle", { class: "point", cx: x(num(s.elo)), cy: H / 2, r: 3 }));
    }
    return b;
  };
  const blocks = lists.map((data, g) => {
    const all = data.standings || [];
    const finite = all.filter((s) => Number.isFinite(Number(s.elo)) && Number.isFinite(Number(s.elo_error95)));
    const lo = Math.min(0, ...finite.map((s) => num(s.elo) - num(s.elo_error95)));
    const hi = Math.max(0, ...finite.map((s) => num(s.elo) + num(s.elo_error95)));
    const tbody = el("tbody");
    const section = el("section", { class: "rating-group" },
      el("h2", {}, `Group ${g + 1}`, el("span", { class: "muted" }, data.error ? ` — ${data.error}`
        : ` — anchor ${data.anchor} at Elo 0, ${fmtInt(data.games)} games, runs `),
        (data.run_ids || []).map((id) => el("a", { href: `#/runs/${id}` }, `${id} `))),
      // One name over different binaries or options: rated apart (NAME#1, NAME#2), and said.
      (data.warnings || []).map((w) => el("p", { class: "warning", role: "note" }, w)),
      el("div", { class: "scroll" }, el("table", { class: "ratings", id: `ratings-${g + 1}` },
        el("thead", {}, el("tr", {}, ["#", "Engine", "Elo", "95% interval~", "Games#", "Score#"].map((h, i) =>
          el("th", { class: colClass(i === 0 || i === 2 ? h + "#" : h) }, h.replace(/[#~]+$/, ""))))), tbody)));
    const draw = () => {
      const shown = all.filter((s) => s.name.startsWith(prefix));
      tbody.replaceChildren(...shown.map((s, i) => el("tr", { "data-engine": s.name },
        el("td", { class: "num" }, i + 1),
        el("td", {}, s.name, s.name === data.anchor ? el("span", { class: "muted" }, " (anchor)") : ""),
        el("td", { class: "num" }, s.name === data.anchor ? "0 (anchor)" : plusMinus(s.elo, s.elo_error95)),
        el("td", { class: "hide-small" }, errorBar(s, lo, hi)),
        el("td", { class: "num" }, s.games || 0), el("td", { class: "num" }, pct(num(s.score))))));
      section.hidden = shown.length === 0 && !data.error;
      return shown.length;
    };
    return { section, draw };
  });
  const status = el("p", { class: "muted", id: "ratings-status", role: "status" });
  const drawAll = () => {
    const shown = blocks.map((b) => b.draw()).reduce((a, b) => a + b, 0);
    status.textContent = runs.length === 0 ? "No rated games yet." : shown === 0 ? "No engine name starts with that." : "";
  };
  setView(el("h1", {}, "Ratings"),
    el("p", { class: "muted" }, "Bradley–Terry ratings over the games of the newest 200 match and tournament runs, " +
      "one list per group of engines that played each other; bars are 95% intervals."),
    el("div", { class: "filters" }, el("label", {}, "Name starts with", el("input", { id: "ratings-filter", value: prefix,
      autocomplete: "off", oninput: (e) => { prefix = e.target.value.trim();
        history.replaceState(null, "", "#/ratings" + (prefix ? "?name=" + encodeURIComponent(prefix) : "")); drawAll(); } }))),
    status, ...blocks.map((b) => b.section));
  drawAll();
}
