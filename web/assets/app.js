// arbiter's dashboard: a page per view (#/runs, #/runs/ID, #/workers, #/engines, #/submit/KIND),
// each drawn from the JSON API under /api/v1/ (the gRPC RunService as protobuf JSON). A run's
// page follows the run through Server-Sent Events. No framework, no outside files.
"use strict";

const view = document.getElementById("view");
let session = { name: "", role: "viewer", csrf: "" };
let cleanup = [];  // what the current view must stop (event streams, timers) when left

// ---- helpers ---------------------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}
const svgNs = "http://www.w3.org/2000/svg";
function svg(tag, attrs) {
  const e = document.createElementNS(svgNs, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

class ApiError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

async function api(method, path, body) {
  const opts = { method, headers: {}, credentials: "same-origin" };
  if (method !== "GET") opts.headers["X-CSRF-Token"] = session.csrf;
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const r = await fetch("/api/v1/" + path, opts);
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
  if (r.status === 401) { location.href = "/signin"; throw new ApiError(401, "UNAUTHENTICATED", "signed out"); }
  if (!r.ok) throw new ApiError(r.status, data && data.code || "", data && data.message || text);
  return data;
}

const roleRank = { viewer: 1, submitter: 2, admin: 3 };
const canSubmit = () => (roleRank[session.role] || 0) >= 2;
const isAdmin = () => session.role === "admin";
const num = (x) => Number(x || 0);
const fmt = (x, d = 1) => Number.isFinite(num(x)) ? num(x).toFixed(d) : String(x);
const fmtInt = (x) => BigInt(x || 0).toLocaleString("en-US");
const shortState = (s) => String(s || "").replace(/^RUN_STATE_/, "");
const shortKind = (s) => String(s || "").replace(/^RUN_KIND_/, "");
const terminal = (s) => ["SUCCEEDED", "FAILED", "CANCELLED"].includes(shortState(s));
function ago(unix) {
  if (!unix) return "";
  const s = Math.max(0, Date.now() / 1000 - unix);
  if (s < 90) return `${Math.round(s)} s ago`;
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  if (s < 172800) return `${Math.round(s / 3600)} h ago`;
  return new Date(unix * 1000).toISOString().slice(0, 10);
}
function duration(s) {
  s = Math.round(num(s));
  if (s <= 0) return "";
  if (s < 90) return `${s} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}
// A perft total: nodes_high * 2^64 + nodes, exact.
const perftNodes = (r) => (BigInt(r.nodes_high || 0) << 64n) + BigInt(r.nodes || 0);
function bar(fraction, cls, label) {
  const b = el("div", { class: "bar " + (cls || ""), role: "meter", "aria-label": label || "",
                        "aria-valuemin": 0, "aria-valuemax": 1, "aria-valuenow": fraction });
  const s = el("span");
  s.style.width = `${Math.max(0, Math.min(1, fraction)) * 100}%`;
  b.append(s);
  return b;
}
// The LLR between its bounds, as a bar centred at 0.
function llrBar(sprt) {
  const llr = num(sprt.llr), lo = num(sprt.lower_bound), hi = num(sprt.upper_bound);
  const b = el("div", { class: "bar llr " + (llr >= 0 ? "pos" : "neg"), role: "meter",
                        "aria-label": `LLR ${fmt(llr, 2)} of [${fmt(lo, 2)}, ${fmt(hi, 2)}]`,
                        "aria-valuemin": lo, "aria-valuemax": hi, "aria-valuenow": llr });
  const s = el("span");
  const f = llr >= 0 ? Math.min(1, llr / hi) : Math.min(1, llr / lo);
  s.style.left = llr >= 0 ? "50%" : `${50 - f * 50}%`;
  s.style.width = `${f * 50}%`;
  b.append(s);
  return b;
}
function stateCell(state) {
  const s = shortState(state);
  return el("span", { class: "state " + s }, s);
}
function table(headers, rows, attrs) {
  return el("div", { class: "scroll" }, el("table", attrs || {},
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", { class: h.endsWith("#") ? "num" : "" },
      h.replace(/#$/, ""))))),
    el("tbody", {}, rows)));
}
function kv(items) {
  return el("div", { class: "grid" }, items.filter(Boolean).map(([k, v, id]) =>
    el("div", {}, el("b", {}, k), el("span", { id: id }, v))));
}
// Replaces the view's content (null and undefined children are left out).
function setView(...nodes) {
  view.replaceChildren(...nodes.filter((n) => n !== null && n !== undefined));
}
function showError(e) {
  setView(el("h1", {}, "Error"), el("p", { class: "error", role: "alert" }, e.message));
}

// ---- runs list -------------------------------------------------------------------------------

function runSummary(run) {
  if (run.match) {
    const r = run.match.result || {}, st = r.stats || {}, wdl = st.wdl || {};
    const parts = [el("span", { class: "wdl" }, `${wdl.wins || 0}-${wdl.draws || 0}-${wdl.losses || 0}`),
      ` Elo ${fmt(st.elo)} ± ${fmt(st.elo_error95)}`];
    if (st.sprt && num(st.sprt.upper_bound) > 0) parts.push(" LLR ", fmt(st.sprt.llr, 2), llrBar(st.sprt));
    return parts;
  }
  if (run.perft) {
    const res = run.perft.result || {};
    const secs = num(res.seconds);
    const nodes = perftNodes(res);
    return [`perft(${run.perft.request.perft.depth}) ${fmtInt(nodes)} nodes`,
      secs > 0 ? ` · ${fmt(Number(nodes) / secs / 1e6, 1)} Mnodes/s` : ""];
  }
  if (run.movegen_check) {
    const r = run.movegen_check.result || {};
    return `${r.positions_checked || 0}/${r.positions || 0} positions, ${(r.failures || []).length} failing`;
  }
  if (run.tournament) {
    const t = run.tournament;
    const top = (t.standings || [])[0];
    return [`${(t.request.engines || []).length} engines, ${t.games || 0} games`,
      top ? ` · leader ${top.name} ${fmt(top.elo)} ± ${fmt(top.elo_error95)}` : ""];
  }
  return "";
}

async function showRuns(params) {
  const q = new URLSearchParams(params);
  const state = q.get("state") || "", kind = q.get("kind") || "", owner = q.get("owner") || "";
  const pageToken = q.get("page_token") || "";
  const search = new URLSearchParams({ page_size: "50" });
  if (state) search.set("state", state);
  if (kind) search.set("kind", kind);
  if (owner) search.set("owner", owner);
  if (pageToken) search.set("page_token", pageToken);
  const data = await api("GET", "runs?" + search);
  const go = (changes) => {
    const n = new URLSearchParams({ state, kind, owner, ...changes });
    for (const [k, v] of [...n]) if (!v) n.delete(k);
    location.hash = "#/runs?" + n;
  };
  const select = (id, label, value, options, key) => el("label", {}, label,
    el("select", { id, onchange: (e) => go({ [key]: e.target.value, page_token: "" }) },
      options.map((o) => el("option", { value: o, selected: o === value }, o || "any"))));
  const rows = (data.runs || []).map((run) => el("tr", { "data-run": run.id },
    el("td", {}, el("a", { href: `#/runs/${run.id}` }, run.id)),
    el("td", {}, shortKind(run.kind)),
    el("td", { class: "hide-small" }, run.owner),
    el("td", {}, stateCell(run.state)),
    el("td", {}, bar(num(run.progress), "", `${Math.round(num(run.progress) * 100)}% done`)),
    el("td", {}, runSummary(run)),
    el("td", { class: "hide-small muted" }, ago(run.created_unix))));
  setView(
    el("h1", {}, "Runs"),
    el("div", { class: "filters" },
      select("filter-state", "State", state, ["", "QUEUED", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"], "state"),
      select("filter-kind", "Kind", kind, ["", "PERFT", "MATCH", "TOURNAMENT", "MOVEGEN_CHECK"], "kind"),
      el("label", {}, "Owner", el("input", { id: "filter-owner", value: owner, size: 12,
        onchange: (e) => go({ owner: e.target.value.trim(), page_token: "" }) }))),
    table(["Run", "Kind", "Owner", "State", "Progress", "Result", "Created"], rows, { id: "runs" }),
    el("div", { class: "pager" },
      pageToken ? el("a", { href: "#/runs", id: "first-page" }, "First page") : null,
      data.next_page_token ? el("a", { href: "#", id: "next-page",
        onclick: (e) => { e.preventDefault(); go({ page_token: data.next_page_token }); } }, "Next page") : null,
      rows.length === 0 ? el("p", { class: "muted" }, "No runs.") : null));
  const timer = setInterval(() => { if (!document.hidden) route(); }, 5000);
  cleanup.push(() => clearInterval(timer));
}

// ---- one run ---------------------------------------------------------------------------------

// A line chart of points [{x, y, lo?, hi?}] with optional horizontal bounds.
function chart(id, title, points, bounds) {
  const W = 600, H = 220, L = 44, R = 10, T = 22, B = 24;
  const s = svg("svg", { class: "chart", id, viewBox: `0 0 ${W} ${H}`, role: "img",
                         "aria-label": title });
  const t = svg("text", { x: L, y: 14 });
  t.textContent = title;
  s.append(t);
  if (points.length === 0) return s;
  const xs = points.map((p) => p.x);
  let ys = points.flatMap((p) => [p.y, p.lo ?? p.y, p.hi ?? p.y]).concat(bounds || []);
  ys = ys.filter(Number.isFinite);
  let y0 = Math.min(...ys, 0), y1 = Math.max(...ys, 0);
  if (y1 - y0 < 1e-9) { y0 -= 1; y1 += 1; }
  const x0 = Math.min(...xs, 0), x1 = Math.max(...xs, 1);
  const px = (x) => L + (x - x0) / (x1 - x0 || 1) * (W - L - R);
  const py = (y) => T + (y1 - y) / (y1 - y0) * (H - T - B);
  s.append(svg("line", { class: "axis", x1: L, x2: W - R, y1: py(0), y2: py(0) }));
  for (const [v, label] of [[y0, fmt(y0, 1)], [y1, fmt(y1, 1)]]) {
    const tx = svg("text", { x: 2, y: py(v) + 4 }); tx.textContent = label; s.append(tx);
  }
  const xl = svg("text", { x: W - R - 80, y: H - 6 }); xl.textContent = `${x1} games`; s.append(xl);
  for (const [i, b] of (bounds || []).entries())
    s.append(svg("line", { class: "bound" + (i === 1 ? " up" : ""), x1: L, x2: W - R, y1: py(b), y2: py(b) }));
  if (points.some((p) => p.lo !== undefined)) {
    const top = points.map((p) => `${px(p.x)},${py(p.hi)}`);
    const bottom = points.slice().reverse().map((p) => `${px(p.x)},${py(p.lo)}`);
    s.append(svg("polygon", { class: "band", points: top.concat(bottom).join(" ") }));
  }
  s.append(svg("polyline", { class: "line", points: points.map((p) => `${px(p.x)},${py(p.y)}`).join(" ") }));
  return s;
}

function matchSection(run, workers) {
  const m = run.match, req = m.request || {}, r = m.result || {}, st = r.stats || {};
  const wdl = st.wdl || {}, penta = st.penta || {}, sprt = st.sprt;
  const hasSprt = sprt && num(sprt.upper_bound) > 0;
  const engines = (req.engines || []).map((e) => el("li", {}, e.name, " ",
    el("span", { class: "muted" }, e.builtin ? "builtin" : e.sha256 ? `upload ${e.sha256.slice(0, 12)}` : e.path || "")));
  // Every chart starts at no games: LLR 0, Elo 0.
  const history = [{ games: 0, llr: 0, elo: 0, elo_error95: 0 }].concat(m.history || []);
  const parts = [
    el("h2", {}, "Match"),
    el("ul", {}, engines),
    kv([["Time control", req.tc], ["Games planned", num(req.games) ? req.games : hasSprt ? "until SPRT decides" : "-"],
        ["Book", req.openings ? `${req.openings.split("\n").filter((l) => l.trim()).length} lines` : "start position"],
        hasSprt ? ["SPRT", `[${fmt(sprt.elo0, 1)}, ${fmt(sprt.elo1, 1)}] α=${sprt.alpha} β=${sprt.beta}`] : null]),
    el("h2", {}, "Score"),
    kv([["W / D / L", `${wdl.wins || 0} / ${wdl.draws || 0} / ${wdl.losses || 0}`, "wdl"],
        ["Games", r.games || 0, "games"],
        ["Elo", `${fmt(st.elo)} ± ${fmt(st.elo_error95)}`, "elo"],
        ["nElo", `${fmt(st.nelo)} ± ${fmt(st.nelo_error95)}`],
        ["Draw ratio", `${fmt(num(st.draw_ratio) * 100)} %`, "draw-ratio"],
        ["LOS", `${fmt(num(st.los) * 100)} %`],
        hasSprt ? ["LLR", `${fmt(sprt.llr, 2)} [${fmt(sprt.lower_bound, 2)}, ${fmt(sprt.upper_bound, 2)}]`, "llr"] : null,
        hasSprt ? ["Decision", String(sprt.decision || "").replace(/^SPRT_DECISION_/, ""), "decision"] : null,
        ["Games/min", fmt(r.games_per_minute), "games-per-minute"]]),
    el("div", { class: "charts" },
      hasSprt ? chart("llr-chart", "LLR", history.map((p) => ({ x: num(p.games), y: num(p.llr) })),
                      [num(sprt.lower_bound), num(sprt.upper_bound)]) : null,
      chart("elo-chart", "Elo ± 95%", history.map((p) => ({ x: num(p.games), y: num(p.elo),
        lo: num(p.elo) - num(p.elo_error95), hi: num(p.elo) + num(p.elo_error95) })))),
    el("h2", {}, "Pairs (pentanomial)"),
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
  parts.push(el("h2", {}, "Workers playing"), el("p", { id: "workers-playing" },
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
        ["Mnodes/s", secs > 0 ? fmt(Number(nodes) / secs / 1e6, 1) : "-", "perft-speed"],
        ["Jobs", `${num(run.jobs && run.jobs.done)} / ${num(run.jobs && run.jobs.total)}`, "perft-jobs"],
        ["ETA", terminal(run.state) ? "-" : duration(run.eta_seconds) || "-"],
        ["Split depth", p.split_depth], ["Positions", `${fmtInt(p.split_positions)} (${fmtInt(p.unique_positions)} unique)`],
        ["Verified", p.request.verify ? "yes (two workers per job)" : "no"]]),
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
  return [
    el("h2", {}, "Move generator check"),
    kv([["Engine", r.engine || (req.engine && req.engine.name) || ""],
        ["Dialect", (r.dialect && r.dialect.name) || (req.dialect && req.dialect.name) || "go-perft"],
        ["Positions checked", `${r.positions_checked || 0} / ${r.positions || 0}`, "movegen-checked"],
        ["Clean", r.positions_clean || 0, "movegen-clean"],
        ["Failing", (r.failures || []).length, "movegen-failing"],
        ["Faults", r.positions_faulted || 0],
        ["Nodes compared", fmtInt(r.nodes_compared)],
        ["Engine perft", `${fmt(num(r.engine_nodes_per_second) / 1e6)} Mnodes/s`],
        ["arbiter perft", `${fmt(num(r.arbiter_nodes_per_second) / 1e6)} Mnodes/s`]]),
    el("h2", {}, "Smallest failing examples"),
    failures.length ? table(["Position", "Depth#", "Missing", "Extra", "Wrong counts", "Positions#"],
                            failures, { id: "movegen-failures" })
                    : el("p", { class: "muted" }, "None."),
    faults.length ? el("h2", {}, "Engine faults") : null,
    faults.length ? table(["Position", "Depth#", "What happened"], faults) : null,
  ];
}

function tournamentSection(run) {
  const t = run.tournament, names = (t.request.engines || []).map((e) => e.name);
  const standings = (t.standings || []).map((s, i) => el("tr", {}, el("td", {}, i + 1), el("td", {}, s.name),
    el("td", { class: "num" }, `${fmt(s.elo)} ± ${fmt(s.elo_error95)}`), el("td", { class: "num" }, s.games || 0),
    el("td", { class: "num" }, fmt(s.points, 1)), el("td", { class: "num" }, `${fmt(num(s.score) * 100)} %`)));
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
  return [el("h2", {}, "Standings"),
    table(["#", "Engine", "Elo#", "Games#", "Points#", "Score#"], standings, { id: "standings" }),
    el("h2", {}, "Cross-table"), table([""].concat(names), cross, { id: "crosstable" }),
    el("h2", {}, "Pairings"), table(["Pairing", "Games#"], per),
    el("p", {}, el("a", { href: `/api/v1/runs/${run.id}/pgn`, download: `run-${run.id}.pgn` }, "Download PGN"))];
}

async function renderRun(run) {
  const workers = run.match && !terminal(run.state)
    ? ((await api("GET", "workers").catch(() => ({}))).workers || []) : [];
  const mine = run.owner === session.name || isAdmin();
  const canCancel = canSubmit() && mine && !terminal(run.state);
  const body = [
    el("h1", {}, `Run ${run.id} · ${shortKind(run.kind).toLowerCase()}`),
    kv([["State", stateCell(run.state), "run-state"], ["Owner", run.owner, "run-owner"],
        ["Progress", `${Math.round(num(run.progress) * 100)} %`, "run-progress"],
        ["Jobs", `${num(run.jobs && run.jobs.done)} done of ${num(run.jobs && run.jobs.total)}`],
        ["Created", ago(run.created_unix)],
        run.eta_seconds && !terminal(run.state) ? ["ETA", duration(run.eta_seconds)] : null]),
    run.message ? el("p", { id: "run-message" }, run.message) : null,
    run.waiting ? el("p", { class: "muted", id: "run-waiting" }, "Waiting: ", run.waiting) : null,
    canCancel ? el("div", { class: "actions" }, el("button", { id: "cancel", class: "danger",
      onclick: async (e) => {
        e.target.disabled = true;
        try { await api("POST", `runs/${run.id}/cancel`, {}); } catch (err) { alert(err.message); }
      } }, "Cancel run")) : null,
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
  let busy = false, pending = null;
  source.addEventListener("run", async (e) => {
    pending = JSON.parse(e.data);
    if (busy) return;
    busy = true;
    while (pending) { const r = pending; pending = null; await renderRun(r); }
    busy = false;
    if (pending === null && terminal(JSON.parse(e.data).state)) source.close();
  });
  source.addEventListener("error", () => { if (source.readyState === EventSource.CLOSED) source.close(); });
  cleanup.push(() => source.close());
}

// ---- workers and engines ---------------------------------------------------------------------

const cpuLevels = ["any", "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"];

async function showWorkers() {
  const data = await api("GET", "workers?all=1");
  const rows = (data.workers || []).map((w) => el("tr", { "data-worker": w.name },
    el("td", {}, w.name, w.draining ? el("span", { class: "muted" }, " (draining)") : ""),
    el("td", {}, w.hostname || ""), el("td", { class: "num" }, w.threads),
    el("td", {}, cpuLevels[w.cpu_level] || "", w.perft_path ? el("span", { class: "muted" }, ` (perft ${w.perft_path})`) : ""),
    el("td", {}, w.isolation || ""),
    el("td", {}, (w.leased_runs || []).map((r) => el("a", { href: `#/runs/${r}` }, `run ${r} `))),
    el("td", { class: "num" }, num(w.nodes_per_second) ? `${fmt(num(w.nodes_per_second) / 1e6)} Mnodes/s` : ""),
    el("td", { class: "num" }, num(w.games_per_minute) ? `${fmt(w.games_per_minute)} games/min` : ""),
    el("td", {}, w.connected ? `${fmt(w.last_seen_seconds_ago, 0)} s ago` : "disconnected")));
  setView(el("h1", {}, "Workers"),
    table(["Name", "Host", "Threads#", "CPU", "Isolation", "Working on", "Perft#", "Games#", "Last seen"], rows,
          { id: "workers" }),
    rows.length ? null : el("p", { class: "muted" }, "No workers."));
  const timer = setInterval(() => { if (!document.hidden) route(); }, 5000);
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
    el("p", { class: "muted" }, "Upload with ", el("code", {}, "arbiter engines upload NAME FILE"), "."),
    table(["Name", "sha256", "Size#", "Owner", "Uploaded", ""], rows, { id: "engines" }),
    rows.length ? null : el("p", { class: "muted" }, "No uploaded engines."));
}

// ---- submit ----------------------------------------------------------------------------------

function field(id, label, input, hint) {
  input.id = id;
  input.setAttribute("aria-describedby", `${id}-error`);
  return el("div", { class: "field" }, el("label", { for: id }, label), input,
    hint ? el("span", { class: "hint" }, hint) : null,
    el("span", { class: "field-error", id: `${id}-error`, role: "alert" }));
}
// Which field an API message is about (the API names the field or its subject in its message).
function fieldOf(kind, message) {
  const m = message.toLowerCase();
  const table = {
    perft: [["fen", "fen"], ["depth", "depth"], ["split", "split"]],
    match: [["sprt", "sprt"], ["elo", "sprt"], ["time control", "tc"], ["tc", "tc"], ["book", "book"],
            ["opening", "book"], ["games", "games"], ["engine", "engines"], ["sha256", "engines"]],
    tournament: [["engine", "engines"], ["time control", "tc"], ["tc", "tc"], ["games", "games"],
                 ["opening", "book"]],
  };
  for (const [word, f] of table[kind]) if (m.includes(word)) return `${kind}-${f}`;
  return `${kind}-form`;
}
async function submitForm(kind, form, request) {
  for (const e of form.querySelectorAll(".field-error")) e.textContent = "";
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  try {
    const resp = await api("POST", `runs/${kind}`, await request());
    location.hash = `#/runs/${resp.id}`;
  } catch (e) {
    const target = document.getElementById(`${fieldOf(kind, e.message)}-error`) ||
                   document.getElementById(`${kind}-form-error`);
    target.textContent = e.message;
    const input = document.getElementById(target.id.replace(/-error$/, ""));
    if (input && input.focus) input.focus();
  } finally {
    button.disabled = false;
  }
}
function engineSpec(value, name) {
  if (value === "builtin") return { name, builtin: true };
  if (/^[0-9a-f]{64}$/.test(value)) return { name, sha256: value };
  return { name, path: value };
}
async function readBook(input) {
  const f = input.files && input.files[0];
  return f ? await f.text() : "";
}

async function showSubmit(kind) {
  if (!canSubmit()) { setView(el("p", {}, "Your token may not submit runs.")); return; }
  const engines = (await api("GET", "engines")).engines || [];
  const engineOptions = () => [el("option", { value: "builtin" }, "builtin (arbiter uci)")].concat(
    engines.map((e) => el("option", { value: e.sha256 }, `${e.name} (${e.sha256.slice(0, 8)})`)));
  const tabs = el("div", { class: "tabs" }, ["match", "perft", "tournament"].map((k) =>
    el("a", { href: `#/submit/${k}`, "aria-current": k === kind ? "page" : null }, k)));
  let form;
  if (kind === "perft") {
    form = el("form", { class: "submit", id: "perft-form" },
      field("perft-fen", "Position (FEN)", el("input", { value: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", size: 60 })),
      el("div", { class: "row" },
        field("perft-depth", "Depth", el("input", { type: "number", value: 6, min: 1, max: 20 })),
        field("perft-split", "Split depth (0 = auto)", el("input", { type: "number", value: 0, min: 0 }))),
      el("label", {}, el("input", { type: "checkbox", id: "perft-verify" }), " Verify (two workers per job)"),
      el("span", { class: "field-error", id: "perft-form-error", role: "alert" }),
      el("button", { type: "submit", id: "perft-submit" }, "Start perft"));
    form.addEventListener("submit", (e) => { e.preventDefault(); submitForm("perft", form, async () => ({
      perft: { fen: form.querySelector("#perft-fen").value.trim(), depth: Number(form.querySelector("#perft-depth").value) },
      split_depth: Number(form.querySelector("#perft-split").value),
      verify: form.querySelector("#perft-verify").checked })); });
  } else if (kind === "match") {
    form = el("form", { class: "submit", id: "match-form" },
      el("div", { class: "row" },
        field("match-engine1", "New engine", el("select", {}, engineOptions())),
        field("match-name1", "Its name", el("input", { value: "new" }))),
      el("div", { class: "row" },
        field("match-engine2", "Base engine", el("select", {}, engineOptions())),
        field("match-name2", "Its name", el("input", { value: "base" }))),
      field("match-options1", "New engine's UCI options", el("input", { placeholder: "Hash=16,Threads=1" }),
            "NAME=VALUE, comma separated"),
      el("span", { class: "field-error", id: "match-engines-error", role: "alert" }),
      el("div", { class: "row" },
        field("match-tc", "Time control", el("input", { value: "1+0.01" }), "e.g. 10+0.1, 40/60, st=0.1, nodes=5000"),
        field("match-games", "Games (0 = until the SPRT decides)", el("input", { type: "number", value: 0, min: 0 }))),
      el("div", { class: "row" },
        field("match-elo0", "SPRT elo0", el("input", { value: "0", inputmode: "decimal" })),
        field("match-elo1", "SPRT elo1", el("input", { value: "5", inputmode: "decimal" })),
        field("match-alpha", "α", el("input", { value: "0.05", inputmode: "decimal" })),
        field("match-beta", "β", el("input", { value: "0.05", inputmode: "decimal" }))),
      el("label", {}, el("input", { type: "checkbox", id: "match-use-sprt", checked: true }), " SPRT"),
      el("span", { class: "field-error", id: "match-sprt-error", role: "alert" }),
      field("match-book", "Opening book (EPD or PGN file)", el("input", { type: "file", accept: ".epd,.pgn,.txt" })),
      el("span", { class: "field-error", id: "match-form-error", role: "alert" }),
      el("button", { type: "submit", id: "match-submit" }, "Start match"));
    form.addEventListener("submit", (e) => { e.preventDefault(); submitForm("match", form, async () => {
      const q = (s) => form.querySelector(s);
      const first = engineSpec(q("#match-engine1").value, q("#match-name1").value.trim());
      const opts = q("#match-options1").value.trim();
      if (opts) first.options = Object.fromEntries(opts.split(",").map((kv) => kv.split("=").map((s) => s.trim())));
      const req = { engines: [first, engineSpec(q("#match-engine2").value, q("#match-name2").value.trim())],
                    tc: q("#match-tc").value.trim(), games: q("#match-games").value || "0",
                    openings: await readBook(q("#match-book")) };
      if (q("#match-use-sprt").checked) req.sprt = { elo0: Number(q("#match-elo0").value), elo1: Number(q("#match-elo1").value),
        alpha: Number(q("#match-alpha").value), beta: Number(q("#match-beta").value) };
      return req;
    }); });
  } else {
    form = el("form", { class: "submit", id: "tournament-form" },
      field("tournament-engines", "Engines (one per line: NAME=builtin, NAME=SHA256 or NAME=/path)",
        el("textarea", { rows: 4 }, "a=builtin\nb=builtin\nc=builtin")),
      el("div", { class: "row" },
        field("tournament-tc", "Time control", el("input", { value: "1+0.01" })),
        field("tournament-games", "Games per pairing", el("input", { type: "number", value: 10, min: 2, step: 2 }))),
      el("label", {}, el("input", { type: "checkbox", id: "tournament-gauntlet" }), " Gauntlet (the first plays all others)"),
      field("tournament-book", "Opening book (EPD)", el("input", { type: "file", accept: ".epd,.txt" })),
      el("span", { class: "field-error", id: "tournament-form-error", role: "alert" }),
      el("button", { type: "submit", id: "tournament-submit" }, "Start tournament"));
    form.addEventListener("submit", (e) => { e.preventDefault(); submitForm("tournament", form, async () => {
      const q = (s) => form.querySelector(s);
      const engines = q("#tournament-engines").value.split("\n").map((l) => l.trim()).filter(Boolean).map((l) => {
        const at = l.indexOf("=");
        return engineSpec(at < 0 ? "builtin" : l.slice(at + 1).trim(), at < 0 ? l : l.slice(0, at).trim());
      });
      return { engines, tc: q("#tournament-tc").value.trim(), games_per_pairing: Number(q("#tournament-games").value),
               gauntlet: q("#tournament-gauntlet").checked, openings: await readBook(q("#tournament-book")) };
    }); });
  }
  setView(el("h1", {}, "Submit a run"), tabs, form);
}

// ---- routing ---------------------------------------------------------------------------------

async function route() {
  for (const f of cleanup) f();
  cleanup = [];
  const hash = location.hash.replace(/^#/, "") || "/runs";
  const [path, query] = hash.split("?");
  const parts = path.split("/").filter(Boolean);
  for (const a of document.querySelectorAll("header nav a"))
    a.toggleAttribute("aria-current", a.getAttribute("href") === `#/${parts[0]}` ||
                                      (parts[0] === "submit" && a.id === "nav-submit"));
  try {
    if (parts[0] === "runs" && parts[1]) await showRun(parts[1]);
    else if (parts[0] === "workers") await showWorkers();
    else if (parts[0] === "engines") await showEngines();
    else if (parts[0] === "submit") await showSubmit(parts[1] || "match");
    else await showRuns(query || "");
  } catch (e) {
    showError(e);
  }
}

async function start() {
  session = await api("GET", "session");
  document.getElementById("whoami").textContent = `${session.name} (${session.role})`;
  document.getElementById("version").textContent = session.version || "";
  document.getElementById("nav-submit").hidden = !canSubmit();
  window.addEventListener("hashchange", route);
  await route();
}
start().catch(showError);
