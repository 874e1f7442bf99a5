// arbiter's dashboard, part 3 of 6: one run (#/runs/ID), followed live over Server-Sent Events:
// what was tested (engines with their source, options and TC; the book; the SPRT), its verdict,
// and the kind's own section (match, perft, movegen-check, tournament).
"use strict";

// ---- charts ----------------------------------------------------------------------------------

// Round steps for an axis from lo to hi: about n ticks.
function ticks(lo, hi, n) {
  const span = hi - lo;
  if (!(span > 0)) return [lo];
  const raw = span / n, mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) || raw;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(Math.abs(v) < 1e-12 ? 0 : v);
  return out;
}

// A line chart of points [{x, y, lo?, hi?}] with axes, ticks, optional horizontal bounds
// (labelled) and the value under the pointer.
function chart(id, title, points, bounds, unit) {
  const W = 600, H = 240, L = 52, R = 14, T = 24, B = 34;
  const s = svg("svg", { class: "chart", id, viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title });
  s.append(svg("text", { x: L, y: 16, class: "title" }, title));
  if (points.length === 0) return s;
  const xs = points.map((p) => p.x);
  let ys = points.flatMap((p) => [p.y, p.lo ?? p.y, p.hi ?? p.y]).concat(bounds || []);
  ys = ys.filter(Number.isFinite);
  let y0 = Math.min(...ys, 0), y1 = Math.max(...ys, 0);
  if (y1 - y0 < 1e-9) { y0 -= 1; y1 += 1; }
  const x0 = 0, x1 = Math.max(...xs, 2);
  const px = (x) => L + (x - x0) / (x1 - x0) * (W - L - R);
  const py = (y) => T + (y1 - y) / (y1 - y0) * (H - T - B);
  for (const v of ticks(y0, y1, 5)) {
    s.append(svg("line", { class: v === 0 ? "axis zero" : "grid", x1: L, x2: W - R, y1: py(v), y2: py(v) }));
    s.append(svg("text", { x: L - 6, y: py(v) + 4, "text-anchor": "end" }, fmt(v, Math.abs(y1 - y0) < 5 ? 1 : 0)));
  }
  for (const v of ticks(x0, x1, 6)) {
    s.append(svg("line", { class: "tick", x1: px(v), x2: px(v), y1: H - B, y2: H - B + 4 }));
    s.append(svg("text", { x: px(v), y: H - B + 16, "text-anchor": "middle" }, Math.round(v)));
  }
  s.append(svg("line", { class: "axis", x1: L, x2: L, y1: T, y2: H - B }));
  s.append(svg("line", { class: "axis", x1: L, x2: W - R, y1: H - B, y2: H - B }));
  s.append(svg("text", { x: W - R, y: H - 2, "text-anchor": "end" }, "games"));
  for (const [i, b] of (bounds || []).entries()) {
    s.append(svg("line", { class: "bound" + (i === 1 ? " up" : ""), x1: L, x2: W - R, y1: py(b), y2: py(b) }));
    s.append(svg("text", { class: "bound-label", x: W - R - 4, y: py(b) + (i === 1 ? -4 : 12), "text-anchor": "end" },
      `${i === 1 ? "H1" : "H0"} ${fmt(b, 2)}`));
  }
  if (points.some((p) => p.lo !== undefined)) {
    const top = points.map((p) => `${px(p.x)},${py(p.hi)}`);
    const bottom = points.slice().reverse().map((p) => `${px(p.x)},${py(p.lo)}`);
    s.append(svg("polygon", { class: "band", points: top.concat(bottom).join(" ") }));
  }
  s.append(svg("polyline", { class: "line", points: points.map((p) => `${px(p.x)},${py(p.y)}`).join(" ") }));
  // The value at the pointer: the nearest point, marked and written out.
  const dot = svg("circle", { class: "dot", r: 4, cx: -10, cy: -10 });
  const label = svg("text", { class: "readout", x: W - R, y: 16, "text-anchor": "end" });
  s.append(dot, label);
  s.addEventListener("pointermove", (e) => {
    const box = s.getBoundingClientRect();
    const x = x0 + ((e.clientX - box.left) / box.width * W - L) / (W - L - R) * (x1 - x0);
    const p = points.reduce((a, b) => Math.abs(b.x - x) < Math.abs(a.x - x) ? b : a);
    dot.setAttribute("cx", px(p.x));
    dot.setAttribute("cy", py(p.y));
    label.textContent = `${p.x} games: ${unit || ""}${fmt(p.y, 2)}` +
      (p.lo !== undefined ? ` [${fmt(p.lo, 1)}, ${fmt(p.hi, 1)}]` : "");
  });
  return s;
}

