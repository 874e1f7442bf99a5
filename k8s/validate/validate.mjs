// Validates Kubernetes manifests (multi-document YAML on stdin, e.g. `kubectl kustomize k8s`)
// against the OpenAPI schemas bundled in the pinned kubernetes-models packages (package.json):
// core and apps APIs, the Prometheus Operator's CRDs and KEDA's. Offline. Every object must be of
// a known apiVersion/kind and valid; a few project rules are checked on top (every container has
// memory requests and limits, drops all capabilities and has a read-only root filesystem).
// Usage: node validate.mjs NAME < manifests.yaml     (exit 1 on any finding)
import { parseAllDocuments } from "yaml";

const name = process.argv[2] ?? "stdin";
const groups = {
  "": "kubernetes-models",
  apps: "kubernetes-models/apps",
  policy: "kubernetes-models/policy",
  autoscaling: "kubernetes-models/autoscaling",
  "networking.k8s.io": "kubernetes-models/networking.k8s.io",
  "rbac.authorization.k8s.io": "kubernetes-models/rbac.authorization.k8s.io",
  "monitoring.coreos.com": "@kubernetes-models/prometheus-operator/monitoring.coreos.com",
  "keda.sh": "@kubernetes-models/keda/keda.sh",
};

async function modelOf(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  const base = groups[group];
  if (!base) throw new Error(`no schema for API group "${group}" (${apiVersion} ${kind})`);
  try {
    const mod = await import(`${base}/${version}/${kind}`);
    return mod[kind];
  } catch (e) {
    throw new Error(`no schema for ${apiVersion} ${kind}: ${e.message.split("\n")[0]}`);
  }
}

function podSpecOf(obj) {
  if (obj.kind === "Pod") return obj.spec;
  return obj.spec?.template?.spec;
}

const input = await new Promise((resolve) => {
  let s = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (d) => (s += d));
  process.stdin.on("end", () => resolve(s));
});
const findings = [];
let count = 0;
for (const doc of parseAllDocuments(input)) {
  if (doc.errors.length) {
    findings.push(`YAML: ${doc.errors[0].message}`);
    continue;
  }
  const obj = doc.toJS();
  if (obj == null) continue;
  count++;
  const id = `${obj.kind ?? "?"}/${obj.metadata?.name ?? "?"}`;
  try {
    if (!obj.apiVersion || !obj.kind) throw new Error("no apiVersion or kind");
    const Model = await modelOf(obj.apiVersion, obj.kind);
    new Model(obj).validate();
  } catch (e) {
    findings.push(`${id}: ${e.message}`);
    continue;
  }
  const pod = podSpecOf(obj);
  for (const c of [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])]) {
    const where = `${id} container ${c.name}`;
    if (!c.resources?.requests?.memory || !c.resources?.limits?.memory)
      findings.push(`${where}: memory requests and limits are required`);
    if (c.securityContext?.readOnlyRootFilesystem !== true)
      findings.push(`${where}: readOnlyRootFilesystem must be true`);
    if (!(c.securityContext?.capabilities?.drop ?? []).includes("ALL"))
      findings.push(`${where}: capabilities must drop ALL`);
  }
}
if (count === 0) findings.push("no objects in the input");
for (const f of findings) console.error(`${name}: ${f}`);
if (findings.length) process.exit(1);
console.log(`${name}: ${count} objects valid`);
