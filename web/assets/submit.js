// arbiter's dashboard, part 5 of 6: the submit forms (#/submit/match, perft, tournament,
// movegen-check) and cloning a run into one (#/submit/clone/ID). An API error lands beside the
// field it names.
"use strict";

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
    perft: [["fen", "fen"], ["depth", "depth"], ["split", "split"], ["priority", "priority"], ["throughput", "priority"]],
    match: [["sprt", "sprt"], ["elo", "sprt"], ["time control", "tc"], ["tc", "tc"], ["book", "book"],
            ["opening", "book"], ["games", "games"], ["priority", "priority"], ["throughput", "priority"],
            ["engine", "engines"], ["sha256", "engines"]],
    tournament: [["engine", "engines"], ["time control", "tc"], ["tc", "tc"], ["games", "games"],
                 ["opening", "book"], ["priority", "priority"]],
    "movegen-check": [["position", "positions"], ["fen", "positions"], ["depth", "positions"],
                      ["dialect", "dialect"], ["engine", "engine"], ["priority", "priority"]],
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
// Source trees seen in a cloned run, by archive sha256: a clone keeps their build and binary.
const sourceTrees = {};
function engineSpec(value, name) {
  if (value === "builtin") return { name, builtin: true };
  if (/^[0-9a-f]{64}$/.test(value)) return { name, sha256: value };
  if (/^source:[0-9a-f]{64}$/.test(value)) return { name, sourceTree: sourceTrees[value.slice(7)] || { sha256: value.slice(7) } };
  return { name, path: value };
}
function specValue(e) {
  const tree = e && (e.sourceTree || e.source_tree);
  if (tree) {
    sourceTrees[tree.sha256] = tree;
    return `source:${tree.sha256}`;
  }
  return !e ? "builtin" : e.builtin ? "builtin" : e.sha256 || e.path || "builtin";
}
// "Hash=16,Threads=1" <-> {Hash: "16", Threads: "1"}
const optionsText = (o) => Object.entries(o || {}).map(([k, v]) => `${k}=${v}`).join(",");
function optionsOf(text) {
  text = text.trim();
  return text ? Object.fromEntries(text.split(",").map((kv) => kv.split("=").map((s) => s.trim()))) : undefined;
}
async function readBook(input) {
  const f = input.files && input.files[0];
  return f ? { text: await f.text(), name: f.name } : { text: "", name: "" };
}
// Priority (above 0: admins only) and throughput, as the API's Scheduling.
function schedulingFields(kind, s) {
  s = s || {};
  return el("div", { class: "row" },
    field(`${kind}-priority`, "Priority", el("input", { type: "number", value: num(s.priority), min: -100,
      max: isAdmin() ? 100 : 0 }), isAdmin() ? "-100..100; higher runs first" : "-100..0 (above 0: admins)"),
    field(`${kind}-throughput`, "Throughput %", el("input", { type: "number", value: num(s.throughput) || 100,
      min: 1, max: 1000 }), "share of the workers among runs of its priority"));
}
const schedulingOf = (form, kind) => ({ priority: Number(form.querySelector(`#${kind}-priority`).value),
  throughput: Number(form.querySelector(`#${kind}-throughput`).value) });

