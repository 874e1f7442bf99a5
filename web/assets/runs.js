// arbiter's dashboard, part 2 of 6: the runs list (#/runs). Its filters are drawn once; the
// table bodies are refreshed in place every 5 s (a row is replaced only when its run changed),
// so focus and half-typed filters stay.
"use strict";

// "new vs base", from the request (the list's runs carry no book text and no history).
function runEngines(run) {
  const s = ((run.match || run.tournament || {}).request || {}).settings || {};
  if (run.match) return (s.engines || []).map((e) => e.name).join(" vs ");
  if (run.tournament) return (s.engines || []).map((e) => e.name).join(", ");
  if (run.movegen_check) return ((run.movegen_check.request || {}).engine || {}).name || "";
  if (run.perft) return "arbiter perft";
  return "";
}
function runTc(run) {
  const req = (run.match || run.tournament || {}).request;
  if (!req) return run.perft ? `depth ${run.perft.request.perft.depth}` : "";
  const s = req.settings || {};
  const own = (s.engines || []).filter((e) => e.tc).map((e) => `${e.name} ${e.tc}`);
  return own.length ? `${s.tc} (${own.join(", ")})` : s.tc;
}

function runSummary(run) {
  if (run.match) {
    const r = run.match.result || {}, st = r.stats || {}, wdl = st.wdl || {};
    const parts = [el("span", { class: "wdl" }, `${wdl.wins || 0}-${wdl.draws || 0}-${wdl.losses || 0}`),
      ` Elo ${plusMinus(st.elo, st.elo_error95)}`];
    if (st.sprt && num(st.sprt.upper_bound) > 0) parts.push(" LLR ", fmt(st.sprt.llr, 2), llrBar(st.sprt));
    return parts;
  }
  if (run.perft) {
    const res = run.perft.result || {};
    const secs = num(res.seconds);
    const nodes = perftNodes(res);
    return [`${fmtInt(nodes)} nodes`,
      secs > 0 ? ` · ${fmt(Number(nodes) / secs / 1e6, 1)} Mnodes/s` : ""];
  }
  if (run.movegen_check) {
    const r = run.movegen_check.result || {};
    return `${r.positions_checked || 0}/${r.positions || 0} positions, ${num((run.outcome || {}).failing)} failing`;
  }
  if (run.tournament) {
    const t = run.tournament;
    const top = (t.standings || [])[0];
    return [`${t.games || 0} games`, top ? ` · leader ${top.name} ${plusMinus(top.elo, top.elo_error95)}` : ""];
  }
  return "";
}

// On a phone: run, engines (with the TC under them), verdict and result.
const runHeaders = ["Run", "Kind~", "Engines", "TC~", "Owner~", "State~", "Verdict", "Progress~", "Result", "Created~"];
function runRow(run) {
  const cells = [
    el("a", { href: `#/runs/${run.id}` }, run.id), shortKind(run.kind).toLowerCase().replace("_", "-"),
    [el("span", { class: "engines" }, runEngines(run)), el("div", { class: "show-small muted" }, runTc(run))],
    runTc(run), run.owner, stateCell(run.state),
    verdictCell(run), bar(num(run.progress), "", `${Math.round(num(run.progress) * 100)}% done`),
    runSummary(run), ago(run.created_unix)];
  return el("tr", { "data-run": run.id, "data-verdict": verdictOf(run) },
    cells.map((c, i) => el("td", { class: colClass(runHeaders[i]) }, c)));
}
// Which section a run is listed in.
function sectionOf(run) {
  const s = shortState(run.state);
  if (s === "QUEUED" || s === "RUNNING") return "active";
  return s === "SUCCEEDED" ? "finished" : "failed";
}
const sections = [["active", "Active"], ["finished", "Finished"], ["failed", "Failed to run or cancelled"]];

// Replaces the rows of `tbody` by `runs`, keeping the rows whose run did not change.
function updateRows(tbody, runs) {
  const old = new Map([...tbody.children].map((tr) => [tr.dataset.run, tr]));
  const rows = runs.map((run) => {
    const sig = JSON.stringify([run.state, run.progress, run.outcome, run.jobs,
      (run.match || {}).result && run.match.result.games, (run.tournament || {}).games,
      (run.perft || {}).result && run.perft.result.nodes, (run.movegen_check || {}).result && run.movegen_check.result.positions_checked]);
    const tr = old.get(String(run.id));
    if (tr && tr.dataset.sig === sig) return tr;
    const fresh = runRow(run);
    fresh.dataset.sig = sig;
    return fresh;
  });
  if (rows.length !== tbody.children.length || rows.some((r, i) => tbody.children[i] !== r))
    tbody.replaceChildren(...rows);
}

