#!/usr/bin/env python3
"""Turns a rendered overlay (`kubectl kustomize k8s/overlays/NAME`, stdin) into YAML that Debian
12's podman 4.3 `kube play` runs. Only what podman cannot follow is changed, and this is the whole
list (scripts/image-test.sh prints it):
  - the coordinator's StatefulSet becomes a Pod of its pod template (podman plays Pods and
    Deployments only); its volume claim becomes an emptyDir;
  - Secret volumes become hostPath files given on the command line (podman has no Secrets);
  - TLS is left out (no cluster DNS name to put in a certificate: the tokens still authenticate);
  - container ports are dropped (podman would publish them on the host: every worker on 9091);
  - probes are dropped (podman runs them as systemd timers, which a CI machine may not have):
    image-test.sh asks the same gRPC health ports itself with `arbiter health`;
  - the workers' Deployment gets 2 replicas where the overlay leaves the count to KEDA;
  - emptyDir volumes become podman volumes named NAME-SUFFIX, shared by a Deployment's pods;
  - the image is the one built here (IMAGE, or IMAGE-build where the overlay names the build
    variant, a tag ending in -build); the coordinator's Service name is its Pod's address.
Usage: kube-play-yaml.py coordinator|worker ADMIN_TOKEN_FILE WORKER_TOKEN_FILE COORDINATOR_ADDR IMAGE
       [SUFFIX]"""
import sys

import yaml

what, admin_token, worker_token, coordinator, image = sys.argv[1:6]
suffix = sys.argv[6] if len(sys.argv) > 6 else ""
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]


def drop_tls(args):
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("--tls-cert", "--tls-key", "--tls-ca", "--tls-client-ca"):
            skip = True
            continue
        out.append(a)
    return out


def fix_pod_spec(spec, files):
    vols = []
    for v in spec.get("volumes", []):
        if "secret" in v:
            if v["name"] in files:
                vols.append({"name": v["name"], "hostPath": {"path": files[v["name"]], "type": "File"}})
            continue  # TLS: left out
        vols.append(v)
    for c in spec["containers"]:
        # podman publishes a Pod's container ports on the host: two workers would both take 9091.
        c.pop("ports", None)
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            c.pop(probe, None)
        c["image"] = image + "-build" if c.get("image", "").endswith("-build") else image
        c["imagePullPolicy"] = "Never"
        c["args"] = drop_tls(c.get("args", []))
        mounts = []
        for m in c.get("volumeMounts", []):
            if m["name"] == "tls":
                continue
            if m["name"] in files:  # a file mounted where the Secret's key would be
                m = dict(m, mountPath=m["mountPath"] + "/token")
            mounts.append(m)
        c["volumeMounts"] = mounts
    names = {m["name"] for c in spec["containers"] for m in c["volumeMounts"]}
    spec["volumes"] = [v for v in vols if v["name"] in names] + [
        {"name": n, "emptyDir": {}} for n in sorted(names - {v["name"] for v in vols})]
    if suffix:  # podman names an emptyDir's volume after it: one set per play
        renamed = {v["name"]: v["name"] + "-" + suffix for v in spec["volumes"] if "emptyDir" in v}
        for v in spec["volumes"]:
            v["name"] = renamed.get(v["name"], v["name"])
        for c in spec["containers"]:
            for m in c["volumeMounts"]:
                m["name"] = renamed.get(m["name"], m["name"])
    spec.pop("topologySpreadConstraints", None)
    return spec


if what == "coordinator":
    sts = next(d for d in docs if d["kind"] == "StatefulSet")
    spec = fix_pod_spec(sts["spec"]["template"]["spec"], {"admin-token": admin_token})
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": sts["metadata"]["name"], "labels": sts["spec"]["template"]["metadata"]["labels"]},
           "spec": spec}
    print(yaml.safe_dump(pod, sort_keys=False))
else:
    dep = next(d for d in docs if d["kind"] == "Deployment")
    spec = fix_pod_spec(dep["spec"]["template"]["spec"], {"worker-token": worker_token})
    for c in spec["containers"]:
        c["args"] = [coordinator if a == "arbiter-coordinator:50051" else a for a in c["args"]]
    dep["metadata"].pop("namespace", None)
    dep["spec"].setdefault("replicas", 2)  # KEDA's part where the overlay has it
    print(yaml.safe_dump(dep, sort_keys=False))
