#!/usr/bin/env python3
"""qkcm in shadow mode beside upstream's kube-controller-manager, through the benchmark's scenarios.

Driven by bench/shadow.sh. On a fresh kwokctl binary-runtime cluster (bench.py's: etcd, kube-apiserver
with the benchmark's audit policy, kube-scheduler, kwok nodes, no controller manager), it starts

  * upstream's kube-controller-manager (the cluster's real writer, every default controller, the
    cluster's admin credentials, the Lease kube-controller-manager), and
  * qkcm with --shadow (every default controller, every write a dry run, its own Lease
    kube-controller-manager-shadow), connecting as bench:controller-manager: the only user the audit
    policy logs, so the audit log holds qkcm's requests and nothing else,

both with the same flags, runs the scenarios (bench.py's scale-up, rollout and cascade delete at a small
size, a ReplicaSet scale-up, a Service with endpoints churn, a Job, a DaemonSet, a StatefulSet scaled up
and down, a CronJob, a namespace deletion), waits for the shadow matcher's groups to close, and writes:

  shadow.json / shadow.html   qkcm's /shadow and /shadow.html at the end
  metrics.txt                 qkcm's qkcm_shadow_* metrics
  run.json                    per scenario: time, CPU seconds of each manager; RSS samples; audit summary
  upstream.log, qkcm.log      the two managers' logs (gitignored: raw/)
  summary.md                  the figures the README of the results folder quotes
"""
import argparse
import datetime as dt
import fcntl
import json
import os
import shutil
import signal
import statistics
import sys
import time

import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402 - the benchmark's cluster, API client, process sampler and scenarios
from bench import NS, POD_SPEC, log, parallel, poll  # noqa: E402

QKCM_PORT = 10467
UPSTREAM_PORT = 10457  # not bench.py's 10357 nor the default 10257


UPSTREAM_USER = "bench:upstream"


class ShadowCluster(bench.Cluster):
    """bench.py's cluster, with an audit policy logging both managers' writes (bench/shadow-audit-policy.yaml)."""

    AUDIT_POLICY = "shadow-audit-policy.yaml"

    def create(self, nodes):
        super().create(nodes)
        self.upstream_kubeconfig = bench.client_cert_kubeconfig(
            self.pki, "bench-upstream", UPSTREAM_USER, self.server, os.path.join(self.dir, "bench-upstream.kubeconfig"))


def common_flags(args, cluster, port):
    return [
        f"--kube-api-qps={args.qps}", f"--kube-api-burst={args.burst}",
        "--leader-elect=true",
        "--bind-address=127.0.0.1", f"--secure-port={port}",
        "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics,/shadow,/shadow.html",
        f"--root-ca-file={cluster.pki}/ca.crt",
        f"--service-account-private-key-file={cluster.pki}/admin.key",
        # bench.py's: kwok renews node leases slowly (kwokctl's heartbeat factor 5)
        "--node-monitor-grace-period=200s", "--node-monitor-period=25s",
    ]


def free_port(start):
    """The first port from start that nothing listens on (another manager on this machine may hold one)."""
    import socket
    for port in range(start, start + 100):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError(f"no free port from {start}")


def healthy(port, proc, timeout=300, path="/healthz", says=None):
    """Until the manager answers path with 200 (and, if given, a body containing says)."""
    end = time.time() + timeout
    s = requests.Session()
    s.trust_env = False
    while time.time() < end:
        if proc.p.poll() is not None:
            raise RuntimeError(f"{proc.name} exited ({proc.p.returncode}); see its log")
        try:
            r = s.get(f"https://127.0.0.1:{port}{path}", verify=False, timeout=2)
            if r.status_code == 200 and (says is None or says in r.text):
                return time.time()
        except requests.RequestException:
            pass
        time.sleep(0.1)
    raise TimeoutError(f"manager on port {port} never answered {path}")


def fetch(port, path):
    s = requests.Session()
    s.trust_env = False
    r = s.get(f"https://127.0.0.1:{port}{path}", verify=False, timeout=30)
    r.raise_for_status()
    return r.text


def pods_of(api, ns, selector):
    return api.get(f"/api/v1/namespaces/{ns}/pods?labelSelector={selector}")["items"]


def ready_count(pods):
    return sum(1 for p in pods if bench.PodWatch.ready(p))


