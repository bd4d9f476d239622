#!/usr/bin/env python3
"""Chaos run: qkcm and upstream kube-controller-manager under faults, counted from the API server.

Driven by bench/chaos.sh (see bench/README.md, "Chaos run"). For every manager and every QPS it
creates a kwokctl binary-runtime cluster of its own (cluster qkcm-chaos, KWOK_WORKDIR ~/.kwok-chaos,
manager ports 10857/10858, Toxiproxy API 8575: nothing shared with bench/run.sh, hack/e2e.sh or
hack/local-cluster.sh) and runs the variants one after another on it. Each variant is a series of
episodes; an episode is one workload step with one fault injected mid-way:

  workloads  rs-up (ReplicaSet 0 -> N), rs-down (N -> 0), rollout (D Deployments x R, template changed)
  variants   kill       one replica, kill -9 mid-workload, restarted at once (a supervisor restarts any
                        replica that exits, as a kubelet would)
             failover   two replicas, the leader killed -9 mid-workload; the standby takes over
             apiserver  kube-apiserver killed -9 mid-workload, etcd compacted at its head while it is
                        down (every older resourceVersion is then 410 Gone), restarted
             watch-cut  kube-apiserver restarted with a short --min-request-timeout and
                        --etcd-compaction-interval for the variant; etcd compacted mid-workload
             network    one replica behind Toxiproxy: latency, connection resets, stalled connections
                        for a few seconds mid-workload
             split      replica a (leader) behind Toxiproxy, replica b direct; a's connections stalled
                        mid-workload until b has taken over, then released

Every replica connects with a client certificate of its own (chaos:manager-a / -b), the only users
bench/chaos-audit-policy.yaml logs. From the audit log, per episode:
  * pods created / deleted by the managers (code 201 / 200) against what the step needs;
  * writes by a replica while the other replica held the lease (the lease's holder is the user of
    the last successful lease write): must be 0;
  * takeover: fault -> first successful lease write after it;
and from the harness: time from the end of the fault to convergence (pods, ReplicaSet/Deployment
status as the spec says).
"""
import argparse
import datetime as dt
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (cluster API client, pod watch, shell helper)
import requests  # noqa: E402

ROOT, BENCH = bench.ROOT, bench.BENCH
USERS = {"a": "chaos:manager-a", "b": "chaos:manager-b"}
USER_KEY = {v: k for k, v in USERS.items()}
PORTS = {"a": 10857, "b": 10858}
TOXI_PORT = 8575
NS_RS, NS_DEP = "chaos-rs", "chaos-dep"
LEASE = ("kube-system", "kube-controller-manager")
WRITES = ("create", "update", "patch", "delete", "deletecollection")
# requests that change nothing in the cluster (delegated authn/authz) and the lease itself
NOT_ACTING = ("leases", "tokenreviews", "subjectaccessreviews", "localsubjectaccessreviews",
              "selfsubjectaccessreviews", "selfsubjectreviews")


def acting(r):
    """A write by which a replica acts on the cluster (what only the leader may do)."""
    return r["verb"] in WRITES and r["res"] not in NOT_ACTING
CONTROLLERS = "deployment-controller,replicaset-controller,garbage-collector-controller"