// ---- what was tested ---------------------------------------------------------------------------

function engineSource(spec, reported) {
  if (spec.builtin) return "builtin (arbiter uci)";
  if (spec.sha256) return `upload sha256 ${spec.sha256.slice(0, 16)}…`;
  const tree = spec.sourceTree || spec.source_tree;
  if (tree)
    return `source ${tree.origin || ""}${tree.revision ? ` at ${tree.revision.slice(0, 12)}` : ""}, archive ${tree.sha256.slice(0, 16)}…, ` +
      `build '${tree.build || "make"}'` + (reported && reported.sha256 ? ` (built sha256 ${reported.sha256.slice(0, 12)}…)` : "");
  if (spec.path) return `path ${spec.path}` + (reported && reported.sha256 ? ` (sha256 ${reported.sha256.slice(0, 12)}…)` : "");
  return "";
}
// Engines with their source, every option (a value that differs from the other engine's, where
// both run the same binary, is marked), args and TC.
function enginesTable(run, specs, tc) {
  const reported = Object.fromEntries((run.engines || []).map((e) => [e.name, e]));
  const tree = (e) => e.sourceTree || e.source_tree;
  const same = (a, b) => a && b && ((a.builtin && b.builtin) || (a.sha256 && a.sha256 === b.sha256) ||
                                    (tree(a) && tree(b) && tree(a).sha256 === tree(b).sha256) ||
                                    (a.path && a.path === b.path));
  const rows = specs.map((e, i) => {
    const other = run.match ? specs[1 - i] : specs[0];
    const opts = Object.entries(e.options || {}).sort();
    const optCells = opts.length ? opts.map(([k, v]) => {
      const differs = same(e, other) && other !== e && (other.options || {})[k] !== v;
      return el("code", { class: differs ? "diff" : "" }, `${k}=${v}`);
    }).reduce((a, c) => a.concat(a.length ? [" "] : [], c), []) : [el("span", { class: "muted" }, "defaults")];
    const role = run.match ? (i === 0 ? "new" : "base") : i === 0 ? "anchor" : "";
    return el("tr", { "data-engine": e.name },
      el("td", {}, el("b", {}, e.name), role ? el("span", { class: "muted" }, ` (${role})`) : ""),
      el("td", {}, engineSource(e, reported[e.name])),
      el("td", { class: "options" }, optCells, (e.args || []).length ? el("div", { class: "muted" }, "args: " + e.args.join(" ")) : ""),
      el("td", {}, e.tc || tc));
  });
  return table(["Engine", "Source", "Options", "Time control"], rows, { id: "engines-tested" });
}
function bookText(book) {
  if (!book || !num(book.positions)) return "start position";
  const kib = num(book.size_bytes) / 1024;
  return `${book.name || "(unnamed)"} · ${fmtInt(book.positions)} positions · ` +
    (kib >= 1024 ? `${(kib / 1024).toFixed(1)} MiB` : `${kib.toFixed(1)} KiB`);
}
const sprtModels = { SPRT_MODEL_LOGISTIC: ["logistic", "Elo"], SPRT_MODEL_NORMALIZED: ["normalized", "nElo"],
                     SPRT_MODEL_BAYESELO: ["BayesElo", "BayesElo"] };
function sprtText(sprt) {
  const [model, unit] = sprtModels[sprt.model] || sprtModels.SPRT_MODEL_NORMALIZED;
  return `H0: ${fmt(sprt.elo0, 1)} ${unit}, H1: ${fmt(sprt.elo1, 1)} ${unit} (${model} model), ` +
    `α=${sprt.alpha} β=${sprt.beta}`;
}

// ---- sections ---------------------------------------------------------------------------------