function matchForm(engineOptions, req) {
  req = req || { settings: { engines: [{ name: "new", builtin: true }, { name: "base", builtin: true }], tc: "1+0.01" },
                 games: 0, sprt: { elo0: 0, elo1: 5, alpha: 0.05, beta: 0.05 } };
  const s = req.settings || {};
  const [a, b] = s.engines || [];
  const sprt = req.sprt || null;
  const form = el("form", { class: "submit", id: "match-form" },
    el("div", { class: "row" },
      field("match-engine1", "New engine", el("select", {}, engineOptions(specValue(a)))),
      field("match-name1", "Its name", el("input", { value: (a && a.name) || "new" }))),
    field("match-options1", "New engine's UCI options", el("input", { placeholder: "Hash=16,Threads=1", value: optionsText(a && a.options) }),
          "NAME=VALUE, comma separated"),
    el("div", { class: "row" },
      field("match-engine2", "Base engine", el("select", {}, engineOptions(specValue(b)))),
      field("match-name2", "Its name", el("input", { value: (b && b.name) || "base" }))),
    field("match-options2", "Base engine's UCI options", el("input", { placeholder: "Hash=16,Threads=1", value: optionsText(b && b.options) }),
          "NAME=VALUE, comma separated"),
    el("span", { class: "field-error", id: "match-engines-error", role: "alert" }),
    el("div", { class: "row" },
      field("match-tc", "Time control", el("input", { value: s.tc || "1+0.01" }),
            "e.g. 10+0.1, 40/60, movetime=0.1, nodes=5000, depth=8"),
      field("match-games", "Games (0 = until the SPRT decides)", el("input", { type: "number", value: num(req.games), min: 0 }))),
    el("div", { class: "row" },
      field("match-elo0", "SPRT elo0 (nElo)", el("input", { value: sprt ? num(sprt.elo0) : 0, inputmode: "decimal" })),
      field("match-elo1", "SPRT elo1 (nElo)", el("input", { value: sprt ? num(sprt.elo1) : 5, inputmode: "decimal" })),
      field("match-alpha", "α", el("input", { value: sprt ? sprt.alpha : 0.05, inputmode: "decimal" })),
      field("match-beta", "β", el("input", { value: sprt ? sprt.beta : 0.05, inputmode: "decimal" }))),
    el("label", {}, el("input", { type: "checkbox", id: "match-use-sprt", checked: !!sprt }),
       " SPRT (normalized model: bounds in nElo)"),
    el("span", { class: "field-error", id: "match-sprt-error", role: "alert" }),
    field("match-book", "Opening book (EPD or PGN file)", el("input", { type: "file", accept: ".epd,.pgn,.txt" }),
          s.openings_name ? `a clone keeps ${s.openings_name} unless you choose another` : null),
    schedulingFields("match", s.scheduling),
    el("span", { class: "field-error", id: "match-form-error", role: "alert" }),
    el("button", { type: "submit", id: "match-submit" }, "Start match"));
  form.addEventListener("submit", (e) => { e.preventDefault(); submitForm("match", form, async () => {
    const q = (s) => form.querySelector(s);
    const first = engineSpec(q("#match-engine1").value, q("#match-name1").value.trim());
    const second = engineSpec(q("#match-engine2").value, q("#match-name2").value.trim());
    first.options = optionsOf(q("#match-options1").value);
    second.options = optionsOf(q("#match-options2").value);
    const book = await readBook(q("#match-book"));
    const settings = { engines: [first, second], tc: q("#match-tc").value.trim(),
                       openings: book.text || s.openings || "", openings_name: book.name || (book.text ? "" : s.openings_name || ""),
                       scheduling: schedulingOf(form, "match") };
    // A clone keeps what the form does not show: game rules, concurrency, fair clocks.
    for (const k of ["rules", "concurrency", "scale_nps"]) if (s[k] !== undefined) settings[k] = s[k];
    const out = { settings, games: q("#match-games").value || "0" };
    if (q("#match-use-sprt").checked) out.sprt = { elo0: Number(q("#match-elo0").value), elo1: Number(q("#match-elo1").value),
      alpha: Number(q("#match-alpha").value), beta: Number(q("#match-beta").value), model: sprt && sprt.model || undefined };
    return out;
  }); });
  return form;
}