def log(msg):
    print(f"[chaos {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def quiet(fn, default=False):
    """fn() or default when the API server is away (restarts are part of the run)."""
    try:
        return fn()
    except Exception:  # noqa: BLE001
        return default


def poll(pred, timeout, every=0.5):
    end = time.time() + timeout
    while time.time() < end:
        if quiet(pred):
            return time.time()
        time.sleep(every)
    return None


# ---------------------------------------------------------------------------------------------
# cluster

class Cluster:
    def __init__(self, args):
        self.args, self.bin, self.name = args, args.bin_dir, args.cluster_name
        self.env = dict(os.environ, KWOK_WORKDIR=args.kwok_workdir)
        self.dir = os.path.join(args.kwok_workdir, "clusters", self.name)
        self.kubeconfig_out = os.path.join(args.kwok_workdir, "kubeconfig")

    def kwokctl(self, *a, **kw):
        return bench.sh(os.path.join(self.bin, "kwokctl"), *a, env=self.env, **kw)

    def delete(self):
        if os.path.isdir(self.dir):
            self.kwokctl("delete", "cluster", "--name", self.name, "--kubeconfig", self.kubeconfig_out, check=False)
            shutil.rmtree(self.dir, ignore_errors=True)

    def create(self, nodes, namespaces=()):
        self.delete()
        os.makedirs(self.args.kwok_workdir, exist_ok=True)
        b = self.bin
        self.kwokctl("create", "cluster", "--name", self.name, "--runtime", "binary",
                     "--etcd-binary", f"{b}/etcd", "--kube-apiserver-binary", f"{b}/kube-apiserver",
                     "--kube-scheduler-binary", f"{b}/kube-scheduler", "--kwok-controller-binary", f"{b}/kwok",
                     "--disable", "kube-controller-manager",
                     "--kube-audit-policy", os.path.join(BENCH, "chaos-audit-policy.yaml"),
                     "--kubeconfig", self.kubeconfig_out, "--wait", "3m", capture=True)
        self.kwokctl("--name", self.name, "scale", "node", "--replicas", str(nodes), capture=True)
        kc = open(os.path.join(self.dir, "kubeconfig.yaml")).read()
        self.server = next(l.split("server:")[1].strip() for l in kc.splitlines() if "server:" in l)
        self.api_port = int(self.server.rsplit(":", 1)[1])
        self.pki = os.path.join(self.dir, "pki")
        self.api = bench.Api(self.server, os.path.join(self.pki, "ca.crt"),
                             os.path.join(self.pki, "admin.crt"), os.path.join(self.pki, "admin.key"))
        self.audit_log = os.path.join(self.dir, "logs", "audit.log")
        etcd = self.cmdline("etcd")
        url = next(a.split("=", 1)[1] for a in etcd if a.startswith("--advertise-client-urls="))
        self.etcd = "http://127.0.0.1:" + url.rsplit(":", 1)[1]
        self.apiserver_argv0 = self.cmdline("kube-apiserver")
        # No node-lifecycle-controller in the run: the harness takes the not-ready taint off the kwok
        # nodes (as bench's ceiling does), so the managers run only the controllers under test.
        poll(lambda: len(self.api.get("/api/v1/nodes")["items"]) == nodes, 120)
        for n in self.api.get("/api/v1/nodes")["items"]:
            self.api.req("PATCH", f"/api/v1/nodes/{n['metadata']['name']}", {"spec": {"taints": None}},
                         ctype="application/merge-patch+json")
        for ns in namespaces:
            self.api.req("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                        "metadata": {"name": ns}})
            self.api.req("POST", f"/api/v1/namespaces/{ns}/serviceaccounts",
                         {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}},
                         ok=(201, 409))

    def pid(self, comp):
        return int(open(os.path.join(self.dir, "pids", f"{comp}.pid")).read().strip())

    def cmdline(self, comp):
        with open(f"/proc/{self.pid(comp)}/cmdline") as f:
            return [a for a in f.read().split("\0") if a]

    def identity(self, key, server):
        """A client certificate of its own per replica (the audit log tells the replicas apart)."""
        user = USERS[key]
        return bench.client_cert_kubeconfig(
            self.pki, f"chaos-{key}", user, server,
            os.path.join(self.dir, f"chaos-{key}-{server.rsplit(':', 1)[1]}.kubeconfig"), reuse=True)

    # --- faults on the control plane

    def etcd_compact(self):
        """Compacts etcd at its head revision (etcd's JSON gateway): every older resourceVersion is gone."""
        s = requests.Session()
        s.trust_env = False
        rev = s.post(f"{self.etcd}/v3/kv/range", json={"key": "AA==", "limit": 1}, timeout=10).json()["header"]["revision"]
        s.post(f"{self.etcd}/v3/kv/compaction", json={"revision": rev, "physical": True}, timeout=30)
        return int(rev)

    def restart_apiserver(self, down_s=2.0, compact=False, argv=None):
        """kill -9 of kube-apiserver, optionally etcd compacted while it is down, then started again
        (same command line unless argv is given). Returns (t_killed, t_ready, compacted revision)."""
        old = self.pid("kube-apiserver")
        argv = argv or self.cmdline("kube-apiserver")
        os.kill(old, signal.SIGKILL)
        t_kill = time.time()
        while os.path.exists(f"/proc/{old}") and open(f"/proc/{old}/stat").read().split()[2] != "Z":
            time.sleep(0.05)
        rev = self.etcd_compact() if compact else None
        time.sleep(down_s)
        logf = open(os.path.join(self.dir, "logs", "kube-apiserver.log"), "a")
        p = subprocess.Popen(argv, cwd=self.dir, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        with open(os.path.join(self.dir, "pids", "kube-apiserver.pid"), "w") as f:
            f.write(str(p.pid))
        t_ready = poll(lambda: self.api.s().get(self.server + "/readyz", timeout=2).status_code == 200, 120, 0.2)
        return t_kill, t_ready, rev


# ---------------------------------------------------------------------------------------------
# audit log: the replicas' requests, read as the API server appends them

def late_writes(recs, old, mine, args):
    """Writes by the old leader after the latest moment client-go's elector may still act: its renew
    cycle starts a retry period after a successful renewal and gives up a renew deadline later
    (leaderelection.go renew(): wait.Until + a context timeout). Each write is measured from the old
    leader's last successful renewal before it (one during the fault counts: the lease was renewed)."""
    renewals = sorted(x["t"] for x in recs if Audit.is_lease_write(x) and x["u"] == old)
    late = 0
    for x in mine:
        before = [t for t in renewals if t <= x["t"]]
        if before and x["t"] > before[-1] + args.retry_period + args.renew_deadline:
            late += 1
    return late


def recount(args, raw, rows):
    """--recount: the audit-log measures that need no watch (late writes) again, from raw's audit logs."""
    for run in dict.fromkeys(r["run"] for r in rows):
        path = os.path.join(raw, run + ".audit.log")
        if not os.path.exists(path):
            continue
        recs = Audit(path).read()
        for r in rows:
            if r["run"] != run or not r.get("old_leader") or "t_fault_start" not in r:
                continue
            old = r["old_leader"]
            eps = [e for e in rows if e["run"] == run and e["variant"] == r["variant"] and "t0" in e]
            i = eps.index(r)
            t1 = eps[i + 1]["t0"] if i + 1 < len(eps) else float("inf")
            nxt = min([x["t"] for x in recs if Audit.is_lease_write(x) and x["u"] == old
                       and x["t"] > r["t_fault_start"]] + [t1])
            mine = [x for x in recs if x["u"] == old and acting(x) and r["t_fault_start"] <= x["t"] < nxt]
            r["late_writes"] = late_writes(recs, old, mine, args)
    return rows


class Audit:
    def __init__(self, path):
        self.path, self.off, self.recs = path, 0, []
        self.lock = threading.Lock()

    def read(self):
        with self.lock:
            if not os.path.exists(self.path):
                return self.recs
            with open(self.path) as f:
                f.seek(self.off)
                while True:
                    line = f.readline()
                    if not line or not line.endswith("\n"):
                        break
                    self.off = f.tell()
                    try:
                        e = json.loads(line)
                    except ValueError:
                        continue
                    if e.get("stage") != "ResponseComplete":
                        continue
                    u = e.get("user", {}).get("username")
                    if u not in USER_KEY:
                        continue
                    o = e.get("objectRef") or {}
                    self.recs.append({"t": bench.parse_ts(e["requestReceivedTimestamp"]), "u": USER_KEY[u],
                                      "verb": e["verb"], "res": o.get("resource", "-"), "sub": o.get("subresource"),
                                      "ns": o.get("namespace"), "name": o.get("name"),
                                      "code": (e.get("responseStatus") or {}).get("code")})
            return self.recs

    @staticmethod
    def is_lease_write(r):
        return (r["res"] == "leases" and (r["ns"], r["name"]) == LEASE and r["verb"] in WRITES
                and r["code"] in (200, 201))

    def leader(self):
        """The replica that wrote the lease last, successfully (holders renew every retry period)."""
        for r in reversed(self.read()):
            if self.is_lease_write(r):
                return r["u"], r["t"]
        return None, None


def analyse(recs, t0, t1, namespaces=(NS_RS, NS_DEP)):
    """Figures of the requests received in [t0, t1)."""
    w = [r for r in recs if t0 <= r["t"] < t1]
    pods = [r for r in w if r["res"] == "pods" and r["sub"] is None and r["ns"] in namespaces]
    return {
        "creates": sum(1 for r in pods if r["verb"] == "create" and r["code"] == 201),
        "deletes": sum(1 for r in pods if r["verb"] == "delete" and r["code"] in (200, 202)),
        # a create answered 5xx (e.g. 504 when the client went away mid-request) may still have stored the pod
        "creates_5xx": sum(1 for r in pods if r["verb"] == "create" and (r["code"] or 500) >= 500),
        "gone_410": sum(1 for r in w if r["code"] == 410),
        "requests": len(w),
    }


def overlap(recs, t0, t1):
    """Writes (other than the lease) made by a replica while the other replica held the lease: the
    holder at time t is the user of the last successful lease write before t."""
    holder, n, ex = None, 0, []
    for r in sorted(recs, key=lambda r: r["t"]):
        if Audit.is_lease_write(r):
            holder = r["u"]
            continue
        if acting(r) and holder is not None and r["u"] != holder and t0 <= r["t"] < t1:
            n += 1
            if len(ex) < 5:
                ex.append(f"{r['u']} {r['verb']} {r['res']} {r['ns']}/{r['name']} code {r['code']}")
    return n, ex


# ---------------------------------------------------------------------------------------------
# manager replicas, supervised

class Replica:
    def __init__(self, key, argv, logpath):
        self.key, self.argv, self.logpath = key, argv, logpath
        self.p, self.exits, self.starts = None, [], 0
        self.killed_by_harness = False

    def start(self):
        logf = open(self.logpath, "a")
        logf.write(f"\n===== start {self.starts + 1} at {dt.datetime.now().isoformat()} =====\n")
        logf.flush()
        self.p = subprocess.Popen(self.argv, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  start_new_session=True)
        logf.close()
        self.starts += 1
        self.killed_by_harness = False

    def alive(self):
        return self.p is not None and self.p.poll() is None

    def kill9(self):
        self.killed_by_harness = True
        if self.alive():
            os.killpg(self.p.pid, signal.SIGKILL)
            self.p.wait()
        return time.time()

    def stop(self):
        self.killed_by_harness = True
        if self.alive():
            os.killpg(self.p.pid, signal.SIGTERM)
            try:
                self.p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.p.pid, signal.SIGKILL)
                self.p.wait()

    def healthy(self):
        s = requests.Session()
        s.trust_env = False
        return s.get(f"https://127.0.0.1:{PORTS[self.key]}/healthz", verify=False, timeout=2).status_code == 200


class Supervisor(threading.Thread):
    """Restarts a replica that exited (killed by the harness, or gave up its lease and exited)."""

    def __init__(self, replicas, delay):
        super().__init__(daemon=True)
        self.replicas, self.delay, self.on = replicas, delay, True

    def run(self):
        while self.on:
            for r in self.replicas:
                if self.on and r.p is not None and not r.alive():
                    rc = r.p.returncode
                    if not r.killed_by_harness:
                        r.exits.append({"t": time.time(), "rc": rc})
                        log(f"  replica {r.key} exited by itself (rc {rc}); restarting")
                    time.sleep(self.delay)
                    if self.on:
                        r.start()
            time.sleep(0.2)


# ---------------------------------------------------------------------------------------------
# Toxiproxy

class Toxi:
    def __init__(self, binary, upstream_port, logpath):
        self.url = f"http://127.0.0.1:{TOXI_PORT}"
        self.logf = open(logpath, "a")
        self.p = subprocess.Popen([binary, "-host", "127.0.0.1", "-port", str(TOXI_PORT)], stdout=self.logf,
                                  stderr=subprocess.STDOUT, start_new_session=True)
        self.s = requests.Session()
        self.s.trust_env = False
        poll(lambda: self.s.get(self.url + "/version", timeout=1).ok, 30, 0.1)
        self.port = free_port()
        self.s.post(self.url + "/proxies", json={"name": "apiserver", "listen": f"127.0.0.1:{self.port}",
                                                 "upstream": f"127.0.0.1:{upstream_port}", "enabled": True}
                    ).raise_for_status()

    def add(self, kind):
        """latency: +800 ms ±400 each way; reset: every connection reset at once (new ones too);
        stall: no byte passes (connections stay open)."""
        toxics = {"latency": [("latency", {"latency": 800, "jitter": 400})],
                  "reset": [("reset_peer", {"timeout": 0})],
                  "stall": [("timeout", {"timeout": 0})]}[kind]
        for i, (typ, attrs) in enumerate(toxics):
            for stream in ("upstream", "downstream"):
                self.s.post(self.url + "/proxies/apiserver/toxics",
                            json={"name": f"{kind}-{stream}-{i}", "type": typ, "stream": stream, "toxicity": 1.0,
                                  "attributes": attrs}).raise_for_status()

    def clear(self):
        for t in self.s.get(self.url + "/proxies/apiserver/toxics").json():
            self.s.delete(self.url + f"/proxies/apiserver/toxics/{t['name']}")

    def stop(self):
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGTERM)
            self.p.wait(10)
        self.logf.close()