async function showRuns(params) {
  const q = new URLSearchParams(params);
  const f = { state: q.get("state") || "", kind: q.get("kind") || "", owner: q.get("owner") || "",
              mine: q.get("mine") === "1", page_token: q.get("page_token") || "" };
  // The filters in the address (replaceState: no new view, no lost focus).
  const remember = () => {
    const n = new URLSearchParams();
    for (const k of ["state", "kind", "owner", "page_token"]) if (f[k]) n.set(k, f[k]);
    if (f.mine) n.set("mine", "1");
    history.replaceState(null, "", "#/runs" + (String(n) ? "?" + n : ""));
  };
  let nextToken = "";
  const status = el("p", { class: "muted", id: "runs-status", role: "status" });
  const pager = el("div", { class: "pager" });
  const tables = Object.fromEntries(sections.map(([key]) => [key, table(runHeaders, [], { id: `runs-${key}` })]));
  const blocks = sections.map(([key, title]) => el("section", { id: `section-${key}` },
    el("h2", {}, title, " ", el("span", { class: "muted count" })), tables[key]));
  async function refresh() {
    const search = new URLSearchParams({ page_size: "50" });
    if (f.state) search.set("state", f.state);
    if (f.kind) search.set("kind", f.kind);
    if (f.mine) search.set("owner", session.name);
    else if (f.owner) search.set("owner_prefix", f.owner);
    if (f.page_token) search.set("page_token", f.page_token);
    const data = await api("GET", "runs?" + search);
    const runs = data.runs || [];
    for (const [i, [key]] of sections.entries()) {
      const mine = runs.filter((r) => sectionOf(r) === key);
      updateRows(tables[key].querySelector("tbody"), mine);
      blocks[i].hidden = mine.length === 0;
      blocks[i].querySelector(".count").textContent = `(${mine.length})`;
    }
    status.textContent = runs.length ? "" : "No runs match these filters.";
    nextToken = data.next_page_token || "";
    pager.replaceChildren(
      f.page_token ? el("button", { id: "first-page", type: "button",
        onclick: () => { f.page_token = ""; remember(); refresh(); } }, "First page") : "",
      nextToken ? el("button", { id: "next-page", type: "button",
        onclick: () => { f.page_token = nextToken; remember(); refresh(); } }, "Next page") : "");
  }
  const changed = (key, value) => { f[key] = value; f.page_token = ""; remember(); refresh().catch(showError); };
  const select = (id, label, key, options) => el("label", {}, label,
    el("select", { id, onchange: (e) => changed(key, e.target.value) },
      options.map(([v, text]) => el("option", { value: v, selected: v === f[key] }, text))));
  let typing = 0;
  setView(
    el("h1", {}, "Runs"),
    el("div", { class: "filters" },
      select("filter-state", "State", "state", [["", "any"], ["QUEUED", "queued"], ["RUNNING", "running"],
        ["SUCCEEDED", "finished"], ["FAILED", "failed to run"], ["CANCELLED", "cancelled"]]),
      select("filter-kind", "Kind", "kind", [["", "any"], ["MATCH", "match"], ["TOURNAMENT", "tournament"],
        ["PERFT", "perft"], ["MOVEGEN_CHECK", "movegen-check"]]),
      el("label", {}, "Owner starts with", el("input", { id: "filter-owner", value: f.owner, size: 12,
        autocomplete: "off", disabled: f.mine,
        oninput: (e) => { clearTimeout(typing); typing = setTimeout(() => changed("owner", e.target.value.trim()), 400); } })),
      el("label", { class: "check" }, el("input", { type: "checkbox", id: "filter-mine", checked: f.mine,
        onchange: (e) => { document.getElementById("filter-owner").disabled = e.target.checked;
                           changed("mine", e.target.checked); } }), " My runs")),
    status, ...blocks, pager);
  await refresh();
  const timer = setInterval(() => { if (!document.hidden) refresh().catch(() => {}); }, 5000);
  cleanup.push(() => { clearInterval(timer); clearTimeout(typing); });
}