function perftForm(req) {
  req = req || { perft: { fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", depth: 6 } };
  const form = el("form", { class: "submit", id: "perft-form" },
    field("perft-fen", "Position (FEN)", el("input", { value: req.perft.fen, size: 60 })),
    el("div", { class: "row" },
      field("perft-depth", "Depth", el("input", { type: "number", value: req.perft.depth, min: 1, max: 20 })),
      field("perft-split", "Split depth (0 = auto)", el("input", { type: "number", value: num(req.split_depth), min: 0 }))),
    el("label", {}, el("input", { type: "checkbox", id: "perft-verify", checked: !!req.verify }), " Verify (two workers per job)"),
    schedulingFields("perft", req.scheduling),
    el("span", { class: "field-error", id: "perft-form-error", role: "alert" }),
    el("button", { type: "submit", id: "perft-submit" }, "Start perft"));
  form.addEventListener("submit", (e) => { e.preventDefault(); submitForm("perft", form, async () => ({
    perft: { fen: form.querySelector("#perft-fen").value.trim(), depth: Number(form.querySelector("#perft-depth").value) },
    split_depth: Number(form.querySelector("#perft-split").value),
    verify: form.querySelector("#perft-verify").checked, scheduling: schedulingOf(form, "perft") })); });
  return form;
}

function tournamentForm(req) {
  req = req || { settings: { engines: ["a", "b", "c"].map((name) => ({ name, builtin: true })), tc: "1+0.01" }, games_per_pairing: 10 };
  const s = req.settings || {};
  const line = (e) => `${e.name}=${specValue(e)}` + (e.options ? "," + optionsText(e.options) : "");
  const form = el("form", { class: "submit", id: "tournament-form" },
    field("tournament-engines", "Engines, one per line: NAME=builtin, NAME=SHA256, NAME=source:SHA256 or NAME=/path, then ,OPTION=VALUE…",
      el("textarea", { rows: 4 }, (s.engines || []).map(line).join("\n"))),
    el("div", { class: "row" },
      field("tournament-tc", "Time control", el("input", { value: s.tc })),
      field("tournament-games", "Games per pairing", el("input", { type: "number", value: req.games_per_pairing, min: 2, step: 2 }))),
    el("label", {}, el("input", { type: "checkbox", id: "tournament-gauntlet", checked: !!req.gauntlet }), " Gauntlet (the first plays all others)"),
    field("tournament-book", "Opening book (EPD)", el("input", { type: "file", accept: ".epd,.txt" })),
    schedulingFields("tournament", s.scheduling),
    el("span", { class: "field-error", id: "tournament-form-error", role: "alert" }),
    el("button", { type: "submit", id: "tournament-submit" }, "Start tournament"));
  form.addEventListener("submit", (e) => { e.preventDefault(); submitForm("tournament", form, async () => {
    const q = (s) => form.querySelector(s);
    const engines = q("#tournament-engines").value.split("\n").map((l) => l.trim()).filter(Boolean).map((l) => {
      const [head, ...opts] = l.split(",");
      const at = head.indexOf("=");
      const spec = engineSpec(at < 0 ? "builtin" : head.slice(at + 1).trim(), at < 0 ? head : head.slice(0, at).trim());
      spec.options = optionsOf(opts.join(","));
      return spec;
    });
    const book = await readBook(q("#tournament-book"));
    const settings = { engines, tc: q("#tournament-tc").value.trim(), openings: book.text || s.openings || "",
                       openings_name: book.name || s.openings_name || "", scheduling: schedulingOf(form, "tournament") };
    for (const k of ["rules", "concurrency", "scale_nps"]) if (s[k] !== undefined) settings[k] = s[k];
    return { settings, games_per_pairing: Number(q("#tournament-games").value), gauntlet: q("#tournament-gauntlet").checked };
  }); });
  return form;
}

// movegen-check: an engine's perft against arbiter's, one "FEN ; depth" per line.
function movegenForm(engineOptions) {
  const form = el("form", { class: "submit", id: "movegen-check-form" },
    el("div", { class: "row" },
      field("movegen-check-engine", "Engine", el("select", {}, engineOptions("builtin"))),
      field("movegen-check-path", "…or a path on every worker", el("input", { placeholder: "/usr/games/stockfish" }))),
    field("movegen-check-dialect", "Perft dialect", el("select", {},
      ["go-perft", "perft"].map((d) => el("option", { value: d }, d))), "go-perft: UCI `go perft N` (Stockfish's)"),
    field("movegen-check-positions", "Positions, one per line: FEN ; depth",
      el("textarea", { rows: 5 }, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 ; 4\n" +
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1 ; 3")),
    schedulingFields("movegen-check", null),
    el("span", { class: "field-error", id: "movegen-check-form-error", role: "alert" }),
    el("button", { type: "submit", id: "movegen-check-submit" }, "Start check"));
  form.addEventListener("submit", (e) => { e.preventDefault(); submitForm("movegen-check", form, async () => {
    const q = (s) => form.querySelector(s);
    const path = q("#movegen-check-path").value.trim();
    const engine = engineSpec(path || q("#movegen-check-engine").value, "engine");
    engine.name = path ? path.split("/").pop() : engine.builtin ? "arbiter" : q("#movegen-check-engine").selectedOptions[0].textContent.split(" ")[0];
    const positions = q("#movegen-check-positions").value.split("\n").map((l) => l.trim()).filter(Boolean).map((l) => {
      const [fen, depth] = l.split(";").map((s) => s.trim());
      return { fen, depth: Number(depth || 1) };
    });
    return { engine, dialect: { name: q("#movegen-check-dialect").value }, positions,
             scheduling: schedulingOf(form, "movegen-check") };
  }); });
  return form;
}

// kind: match, perft, tournament, movegen-check, or "clone" with the run id to start from.
async function showSubmit(kind, cloneId) {
  if (!canSubmit()) { setView(el("p", {}, "Your token may not submit runs.")); return; }
  const engines = (await api("GET", "engines")).engines || [];
  const engineOptions = (selected) => [el("option", { value: "builtin", selected: selected === "builtin" }, "builtin (arbiter uci)")].concat(
    engines.map((e) => el("option", { value: e.sha256, selected: selected === e.sha256 }, `${e.name} (${e.sha256.slice(0, 8)})`)),
    // An uploaded source archive (`arbiter match … source=DIR` uploads one), built by each worker.
    engines.map((e) => el("option", { value: `source:${e.sha256}`, selected: selected === `source:${e.sha256}` },
                          `${e.name} (${e.sha256.slice(0, 8)}), built from source`)),
    selected !== "builtin" && !engines.some((e) => e.sha256 === selected || `source:${e.sha256}` === selected)
      ? [el("option", { value: selected, selected: true }, selected)] : []);
  let from = null, title = "Submit a run";
  if (kind === "clone") {
    const run = await api("GET", `runs/${cloneId}`);
    kind = run.match ? "match" : run.perft ? "perft" : "tournament";
    from = (run.match || run.perft || run.tournament).request;
    // The run's scheduling now (SetScheduling may have changed it), where the request keeps it.
    from = from.settings ? Object.assign({}, from, { settings: Object.assign({}, from.settings, { scheduling: run.scheduling }) })
      : Object.assign({}, from, { scheduling: run.scheduling });
    title = `Clone of run ${run.id}`;
  }
  const tabs = el("div", { class: "tabs" }, ["match", "perft", "tournament", "movegen-check"].map((k) =>
    el("a", { href: `#/submit/${k}`, "aria-current": k === kind ? "page" : null }, k)));
  const form = kind === "perft" ? perftForm(from) : kind === "tournament" ? tournamentForm(from)
    : kind === "movegen-check" ? movegenForm(engineOptions) : matchForm(engineOptions, from);
  setView(el("h1", {}, title), tabs, form);
}