# ---------------------------------------------------------------------------------------------
# workloads

POD_SPEC = bench.POD_SPEC


def pods(api, ns):
    return api.get(f"/api/v1/namespaces/{ns}/pods?limit=10000")["items"]


def pod_ok(p):
    return not p["metadata"].get("deletionTimestamp") and bench.PodWatch.ready(p)


class Watch(bench.PodWatch):
    """bench's pod watch (started before any pod exists, relists after 410 or a broken watch), plus
    the time each pod was first seen and the time it was seen deleted: pods created/deleted per
    episode as the API server's watch tells them, beside the audit log's count."""

    def __init__(self, api, ns):
        super().__init__(api, ns)
        self.first, self.gone = {}, {}

    def apply(self, typ, pod):
        uid, now = pod["metadata"]["uid"], time.time()
        with self.lock:
            if typ == "DELETED":
                if uid in self.live:
                    self.gone.setdefault(uid, now)
            else:
                self.first.setdefault(uid, now)
        super().apply(typ, pod)

    def between(self, t0, t1):
        with self.lock:
            return (sum(1 for t in self.first.values() if t0 <= t < t1),
                    sum(1 for t in self.gone.values() if t0 <= t < t1))


class Workload:
    """The ReplicaSet and Deployments workload (the first one: rs-up, rs-down, rollout). Every workload has
    namespaces, controllers, nodes(args), watches, setup(), kinds(n), start(kind), kind_name(kind),
    converged() and violations(t0, t1): its own invariant's breaches in a window (0 where it has none
    beyond pods created/deleted beyond spec)."""
    name = "deployments"
    namespaces = (NS_RS, NS_DEP)
    controllers = CONTROLLERS

    @staticmethod
    def nodes(a):
        return int((a.rs_replicas + 2 * a.deployments * a.replicas) / 100) + 2

    def __init__(self, api, args):
        self.api, self.args = api, args
        self.N, self.D, self.R = args.rs_replicas, args.deployments, args.replicas
        self.rs_at, self.rev = 0, 0
        self.set_up = False
        self.watch = Watch(api, NS_RS)
        self.watch_dep = Watch(api, NS_DEP)
        self.watches = [self.watch, self.watch_dep]
        for w in self.watches:
            w.start()

    def kinds(self, n):
        return ["rs" if i % 2 == 0 else "rollout" for i in range(n)]

    def violations(self, t0, t1):
        return {}

    def setup(self):
        self.set_up = True
        self.api.req("POST", f"/apis/apps/v1/namespaces/{NS_RS}/replicasets",
                     {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "big"},
                      "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "big"}},
                               "template": {"metadata": {"labels": {"app": "big"}}, "spec": POD_SPEC}}})
        for i in range(self.D):
            labels = {"app": f"d{i}"}
            self.api.req("POST", f"/apis/apps/v1/namespaces/{NS_DEP}/deployments",
                         {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"d{i}"},
                          "spec": {"replicas": self.R, "selector": {"matchLabels": labels},
                                   "template": {"metadata": {"labels": labels}, "spec": POD_SPEC}}})
        return {"creates": self.D * self.R, "deletes": 0}

    def start(self, kind):
        """Starts a step; returns (expected creates, expected deletes, progress())."""
        if kind == "rs":
            target = 0 if self.rs_at else self.N
            start_live = self.watch.counts()[0]
            self.api.req("PATCH", f"/apis/apps/v1/namespaces/{NS_RS}/replicasets/big",
                         {"spec": {"replicas": target}}, ctype="application/merge-patch+json")
            self.rs_at = target
            total = abs(target - start_live) or 1
            return (self.N, 0, lambda: (self.watch.counts()[0] - start_live) / total) if target else \
                (0, self.N, lambda: (start_live - self.watch.counts()[0]) / total)
        self.rev += 1
        patch = {"spec": {"template": {"metadata": {"annotations": {"chaos/rev": str(self.rev)}}}}}
        for i in range(self.D):
            self.api.req("PATCH", f"/apis/apps/v1/namespaces/{NS_DEP}/deployments/d{i}", patch,
                         ctype="application/strategic-merge-patch+json")
        rev = str(self.rev)

        def progress():
            ps = pods(self.api, NS_DEP)
            new = sum(1 for p in ps if (p["metadata"].get("annotations") or {}).get("chaos/rev") == rev)
            return new / (self.D * self.R)
        return self.D * self.R, self.D * self.R, progress

    def kind_name(self, kind):
        return ("rs-down" if self.rs_at else "rs-up") if kind == "rs" else "rollout"

    def converged(self):
        rs = self.api.get(f"/apis/apps/v1/namespaces/{NS_RS}/replicasets/big")
        st = rs.get("status", {})
        if st.get("observedGeneration", 0) < rs["metadata"]["generation"] or st.get("replicas", 0) != self.rs_at:
            return False
        if self.rs_at and not (st.get("readyReplicas") == self.rs_at and st.get("availableReplicas") == self.rs_at):
            return False
        items = self.api.get(f"/apis/apps/v1/namespaces/{NS_DEP}/deployments")["items"]
        for d in items:
            st, sp = d.get("status", {}), d["spec"]
            if st.get("observedGeneration", 0) < d["metadata"]["generation"]:
                return False
            if not (st.get("updatedReplicas") == self.R and st.get("replicas") == self.R
                    and st.get("availableReplicas") == self.R):
                return False
        ps = pods(self.api, NS_RS)
        if len(ps) != self.rs_at or not all(pod_ok(p) for p in ps):
            return False
        ps = pods(self.api, NS_DEP)
        rev = str(self.rev) if self.rev else None
        return len(ps) == self.D * self.R and all(
            pod_ok(p) and (p["metadata"].get("annotations") or {}).get("chaos/rev") == rev for p in ps)


