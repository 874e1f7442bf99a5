// arbiter's dashboard, part 1 of 6: DOM and number helpers, the API client, the connection
// indicator, and the words for a run's state and verdict. The pages are classic scripts loaded in
// order (common, runs, run, pages, submit, app) sharing one global scope; app.js routes and starts.
"use strict";

const view = document.getElementById("view");
let session = { name: "", role: "viewer", csrf: "" };
let cleanup = [];  // what the current view must stop (event streams, timers) when left

// ---- DOM -------------------------------------------------------------------------------------

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
function svg(tag, attrs, text) {
  const e = document.createElementNS(svgNs, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}
// A table; a header ending in "#" is a number column, one ending in "~" is hidden on a phone
// (its cells carry the same class, so the columns stay aligned).
function table(headers, rows, attrs) {
  return el("div", { class: "scroll" }, el("table", attrs || {},
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", { class: colClass(h) }, h.replace(/[#~]+$/, ""))))),
    el("tbody", {}, rows)));
}
function colClass(h) {
  return [h.includes("#") ? "num" : "", h.includes("~") ? "hide-small" : ""].join(" ").trim();
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
  const offline = e instanceof TypeError;  // fetch's network failure
  setView(el("h1", {}, offline ? "Coordinator unreachable" : "Error"),
    el("p", { class: "error", role: "alert", id: "view-error" }, offline
      ? "The coordinator does not answer; this page retries and reloads when it is back."
      : e.message));
  if (offline) connection.failed();
}

// ---- numbers ---------------------------------------------------------------------------------

const num = (x) => Number(x || 0);
// A number with d decimals; "—" for what is not defined yet (protobuf JSON's "Infinity", "NaN").
const fmt = (x, d = 1) => Number.isFinite(Number(x ?? 0)) ? num(x).toFixed(d) : "—";
const fmtInt = (x) => BigInt(x || 0).toLocaleString("en-US");
const pct = (x) => Number.isFinite(x) ? `${(100 * x).toFixed(1)} %` : "—";
// "12.3 ± 4.5", or "—" while either is undefined (no games yet, or every game won).
function plusMinus(v, e, d = 1) {
  return Number.isFinite(Number(v ?? 0)) && Number.isFinite(Number(e ?? 0)) && num(e) > 0
    ? `${fmt(v, d)} ± ${fmt(e, d)}` : "—";
}
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
const clock = (unix) => unix ? new Date(unix * 1000).toISOString().replace("T", " ").slice(0, 19) + " UTC" : "—";
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

// ---- runs: state and verdict in words ----------------------------------------------------------

const shortState = (s) => String(s || "").replace(/^RUN_STATE_/, "");
const shortKind = (s) => String(s || "").replace(/^RUN_KIND_/, "");
const terminal = (s) => ["SUCCEEDED", "FAILED", "CANCELLED"].includes(shortState(s));
// How the run ran (not what it found: that is its verdict).
const stateWords = { QUEUED: "queued", RUNNING: "running", SUCCEEDED: "finished",
                     FAILED: "failed to run", CANCELLED: "cancelled" };
function stateCell(state) {
  const s = shortState(state);
  return el("span", { class: "state " + s }, stateWords[s] || s.toLowerCase());
}
const verdictOf = (run) => String((run.outcome || {}).verdict || "RUN_VERDICT_PENDING")
  .replace(/^RUN_VERDICT_/, "").toLowerCase();
// "accepted (H1)", "rejected (H0)", "failed (11)", "exact", ...: the summary's words before its
// colon, as `arbiter runs list` prints them.
function verdictWord(run) {
  const o = run.outcome || {}, s = o.summary || "";
  let w = s.includes(":") ? s.slice(0, s.indexOf(":")) : s || verdictOf(run);
  if (o.hypothesis) w += ` (${o.hypothesis})`;
  else if (num(o.failing) > 0 && run.movegen_check) w += ` (${o.failing} failing)`;
  return w;
}
function verdictCell(run, id) {
  const o = run.outcome || {};
  return el("span", { class: "verdict " + verdictOf(run), id, title: o.summary || "" }, verdictWord(run));
}

// ---- the API and the connection --------------------------------------------------------------

class ApiError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

// Where a 401 sends the page: the sign-in page, and back to this page once signed in.
function toSignIn() {
  sessionStorage.setItem("arbiter-return", location.hash || "#/runs");
  location.href = "/signin";
}

async function api(method, path, body) {
  const opts = { method, headers: {}, credentials: "same-origin" };
  if (method !== "GET") opts.headers["X-CSRF-Token"] = session.csrf;
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  let r;
  try {
    r = await fetch("/api/v1/" + path, opts);
  } catch (e) {
    connection.failed();
    throw e;
  }
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
  if (r.status === 401) { toSignIn(); throw new ApiError(401, "UNAUTHENTICATED", "signed out"); }
  if (r.status === 502 || r.status === 503 || r.status === 504) connection.failed();
  else connection.ok();
  if (!r.ok) throw new ApiError(r.status, data && data.code || "", data && data.message || text);
  return data;
}

// The header's live / reconnecting / offline indicator. A probe of /api/v1/session every 5 s
// (every 2 s while failing) decides it; any failed call or a dropped event stream sets
// "reconnecting" at once, and two failed probes in a row "offline". Back online, the view is
// drawn again.
const connection = {
  state: "live", failures: 0, since: 0, timer: 0,
  set(state, detail) {
    const e = document.getElementById("conn");
    const was = this.state;
    this.state = state;
    document.body.classList.toggle("offline", state !== "live");
    if (e) {
      e.className = "conn " + state;
      e.textContent = state === "live" ? "● live" : state === "reconnecting" ? "● reconnecting…" : "● offline";
      e.title = detail || "";
    }
    const banner = document.getElementById("conn-banner");
    if (banner) {
      banner.hidden = state === "live";
      banner.textContent = state === "offline"
        ? `Coordinator unreachable since ${new Date(this.since).toLocaleTimeString()}; retrying. ` +
          "The numbers on this page are from then."
        : state === "reconnecting" ? "Connection lost; reconnecting…" : "";
    }
    if (was !== "live" && state === "live") route();
  },
  ok() {
    this.failures = 0;
    if (this.state !== "live") this.set("live", "");
  },
  failed() {
    if (this.failures === 0) this.since = Date.now();
    this.failures++;
    this.set(this.failures >= 2 ? "offline" : "reconnecting",
             `no answer from the coordinator since ${new Date(this.since).toLocaleTimeString()}`);
    this.schedule(2000);
  },
  schedule(ms) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.probe(), ms);
  },
  async probe() {
    const ctl = new AbortController();
    const t = setTimeout(() => ctl.abort(), 4000);
    try {
      const r = await fetch("/api/v1/session", { credentials: "same-origin", signal: ctl.signal });
      if (r.status === 401) return toSignIn();
      if (r.status >= 500) throw new Error(`HTTP ${r.status}`);
      this.ok();
      this.schedule(5000);
    } catch (e) {
      this.failed();
    } finally {
      clearTimeout(t);
    }
  },
};