def exists(api, path):
    r = api.req("GET", path, ok=(200, 404))
    return r is not None and r.get("kind") != "Status"


API_VERSIONS = {"ReplicaSet": "apps/v1", "DaemonSet": "apps/v1", "StatefulSet": "apps/v1", "Job": "batch/v1"}


def labeled(name, kind, spec_extra, labels=None):
    labels = labels or {"app": name}
    return {"apiVersion": API_VERSIONS[kind], "kind": kind, "metadata": {"name": name, "labels": labels},
            "spec": {"selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": POD_SPEC}, **spec_extra}}


def main():
    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGINT, interrupt)
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--deployments", type=int, default=3)
    p.add_argument("--replicas", type=int, default=3)
    p.add_argument("--rs-replicas", type=int, default=20)
    p.add_argument("--nodes", type=int, default=2)
    p.add_argument("--qps", type=float, default=100)
    p.add_argument("--burst", type=int, default=200)
    p.add_argument("--window", default="10s", help="qkcm's --shadow-match-window")
    p.add_argument("--settle", type=int, default=15, help="seconds of rest after each scenario")
    p.add_argument("--timeout", type=int, default=180, help="per-scenario timeout (s)")
    p.add_argument("--out", required=True)
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--qkcm-java", default=os.environ.get("QKCM_JAVA") or bench.default_java())
    p.add_argument("--qkcm-java-opts", default=os.environ.get("QKCM_JAVA_OPTS", bench.default_java_opts()))
    p.add_argument("--qkcm-jar", default=os.environ.get("QKCM_JAR") or os.path.join(
        bench.ROOT, "app", "target", "quarkus-app", "quarkus-run.jar"))
    p.add_argument("--upstream-flags", default="", help="more flags for upstream's kube-controller-manager, e.g. -v=2")
    p.add_argument("--kwok-workdir", default=os.path.expanduser("~/.kwok-shadow"))
    p.add_argument("--cluster-name", default="qkcm-shadow")
    args = p.parse_args()
    global QKCM_PORT, UPSTREAM_PORT
    QKCM_PORT = free_port(QKCM_PORT)
    UPSTREAM_PORT = free_port(UPSTREAM_PORT)

    raw = os.path.join(args.out, "raw")
    os.makedirs(raw, exist_ok=True)
    cluster = ShadowCluster(args)
    R = {"args": vars(args), "started": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
         "loadavg_start": os.getloadavg(), "phases": {}}
    upstream = qkcm = None
    try:
        log(f"creating cluster {args.cluster_name} ({args.nodes} kwok nodes)")
        # kwokctl probes for free ports in every process: creations are serialised machine-wide
        # (hack/local-cluster.sh's lock)
        with open("/tmp/qkcm-kwokctl-create.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            cluster.create(args.nodes)
        api = cluster.api
        # Both managers start acting together, with qkcm watching: upstream is started once qkcm's informers have
        # synced (its /readyz check informers-synced), the moment qkcm's controllers start too (its own Lease is
        # free). What each does once at its start (RegisteredNode events, the nodes' taints, the aggregated
        # ClusterRoles, the ServiceCIDR's status, the ServiceAccounts and root CA ConfigMaps of the existing
        # namespaces) then reaches qkcm's informers as upstream's writes, and qkcm's controllers make theirs within
        # seconds; the matcher holds every group open until qkcm's controllers have started and one window passed
        # (ShadowMatcher#holdWhileStarting), so the two meet even on a slow start. Started before qkcm, upstream's
        # start writes would predate shadow mode or its informers (never compared: qkcm's controllers find the state
        # made and do nothing); started after qkcm's controllers, more than a window after qkcm's (the first
        # 2026-11-27-shadow runs).
        qkcm = bench.Proc("qkcm", [args.qkcm_java, *args.qkcm_java_opts.split(), "-jar", args.qkcm_jar,
                                   f"--kubeconfig={cluster.manager_kubeconfig}", "--shadow",
                                   f"--shadow-match-window={args.window}",
                                   *common_flags(args, cluster, QKCM_PORT)],
                          os.path.join(raw, "qkcm.log"))
        healthy(QKCM_PORT, qkcm, path="/readyz?verbose", says="informers-synced ok")
        upstream = bench.Proc("upstream", [os.path.join(args.bin_dir, "kube-controller-manager"),
                                           f"--kubeconfig={cluster.upstream_kubeconfig}",
                                           *common_flags(args, cluster, UPSTREAM_PORT), *args.upstream_flags.split()],
                              os.path.join(raw, "upstream.log"))
        R["started_apart_s"] = upstream.t_exec - qkcm.t_exec
        healthy(QKCM_PORT, qkcm)

        # every controller started, its caches synced (JOSDK logs "Starting 'x' controller" and "'x' controller started")
        def controllers_started():
            text = open(os.path.join(raw, "qkcm.log")).read()
            return "Started controller" in text and text.count("' controller started") >= text.count("Starting '")
        poll(controllers_started, 180, "qkcm's controllers", 0.5)
        R["qkcm_argv"] = qkcm.p.args
        R["upstream_argv"] = upstream.p.args
        healthy(UPSTREAM_PORT, upstream)
        log("both managers healthy")

        def phase(name, fn):
            c0q, c0u, t0 = qkcm.snapshot_cpu(), upstream.snapshot_cpu(), time.time()
            log(f"{name} ...")
            try:
                extra = fn() or {}
            except TimeoutError as e:
                # one scenario that did not finish must not lose the others' comparison: said in the summary
                log(f"{name}: {e}")
                extra = {"error": str(e)}
            t1 = time.time()
            time.sleep(args.settle)
            R["phases"][name] = {"t0": t0, "t1": t1, "seconds": t1 - t0,
                                 "qkcm_cpu_s": qkcm.snapshot_cpu() - c0q,
                                 "upstream_cpu_s": upstream.snapshot_cpu() - c0u, **extra}
            log(f"{name}: {t1 - t0:.1f}s; cpu qkcm {R['phases'][name]['qkcm_cpu_s']:.1f}s, "
                f"upstream {R['phases'][name]['upstream_cpu_s']:.1f}s")

        def startup():
            def nodes_untainted():
                nodes = api.get("/api/v1/nodes")["items"]
                return len(nodes) == args.nodes and all(
                    not any(t["key"] == "node.kubernetes.io/not-ready" for t in n["spec"].get("taints", []) or [])
                    for n in nodes)
            poll(nodes_untainted, args.timeout, "nodes without the not-ready taint", 0.5)
            api.req("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
            # pods need the default ServiceAccount: made by the serviceaccount-controller (upstream's; qkcm's dry run)
            poll(lambda: exists(api, f"/api/v1/namespaces/{NS}/serviceaccounts/default"), args.timeout,
                 "default ServiceAccount")
        phase("startup", startup)

        D, Rp = args.deployments, args.replicas

        def scale_up():
            parallel(lambda i: api.req("POST", f"/apis/apps/v1/namespaces/{NS}/deployments", bench.deployment(i, Rp)),
                     range(D))
            poll(lambda: bench.deployments_done(api, D, Rp), args.timeout, "deployments available")
        phase("scale-up", scale_up)

        def rollout():
            patch = {"spec": {"template": {"metadata": {"annotations": {"bench/revision": "2"}}}}}
            parallel(lambda i: api.req("PATCH", f"/apis/apps/v1/namespaces/{NS}/deployments/d{i}", patch,
                                       ctype="application/strategic-merge-patch+json"), range(D))
            time.sleep(1)
            poll(lambda: bench.deployments_done(api, D, Rp), args.timeout, "rollouts complete")
        phase("rollout", rollout)

        def cascade_delete():
            parallel(lambda i: api.req("DELETE", f"/apis/apps/v1/namespaces/{NS}/deployments/d{i}",
                                       {"kind": "DeleteOptions", "apiVersion": "v1",
                                        "propagationPolicy": "Background"}), range(D))
            poll(lambda: not api.get(f"/apis/apps/v1/namespaces/{NS}/replicasets")["items"]
                 and not pods_of(api, NS, "app"), args.timeout, "no ReplicaSet and no pod left")
        phase("cascade-delete", cascade_delete)

        N = args.rs_replicas

        def replicaset():
            rs = labeled("big", "ReplicaSet", {"replicas": 0})
            api.req("POST", f"/apis/apps/v1/namespaces/{NS}/replicasets", rs)
            api.req("PATCH", f"/apis/apps/v1/namespaces/{NS}/replicasets/big", {"spec": {"replicas": N}},
                    ctype="application/merge-patch+json")

            def done():
                st = api.get(f"/apis/apps/v1/namespaces/{NS}/replicasets/big").get("status", {})
                return st.get("availableReplicas") == N and st.get("readyReplicas") == N
            poll(done, args.timeout, "ReplicaSet big available")
            api.req("PATCH", f"/apis/apps/v1/namespaces/{NS}/replicasets/big", {"spec": {"replicas": N // 2}},
                    ctype="application/merge-patch+json")
            poll(lambda: len(pods_of(api, NS, "app=big")) == N // 2, args.timeout, "ReplicaSet big scaled down")
        phase("replicaset-scale", replicaset)

        def endpoints_churn():
            api.req("POST", f"/api/v1/namespaces/{NS}/services",
                    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {"selector": {"app": "web"},
                                                           "ports": [{"port": 80, "targetPort": 8080}]}})
            for i in range(3):
                api.req("POST", f"/api/v1/namespaces/{NS}/pods",
                        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"web-{i}", "labels": {"app": "web"}},
                         "spec": POD_SPEC})
                poll(lambda: ready_count(pods_of(api, NS, "app=web")) == i + 1, args.timeout, f"pod web-{i} ready", 0.5)
                time.sleep(3)
            api.req("DELETE", f"/api/v1/namespaces/{NS}/pods/web-1",
                    {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0})

            def two_addresses():
                ep = api.get(f"/api/v1/namespaces/{NS}/endpoints/web") if exists(
                    api, f"/api/v1/namespaces/{NS}/endpoints/web") else {}
                subsets = ep.get("subsets") or [{}]
                return len(subsets[0].get("addresses") or []) == 2
            poll(two_addresses, args.timeout, "Endpoints web with 2 addresses", 0.5)
            time.sleep(3)
            api.req("DELETE", f"/api/v1/namespaces/{NS}/services/web")
            poll(lambda: not exists(api, f"/api/v1/namespaces/{NS}/endpoints/web"), args.timeout,
                 "Endpoints web deleted", 0.5)
        phase("endpoints-churn", endpoints_churn)

        def job():
            j = labeled("job", "Job", {"completions": 2, "parallelism": 2})
            j["spec"]["template"]["spec"] = dict(POD_SPEC, restartPolicy="Never")
            del j["spec"]["selector"]  # the Job controller's own selector
            j["spec"]["template"]["metadata"] = {}
            api.req("POST", f"/apis/batch/v1/namespaces/{NS}/jobs", j)
            # kwok's default stages complete a Job's pods (pod-complete): the Job succeeds; then it is deleted
            # with its pods (the garbage collector)
            def complete():
                st = api.get(f"/apis/batch/v1/namespaces/{NS}/jobs/job").get("status") or {}
                return any(c.get("type") == "Complete" and c.get("status") == "True" for c in st.get("conditions") or [])
            poll(complete, args.timeout, "Job complete")
            api.req("DELETE", f"/apis/batch/v1/namespaces/{NS}/jobs/job",
                    {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"})
            poll(lambda: not pods_of(api, NS, "batch.kubernetes.io/job-name=job"), args.timeout, "Job's pods gone")
        phase("job", job)

        def daemonset():
            api.req("POST", f"/apis/apps/v1/namespaces/{NS}/daemonsets", labeled("ds", "DaemonSet", {}))

            def done():
                st = api.get(f"/apis/apps/v1/namespaces/{NS}/daemonsets/ds").get("status", {})
                return st.get("numberReady") == args.nodes and st.get("desiredNumberScheduled") == args.nodes
            poll(done, args.timeout, "DaemonSet ready on every node")
            api.req("DELETE", f"/apis/apps/v1/namespaces/{NS}/daemonsets/ds",
                    {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"})
            poll(lambda: not pods_of(api, NS, "app=ds"), args.timeout, "DaemonSet's pods gone")
        phase("daemonset", daemonset)

        def statefulset():
            ss = labeled("ss", "StatefulSet", {"replicas": 2, "serviceName": "ss"})
            api.req("POST", f"/apis/apps/v1/namespaces/{NS}/statefulsets", ss)

            def ready(n):
                st = api.get(f"/apis/apps/v1/namespaces/{NS}/statefulsets/ss").get("status", {})
                return st.get("readyReplicas") == n and st.get("replicas") == n
            poll(lambda: ready(2), args.timeout, "StatefulSet 2 ready")
            for n in (3, 1):
                api.req("PATCH", f"/apis/apps/v1/namespaces/{NS}/statefulsets/ss", {"spec": {"replicas": n}},
                        ctype="application/merge-patch+json")
                poll(lambda: ready(n) and len(pods_of(api, NS, "app=ss")) == n, args.timeout, f"StatefulSet {n} ready")
            api.req("DELETE", f"/apis/apps/v1/namespaces/{NS}/statefulsets/ss",
                    {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"})
            poll(lambda: not pods_of(api, NS, "app=ss"), args.timeout, "StatefulSet's pods gone")
        phase("statefulset", statefulset)

        def namespace_deletion():
            ns = "bench-ns-delete"
            api.req("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
            poll(lambda: exists(api, f"/api/v1/namespaces/{ns}/serviceaccounts/default"), args.timeout,
                 "default ServiceAccount")
            for i in range(3):
                api.req("POST", f"/api/v1/namespaces/{ns}/configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}"}, "data": {"k": "v"}})
            d = bench.deployment(0, 2)
            d["metadata"]["namespace"] = ns
            api.req("POST", f"/apis/apps/v1/namespaces/{ns}/deployments", d)
            poll(lambda: ready_count(pods_of(api, ns, "app=d0")) == 2, args.timeout, "2 pods ready in " + ns)
            time.sleep(3)
            api.req("DELETE", f"/api/v1/namespaces/{ns}")
            poll(lambda: not exists(api, f"/api/v1/namespaces/{ns}"), args.timeout, f"namespace {ns} gone")
        phase("namespace-deletion", namespace_deletion)

        def rest():
            # every group closes once the window passed without a write joining it
            time.sleep(30)
        phase("final-settle", rest)

        shadow_json = fetch(QKCM_PORT, "/shadow")
        with open(os.path.join(args.out, "shadow.json"), "w") as f:
            f.write(json.dumps(json.loads(shadow_json), indent=1) + "\n")
        with open(os.path.join(args.out, "shadow.html"), "w") as f:
            f.write(fetch(QKCM_PORT, "/shadow.html"))
        metrics = fetch(QKCM_PORT, "/metrics")
        with open(os.path.join(args.out, "metrics.txt"), "w") as f:
            f.write("".join(l + "\n" for l in metrics.splitlines() if "shadow" in l))
    finally:
        for proc in (qkcm, upstream):
            if proc is not None:
                proc.stop()
        if os.path.exists(getattr(cluster, "audit_log", "")):
            shutil.copy(cluster.audit_log, os.path.join(raw, "audit.log"))
            R["audit"] = audit(cluster.audit_log)
        cluster.delete()

    for name, proc in (("qkcm", qkcm), ("upstream", upstream)):
        samples = proc.samples
        R[name] = {"cpu_total_s": proc.final_cpu, "rss_peak_mb": proc.hwm_kb / 1024,
                   "rss_median_mb": statistics.median(r for (_, _, r) in samples) / 1024 if samples else None,
                   "rss_samples": [(t - proc.t_exec, r) for (t, _, r) in samples]}
        # the scenarios only (both managers started and synced): from the first scenario's start to the end
        t_first = R["phases"]["scale-up"]["t0"]
        during = [(t, c, r) for (t, c, r) in samples if t >= t_first]
        if during:
            R[name]["cpu_scenarios_s"] = during[-1][1] - during[0][1]
            R[name]["rss_scenarios_median_mb"] = statistics.median(r for (_, _, r) in during) / 1024
            R[name]["rss_scenarios_max_mb"] = max(r for (_, _, r) in during) / 1024
    R["loadavg_end"] = os.getloadavg()
    with open(os.path.join(raw, "run.json"), "w") as f:
        json.dump(R, f)
    summary(R, json.loads(shadow_json), args.out)
    return 0


def audit(path):
    """Both managers' writes (the audit policy logs only theirs): qkcm's must all be dry runs but its own Lease's;
    the refusals (403, 409) of each side, to set qkcm's refused dry runs beside upstream's own refused writes."""
    users = {bench.MANAGER_USER: "qkcm", UPSTREAM_USER: "upstream"}
    out = {side: {"writes": 0, "by_verb": {}, "refused": {}} for side in users.values()}
    out["qkcm"].update({"without_dry_run": [], "shadow_lease_writes": 0})
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            side = users.get((e.get("user") or {}).get("username"))
            if e.get("stage") != "ResponseComplete" or side is None:
                continue
            verb, uri = e.get("verb"), e.get("requestURI", "")
            ref = e.get("objectRef") or {}
            code = (e.get("responseStatus") or {}).get("code")
            o = out[side]
            if ref.get("resource") == "leases" and ref.get("namespace") == "kube-system":
                # leader election's Leases, not the controllers' writes: shadow mode's own (never upstream's) and
                # upstream's
                name = str(ref.get("name", ""))
                if side == "qkcm" and name.endswith("-shadow"):
                    o["shadow_lease_writes"] += 1
                    continue
                if side == "upstream" and name == "kube-controller-manager":
                    continue
            o["writes"] += 1
            o["by_verb"][verb] = o["by_verb"].get(verb, 0) + 1
            if code in (403, 409):
                what = f"{code} {verb} {ref.get('resource')}{'/' + ref['subresource'] if ref.get('subresource') else ''}"
                o["refused"][what] = o["refused"].get(what, 0) + 1
            # reviews and TokenRequests persist nothing and go unchanged (ShadowWrites)
            if side == "qkcm" and "dryRun=All" not in uri and not uri.split("?")[0].endswith(("reviews", "/token")):
                o["without_dry_run"].append(f"{verb} {uri} {code}")
    return out


def summary(R, shadow, outdir):
    lines = ["| controller | " + " | ".join(CLASSES) + " |", "|---|" + "---:|" * len(CLASSES)]
    for c, counts in sorted(shadow["controllers"].items()):
        lines.append(f"| {c} | " + " | ".join(str(counts.get(k, 0)) for k in CLASSES) + " |")
    lines.append("| **total** | " + " | ".join(f"**{shadow['totals'].get(k, 0)}**" for k in CLASSES) + " |")
    lines += ["", "| scenario | seconds | qkcm CPU s | upstream CPU s |", "|---|---:|---:|---:|"]
    for name, ph in R["phases"].items():
        lines.append(f"| {name} | {ph['seconds']:.0f} | {ph['qkcm_cpu_s']:.1f} | {ph['upstream_cpu_s']:.1f} |")
    q, u = R["qkcm"], R["upstream"]
    lines += ["", "| | qkcm --shadow | upstream | ratio |", "|---|---:|---:|---:|"]
    for key, label in (("cpu_total_s", "CPU s, whole run (startup included)"),
                       ("cpu_scenarios_s", "CPU s, scenarios (scale-up to the end)"),
                       ("rss_peak_mb", "RSS peak MiB (VmHWM)"),
                       ("rss_scenarios_median_mb", "RSS median MiB, scenarios"),
                       ("rss_scenarios_max_mb", "RSS max MiB, scenarios")):
        if q.get(key) is not None and u.get(key):
            lines.append(f"| {label} | {q[key]:.1f} | {u[key]:.1f} | {q[key] / u[key]:.2f} |")
    a = R.get("audit", {})
    q_a, u_a = a.get("qkcm", {}), a.get("upstream", {})
    lines += ["", f"Writes (audit log; leader election's Lease renewals left out): qkcm {q_a.get('writes')} "
                  f"{q_a.get('by_verb')}, of which without dryRun=All: {len(q_a.get('without_dry_run', []))} "
                  f"{q_a.get('without_dry_run', [])[:5]}; its own Lease kube-controller-manager-shadow: "
                  f"{q_a.get('shadow_lease_writes')} writes. Upstream {u_a.get('writes')} {u_a.get('by_verb')}.",
              f"Refused (403/409): qkcm's dry runs {q_a.get('refused')}; upstream's writes {u_a.get('refused')}.",
              "scenarios that did not finish: " + (", ".join(f"{n} ({ph['error']})" for n, ph in R["phases"].items()
                                                          if "error" in ph) or "none"),
              f"load average at start {R['loadavg_start']}, at end {R['loadavg_end']}"]
    with open(os.path.join(outdir, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


CLASSES = ["matched", "converged", "only-qkcm", "only-upstream", "different-content", "rejected", "namespace-terminating"]

if __name__ == "__main__":
    sys.exit(main())