class Timeline(Watch):
    """A pod watch that also keeps, per pod, the interval in which it was live (seen neither deleting nor
    terminal) and the key it holds (a Job's completion index, a daemon pod's node, a StatefulSet ordinal):
    two live pods holding one key at once is the workload's invariant broken."""

    def __init__(self, api, ns, key):
        super().__init__(api, ns)
        self.key_of = key
        self.intervals = {}  # uid -> [key, start, end or None]

    def apply(self, typ, pod):
        uid, now = pod["metadata"]["uid"], time.time()
        ended = typ == "DELETED" or pod["metadata"].get("deletionTimestamp") \
            or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
        with self.lock:
            iv = self.intervals.get(uid)
            if iv is None and not ended:
                k = self.key_of(pod)
                if k is not None:
                    self.intervals[uid] = [k, now, None]
            elif iv is not None and ended and iv[2] is None:
                iv[2] = now
        super().apply(typ, pod)

    def relist(self):
        # pods gone while the watch was broken end their interval when the relist starts, before the pods
        # first seen in it begin theirs: when a pod went and its replacement came, both unseen, is not
        # known (the audit log has it), so their order is not judged; ending the old ones after the new
        # ones began counted every such pair as two live pods at once
        started = time.time()
        super().relist()
        with self.lock:
            for uid, iv in self.intervals.items():
                if iv[2] is None and uid not in self.live:
                    iv[2] = started

    def overlapping(self, t0, t1, allowed=1):
        """Keys held by more than `allowed` live pods at some moment of [t0, t1)."""
        with self.lock:
            ivs = [(k, s, e if e is not None else float("inf")) for k, s, e in self.intervals.values()
                   if s < t1 and (e is None or e > t0)]
        by = {}
        for k, s, e in ivs:
            by.setdefault(k, []).append((s, e))
        bad = 0
        for k, spans in by.items():
            events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans], key=lambda x: (x[0], x[1]))
            live = peak = 0
            for _, d in events:
                live += d
                peak = max(peak, live)
            bad += peak > allowed
        return bad


NS_JOB, NS_DS, NS_STS = "chaos-job", "chaos-ds", "chaos-sts"


def job_index(p):
    ann = p["metadata"].get("annotations") or {}
    labels = p["metadata"].get("labels") or {}
    idx = ann.get("batch.kubernetes.io/job-completion-index")
    return None if idx is None else (labels.get("batch.kubernetes.io/job-name") or labels.get("job-name"), idx)


