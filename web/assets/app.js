// arbiter's dashboard, part 6 of 6: routing and start. A page per view (#/runs, #/runs/ID,
// #/ratings, #/workers, #/engines, #/submit/KIND, #/submit/clone/ID), each drawn from the JSON
// API under /api/v1/ (the gRPC RunService as protobuf JSON). No framework, no outside files.
"use strict";

const roleRank = { viewer: 1, submitter: 2, admin: 3 };
const canSubmit = () => (roleRank[session.role] || 0) >= 2;
const isAdmin = () => session.role === "admin";

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
    else if (parts[0] === "ratings") await showRatings(query || "");
    else if (parts[0] === "submit") await showSubmit(parts[1] || "match", parts[2]);
    else await showRuns(query || "");
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 401)) showError(e);
  }
}

async function start() {
  // Back to the page a 401 left (toSignIn), now that the sign-in is done.
  const back = sessionStorage.getItem("arbiter-return");
  if (back) {
    sessionStorage.removeItem("arbiter-return");
    history.replaceState(null, "", back);
  }
  try {
    session = await api("GET", "session");
  } catch (e) {
    if (!(e instanceof ApiError)) connection.failed();
    throw e;
  }
  document.getElementById("whoami").textContent = `${session.name} (${session.role})`;
  document.getElementById("version").textContent = session.version || "";
  document.getElementById("nav-submit").hidden = !canSubmit();
  window.addEventListener("hashchange", route);
  connection.schedule(5000);
  await route();
}
start().catch(showError);