function matchSection(run, workers) {
  const m = run.match, req = m.request || {}, s = req.settings || {}, r = m.result || {}, st = r.stats || {};
  const wdl = st.wdl || {}, penta = st.penta || {}, sprt = st.sprt;
  const hasSprt = sprt && num(sprt.upper_bound) > 0;
  const games = num(r.games);
  const [newName, baseName] = (s.engines || []).map((e) => e.name);
  // Every chart starts at no games: LLR 0, Elo 0.
  const history = [{ games: 0, llr: 0, elo: 0, elo_error95: 0 }].concat(m.history || []);
  const elo = (games > 0 ? plusMinus(st.elo, st.elo_error95) : "—");
  const parts = [
    el("h2", {}, "What was tested"),
    enginesTable(run, s.engines || [], s.tc),
    kv([["Book", bookText(m.book), "book"],
        ["Games planned", num(req.games) ? req.games : hasSprt ? "until the SPRT decides" : "—"],
        hasSprt ? ["SPRT", sprtText(sprt), "sprt"] : null]),
    el("h2", {}, `Score of ${newName} (new) against ${baseName} (base)`),
    kv([[`W / D / L (${newName}'s side)`, `${wdl.wins || 0} / ${wdl.draws || 0} / ${wdl.losses || 0}`, "wdl"],
        ["Games", games, "games"],
        ["Elo", elo, "elo"],
        ["nElo", games > 0 ? plusMinus(st.nelo, st.nelo_error95) : "—"],
        ["Draw ratio (draws / games)", games > 0 ? pct(num(wdl.draws) / games) : "—", "draw-ratio"],
        ["Pair draw ratio (1–1 pairs / pairs)", num(r.pairs) > 0 ? pct(num(st.draw_ratio)) : "—", "pair-draw-ratio"],
        ["LOS", games > 0 ? pct(num(st.los)) : "—"],
        hasSprt ? ["LLR", `${fmt(sprt.llr, 2)} [${fmt(sprt.lower_bound, 2)}, ${fmt(sprt.upper_bound, 2)}]`, "llr"] : null,
        ["Games/min", num(r.games_per_minute) > 0 ? fmt(r.games_per_minute) : "—", "games-per-minute"]]),
    el("div", { class: "charts" },
      hasSprt ? chart("llr-chart", "LLR", history.map((p) => ({ x: num(p.games), y: num(p.llr) })),
                      [num(sprt.lower_bound), num(sprt.upper_bound)], "LLR ") : null,
      chart("elo-chart", "Elo ± 95%", history.map((p) => ({ x: num(p.games), y: num(p.elo),
        lo: num(p.elo) - num(p.elo_error95), hi: num(p.elo) + num(p.elo_error95) })), null, "Elo ")),
    el("h2", {}, `Pairs (pentanomial, ${newName}'s side)`),
    table(["0–2#", "½–1½#", "1–1#", "1½–½#", "2–0#"], [el("tr", { id: "penta" },
      [penta.ll, penta.ld, penta.d, penta.wd, penta.ww].map((v) => el("td", { class: "num" }, v || 0)))]),
  ];
  const terms = Object.entries(r.terminations || {});
  if (terms.length) parts.push(el("h2", {}, "Terminations"),
    table(["How", "Games#"], terms.map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", { class: "num" }, v)))));
  const faults = r.faults || [];
  if (faults.length) parts.push(el("h2", {}, "Faults per engine"),
    table(["Engine", "Time losses#", "Disconnects#", "Stalls#", "Illegal moves#"], faults.map((f, i) =>
      el("tr", {}, el("td", {}, f.name || (r.engines || [])[i] || i),
        [f.time_losses, f.disconnects, f.stalls, f.illegal_moves].map((v) => el("td", { class: "num" }, v || 0))))));
  const playing = workers.filter((w) => (w.leased_runs || []).map(String).includes(String(run.id)));
  if (!terminal(run.state)) parts.push(el("h2", {}, "Workers playing"), el("p", { id: "workers-playing" },
    playing.length ? playing.map((w) => w.name).join(", ") : "none now"));
  parts.push(el("p", {}, el("a", { id: "pgn", href: `/api/v1/runs/${run.id}/pgn`, download: `run-${run.id}.pgn` },
    "Download PGN")));
  return parts;
}

function perftSection(run) {
  const p = run.perft, res = p.result || {}, req = p.request.perft || {};
  const nodes = perftNodes(res), secs = num(res.seconds);
  const divide = (res.divide || []).map((d) => el("tr", { "data-move": d.move },
    el("td", {}, d.move), el("td", { class: "num" }, fmtInt((BigInt(d.nodes_high || 0) << 64n) + BigInt(d.nodes || 0)))));
  const parts = [
    el("h2", {}, `perft(${req.depth})`),
    el("p", { class: "muted" }, req.fen),
    kv([["Nodes", fmtInt(nodes), "perft-nodes"],
        ["Mnodes/s", secs > 0 ? fmt(Number(nodes) / secs / 1e6, 1) : "—", "perft-speed"],
        ["Jobs", `${num(run.jobs && run.jobs.done)} / ${num(run.jobs && run.jobs.total)}`, "perft-jobs"],
        ["Split depth", p.split_depth], ["Positions", `${fmtInt(p.split_positions)} (${fmtInt(p.unique_positions)} unique)`],
        ["Verified", p.request.verify ? "yes (two workers per job)" : "no", "perft-verify"]]),
    el("h2", {}, "Divide"),
    table(["Move", "Nodes#"], divide, { id: "divide" }),
  ];
  const dis = p.disagreements || [];
  if (dis.length) parts.push(el("h2", {}, "Disagreements between workers"),
    table(["Job", "Worker", "Its nodes#", "Majority's nodes#"], dis.map((d) => el("tr", {},
      el("td", {}, d.job_id || ""), el("td", {}, d.worker_name || d.worker_id),
      el("td", { class: "num" }, fmtInt(d.worker_nodes)), el("td", { class: "num" }, fmtInt(d.majority_nodes))))));
  return parts;
}

function movegenSection(run) {
  const m = run.movegen_check, r = m.result || {}, req = m.request || {};
  const failures = (r.failures || []).map((f, i) => el("tr", { "data-failure": i },
    el("td", {}, el("code", {}, f.fen), el("div", { class: "muted" },
      `from ${f.root_source || f.root_fen} at depth ${f.root_depth}`,
      (f.path || []).length ? ` via ${f.path.join(" ")}` : "")),
    el("td", { class: "num" }, f.depth),
    el("td", { class: "missing" }, (f.missing_moves || []).join(" ")),
    el("td", { class: "extra" }, (f.extra_moves || []).join(" ")),
    el("td", {}, (f.wrong_count_moves || []).join(" ")),
    el("td", { class: "num" }, f.positions || 1)));
  const faults = (r.faults || []).map((f) => el("tr", {}, el("td", {}, el("code", {}, f.fen)),
    el("td", { class: "num" }, f.depth), el("td", {}, f.message)));
  const engine = req.engine || {};
  return [
    el("h2", {}, "Move generator check"),
    kv([["Engine", `${r.engine || engine.name || ""} · ${engineSource(engine)}`, "movegen-engine"],
        ["Dialect", (r.dialect && r.dialect.name) || (req.dialect && req.dialect.name) || "go-perft"],
        ["Positions checked", `${r.positions_checked || 0} / ${r.positions || 0}`, "movegen-checked"],
        ["Clean", r.positions_clean || 0, "movegen-clean"],
        ["Failing", num((run.outcome || {}).failing), "movegen-failing"],
        ["Faults", r.positions_faulted || 0],
        ["Nodes compared", fmtInt(r.nodes_compared)],
        ["Engine perft", num(r.engine_nodes_per_second) > 0 ? `${fmt(num(r.engine_nodes_per_second) / 1e6)} Mnodes/s` : "—"],
        ["arbiter perft", num(r.arbiter_nodes_per_second) > 0 ? `${fmt(num(r.arbiter_nodes_per_second) / 1e6)} Mnodes/s` : "—"]]),
    el("h2", {}, "Smallest failing examples"),
    failures.length ? table(["Position", "Depth#", "Missing", "Extra", "Wrong counts", "Positions#"],
                            failures, { id: "movegen-failures" })
                    : el("p", { class: "muted" }, "None."),
    faults.length ? el("h2", {}, "Engine faults") : null,
    faults.length ? table(["Position", "Depth#", "What happened"], faults) : null,
  ];
}

function tournamentSection(run) {
  const t = run.tournament, req = t.request || {}, s = req.settings || {}, names = (s.engines || []).map((e) => e.name);
  const standings = (t.standings || []).map((s, i) => el("tr", {}, el("td", {}, i + 1), el("td", {}, s.name),
    el("td", { class: "num" }, s.name === names[0] ? "0 (anchor)" : plusMinus(s.elo, s.elo_error95)),
    el("td", { class: "num" }, s.games || 0),
    el("td", { class: "num" }, fmt(s.points, 1)), el("td", { class: "num" }, pct(num(s.score)))));
  const cell = {};
  for (const p of t.pairings || []) {
    const [a, b] = p.engines || [];
    const w = (p.stats && p.stats.wdl) || {};
    cell[`${a}|${b}`] = `${w.wins || 0}-${w.draws || 0}-${w.losses || 0}`;
    cell[`${b}|${a}`] = `${w.losses || 0}-${w.draws || 0}-${w.wins || 0}`;
  }
  const cross = names.map((a) => el("tr", {}, el("th", {}, a),
    names.map((b) => el("td", { class: "num" }, a === b ? "—" : cell[`${a}|${b}`] || ""))));
  const per = (t.pairings || []).map((p) => el("tr", {}, el("td", {}, (p.engines || []).join(" vs ")),
    el("td", { class: "num" }, p.games || 0)));
  return [el("h2", {}, "What was tested"), enginesTable(run, s.engines || [], s.tc),
    kv([["Book", bookText(t.book), "book"], ["Format", req.gauntlet ? `gauntlet of ${names[0]}` : "round robin"],
        ["Games per pairing", req.games_per_pairing]]),
    el("h2", {}, `Standings (Elo relative to ${names[0]})`),
    table(["#", "Engine", "Elo#", "Games#", "Points#", "Score#"], standings, { id: "standings" }),
    el("h2", {}, "Cross-table (row's wins-draws-losses)"), table([""].concat(names), cross, { id: "crosstable" }),
    el("h2", {}, "Pairings"), table(["Pairing", "Games#"], per),
    el("p", {}, el("a", { href: `/api/v1/runs/${run.id}/pgn`, download: `run-${run.id}.pgn` }, "Download PGN"))];
}

// ---- the page ----------------------------------------------------------------------------------

async function renderRun(run) {
  const workers = run.match && !terminal(run.state)
    ? ((await api("GET", "workers").catch(() => ({}))).workers || []) : [];
  const mine = run.owner === session.name || isAdmin();
  const canCancel = canSubmit() && mine && !terminal(run.state);
  const sched = run.scheduling || {};
  const end = run.finished_unix || (run.started_unix ? Date.now() / 1000 : 0);
  const eta = !terminal(run.state) && num(run.eta_seconds) > 0 ? duration(run.eta_seconds) : "";
  const body = [
    el("h1", {}, `Run ${run.id} · ${shortKind(run.kind).toLowerCase().replace("_", "-")}`),
    el("p", { class: "verdict-line verdict " + verdictOf(run), id: "run-verdict-line" },
      verdictWord(run), (run.outcome || {}).summary && run.outcome.summary.includes(":")
        ? el("span", { class: "muted" }, " — ", run.outcome.summary.replace(/^[^:]*:\s*/, "")) : null),
    kv([["Verdict", verdictCell(run), "run-verdict"], ["State", stateCell(run.state), "run-state"],
        ["Owner", run.owner, "run-owner"],
        ["Progress", `${Math.round(num(run.progress) * 100)} %`, "run-progress"],
        ["Jobs", `${num(run.jobs && run.jobs.done)} done of ${num(run.jobs && run.jobs.total)}`],
        ["Created", clock(run.created_unix), "run-created"], ["Started", clock(run.started_unix), "run-started"],
        ["Ended", clock(run.finished_unix), "run-ended"],
        ["Duration", run.started_unix ? duration(end - run.started_unix) || "0 s" : "—", "run-duration"],
        ["ETA", eta || "—", "run-eta"],
        ["Priority / throughput", `${num(sched.priority)} / ${num(sched.throughput) || 100} %`]]),
    run.message ? el("p", { id: "run-message" }, run.message) : null,
    run.waiting ? el("p", { class: "muted", id: "run-waiting" }, "Waiting: ", run.waiting) : null,
    el("div", { class: "actions" },
      canCancel ? el("button", { id: "cancel", class: "danger needs-live", onclick: async (e) => {
        if (!confirm(`Cancel run ${run.id}? Its queued and leased jobs stop; this cannot be undone.`)) return;
        e.target.disabled = true;
        try { await api("POST", `runs/${run.id}/cancel`, {}); } catch (err) { alert(err.message); }
      } }, "Cancel run") : null,
      canSubmit() && (run.match || run.tournament || run.perft)
        ? el("a", { class: "button", id: "clone", href: `#/submit/clone/${run.id}` }, "Clone and edit") : null),
  ];
  if (run.match) body.push(...matchSection(run, workers));
  if (run.perft) body.push(...perftSection(run));
  if (run.tournament) body.push(...tournamentSection(run));
  if (run.movegen_check) body.push(...movegenSection(run));
  const focus = document.activeElement && document.activeElement.id;
  setView(...body.filter(Boolean));
  view.dataset.version = String(num(view.dataset.version) + 1);
  if (focus && document.getElementById(focus)) document.getElementById(focus).focus();
}

async function showRun(id) {
  await renderRun(await api("GET", `runs/${id}`));
  const source = new EventSource(`/api/v1/runs/${id}/events`);
  let busy = false, pending = null, ended = false;
  source.addEventListener("run", async (e) => {
    connection.ok();
    pending = JSON.parse(e.data);
    if (terminal(pending.state)) { ended = true; source.close(); }
    if (busy) return;
    busy = true;
    while (pending) { const r = pending; pending = null; await renderRun(r); }
    busy = false;
  });
  // The stream dropped (coordinator gone, or restarting): say so; EventSource retries by itself.
  source.addEventListener("error", () => { if (!ended) connection.failed(); });
  cleanup.push(() => source.close());
}