class JobWorkload:
    """Jobs of --job-completions pods, --job-parallelism at a time, Indexed and NonIndexed in turn (kwok
    completes each pod at once); the previous Job deleted (background) when the next starts. Invariants:
    completions counted exactly once (status.succeeded == completions, pods created == completions) and
    no completion index with two live pods at once."""
    name = "job"
    namespaces = (NS_JOB,)
    controllers = "job-controller,garbage-collector-controller"

    @staticmethod
    def nodes(a):
        return int(a.job_parallelism / 50) + 2

    def __init__(self, api, args):
        self.api, self.args = api, args
        self.C, self.P = args.job_completions, args.job_parallelism
        self.n, self.set_up = 0, False
        self.timeline = Timeline(api, NS_JOB, job_index)
        self.watches = [self.timeline]
        self.timeline.start()

    def setup(self):
        self.set_up = True
        return {"creates": 0, "deletes": 0}

    def kinds(self, n):
        return ["Indexed" if i % 2 == 0 else "NonIndexed" for i in range(n)]

    def kind_name(self, kind):
        return f"job-{kind.lower()}"

    def start(self, kind):
        prev = f"j{self.n}" if self.n else None
        if prev:
            self.api.req("DELETE", f"/apis/batch/v1/namespaces/{NS_JOB}/jobs/{prev}",
                         {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"})
        self.n += 1
        name = f"j{self.n}"
        spec = dict(POD_SPEC, restartPolicy="Never")
        self.api.req("POST", f"/apis/batch/v1/namespaces/{NS_JOB}/jobs",
                     {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
                      "spec": {"completions": self.C, "parallelism": self.P, "completionMode": kind,
                               "backoffLimit": 1000, "template": {"spec": spec}}})

        def progress():
            j = self.api.get(f"/apis/batch/v1/namespaces/{NS_JOB}/jobs/{name}")
            return ((j.get("status") or {}).get("succeeded") or 0) / self.C
        return self.C, (self.C if prev else 0), progress

    def converged(self):
        if not self.n:
            return True
        name = f"j{self.n}"
        j = self.api.get(f"/apis/batch/v1/namespaces/{NS_JOB}/jobs/{name}")
        st = j.get("status") or {}
        if st.get("succeeded") != self.C or st.get("active") or st.get("uncountedTerminatedPods", {}).get("succeeded"):
            return False
        if not any(c["type"] == "Complete" and c["status"] == "True" for c in st.get("conditions") or []):
            return False
        ps = pods(self.api, NS_JOB)
        mine = [p for p in ps if (p["metadata"].get("labels") or {}).get("batch.kubernetes.io/job-name") == name]
        # every completion counted once: as many pods as completions, none still tracked, the old Job's gone
        return (len(mine) == self.C and len(ps) == self.C
                and not any("batch.kubernetes.io/job-tracking" in (p["metadata"].get("finalizers") or []) for p in mine))

    def violations(self, t0, t1):
        return {"indexes_run_twice": self.timeline.overlapping(t0, t1)}


def daemon_node(p):
    """The node a daemon pod is for: upstream binds it by node affinity (matchFields metadata.name)."""
    try:
        terms = p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        for t in terms:
            for f in t.get("matchFields") or []:
                if f["key"] == "metadata.name":
                    return f["values"][0]
    except (KeyError, TypeError):
        pass
    return p["spec"].get("nodeName")


class DaemonSetWorkload:
    """A DaemonSet over --ds-nodes kwok nodes, rolled (RollingUpdate, maxUnavailable 10%, maxSurge 0) by a
    template change every episode. Invariant: never two live daemon pods on one node (maxSurge 0)."""
    name = "daemonset"
    namespaces = (NS_DS,)
    controllers = "daemonset-controller,garbage-collector-controller"

    @staticmethod
    def nodes(a):
        return a.ds_nodes

    def __init__(self, api, args):
        self.api, self.args = api, args
        self.N, self.rev, self.set_up = args.ds_nodes, 0, False
        self.timeline = Timeline(api, NS_DS, daemon_node)
        self.watches = [self.timeline]
        self.timeline.start()

    def setup(self):
        self.set_up = True
        self.api.req("POST", f"/apis/apps/v1/namespaces/{NS_DS}/daemonsets",
                     {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds"},
                      "spec": {"selector": {"matchLabels": {"app": "ds"}},
                               "updateStrategy": {"type": "RollingUpdate",
                                                  "rollingUpdate": {"maxUnavailable": "10%", "maxSurge": 0}},
                               "template": {"metadata": {"labels": {"app": "ds"}}, "spec": POD_SPEC}}})
        return {"creates": self.N, "deletes": 0}

    def kinds(self, n):
        return ["roll"] * n

    def kind_name(self, kind):
        return "ds-rollout"

    def start(self, kind):
        self.rev += 1
        rev = str(self.rev)
        self.api.req("PATCH", f"/apis/apps/v1/namespaces/{NS_DS}/daemonsets/ds",
                     {"spec": {"template": {"metadata": {"annotations": {"chaos/rev": rev}}}}},
                     ctype="application/strategic-merge-patch+json")

        def progress():
            ps = pods(self.api, NS_DS)
            return sum(1 for p in ps if (p["metadata"].get("annotations") or {}).get("chaos/rev") == rev) / self.N
        return self.N, self.N, progress

    def converged(self):
        ds = self.api.get(f"/apis/apps/v1/namespaces/{NS_DS}/daemonsets/ds")
        st = ds.get("status") or {}
        if st.get("observedGeneration", 0) < ds["metadata"]["generation"]:
            return False
        if not all(st.get(k) == self.N for k in ("desiredNumberScheduled", "currentNumberScheduled",
                                                  "updatedNumberScheduled", "numberReady", "numberAvailable")):
            return False
        rev = str(self.rev) if self.rev else None
        ps = pods(self.api, NS_DS)
        return len(ps) == self.N and all(
            pod_ok(p) and (p["metadata"].get("annotations") or {}).get("chaos/rev") == rev for p in ps)

    def violations(self, t0, t1):
        return {"nodes_with_two_daemon_pods": self.timeline.overlapping(t0, t1)}


class StatefulSetWorkload:
    """A StatefulSet (Parallel) scaled 0 -> --sts-replicas, rolled by a template change, scaled to 0, in
    turn. Invariant (upstream's central one): never two live pods with one ordinal."""
    name = "statefulset"
    namespaces = (NS_STS,)
    controllers = "statefulset-controller,garbage-collector-controller"

    @staticmethod
    def nodes(a):
        return int(a.sts_replicas / 100) + 2

    def __init__(self, api, args):
        self.api, self.args = api, args
        self.N, self.at, self.rev, self.set_up = args.sts_replicas, 0, 0, False
        self.timeline = Timeline(api, NS_STS, lambda p: p["metadata"]["name"])
        self.watches = [self.timeline]
        self.timeline.start()

    def setup(self):
        self.set_up = True
        self.api.req("POST", f"/apis/apps/v1/namespaces/{NS_STS}/statefulsets",
                     {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
                      "spec": {"replicas": 0, "serviceName": "s", "podManagementPolicy": "Parallel",
                               "selector": {"matchLabels": {"app": "s"}},
                               "template": {"metadata": {"labels": {"app": "s"}}, "spec": POD_SPEC}}})
        return {"creates": 0, "deletes": 0}

    def kinds(self, n):
        return [("up", "roll", "down")[i % 3] for i in range(n)]

    def kind_name(self, kind):
        return f"sts-{kind}"

    def start(self, kind):
        base = f"/apis/apps/v1/namespaces/{NS_STS}/statefulsets/s"
        if kind == "roll" and not self.at:
            kind = "up"  # nothing to roll
        if kind == "down" and not self.at:
            kind = "up"
        if kind == "up" and self.at:
            kind = "roll"
        if kind in ("up", "down"):
            target = self.N if kind == "up" else 0
            start_live = self.timeline.counts()[0]
            self.api.req("PATCH", base, {"spec": {"replicas": target}}, ctype="application/merge-patch+json")
            self.at = target
            total = abs(target - start_live) or 1
            if target:
                return self.N, 0, lambda: (self.timeline.counts()[0] - start_live) / total
            return 0, self.N, lambda: (start_live - self.timeline.counts()[0]) / total
        self.rev += 1
        rev = str(self.rev)
        self.api.req("PATCH", base, {"spec": {"template": {"metadata": {"annotations": {"chaos/rev": rev}}}}},
                     ctype="application/strategic-merge-patch+json")

        def progress():
            ps = pods(self.api, NS_STS)
            return sum(1 for p in ps if (p["metadata"].get("annotations") or {}).get("chaos/rev") == rev) / self.N
        return self.N, self.N, progress

    def converged(self):
        ss = self.api.get(f"/apis/apps/v1/namespaces/{NS_STS}/statefulsets/s")
        st = ss.get("status") or {}
        if st.get("observedGeneration", 0) < ss["metadata"]["generation"] or (st.get("replicas") or 0) != self.at:
            return False
        if self.at and not ((st.get("readyReplicas") == self.at) and st.get("updatedReplicas") == self.at
                            and st.get("currentRevision") == st.get("updateRevision")):
            return False
        rev = str(self.rev) if self.rev else None
        ps = pods(self.api, NS_STS)
        return len(ps) == self.at and all(
            pod_ok(p) and (p["metadata"].get("annotations") or {}).get("chaos/rev") == rev for p in ps)

    def violations(self, t0, t1):
        return {"ordinals_twice": self.timeline.overlapping(t0, t1)}


WORKLOADS = {"deployments": Workload, "job": JobWorkload, "daemonset": DaemonSetWorkload,
             "statefulset": StatefulSetWorkload}


# ---------------------------------------------------------------------------------------------
# one manager at one QPS: a cluster, the variants, the episodes

class Run:
    def __init__(self, args, manager, argv, qps, rawdir):
        self.args, self.manager, self.argv, self.qps = args, manager, argv, qps
        self.workload = WORKLOADS[args.workload]
        self.tag = f"{manager}-qps{int(qps)}" + ("" if args.workload == "deployments" else f"-{args.workload}")
        self.rawdir = rawdir
        self.rng = random.Random(args.seed)
        self.rows = []
        self.cluster = Cluster(args)

    def flags(self, kubeconfig, key):
        a = self.args
        return [f"--kubeconfig={kubeconfig}", f"--kube-api-qps={self.qps:g}", f"--kube-api-burst={int(self.qps * 2)}",
                f"--controllers={self.workload.controllers}", "--leader-elect=true",
                f"--leader-elect-lease-duration={a.lease_duration}s",
                f"--leader-elect-renew-deadline={a.renew_deadline}s",
                f"--leader-elect-retry-period={a.retry_period}s",
                "--bind-address=127.0.0.1", f"--secure-port={PORTS[key]}",
                "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
                f"--root-ca-file={self.cluster.pki}/ca.crt"]

    def replicas(self, keys, proxied=()):
        rs = []
        for k in keys:
            server = f"https://127.0.0.1:{self.toxi.port}" if k in proxied else self.cluster.server
            kc = self.cluster.identity(k, server)
            rs.append(Replica(k, self.argv + self.flags(kc, k), os.path.join(self.rawdir, f"{self.tag}-{k}.log")))
        return rs

    def wait_leader(self, key=None, since=0.0, timeout=180):
        def ok():
            u, t = self.audit.leader()
            return u is not None and t >= since and (key is None or u == key)
        return poll(ok, timeout, 0.3)

    def go(self):
        a = self.args
        nodes = self.workload.nodes(a)
        log(f"=== {self.tag}: cluster {a.cluster_name} ({nodes} kwok nodes)")
        self.cluster.create(nodes, self.workload.namespaces)
        self.audit = Audit(self.cluster.audit_log)
        self.toxi = Toxi(a.toxiproxy, self.cluster.api_port, os.path.join(self.rawdir, f"{self.tag}-toxiproxy.log"))
        self.wl = self.workload(self.cluster.api, a)
        self.t_start = time.time()
        self.loadavg = os.getloadavg()
        try:
            for v in a.variants:
                try:
                    getattr(self, "v_" + v.replace("-", "_"))()
                except Exception as e:  # noqa: BLE001 - one failed variant must not lose the others
                    log(f"{self.tag} {v} FAILED: {e!r}")
                    self.rows.append({"run": self.tag, "variant": v, "episode": "-", "error": repr(e)})
        finally:
            self.toxi.stop()
            for w in self.wl.watches:
                w.stop_flag = True
            shutil.copy(self.cluster.audit_log, os.path.join(self.rawdir, f"{self.tag}.audit.log"))
            shutil.copy(os.path.join(self.cluster.dir, "logs", "kube-apiserver.log"),
                        os.path.join(self.rawdir, f"{self.tag}.kube-apiserver.log"))
            self.cluster.delete()
        return self.rows

    # --- variant plumbing

    def with_replicas(self, variant, keys, body, proxied=(), leader_first=None):
        reps = self.replicas(keys, proxied)
        first = [r for r in reps if r.key == (leader_first or keys[0])][0]
        t = time.time()
        first.start()
        if not self.wait_leader(first.key, t):
            raise RuntimeError(f"replica {first.key} never took the lease")
        for r in reps:
            if r is not first:
                r.start()
        for r in reps:
            poll(r.healthy, 120, 0.5)
        self.reps = reps
        sup = Supervisor(reps, self.args.restart_delay)
        sup.start()
        try:
            if not self.wl.set_up:
                self.episode(variant, "setup", "none", lambda: None, setup=True)
            body(reps)
        finally:
            sup.on = False
            sup.join()
            for r in reps:
                r.stop()
            for r in reps:
                if r.exits:
                    log(f"  {variant}: replica {r.key} exited by itself {len(r.exits)}× (rc {[x['rc'] for x in r.exits]})")

    def kinds(self, n):
        return self.wl.kinds(n)

    def episode(self, variant, kind, fault, inject, setup=False):
        """One step of the workload with one fault: start, wait for progress f, inject, converge."""
        a = self.args
        ep = sum(1 for r in self.rows if r["variant"] == variant) + 1
        t0 = time.time()
        f = self.rng.uniform(a.fault_from, a.fault_to)
        if setup:
            name, (ec, ed) = "setup", self.wl.setup().values()
            prog = None
        else:
            name = self.wl.kind_name(kind)
            ec, ed, prog = self.wl.start(kind)
        at = None
        if prog is not None:
            poll(lambda: prog() >= f, 60, 0.1)
            at = quiet(prog, None)
        fi = inject() or {}
        t_fault_end = fi.pop("t_end", None) or time.time()
        t_conv = poll(self.wl.converged, a.timeout, 0.5)
        if t_conv and "t_fault_start" in fi:  # and a leader again (a successful lease write after the fault)
            t_lead = self.wait_leader(since=fi["t_fault_start"], timeout=a.timeout)
            t_conv = t_lead and max(t_conv, t_lead)
        time.sleep(a.settle)
        row = {"run": self.tag, "manager": self.manager, "qps": self.qps, "variant": variant, "episode": ep,
               "workload": name, "fault": fault, "fault_at_progress": None if at is None else round(at, 2),
               "t0": t0, "t_fault_end": t_fault_end, "t_converged": t_conv,
               "converge_s": None if t_conv is None else round(t_conv - t_fault_end, 1),
               "expected_creates": ec, "expected_deletes": ed, **fi}
        row["self_exits"] = sum(1 for r in getattr(self, "reps", []) for x in r.exits if x["t"] >= t0)
        self.rows.append(row)
        log(f"  {variant} #{ep} {name} / {fault} at {row['fault_at_progress']}: "
            f"{'converged %.1fs after the fault' % (t_conv - t_fault_end) if t_conv else 'NOT CONVERGED'} {fi}")
        return row

    def finish_counts(self, variant, t_end):
        """Counts from the audit log, per episode window [t0, next t0)."""
        recs = self.audit.read()
        eps = [r for r in self.rows if r["variant"] == variant and "t0" in r]
        for i, r in enumerate(eps):
            t1 = eps[i + 1]["t0"] if i + 1 < len(eps) else t_end
            c = analyse(recs, r["t0"], t1, self.wl.namespaces)
            r.update(c)
            r["violations"] = self.wl.violations(r["t0"], t1)
            wc = [w.between(r["t0"], t1) for w in self.wl.watches]
            r["watch_creates"], r["watch_deletes"] = sum(x[0] for x in wc), sum(x[1] for x in wc)
            # the larger of the two witnesses: the audit log misses a create answered 5xx, the watch
            # misses a pod created and deleted while it was reconnecting
            r["created_beyond"] = max(c["creates"], r["watch_creates"]) - r["expected_creates"]
            r["deleted_beyond"] = max(c["deletes"], r["watch_deletes"]) - r["expected_deletes"]
            r["overlap_writes"], r["overlap_examples"] = overlap(recs, r["t0"], t1)
            if "t_fault_start" in r and r.get("takeover"):
                after = [x for x in recs if Audit.is_lease_write(x) and x["t"] > r["t_fault_start"]
                         and (r.get("new_leader_must_be") in (None, x["u"]))]
                r["takeover_s"] = round(after[0]["t"] - r["t_fault_start"], 1) if after else None
                if r.get("old_leader"):
                    old = r["old_leader"]
                    # the old leader's process until it (restarted) takes the lease again, if it does
                    nxt = min([x["t"] for x in recs if Audit.is_lease_write(x) and x["u"] == old
                               and x["t"] > r["t_fault_start"]] + [t1])
                    mine = [x for x in recs if x["u"] == old and acting(x)
                            and r["t_fault_start"] <= x["t"] < nxt]
                    if after and mine:
                        r["old_leader_last_write_before_takeover_s"] = round(after[0]["t"] - max(x["t"] for x in mine), 1)
                    r["late_writes"] = late_writes(recs, old, mine, self.args)

    def run_variant(self, variant, keys, n, fault, inject, proxied=(), leader_first=None, before=None, after=None):
        def body(reps):
            for kind in self.kinds(n):
                self.episode(variant, kind, fault, lambda: inject(reps))
        if before:
            before()
        try:
            self.with_replicas(variant, keys, body, proxied, leader_first)
        finally:
            if after:
                after()
            self.finish_counts(variant, time.time())

    # --- the variants

    def kill_leader(self, reps):
        leader, _ = self.audit.leader()
        victim = next((r for r in reps if r.key == leader), reps[0])
        t = victim.kill9()
        return {"t_fault_start": t, "t_end": t, "old_leader": victim.key if len(reps) > 1 else None, "takeover": True}

    def v_kill(self):
        self.run_variant("kill", ["a"], self.args.kills, "kill -9", self.kill_leader)

    def v_failover(self):
        self.run_variant("failover", ["a", "b"], self.args.failovers, "kill -9 leader", self.kill_leader)

    def v_apiserver(self):
        def inject(reps):
            t_kill, t_ready, rev = self.cluster.restart_apiserver(self.args.apiserver_down, compact=True)
            return {"t_end": t_ready, "compacted_rev": rev, "apiserver_down_s": round((t_ready or 0) - t_kill, 1)}
        self.run_variant("apiserver", ["a"], self.args.reps, "apiserver kill -9 + etcd compact", inject)

    def v_watch_cut(self):
        a = self.args
        base = [x for x in self.cluster.apiserver_argv0
                if not x.startswith(("--min-request-timeout=", "--etcd-compaction-interval="))]
        cut = base + [f"--min-request-timeout={a.min_request_timeout}",
                      f"--etcd-compaction-interval={a.compaction_interval}s"]

        def inject(reps):
            return {"compacted_rev": self.cluster.etcd_compact()}
        self.run_variant("watch-cut", ["a"], self.args.reps, "etcd compact (watches cut)", inject,
                         before=lambda: self.cluster.restart_apiserver(0.5, argv=cut),
                         after=lambda: self.cluster.restart_apiserver(0.5, argv=base))

    def v_network(self):
        T = self.args.fault_seconds

        def body(reps):
            for i, kind in enumerate(self.kinds(3 * self.args.reps)):
                tox = ("latency", "reset", "stall")[i % 3]

                def inject(reps, tox=tox):
                    t = time.time()
                    self.toxi.add(tox)
                    time.sleep(T)
                    self.toxi.clear()
                    return {"t_fault_start": t, "t_end": time.time(), "toxic_s": T}
                self.episode("network", kind, f"proxy {tox} {T}s", lambda: inject(reps))
        try:
            self.with_replicas("network", ["a"], body, proxied=("a",))
        finally:
            self.toxi.clear()
            self.finish_counts("network", time.time())

    def v_split(self):
        a = self.args
        # client-go's leader renews every retry period and gives up renew deadline after a cycle starts: a
        # stall of retry + deadline + 1 s loses the Lease wherever it falls in the cycle (a 7 s stall with
        # retry 2 s and deadline 6 s did not when it began just after a renewal: the renewal sent then
        # succeeded as the stall ended, inside the deadline, and b never led)
        T = a.split_stall or a.retry_period + a.renew_deadline + 1

        def body(reps):
            for kind in self.kinds(a.reps):
                for _ in range(3):  # a (behind the proxy) must lead before its network fails
                    if self.audit.leader()[0] == "a":
                        break
                    t = reps[1].kill9()
                    self.wait_leader("a", t, 120)

                def inject(reps):
                    # a's connections stalled past its renew cycle's deadline, then healed: a must have
                    # stopped by then, or its writes land in b's term
                    t = time.time()
                    self.toxi.add("stall")
                    time.sleep(T)
                    self.toxi.clear()
                    t_end = time.time()
                    self.wait_leader("b", t, 60)
                    return {"t_fault_start": t, "t_end": t_end, "old_leader": "a",
                            "new_leader_must_be": "b", "takeover": True, "toxic_s": round(t_end - t, 1)}
                self.episode("split", kind, f"a stalled {T}s (proxy), b direct", lambda: inject(reps))
        try:
            self.with_replicas("split", ["a", "b"], body, proxied=("a",), leader_first="a")
        finally:
            self.toxi.clear()
            self.finish_counts("split", time.time())


# ---------------------------------------------------------------------------------------------
# report

def fmt(x):
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.1f}"
    return str(x)


def summary(rows):
    """Per variant and run: episodes, pods beyond spec (sum, worst), convergence, takeover, overlap."""
    out = {}
    for r in rows:
        if "error" in r:
            out.setdefault((r["variant"], r["run"]), {"errors": 0})
            out[(r["variant"], r["run"])]["errors"] = out[(r["variant"], r["run"])].get("errors", 0) + 1
            continue
        if r["workload"] == "setup":
            continue
        s = out.setdefault((r["variant"], r["run"]), {"errors": 0})
        s.setdefault("rows", []).append(r)
    res = {}
    for k, s in out.items():
        rs = s.get("rows", [])
        conv = [r["converge_s"] for r in rs if r.get("converge_s") is not None]
        tk = [r["takeover_s"] for r in rs if r.get("takeover_s") is not None]
        res[k] = {
            "episodes": len(rs), "errors": s["errors"],
            "not_converged": sum(1 for r in rs if r.get("t_converged") is None),
            "created_beyond": sum(max(0, r.get("created_beyond", 0)) for r in rs),
            "deleted_beyond": sum(max(0, r.get("deleted_beyond", 0)) for r in rs),
            "overlap_writes": sum(r.get("overlap_writes", 0) for r in rs),
            "converge_median_s": statistics.median(conv) if conv else None,
            "converge_max_s": max(conv) if conv else None,
            "takeover_median_s": statistics.median(tk) if tk else None,
            "takeover_max_s": max(tk) if tk else None,
            "gone_410": sum(r.get("gone_410", 0) for r in rs),
            "late_writes": sum(r.get("late_writes", 0) for r in rs),
            "margin_min_s": min((r["old_leader_last_write_before_takeover_s"] for r in rs
                                 if r.get("old_leader_last_write_before_takeover_s") is not None), default=None),
            "self_exits": sum(r.get("self_exits", 0) for r in rs),
            # the workload's own invariant (indexes run twice, two daemon pods on a node, an ordinal twice)
            "violations": {k: sum((r.get("violations") or {}).get(k, 0) for r in rs)
                           for k in sorted({k for r in rs for k in (r.get("violations") or {})})},
        }
    return res


def report(args, rows, runs_meta, outdir):
    S = summary(rows)
    runs = []
    for r in rows:
        if r["run"] not in runs:
            runs.append(r["run"])
    variants = [v for v in args.variants if any(k[0] == v for k in S)]
    md = [f"# Chaos run — {dt.datetime.now().isoformat(timespec='minutes')}", "",
          f"- command: `bench/chaos.sh {' '.join(args.argv)}`",
          f"- managers × QPS: {', '.join(runs)}; burst = 2 × QPS; controllers {WORKLOADS[args.workload].controllers}",
          f"- workload: {args.workload}; sizes: "
          + {"deployments": f"ReplicaSet 0 ↔ {args.rs_replicas}, {args.deployments} Deployments × {args.replicas} replicas; ",
             "job": f"Jobs of {args.job_completions} completions, parallelism {args.job_parallelism}, Indexed and NonIndexed in turn; ",
             "daemonset": f"a DaemonSet over {args.ds_nodes} nodes rolled (maxUnavailable 10%, maxSurge 0); ",
             "statefulset": f"a StatefulSet (Parallel) 0 → {args.sts_replicas}, rolled, → 0 in turn; "}[args.workload] +
          f"kills {args.kills}, failovers {args.failovers}, other variants {args.reps} episode(s) each (network: 3 × that)",
          f"- leader election: lease {args.lease_duration}s, renew deadline {args.renew_deadline}s, retry {args.retry_period}s "
          f"(both managers); replicas restarted {args.restart_delay}s after they exit",
          f"- watch-cut: --min-request-timeout={args.min_request_timeout} --etcd-compaction-interval={args.compaction_interval}s; "
          f"network faults {args.fault_seconds}s; fault injected at a random progress in [{args.fault_from}, {args.fault_to}] "
          f"of the step (seed {args.seed})",
          f"- machine: {os.cpu_count()} cores; 1-min load average at the start of each manager's run: "
          + ", ".join(f"{m['run']} {m['loadavg'][0]:.1f}" for m in runs_meta),
          f"- versions: {args.versions}", "",
          "## Summary (sums over episodes; times: median / max)", "",
          "| variant | " + " | ".join(runs) + " |", "|---|" + "---|" * len(runs)]
    for v in variants:
        cells = []
        for run in runs:
            s = S.get((v, run))
            if not s:
                cells.append("–")
                continue
            c = (f"{s['episodes']} ep: **+{s['created_beyond']} created / +{s['deleted_beyond']} deleted** beyond spec; "
                 f"converge {fmt(s['converge_median_s'])} / {fmt(s['converge_max_s'])} s")
            if s["takeover_median_s"] is not None:
                c += f"; takeover {fmt(s['takeover_median_s'])} / {fmt(s['takeover_max_s'])} s"
            if v in ("failover", "split") or s["overlap_writes"]:
                c += f"; overlapping writes {s['overlap_writes']}"
            if v == "split" or s["late_writes"]:
                c += f"; writes after the renew deadline {s['late_writes']}"
            if s["margin_min_s"] is not None:
                c += f"; old leader's last write ≥ {fmt(s['margin_min_s'])} s before takeover"
            for k, n in s["violations"].items():
                c += f"; {k.replace('_', ' ')} **{n}**"
            if s["not_converged"]:
                c += f"; **{s['not_converged']} not converged**"
            if s["errors"]:
                c += f"; **{s['errors']} failed**"
            cells.append(c)
        md.append(f"| {v} | " + " | ".join(cells) + " |")
    md += ["", "The workload's own invariant, counted from a pod watch started before the run (each pod live from when it is first seen until it is seen deleting, terminal or gone): Jobs — a completion index with two live pods at once; DaemonSet — a node with two live daemon pods at once (maxSurge 0); StatefulSet — an ordinal with two live pods at once. "
           "Beyond spec = pods created (deleted) in the episode's window minus what the step needs (a positive remainder "
           "per episode; summed); created/deleted is the larger of two witnesses: the replicas' successful pod "
           "creates (deletes) in the audit log, and the pods a watch started before the run saw appear (disappear). Converge = end of the "
           "fault → pods and ReplicaSet/Deployment status as the spec says. Takeover = fault → first successful "
           "lease write after it. Overlapping writes = writes by a replica while the other replica held the lease (the user of the last "
           "successful lease write); writes after the renew deadline = writes by the old leader later than "
           "its last successful renewal before the write + --leader-elect-retry-period + --leader-elect-renew-deadline (the last moment client-go's "
           "elector may act: its renew cycle starts a retry period after a success and gives up a renew deadline later). 410s = the replicas' requests answered 410 Gone (lists at a compacted "
           "resourceVersion). Self exits = replicas that exited on their own (a lost lease) and were restarted.", "",
           "## Episodes", "",
           "| run | variant | # | workload | fault | at | creates audit/watch (need) | deletes audit/watch (need) | "
           "beyond +c/+d | converge s | takeover s | overlap | 410s | self exits |", "|" + "---|" * 14]
    for r in rows:
        if "error" in r:
            md.append(f"| {r['run']} | {r['variant']} | – | failed: {r['error'][:120]} |" + " |" * 10)
            continue
        md.append(f"| {r['run']} | {r['variant']} | {r['episode']} | {r['workload']} | {r['fault']} | "
                  f"{fmt(r.get('fault_at_progress'))} | {r.get('creates')}{'+%d×5xx' % r['creates_5xx'] if r.get('creates_5xx') else ''}"
                  f"/{r.get('watch_creates')} ({r['expected_creates']}) | "
                  f"{r.get('deletes')}/{r.get('watch_deletes')} ({r['expected_deletes']}) | "
                  f"{r.get('created_beyond')}/{r.get('deleted_beyond')} | "
                  f"{fmt(r.get('converge_s')) if r.get('t_converged') else '**not converged**'} | "
                  f"{fmt(r.get('takeover_s'))} | {r.get('overlap_writes')} | {r.get('gone_410')} | {r.get('self_exits')} |")
    with open(os.path.join(outdir, "results.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(outdir, "summary.json"), "w") as f:
        json.dump({f"{k[0]} {k[1]}": v for k, v in S.items()}, f, indent=1)
    print("\n".join(md[:md.index("## Episodes")]), flush=True)
    bad = [k for k, s in S.items() if k[1].startswith("qkcm") and (s["created_beyond"] or s["deleted_beyond"]
                                                                  or s["overlap_writes"] or s["not_converged"] or s["errors"]
                                                                  or any(s.get("violations", {}).values()))]
    return bad


# ---------------------------------------------------------------------------------------------

def main():
    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGINT, interrupt)
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--short", action="store_true", help="CI size: qkcm only, QPS 100, small steps, 1-2 episodes per variant")
    p.add_argument("--managers", help="qkcm-jvm,upstream (default; --short: qkcm-jvm)")
    p.add_argument("--qps", help="comma-separated QPS values, burst = 2×QPS (default 100,1000; --short: 100)")
    p.add_argument("--variants", default="kill,failover,apiserver,watch-cut,network,split")
    p.add_argument("--kills", type=int, help="kill -9 episodes, one replica (default 20; --short 2)")
    p.add_argument("--failovers", type=int, help="leader-kill episodes, two replicas (default = --kills; --short 1)")
    p.add_argument("--reps", type=int, help="episodes of apiserver, watch-cut, split; network 3× (default 3; --short 1)")
    p.add_argument("--rs-replicas", type=int, help="ReplicaSet size (default 1000; --short 200)")
    p.add_argument("--deployments", type=int, help="(default 20; --short 5)")
    p.add_argument("--replicas", type=int, help="per Deployment (default 10; --short 4)")
    p.add_argument("--workload", default="deployments", choices=sorted(WORKLOADS),
                   help="deployments (ReplicaSet + Deployments, the default), job, daemonset, statefulset")
    p.add_argument("--job-completions", type=int, help="job: completions per Job (default 500; --short 60)")
    p.add_argument("--job-parallelism", type=int, help="job: parallelism (default 100; --short 20)")
    p.add_argument("--ds-nodes", type=int, help="daemonset: kwok nodes, one daemon pod each (default 200; --short 20)")
    p.add_argument("--sts-replicas", type=int, help="statefulset: replicas (default 300; --short 40)")
    p.add_argument("--lease-duration", type=int, default=8)
    p.add_argument("--renew-deadline", type=int, default=6)
    p.add_argument("--retry-period", type=int, default=2)
    p.add_argument("--restart-delay", type=float, default=1.0, help="seconds before an exited replica is restarted")
    p.add_argument("--apiserver-down", type=float, default=2.0, help="seconds kube-apiserver stays down")
    p.add_argument("--min-request-timeout", type=int, default=5)
    p.add_argument("--compaction-interval", type=int, default=10)
    p.add_argument("--fault-seconds", type=int, default=8, help="network faults' length")
    p.add_argument("--split-stall", type=int, help="split: seconds a's connections stall (default retry period + renew deadline + 1)")
    p.add_argument("--fault-from", type=float, default=0.1)
    p.add_argument("--fault-to", type=float, default=0.6)
    p.add_argument("--settle", type=float, default=2.0, help="seconds after convergence before the next episode")
    p.add_argument("--timeout", type=int, default=180, help="convergence timeout per episode (s)")
    p.add_argument("--seed", type=int, default=19)
    p.add_argument("--out", help="results folder (default bench/results/<date>-chaos)")
    p.add_argument("--report", metavar="RAWDIR", help="only write the report again from a raw/<time> folder "
                                                      "(rows.json, args.json), e.g. of an interrupted run")
    p.add_argument("--recount", action="store_true", help="with --report: count the audit log's late writes again "
                                                          "(the raw folder's *.audit.log), as this version measures them")
    p.add_argument("--qkcm-jar", default=os.environ.get("QKCM_JAR"))
    p.add_argument("--qkcm-java-opts", default=os.environ.get("QKCM_JAVA_OPTS"))
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--toxiproxy", required=True)
    p.add_argument("--kwok-workdir", default=os.path.expanduser("~/.kwok-chaos"))
    p.add_argument("--cluster-name", default="qkcm-chaos")
    p.add_argument("--ports", default="10857,10858,8575",
                   help="replica a's and b's secure ports and Toxiproxy's API port (another set, with --cluster-name and "
                        "--kwok-workdir, lets a second run share the machine)")
    p.add_argument("--versions", default="?")
    argv = sys.argv[1:]
    args = p.parse_args()
    args.argv = [a for a in argv if not a.startswith(("--bin-dir", "--toxiproxy", "--versions"))
                 and a not in (args.bin_dir, args.toxiproxy, args.versions)]
    s = args.short
    for k, full, short in (("managers", "qkcm-jvm,upstream", "qkcm-jvm"), ("qps", "100,1000", "100"),
                           ("kills", 20, 2), ("reps", 3, 1), ("rs_replicas", 1000, 200),
                           ("deployments", 20, 5), ("replicas", 10, 4), ("job_completions", 500, 60),
                           ("job_parallelism", 100, 20), ("ds_nodes", 200, 20), ("sts_replicas", 300, 40)):
        if getattr(args, k) is None:
            setattr(args, k, short if s else full)
    if args.failovers is None:
        args.failovers = 1 if s else args.kills
    args.variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    global TOXI_PORT
    PORTS["a"], PORTS["b"], TOXI_PORT = (int(x) for x in args.ports.split(","))
    if args.qkcm_java_opts is None:
        args.qkcm_java_opts = bench.default_java_opts()
    if args.report:
        saved = json.load(open(os.path.join(args.report, "args.json")))
        for k, v in saved.items():
            if k not in ("report", "out"):
                setattr(args, k, v)
        rows = json.load(open(os.path.join(args.report, "rows.json")))
        if args.recount:
            rows = recount(args, args.report, rows)
        outdir = args.out or os.path.dirname(os.path.dirname(os.path.abspath(args.report)))
        meta = [{"run": r, "loadavg": [float("nan")]} for r in dict.fromkeys(x["run"] for x in rows)]
        return 1 if report(args, rows, meta, outdir) else 0
    jar = args.qkcm_jar or os.path.join(ROOT, "app", "target", "quarkus-app", "quarkus-run.jar")
    # the JDK bin/qkcm picks, with the options it gives that JDK (bench.py does the same)
    ms = {"qkcm-jvm": [bench.default_java(), *args.qkcm_java_opts.split(), "-jar", jar],
          "upstream": [os.path.join(args.bin_dir, "kube-controller-manager")]}
    managers = [m.strip() for m in args.managers.split(",") if m.strip()]
    qpss = [float(q) for q in args.qps.split(",")]
    outdir = args.out or os.path.join(BENCH, "results", dt.date.today().isoformat() + "-chaos")
    rawdir = os.path.join(outdir, "raw", dt.datetime.now().strftime("%H%M%S"))
    os.makedirs(rawdir, exist_ok=True)
    log(f"results in {outdir} (raw data {rawdir})")
    with open(os.path.join(rawdir, "args.json"), "w") as f:
        json.dump(vars(args), f, indent=1)
    rows, meta = [], []
    t_begin = time.time()
    try:
        for qps in qpss:
            order = managers if len(meta) % 2 == 0 else list(reversed(managers))
            for m in order:
                run = Run(args, m, ms[m], qps, rawdir)
                meta.append({"run": run.tag, "loadavg": os.getloadavg()})
                rows += run.go()
                with open(os.path.join(rawdir, "rows.json"), "w") as f:
                    json.dump(rows, f)
    finally:
        Cluster(args).delete()
    log(f"done in {time.time() - t_begin:.0f}s")
    bad = report(args, rows, meta, outdir)
    if bad:
        log(f"qkcm failed the run in: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
