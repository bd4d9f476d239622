#!/usr/bin/env python3
"""qkcm vs upstream kube-controller-manager, side by side, on the same local cluster.

Driven by bench/run.sh (see bench/README.md). For every repetition and every controller manager
(A/B order alternating per repetition) it recreates a kwokctl binary-runtime cluster (etcd,
kube-apiserver, kube-scheduler, kwok nodes), starts the manager with identical flags, runs the
scenarios, stops it and collects:

  * time per scenario (harness clock, from the first request of the scenario to its condition)
  * CPU seconds of the manager process (/proc/<pid>/stat utime+stime) per scenario
  * RSS: peak (VmHWM) and steady (median VmRSS during the idle scenario)
  * API requests by verb/resource from the API server's audit log: the manager connects with its
    own client certificate (user bench:controller-manager), the only user the audit policy logs
  * startup: exec -> first write request (audit log) and exec -> /healthz 200
  * pods created beyond spec: successful pod creates by the manager minus the pods the scenarios need
"""
import argparse
import collections
import concurrent.futures as cf
import datetime as dt
import glob
import json
import os
import re
import shutil
import signal
import ssl
import shlex
import statistics
import subprocess
import sys
import threading
import time
import http.client
import urllib.parse

import requests
import urllib3

urllib3.disable_warnings()

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
CLK_TCK = os.sysconf("SC_CLK_TCK")
NS = "bench"
MANAGER_USER = "bench:controller-manager"
PORT = 10357  # manager --secure-port; not the default 10257, so a developer's local qkcm does not collide


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def sh(*args, check=True, capture=False, env=None):
    r = subprocess.run(list(args), check=False, env=env, text=True,
                       stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                       stderr=subprocess.PIPE if capture else subprocess.DEVNULL)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({r.returncode}): {r.stderr if capture else ''}")
    return r.stdout if capture else None


# ---------------------------------------------------------------------------------------------
# cluster

class Cluster:
    AUDIT_POLICY = "audit-policy.yaml"  # under bench/; a subclass may log other writes

    def __init__(self, args):
        self.args = args
        self.bin = args.bin_dir
        self.name = args.cluster_name
        self.env = dict(os.environ, KWOK_WORKDIR=args.kwok_workdir)
        self.dir = os.path.join(args.kwok_workdir, "clusters", self.name)

    def kwokctl(self, *a, **kw):
        return sh(os.path.join(self.bin, "kwokctl"), *a, env=self.env, **kw)

    def delete(self):
        if os.path.isdir(self.dir):
            self.kwokctl("delete", "cluster", "--name", self.name,
                         "--kubeconfig", os.path.join(self.args.kwok_workdir, "kubeconfig"), check=False)
            shutil.rmtree(self.dir, ignore_errors=True)

    def create(self, nodes):
        self.delete()
        b = self.bin
        self.kwokctl("create", "cluster", "--name", self.name, "--runtime", "binary",
                     "--etcd-binary", f"{b}/etcd", "--kube-apiserver-binary", f"{b}/kube-apiserver",
                     "--kube-scheduler-binary", f"{b}/kube-scheduler", "--kwok-controller-binary", f"{b}/kwok",
                     "--disable", "kube-controller-manager",
                     "--kube-audit-policy", os.path.join(BENCH, self.AUDIT_POLICY),
                     "--kubeconfig", os.path.join(self.args.kwok_workdir, "kubeconfig"), "--wait", "3m",
                     capture=True)
        self.kwokctl("--name", self.name, "scale", "node", "--replicas", str(nodes), capture=True)
        kc = open(os.path.join(self.dir, "kubeconfig.yaml")).read()
        self.server = next(l.split("server:")[1].strip() for l in kc.splitlines() if "server:" in l)
        self.pki = os.path.join(self.dir, "pki")
        self.api = Api(self.server, os.path.join(self.pki, "ca.crt"),
                       os.path.join(self.pki, "admin.crt"), os.path.join(self.pki, "admin.key"))
        self.audit_log = os.path.join(self.dir, "logs", "audit.log")
        self.manager_kubeconfig = self._manager_identity()

    def _manager_identity(self):
        """A client certificate of its own for the manager under test (the audit policy logs only it)."""
        return client_cert_kubeconfig(self.pki, "bench-manager", MANAGER_USER, self.server,
                                      os.path.join(self.dir, "bench-manager.kubeconfig"))


def client_cert_kubeconfig(pki, name, user, server, path, reuse=False):
    """A kubeconfig at path authenticating as user (group system:masters) with a client certificate
    <pki>/<name>.crt signed by the cluster's CA (made unless reuse and it exists)."""
    key, csr, crt = (os.path.join(pki, f"{name}.{e}") for e in ("key", "csr", "crt"))
    if not (reuse and os.path.exists(crt)):
        sh("openssl", "genrsa", "-out", key, "2048")
        sh("openssl", "req", "-new", "-key", key, "-out", csr, "-subj", f"/O=system:masters/CN={user}")
        sh("openssl", "x509", "-req", "-in", csr, "-CA", os.path.join(pki, "ca.crt"),
           "-CAkey", os.path.join(pki, "ca.key"), "-CAcreateserial", "-out", crt, "-days", "2")
    with open(path, "w") as f:
        f.write(f"""apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {{server: "{server}", certificate-authority: "{pki}/ca.crt"}}
users:
- name: u
  user: {{client-certificate: "{crt}", client-key: "{key}"}}
contexts:
- name: c
  context: {{cluster: c, user: u}}
current-context: c
""")
    return path


class Api:
    def __init__(self, server, ca, crt, key):
        self.server, self.ca, self.cert = server, ca, (crt, key)
        self.local = threading.local()

    def s(self):
        if not hasattr(self.local, "s"):
            s = requests.Session()
            s.trust_env = False  # REQUESTS_CA_BUNDLE / proxies from the environment must not apply
            s.verify, s.cert = self.ca, self.cert
            self.local.s = s
        return self.local.s

    def req(self, method, path, body=None, ctype="application/json", ok=(200, 201, 202), retries=5):
        for attempt in range(retries):
            try:
                r = self.s().request(method, self.server + path, timeout=60,
                                     data=json.dumps(body) if body is not None else None,
                                     headers={"Content-Type": ctype})
                if r.status_code in ok:
                    return r.json() if r.content else None
                if r.status_code in (409, 429, 500, 503, 504) and attempt < retries - 1:
                    time.sleep(0.5 * (attempt + 1))
                    continue
                raise RuntimeError(f"{method} {path}: {r.status_code} {r.text[:300]}")
            except requests.RequestException:
                if attempt == retries - 1:
                    raise
                time.sleep(0.5 * (attempt + 1))

    def get(self, path):
        return self.req("GET", path)


# ---------------------------------------------------------------------------------------------
# pod watch: creations, readiness, deletions over time

class PodWatch(threading.Thread):
    def __init__(self, api, ns):
        super().__init__(daemon=True)
        self.api, self.ns = api, ns
        self.lock = threading.Lock()
        self.live = {}        # uid -> ready(bool)
        self.created = set()  # every uid ever seen
        self.t0 = time.time()
        self.samples = []     # (t, live, ready)
        self.stop_flag = False
        self.rv = None

    def counts(self):
        with self.lock:
            return len(self.live), sum(1 for r in self.live.values() if r)

    @staticmethod
    def ready(pod):
        if pod["metadata"].get("deletionTimestamp"):
            return False
        for c in pod.get("status", {}).get("conditions", []) or []:
            if c.get("type") == "Ready":
                return c.get("status") == "True"
        return False

    def apply(self, typ, pod):
        uid = pod["metadata"]["uid"]
        with self.lock:
            if typ == "DELETED":
                self.live.pop(uid, None)
            else:
                self.created.add(uid)
                self.live[uid] = self.ready(pod)

    def relist(self):
        items, cont = [], ""
        while True:  # pages of 5000 (--scale goes to 10000 pods and more)
            lst = self.api.get(f"/api/v1/namespaces/{self.ns}/pods?limit=5000"
                               + (f"&continue={urllib.parse.quote(cont)}" if cont else ""))
            items += lst["items"]
            cont = lst["metadata"].get("continue")
            if not cont:
                break
        with self.lock:
            self.live = {}
        for p in items:
            self.apply("ADDED", p)
        self.rv = lst["metadata"]["resourceVersion"]

    def run(self):
        sampler = threading.Thread(target=self.sample, daemon=True)
        sampler.start()
        self.relist()
        u = urllib.parse.urlparse(self.api.server)
        ctx = ssl.create_default_context(cafile=self.api.ca)
        ctx.load_cert_chain(*self.api.cert)
        while not self.stop_flag:
            try:
                conn = http.client.HTTPSConnection(u.hostname, u.port, context=ctx, timeout=120)
                conn.request("GET", f"/api/v1/namespaces/{self.ns}/pods?watch=1&allowWatchBookmarks=true"
                                    f"&resourceVersion={self.rv}&timeoutSeconds=600")
                resp = conn.getresponse()
                if resp.status != 200:
                    self.relist()
                    continue
                while not self.stop_flag:
                    line = resp.readline()
                    if not line:
                        break
                    ev = json.loads(line)
                    obj = ev["object"]
                    if ev["type"] == "ERROR":
                        self.relist()
                        break
                    self.rv = obj["metadata"].get("resourceVersion", self.rv)
                    if ev["type"] != "BOOKMARK":
                        self.apply(ev["type"], obj)
                conn.close()
            except Exception as e:  # noqa: BLE001 - reconnect on anything
                if not self.stop_flag:
                    log(f"pod watch reconnect: {e}")
                    time.sleep(0.5)
                    try:
                        self.relist()
                    except Exception:  # noqa: BLE001
                        pass

    def sample(self):
        while not self.stop_flag:
            live, ready = self.counts()
            self.samples.append((time.time(), live, ready))
            time.sleep(0.5)

    def wait(self, pred, timeout, what):
        end = time.time() + timeout
        while time.time() < end:
            live, ready = self.counts()
            if pred(live, ready):
                return time.time()
            time.sleep(0.2)
        raise TimeoutError(f"timeout waiting for {what} (live/ready={self.counts()})")


# ---------------------------------------------------------------------------------------------
# the manager process

class Proc:
    def __init__(self, name, argv, logpath):
        self.name = name
        self.logf = open(logpath, "w")
        self.t_exec = time.time()
        self.p = subprocess.Popen(argv, stdout=self.logf, stderr=subprocess.STDOUT, start_new_session=True)
        self.samples = []  # (t, cpu_s, rss_kb)
        self.hwm_kb = 0
        self.alive = True
        threading.Thread(target=self._sample, daemon=True).start()

    def cpu(self):
        with open(f"/proc/{self.p.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime (fields 14, 15)

    def threads_cpu(self):
        """CPU seconds per live thread: {tid: (name with digits as N, seconds)}; JVM threads are named
        (C1 CompilerThre, VM Thread, vert.x-eventloo…), Go's are all the binary's name."""
        out = {}
        for tid in os.listdir(f"/proc/{self.p.pid}/task"):
            try:
                with open(f"/proc/{self.p.pid}/task/{tid}/stat") as f:
                    head, tail = f.read().rsplit(")", 1)
            except OSError:
                continue  # exited meanwhile
            fields = tail.split()
            name = re.sub(r"\d+", "N", head.split("(", 1)[1])
            out[tid] = (name, (int(fields[11]) + int(fields[12])) / CLK_TCK)
        return out

    def mem(self):
        rss = hwm = 0
        with open(f"/proc/{self.p.pid}/status") as f:
            for l in f:
                if l.startswith("VmRSS:"):
                    rss = int(l.split()[1])
                elif l.startswith("VmHWM:"):
                    hwm = int(l.split()[1])
        return rss, hwm

    def _sample(self):
        while self.alive and self.p.poll() is None:
            try:
                c = self.cpu()
                rss, hwm = self.mem()
                self.hwm_kb = max(self.hwm_kb, hwm)
                self.samples.append((time.time(), c, rss))
            except (OSError, IndexError, ValueError):
                pass
            time.sleep(1)

    def snapshot_cpu(self):
        try:
            return self.cpu()
        except OSError:
            return float("nan")

    def stop(self):
        self.final_cpu = self.snapshot_cpu()
        try:
            self.hwm_kb = max(self.hwm_kb, self.mem()[1])
        except OSError:
            pass
        self.alive = False
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGTERM)
            try:
                self.p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.p.pid, signal.SIGKILL)
                self.p.wait()
        self.logf.close()


def default_java_opts():
    """The JVM options bin/qkcm starts qkcm with, so the benchmark measures what users run."""
    env = dict(os.environ, QKCM_PRINT_JAVA_OPTS="1")
    env.pop("QKCM_JAVA_OPTS", None)
    return subprocess.run([os.path.join(ROOT, "bin", "qkcm")], env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


def default_java():
    """The java executable bin/qkcm picks (the newest supported JDK it finds), so the benchmark runs it too."""
    env = dict(os.environ, QKCM_PRINT_JAVA="1")
    r = subprocess.run([os.path.join(ROOT, "bin", "qkcm")], env=env, capture_output=True, text=True)
    out = r.stdout.strip()
    return out if r.returncode == 0 and out else "java"


def managers(args):
    out = []
    jar = os.path.join(ROOT, "app", "target", "quarkus-app", "quarkus-run.jar")
    if args.qkcm_jar:
        jar = args.qkcm_jar
    java_opts = args.qkcm_java_opts.split() if args.qkcm_java_opts else []
    java = args.qkcm_java
    if "qkcm-jvm" in args.managers:
        out.append(("qkcm-jvm", [java, *java_opts, "-jar", jar]))
    # --variant NAME=COMMAND: another way of starting the same build (another JDK, other JVM options),
    # measured in the same run; COMMAND is the java command line before "-jar <jar>" ({jar} expands
    # to the jar's path, {dir} to its directory, e.g. for -XX:AOTCache={dir}/app.aot)
    for v in args.variant:
        vname, _, cmd = v.partition("=")
        argv = shlex.split(cmd.replace("{jar}", jar).replace("{dir}", os.path.dirname(jar)))
        out.append((vname.strip(), argv if "-jar" in argv else [*argv, "-jar", jar]))
    if "qkcm-base" in args.managers:
        if args.qkcm_base_jar:
            out.append(("qkcm-base", [java, *java_opts, "-jar", args.qkcm_base_jar]))
        else:
            log("no --qkcm-base-jar / QKCM_BASE_JAR: skipping qkcm-base")
    if "qkcm-native" in args.managers:
        runners = sorted(glob.glob(os.path.join(os.path.dirname(os.path.dirname(jar)), "*-runner")))
        if runners:
            out.append(("qkcm-native", [runners[0]]))
        else:
            log("no native build (app/target/*-runner): skipping qkcm-native")
    if "upstream" in args.managers:
        out.append(("upstream", [os.path.join(args.bin_dir, "kube-controller-manager")]))
    return out


def manager_flags(args, cluster):
    return [
        f"--kubeconfig={cluster.manager_kubeconfig}",
        f"--kube-api-qps={args.qps}", f"--kube-api-burst={args.burst}",
        f"--controllers={args.controllers}",
        "--leader-elect=true",
        "--bind-address=127.0.0.1", f"--secure-port={PORT}",
        "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
        f"--root-ca-file={cluster.pki}/ca.crt",
        # What kwokctl gives its own kube-controller-manager (kwok.yaml: nodeLeaseDurationSeconds=200,
        # kubeControllerManagerNodeMonitor*): kwok renews node leases slowly, and with upstream's default
        # 50s grace period upstream's node-lifecycle-controller marks the nodes Unknown and their pods
        # NotReady in the middle of the scenarios (seen: ~350 pods/status updates per idle minute).
        "--node-monitor-grace-period=200s", "--node-monitor-period=25s",
    ]


class PprofLoop(threading.Thread):
    """--profile for a Go manager: back-to-back CPU profiles of PPROF_SECONDS each from its /debug/pprof,
    from /healthz until it stops, saved as <tag>.pprof.<unix start>.pb.gz (bench/profiles.py picks the
    ones inside a phase)."""

    def __init__(self, rawdir, tag):
        super().__init__(daemon=True)
        self.rawdir, self.tag, self.stop_flag = rawdir, tag, False

    def run(self):
        s = requests.Session()
        s.trust_env = False
        while not self.stop_flag:
            t0 = time.time()
            try:
                r = s.get(f"https://127.0.0.1:{PORT}/debug/pprof/profile?seconds={PPROF_SECONDS}", verify=False,
                          timeout=PPROF_SECONDS + 30)
                if r.status_code == 200:
                    with open(os.path.join(self.rawdir, f"{self.tag}.pprof.{int(t0)}.pb.gz"), "wb") as f:
                        f.write(r.content)
                else:
                    log(f"{self.tag}: pprof answered {r.status_code}")
                    time.sleep(1)
            except requests.RequestException:
                time.sleep(1)


PPROF_SECONDS = 5


def profiled(argv, flags, rawdir, tag):
    """A JVM manager records JFR into <tag>.jfr: settings=profile plus JDK 25's CPU-time sampler, one sample
    per 2 ms of a thread's CPU (the execution sampler skips threads inside the VM and samples sparsely). A Go
    manager (upstream) serves its /debug/pprof (on by default, --profiling) to an anonymous client, which PprofLoop samples."""
    if "-jar" in argv:
        i = argv.index("-jar")
        jfr = (f"-XX:StartFlightRecording=filename={os.path.join(rawdir, tag + '.jfr')},settings=profile,"
               "jdk.CPUTimeSample#enabled=true,jdk.CPUTimeSample#throttle=2ms")
        return argv[:i] + [jfr] + argv[i:], flags, None
    flags = [f + ",/debug/pprof/*" if f.startswith("--authorization-always-allow-paths=") else f for f in flags]
    return argv, flags, PprofLoop(rawdir, tag)


WORK_DURATION = re.compile(r'^workqueue_work_duration_seconds_(count|sum)\{[^}]*name="([^"]+)"[^}]*\} (\S+)')


def workqueues():
    """The manager's work queues from its /metrics (both serve upstream's workqueue_work_duration_seconds):
    {name: (items processed, seconds spent on them)}; empty when the scrape fails."""
    out = {}
    try:
        s = requests.Session()
        s.trust_env = False
        text = s.get(f"https://127.0.0.1:{PORT}/metrics", verify=False, timeout=10).text
    except requests.RequestException:
        return out
    for line in text.splitlines():
        m = WORK_DURATION.match(line)
        if m:
            kind, name, v = m.groups()
            c, t = out.get(name, (0.0, 0.0))
            out[name] = (c + float(v), t) if kind == "count" else (c, t + float(v))
    return out


def wait_healthy(timeout=300):
    end = time.time() + timeout
    s = requests.Session()
    s.trust_env = False
    while time.time() < end:
        try:
            r = s.get(f"https://127.0.0.1:{PORT}/healthz", verify=False, timeout=2)
            if r.status_code == 200:
                return time.time()
        except requests.RequestException:
            pass
        time.sleep(0.1)
    raise TimeoutError("manager never became healthy")


# ---------------------------------------------------------------------------------------------
# scenarios

POD_SPEC = {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}],
            "terminationGracePeriodSeconds": 0}


def deployment(i, replicas):
    labels = {"app": f"d{i}"}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": f"d{i}", "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": POD_SPEC}}}


def parallel(fn, items, workers=16):
    with cf.ThreadPoolExecutor(workers) as ex:
        list(ex.map(fn, items))


def deployments_done(api, n, replicas):
    items = api.get(f"/apis/apps/v1/namespaces/{NS}/deployments")["items"]
    if len(items) != n:
        return False
    for d in items:
        st, sp = d.get("status", {}), d["spec"]
        if st.get("observedGeneration", 0) < d["metadata"]["generation"]:
            return False
        if not (st.get("updatedReplicas") == replicas and st.get("replicas") == replicas
                and st.get("availableReplicas") == replicas):
            return False
        conds = {c["type"]: c for c in st.get("conditions", [])}
        if conds.get("Available", {}).get("status") != "True":
            return False
    return True


def poll(pred, timeout, what, every=1.0):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return time.time()
        time.sleep(every)
    raise TimeoutError(f"timeout waiting for {what}")


def run_one(args, cluster, name, argv, rep, rawdir):
    tag = f"{name}-rep{rep}"
    log(f"=== {tag}: recreating cluster ({args.nodes} kwok nodes)")
    cluster.create(args.nodes)
    api = cluster.api
    api.req("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    # Pods need the default ServiceAccount; created here, identically for both managers, so the
    # serviceaccount-controller is not part of the comparison.
    api.req("POST", f"/api/v1/namespaces/{NS}/serviceaccounts",
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}}, ok=(201, 409))
    watch = PodWatch(api, NS)
    watch.start()
    R = {"manager": name, "rep": rep, "started": dt.datetime.now().isoformat(timespec="seconds"),
         "loadavg_start": os.getloadavg()}
    phases = {}

    def thread_groups(before, after, total):
        """The phase's CPU by thread name; threads gone by its end count as "(exited)"."""
        groups = collections.Counter()
        for tid, (name, c) in after.items():
            groups[name] += c - (before[tid][1] if tid in before else 0.0)
        groups["(exited)"] = total - sum(groups.values())
        return {k: round(v, 3) for k, v in groups.most_common() if abs(v) >= 0.005}

    def phase(pname, fn):
        q0 = workqueues()
        th0 = proc.threads_cpu()
        c0, t0 = proc.snapshot_cpu(), time.time()
        log(f"{tag}: {pname} ...")
        extra = fn() or {}
        t1, c1 = time.time(), proc.snapshot_cpu()
        th1 = proc.threads_cpu()
        q1 = workqueues()
        items = {q: [q1[q][0] - q0.get(q, (0, 0))[0], q1[q][1] - q0.get(q, (0, 0))[1]] for q in q1}
        phases[pname] = {"t0": t0, "t1": t1, "seconds": t1 - t0, "cpu_s": c1 - c0, "workqueues": items,
                         "threads_cpu_s": thread_groups(th0, th1, c1 - c0), **extra}
        log(f"{tag}: {pname} {t1 - t0:.1f}s, manager cpu {c1 - c0:.1f}s")

    flags = manager_flags(args, cluster)
    profiler = None
    if args.profile:
        argv, flags, profiler = profiled(argv, flags, rawdir, tag)
    proc = Proc(name, argv + flags, os.path.join(rawdir, f"{tag}.log"))
    try:
        R["t_exec"] = proc.t_exec
        R["t_healthy"] = wait_healthy()
        if profiler:
            profiler.start()

        def nodes_untainted():
            nodes = api.get("/api/v1/nodes")["items"]
            return len(nodes) == args.nodes and all(
                not any(t["key"] == "node.kubernetes.io/not-ready" for t in n["spec"].get("taints", []) or [])
                for n in nodes)
        R["t_nodes_schedulable"] = poll(nodes_untainted, 300, "nodes without the not-ready taint", 0.2)
        phases["startup"] = {"t0": proc.t_exec, "t1": time.time(), "seconds": time.time() - proc.t_exec,
                             "cpu_s": proc.snapshot_cpu()}

        D, Rp = args.deployments, args.replicas
        if args.scale:
            R["scale"] = scale_scenario(args, api, watch, proc, phase, tag)
        else:
            def scale_up():
                parallel(lambda i: api.req("POST", f"/apis/apps/v1/namespaces/{NS}/deployments", deployment(i, Rp)),
                         range(D))
                t_exist = watch.wait(lambda live, ready: live >= D * Rp, args.timeout, "scale-up pods")
                t_ready = watch.wait(lambda live, ready: ready >= D * Rp, args.timeout, "scale-up pods ready")
                t_avail = poll(lambda: deployments_done(api, D, Rp), args.timeout, "deployments available")
                return {"t_pods_exist": t_exist, "t_pods_ready": t_ready, "t_available": t_avail}
            phase("scale-up", scale_up)

            def rollout():
                patch = {"spec": {"template": {"metadata": {"annotations": {"bench/revision": "2"}}}}}
                parallel(lambda i: api.req("PATCH", f"/apis/apps/v1/namespaces/{NS}/deployments/d{i}", patch,
                                           ctype="application/strategic-merge-patch+json"), range(D))
                time.sleep(1)
                poll(lambda: deployments_done(api, D, Rp), args.timeout, "rollouts complete")
            phase("rollout", rollout)

            def cascade_delete():
                parallel(lambda i: api.req("DELETE", f"/apis/apps/v1/namespaces/{NS}/deployments/d{i}",
                                           {"kind": "DeleteOptions", "apiVersion": "v1",
                                            "propagationPolicy": "Background"}), range(D))
                watch.wait(lambda live, ready: live == 0, args.timeout, "no pod left")
                poll(lambda: not api.get(f"/apis/apps/v1/namespaces/{NS}/replicasets")["items"], args.timeout,
                     "no ReplicaSet left", 0.5)
            phase("cascade-delete", cascade_delete)

            N = args.rs_replicas

            def big_rs():
                labels = {"app": "big"}
                api.req("POST", f"/apis/apps/v1/namespaces/{NS}/replicasets",
                        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "big"},
                         "spec": {"replicas": 0, "selector": {"matchLabels": labels},
                                  "template": {"metadata": {"labels": labels}, "spec": POD_SPEC}}})
                api.req("PATCH", f"/apis/apps/v1/namespaces/{NS}/replicasets/big", {"spec": {"replicas": N}},
                        ctype="application/merge-patch+json")
                t_exist = watch.wait(lambda live, ready: live >= N, args.timeout, "big RS pods")
                t_ready = watch.wait(lambda live, ready: ready >= N, args.timeout, "big RS pods ready")

                def rs_done():
                    st = api.get(f"/apis/apps/v1/namespaces/{NS}/replicasets/big").get("status", {})
                    return st.get("availableReplicas") == N and st.get("readyReplicas") == N
                t_status = poll(rs_done, args.timeout, "big RS status", 0.5)
                return {"t_pods_exist": t_exist, "t_pods_ready": t_ready, "t_status": t_status}
            phase("big-rs", big_rs)

            def idle():
                time.sleep(args.idle)
            phase("idle", idle)
        R["created_uids_seen"] = len(watch.created)
    finally:
        if profiler:
            profiler.stop_flag = True
        proc.stop()
        watch.stop_flag = True
    R["phases"] = phases
    R["cpu_total_s"] = proc.final_cpu
    R["rss_peak_mb"] = proc.hwm_kb / 1024
    idle_ph = phases.get("idle")
    if idle_ph:
        steady = [rss for (t, c, rss) in proc.samples if idle_ph["t0"] + (idle_ph["t1"] - idle_ph["t0"]) / 2 <= t <= idle_ph["t1"]]
        R["rss_steady_mb"] = statistics.median(steady) / 1024 if steady else None
    R["rss_samples"] = [(t - proc.t_exec, rss) for (t, c, rss) in proc.samples]
    R["cpu_samples"] = [(t - proc.t_exec, c) for (t, c, rss) in proc.samples]
    R["pod_samples"] = [(t - proc.t_exec, live, ready) for (t, live, ready) in watch.samples]
    R["loadavg_end"] = os.getloadavg()
    R.update(audit_summary(cluster.audit_log, proc.t_exec, phases))
    expected = max(args.scale) if args.scale else 2 * D * Rp + N
    R["pods_expected"] = expected
    R["pods_extra"] = R["pod_creates_ok"] - expected
    shutil.copy(cluster.audit_log, os.path.join(rawdir, f"{tag}.audit.log"))
    with open(os.path.join(rawdir, f"{tag}.json"), "w") as f:
        json.dump(R, f)
    log(f"{tag}: healthy after {R['t_healthy'] - R['t_exec']:.1f}s, first write after "
        f"{R.get('first_write_s', float('nan')):.1f}s, {R['requests_total']} requests, "
        f"pods created {R['pod_creates_ok']} (expected {expected})")
    return R


def scale_scenario(args, api, watch, proc, phase, tag):
    """--scale N1,N2,...: one ReplicaSet scaled 0 -> N1 -> N2 ...; at 0 and at each step, once every pod is
    Ready and the manager has settled, the manager's RSS (median of --scale-settle seconds of samples after
    as many seconds of rest). Bytes per cached pod: (RSS at N - RSS at 0) / N."""
    labels = {"app": "scale"}
    api.req("POST", f"/apis/apps/v1/namespaces/{NS}/replicasets",
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "scale"},
             "spec": {"replicas": 0, "selector": {"matchLabels": labels},
                      "template": {"metadata": {"labels": labels}, "spec": POD_SPEC}}})
    steps = []

    def settle(n):
        time.sleep(args.scale_settle)
        t0 = time.time()
        time.sleep(args.scale_settle)
        rss = [r for (t, c, r) in proc.samples if t >= t0]
        steps.append({"pods": n, "rss_mb": statistics.median(rss) / 1024 if rss else None,
                      "cpu_s": proc.snapshot_cpu()})
        log(f"{tag}: {n} pods cached: RSS {steps[-1]['rss_mb']:.0f} MiB")

    phase("scale-0", lambda: settle(0))
    for n in args.scale:
        def step(n=n):
            api.req("PATCH", f"/apis/apps/v1/namespaces/{NS}/replicasets/scale", {"spec": {"replicas": n}},
                    ctype="application/merge-patch+json")
            t_exist = watch.wait(lambda live, ready: live >= n, args.timeout, f"{n} pods")
            t_ready = watch.wait(lambda live, ready: ready >= n, args.timeout, f"{n} pods ready")
            settle(n)
            return {"t_pods_exist": t_exist, "t_pods_ready": t_ready}
        phase(f"scale-{n}", step)
    if "java" in os.path.basename(proc.p.args[0]):
        # where the heap goes at the largest size (after the RSS samples: a histogram runs a full GC)
        jcmd = os.path.join(os.path.dirname(proc.p.args[0]), "jcmd")
        for what in ("GC.heap_info", "GC.class_histogram"):
            try:
                out = subprocess.run([jcmd, str(proc.p.pid), what], capture_output=True, text=True, timeout=120).stdout
                with open(os.path.join(os.path.dirname(proc.logf.name), f"{tag}.{what}.txt"), "w") as f:
                    f.write(out)
            except (OSError, subprocess.TimeoutExpired) as e:
                log(f"{tag}: {jcmd} {what}: {e}")
    return steps


def scale_report(args, results, outdir):
    names = []
    for r in results:
        if r["manager"] not in names and "scale" in r:
            names.append(r["manager"])
    sizes = [0] + list(args.scale)
    rss = {n: {p: med([next((s["rss_mb"] for s in r["scale"] if s["pods"] == p), None)
                       for r in results if r["manager"] == n and "scale" in r]) for p in sizes} for n in names}
    per_pod = {n: {p: ((rss[n][p] - rss[n][0]) * 2**20 / p if p and rss[n][p] and rss[n][0] else None)
                   for p in sizes} for n in names}
    base = "upstream" if "upstream" in names else None
    head = ["pods cached"] + [f"{n} RSS (MiB)" for n in names] + [f"{n} bytes/pod" for n in names] + \
        [f"{n}/upstream RSS" for n in names if base and n != base]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for p in sizes:
        row = [f"{p:,}"] + [f"{rss[n][p]:.0f}" if rss[n][p] else "–" for n in names] + \
            [f"{per_pod[n][p]:,.0f}" if per_pod[n][p] else "–" for n in names]
        for n in names:
            if base and n != base:
                row.append(f"{rss[n][p] / rss[base][p]:.2f}" if rss[n][p] and rss[base][p] else "–")
        lines.append("| " + " | ".join(row) + " |")
    reps = {n: sum(1 for r in results if r["manager"] == n and "scale" in r) for n in names}
    md = [f"# Memory scaling: qkcm vs upstream kube-controller-manager — {dt.datetime.now().isoformat(timespec='minutes')}", "",
          f"- one ReplicaSet scaled 0 → {' → '.join(str(x) for x in args.scale)} pods ({args.nodes} kwok nodes), "
          f"--kube-api-qps={args.qps} --kube-api-burst={args.burst}, --controllers={args.controllers}",
          f"- at each size, once every pod is Ready: {args.scale_settle} s of rest, then the median RSS "
          f"(/proc VmRSS, 1 s samples) over the next {args.scale_settle} s; bytes/pod = (RSS at N − RSS at 0) / N",
          f"- repetitions per manager: {reps}; 1-min load average at the start of each run: "
          f"{[round(r['loadavg_start'][0], 1) for r in results]}",
          f"- qkcm-jvm: `{getattr(args, 'qkcm_java', 'java')} {args.qkcm_java_opts or ''} -jar <jar>`",
          ] + [f"- {v.partition('=')[0]}: `{v.partition('=')[2]}`" for v in getattr(args, "variant", [])] + \
         ["", *lines, "", "![RSS against pods cached](rss-vs-pods.png)", ""]
    with open(os.path.join(outdir, "results-scale.md"), "w") as f:
        f.write("\n".join(md))
    with open(os.path.join(outdir, "scale.json"), "w") as f:
        json.dump({"rss_mb": rss, "bytes_per_pod": per_pod, "reps": reps}, f, indent=1)
    print("\n".join(md), flush=True)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(7, 4.8))
    for n in names:
        pts = [(p, rss[n][p]) for p in sizes if rss[n][p]]
        ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", label=n)
    ax.set_xlabel("pods cached")
    ax.set_ylabel("RSS (MiB)")
    ax.set_title("controller manager RSS against pods cached")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "rss-vs-pods.png"), dpi=110)


def parse_ts(s):
    return dt.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def read_audit(path):
    """Requests of the manager (the only user the audit policy logs), one per auditID, in arrival order:
    verb, t, resource, sub(resource), ns, name, code (of ResponseComplete), ua (user agent)."""
    seen = {}
    with open(path) as f:
        for line in f:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("user", {}).get("username") != MANAGER_USER:
                continue
            o = e.get("objectRef") or {}
            a = seen.setdefault(e["auditID"], {"verb": e["verb"], "t": parse_ts(e["requestReceivedTimestamp"]),
                                                "resource": o.get("resource", "-"), "sub": o.get("subresource"),
                                                "ns": o.get("namespace"), "name": o.get("name"),
                                                "code": None, "ua": e.get("userAgent", "")})
            if e.get("stage") == "ResponseComplete":
                a["code"] = (e.get("responseStatus") or {}).get("code")
    return sorted(seen.values(), key=lambda a: a["t"])


def audit_summary(path, t_exec, phases):
    """Requests of the manager (the only user the audit policy logs), one per auditID."""
    reqs = read_audit(path)
    writes = [a for a in reqs if a["verb"] in ("create", "update", "patch", "delete", "deletecollection")]
    out = {"requests_total": len(reqs), "user_agents": sorted({a["ua"] for a in reqs})[:10]}
    if writes:
        out["first_write_s"] = writes[0]["t"] - t_exec
        out["first_write"] = f"{writes[0]['verb']} {writes[0]['resource']}"
    out["pod_creates_ok"] = sum(1 for a in reqs if a["verb"] == "create" and a["resource"] == "pods"
                                and a["sub"] is None and a["code"] == 201)
    by_verb, by_phase = {}, {}
    for a in reqs:
        by_verb[a["verb"]] = by_verb.get(a["verb"], 0) + 1
        ph = next((p for p, v in phases.items() if p != "startup" and v["t0"] <= a["t"] <= v["t1"]), "other")
        if a["t"] <= phases.get("startup", {}).get("t1", 0):
            ph = "startup"
        d = by_phase.setdefault(ph, {})
        key = f"{a['verb']} {a['resource']}{'/' + a['sub'] if a['sub'] else ''}"
        d[key] = d.get(key, 0) + 1
    out["requests_by_verb"] = by_verb
    codes = {}
    for a in reqs:
        codes[str(a["code"])] = codes.get(str(a["code"]), 0) + 1
    out["responses_by_code"] = codes
    out["requests_by_phase"] = by_phase
    out["requests_per_phase"] = {p: sum(d.values()) for p, d in by_phase.items()}
    return out


# ---------------------------------------------------------------------------------------------
# ceiling

def ceiling(args, cluster, rawdir):
    log(f"ceiling: raw pod-create rate, {args.ceiling_pods} pods, concurrency {args.ceiling_concurrency}")
    cluster.create(args.nodes)
    api = cluster.api
    for n in api.get("/api/v1/nodes")["items"]:  # let pods schedule, as in the scenarios
        api.req("PATCH", f"/api/v1/nodes/{n['metadata']['name']}", {"spec": {"taints": None}},
                ctype="application/merge-patch+json")
    api.req("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench-ceiling"}})
    api.req("POST", "/api/v1/namespaces/bench-ceiling/serviceaccounts",
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}}, ok=(201, 409))
    out = sh(args.ceiling_bin, f"-server={cluster.server}", f"-ca={cluster.pki}/ca.crt",
             f"-cert={cluster.pki}/admin.crt", f"-key={cluster.pki}/admin.key",
             f"-n={args.ceiling_pods}", f"-c={args.ceiling_concurrency}", capture=True)
    res = json.loads(out.strip().splitlines()[-1])
    res["loadavg"] = os.getloadavg()
    with open(os.path.join(rawdir, "ceiling.json"), "w") as f:
        json.dump(res, f)
    log(f"ceiling: {res['rate']:.0f} pods/s ({res['errors']} errors)")
    return res


# ---------------------------------------------------------------------------------------------
# report

def med(xs):
    xs = [x for x in xs if x is not None and x == x]
    return statistics.median(xs) if xs else None


def figures(r, args):
    ph = r["phases"]
    pods_scaleup = args.deployments * args.replicas
    f = {
        "startup: exec → first write (s)": r.get("first_write_s"),
        "startup: exec → /healthz 200 (s)": r["t_healthy"] - r["t_exec"],
        "startup: exec → nodes schedulable (s)": r["t_nodes_schedulable"] - r["t_exec"],
        "scale-up: all pods exist (s)": ph["scale-up"]["t_pods_exist"] - ph["scale-up"]["t0"],
        "scale-up: all Deployments Available (s)": ph["scale-up"]["t_available"] - ph["scale-up"]["t0"],
        "rollout: all rollouts complete (s)": ph["rollout"]["seconds"],
        "cascade delete: no pod left (s)": ph["cascade-delete"]["seconds"],
        "big RS: all pods exist (s)": ph["big-rs"]["t_pods_exist"] - ph["big-rs"]["t0"],
        "big RS: status ready=available=N (s)": ph["big-rs"]["seconds"],
        "big RS: pod-create rate (pods/s)": args.rs_replicas / (ph["big-rs"]["t_pods_exist"] - ph["big-rs"]["t0"]),
    }
    for p in ("startup", "scale-up", "rollout", "cascade-delete", "big-rs", "idle"):
        f[f"CPU {p} (s)"] = ph[p]["cpu_s"]
    f["CPU total (s)"] = r["cpu_total_s"]
    f["RSS peak (MiB)"] = r["rss_peak_mb"]
    f["RSS steady, idle with pods cached (MiB)"] = r.get("rss_steady_mb")
    rp = r["requests_per_phase"]
    f["API requests total"] = r["requests_total"]
    for p in ("startup", "scale-up", "rollout", "cascade-delete", "big-rs", "idle"):
        f[f"API requests {p}"] = rp.get(p, 0)
    f["API requests per pod, scale-up"] = rp.get("scale-up", 0) / pods_scaleup
    f["API requests per pod, big RS"] = rp.get("big-rs", 0) / args.rs_replicas
    for v in ("get", "list", "watch", "create", "update", "patch", "delete"):
        f[f"API requests: {v}"] = r["requests_by_verb"].get(v, 0)
    allreq = {}
    for d in r["requests_by_phase"].values():
        for k, v in d.items():
            allreq[k] = allreq.get(k, 0) + v
    f["API requests: create events"] = allreq.get("create events", 0)
    f["API requests: lease get/update/patch"] = sum(v for k, v in allreq.items() if k.endswith(" leases"))
    codes = r.get("responses_by_code", {})
    f["API responses 409 Conflict"] = codes.get("409", 0)
    f["API responses other errors (4xx/5xx)"] = sum(v for k, v in codes.items()
                                                    if k.isdigit() and int(k) >= 400 and k != "409")
    f["pods created beyond spec"] = r["pods_extra"]
    # work items (syncs) per queue, from the managers' own workqueue_work_duration_seconds
    for q, p in (("replicaset", "big-rs"), ("replicaset", "scale-up"), ("deployment", "scale-up"),
                 ("deployment", "rollout")):
        wq = ph[p].get("workqueues", {}).get(q)
        f[f"syncs, {q} queue, {p}"] = wq[0] if wq else None
        f[f"mean sync time (ms), {q} queue, {p}"] = 1000 * wq[1] / wq[0] if wq and wq[0] else None
    return f


def report(args, results, ceil, outdir):
    names = []
    for r in results:
        if r["manager"] not in names:
            names.append(r["manager"])
    figs = {n: [figures(r, args) for r in results if r["manager"] == n and "phases" in r] for n in names}
    keys = next((list(fs[0].keys()) for fs in figs.values() if fs), [])
    meds = {n: {k: med([f[k] for f in figs[n]]) for k in keys} for n in names}
    # a median would hide one bad repetition: extra pods are reported for the worst one
    for n in names:
        extra = [f["pods created beyond spec"] for f in figs[n] if f.get("pods created beyond spec") is not None]
        if extra:
            meds[n]["pods created beyond spec"] = max(extra)
    label = {"pods created beyond spec": "pods created beyond spec (worst repetition)"}
    base = "upstream" if "upstream" in names else None

    def fmt(x):
        if x is None:
            return "–"
        if isinstance(x, float) and abs(x) < 100 and x != int(x):
            return f"{x:.2f}" if abs(x) < 10 else f"{x:.1f}"
        return f"{x:,.0f}"

    # a baseline build of qkcm (--qkcm-base-jar): the change under test is also given against it
    vs_base = "qkcm-base" in names and "qkcm-jvm" in names
    # variants (--variant) are also given against qkcm-jvm, the A/B of the lever they stand for
    variants = [n for n in names if n not in ("qkcm-jvm", "qkcm-base", "qkcm-native", "upstream")] \
        if "qkcm-jvm" in names else []
    head = (["figure (median)"] + names + [f"{n}/upstream" for n in names if base and n != base]
            + (["qkcm-jvm/qkcm-base"] if vs_base else []) + [f"{n}/qkcm-jvm" for n in variants])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for k in keys:
        row = [label.get(k, k)] + [fmt(meds[n][k]) for n in names]
        for n in names:
            if base and n != base:
                a, b = meds[n][k], meds[base][k]
                row.append(f"{a / b:.2f}" if a is not None and b not in (None, 0) else "–")
        if vs_base:
            a, b = meds["qkcm-jvm"][k], meds["qkcm-base"][k]
            row.append(f"{a / b:.2f}" if a is not None and b not in (None, 0) else "–")
        for n in variants:
            a, b = meds[n][k], meds["qkcm-jvm"][k]
            row.append(f"{a / b:.2f}" if a is not None and b not in (None, 0) else "–")
        lines.append("| " + " | ".join(row) + " |")
    reps = {n: len(figs[n]) for n in names}
    load = [round(x, 1) for r in results for x in (r["loadavg_start"][0],)]
    sizes = (f"{args.deployments} Deployments × {args.replicas} replicas, ReplicaSet 0 → {args.rs_replicas}, "
             f"idle {args.idle}s, {args.nodes} kwok nodes, --kube-api-qps={args.qps} --kube-api-burst={args.burst}, "
             f"--controllers={args.controllers}")
    md = [f"# qkcm vs upstream kube-controller-manager — {dt.datetime.now().isoformat(timespec='minutes')}", "",
          f"- sizes: {sizes}",
          f"- repetitions per manager: {reps} (A/B order alternating per repetition)",
          f"- machine: {os.cpu_count()} cores, {round(os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30)} GiB; "
          f"1-min load average at the start of each run: {load} (shared machine — absolute times are inflated "
          f"and noisy; prefer the ratios)",
          f"- versions: Kubernetes {args.k8s_version} (etcd, kube-apiserver, kube-scheduler, upstream kube-controller-manager), "
          f"kwok {args.kwok_version}, qkcm {args.qkcm_version}",
          f"- qkcm-jvm: `{getattr(args, 'qkcm_java', 'java')} {args.qkcm_java_opts or ''} -jar <jar>`",
          ] + [f"- {v.partition('=')[0]}: `{v.partition('=')[2]}`" for v in getattr(args, "variant", [])]
    if ceil:
        md.append(f"- ceiling: the API server absorbed {ceil['rate']:.0f} pods/s from a plain client "
                  f"({ceil['pods']} pods, {ceil['concurrency']} concurrent workers, no QPS limit, {ceil['errors']} errors)")
    md += ["", *lines, "",
           "Times run from the harness's first request of the scenario to the condition; CPU is utime+stime of the "
           "manager process; API requests come from the API server's audit log (the manager's own client certificate).",
           "", "![pods ready over time](pods-ready.png)", ""]
    with open(os.path.join(outdir, "results.md"), "w") as f:
        f.write("\n".join(md))
    with open(os.path.join(outdir, "medians.json"), "w") as f:
        json.dump({"medians": meds, "reps": reps, "sizes": sizes, "ceiling": ceil}, f, indent=1)
    chart(args, results, outdir)
    print("\n".join(md[:8] + lines), flush=True)


def chart(args, results, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib missing (pip install matplotlib): no chart")
        return
    colors = {"qkcm-jvm": "tab:red", "qkcm-base": "tab:green", "qkcm-native": "tab:orange", "upstream": "tab:blue"}
    others = iter(["tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan", "tab:gray"])
    for r in results:
        if r["manager"] not in colors:
            colors[r["manager"]] = next(others, "black")
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8))
    for ax, pname, title in ((axes[0], "scale-up", f"scale-up: {args.deployments}×{args.replicas} Deployments"),
                             (axes[1], "big-rs", f"ReplicaSet 0 → {args.rs_replicas}")):
        labelled = set()
        for r in results:
            if "phases" not in r or pname not in r["phases"]:
                continue
            t0 = r["phases"][pname]["t0"] - r["t_exec"]
            t1 = r["phases"][pname]["t1"] - r["t_exec"]
            pts = [(t - t0, ready) for (t, live, ready) in r["pod_samples"] if t0 <= t <= t1]
            if not pts:
                continue
            n = r["manager"]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color=colors.get(n, "gray"), alpha=0.8,
                    label=None if n in labelled else n)
            labelled.add(n)
        ax.set_title(title)
        ax.set_xlabel("seconds since the scenario started")
        ax.set_ylabel("pods ready")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle("pods ready over time (one line per repetition)")
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "pods-ready.png"), dpi=110)


# ---------------------------------------------------------------------------------------------

def main():
    # bench/run.sh runs in the background often; SIGINT is ignored there. Both signals stop the
    # manager and delete the cluster on the way out (the finally blocks).
    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGINT, interrupt)
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small sizes, 1 repetition (exercise the harness)")
    p.add_argument("--deployments", type=int)
    p.add_argument("--replicas", type=int)
    p.add_argument("--rs-replicas", type=int)
    p.add_argument("--idle", type=int, help="idle seconds")
    p.add_argument("--reps", type=int)
    p.add_argument("--nodes", type=int, help="kwok nodes (110 pods each); default fits the largest scenario")
    p.add_argument("--qps", type=float, default=100)
    p.add_argument("--burst", type=int, default=200)
    p.add_argument("--controllers", default="deployment-controller,replicaset-controller,"
                                            "garbage-collector-controller,node-lifecycle-controller")
    p.add_argument("--managers", default="qkcm-jvm,qkcm-native,upstream")
    p.add_argument("--qkcm-jar", default=os.environ.get("QKCM_JAR"))
    p.add_argument("--qkcm-base-jar", default=os.environ.get("QKCM_BASE_JAR"),
                   help="a baseline qkcm build (quarkus-run.jar) run as manager qkcm-base, e.g. main before a change")
    p.add_argument("--qkcm-java-opts", default=os.environ.get("QKCM_JAVA_OPTS", default_java_opts()),
                   help="JVM options of qkcm-jvm (default: bin/qkcm's, the ones users get)")
    p.add_argument("--qkcm-java", default=os.environ.get("QKCM_JAVA") or default_java(),
                   help="java executable of qkcm-jvm (default: the one bin/qkcm picks)")
    p.add_argument("--variant", action="append", default=[], metavar="NAME=COMMAND",
                   help="an extra qkcm manager: the same jar started by COMMAND (java and its options; "
                        "{dir} is the jar's directory), e.g. 'qkcm-j17=/usr/lib/jvm/java-17-openjdk-amd64/bin/java "
                        "-XX:+UseSerialGC'; repeatable")
    p.add_argument("--scale", help="memory scaling instead of the default scenarios: pod counts, e.g. 1000,3000,10000")
    p.add_argument("--scale-settle", type=int, default=20, help="seconds of rest, then of RSS samples, per --scale size")
    p.add_argument("--ceiling-pods", type=int)
    p.add_argument("--ceiling-concurrency", type=int, default=32)
    p.add_argument("--no-ceiling", action="store_true")
    p.add_argument("--profile", action="store_true", help="profile the managers: JFR for qkcm, pprof for upstream "
                   "(raw/<time>/<tag>.jfr, <tag>.pprof.*.pb.gz; bench/profiles.py summarizes); costs CPU, "
                   "so not for figures")
    p.add_argument("--timeout", type=int, default=1200, help="per-scenario timeout (s)")
    p.add_argument("--out", help="results folder (default bench/results/<date>)")
    p.add_argument("--report", metavar="RAWDIR", help="only re-render the report from a raw/<time> folder "
                                                      "(re-reads its audit logs)")
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--ceiling-bin", required=True)
    p.add_argument("--kwok-workdir", default=os.path.expanduser("~/.kwok-bench"))
    p.add_argument("--cluster-name", default="qkcm-bench")
    p.add_argument("--k8s-version", default="?")
    p.add_argument("--kwok-version", default="?")
    p.add_argument("--qkcm-version", default="?")
    args = p.parse_args()
    q = args.quick
    for k, full, quick in (("deployments", 100, 20), ("replicas", 10, 5), ("rs_replicas", 3000, 300),
                           ("idle", 600, 60), ("reps", 3, 1), ("ceiling_pods", 1000, 300)):
        if getattr(args, k) is None:
            setattr(args, k, quick if q else full)
    args.scale = [int(x) for x in args.scale.split(",")] if args.scale else []
    if args.nodes is None:
        peak = max(args.deployments * args.replicas * 1.3, args.rs_replicas, *args.scale)
        args.nodes = int(peak / 100) + 2
    args.managers = [m.strip() for m in args.managers.split(",") if m.strip()]
    if args.report:
        return rereport(args)

    outdir = args.out or os.path.join(BENCH, "results", dt.date.today().isoformat())
    rawdir = os.path.join(outdir, "raw", dt.datetime.now().strftime("%H%M%S"))
    os.makedirs(rawdir, exist_ok=True)
    log(f"results in {outdir} (raw data {rawdir})")
    with open(os.path.join(rawdir, "args.json"), "w") as f:
        json.dump(vars(args), f, indent=1)

    cluster = Cluster(args)
    ms = managers(args)
    results = []
    try:
        ceil = None if args.no_ceiling else ceiling(args, cluster, rawdir)
        for rep in range(1, args.reps + 1):
            order = ms if rep % 2 == 1 else list(reversed(ms))
            for name, argv in order:
                try:
                    results.append(run_one(args, cluster, name, argv, rep, rawdir))
                except Exception as e:  # noqa: BLE001 - one failed run must not lose the others
                    log(f"{name} rep {rep} FAILED: {e}")
                    results.append({"manager": name, "rep": rep, "error": str(e),
                                     "loadavg_start": os.getloadavg()})
                with open(os.path.join(rawdir, "results.json"), "w") as f:
                    json.dump(results, f)
    finally:
        cluster.delete()
    failed = [r for r in results if "error" in r]
    for r in failed:
        log(f"FAILED: {r['manager']} rep {r['rep']}: {r['error']}")
    if args.scale:
        scale_report(args, [r for r in results if "error" not in r], outdir)
    else:
        report(args, [r for r in results if "error" not in r] + failed, ceil, outdir)
    return 1 if failed else 0


def rereport(args):
    raw = args.report
    saved = json.load(open(os.path.join(raw, "args.json")))
    for k in ("deployments", "replicas", "rs_replicas", "idle", "nodes", "qps", "burst", "controllers",
              "k8s_version", "kwok_version", "qkcm_version", "qkcm_java", "qkcm_java_opts", "variant",
              "scale", "scale_settle"):
        if k in saved:
            setattr(args, k, saved[k])
    results = json.load(open(os.path.join(raw, "results.json")))
    if args.scale:
        # a scaling run (also one stopped part-way: the repetitions in results.json)
        if isinstance(args.scale, str):
            args.scale = [int(x) for x in args.scale.split(",")]
        outdir = args.out or os.path.dirname(os.path.dirname(os.path.abspath(raw)))
        os.makedirs(outdir, exist_ok=True)
        scale_report(args, [r for r in results if "error" not in r], outdir)
        return 0
    for r in results:
        audit = os.path.join(raw, f"{r['manager']}-rep{r['rep']}.audit.log")
        if "phases" in r and os.path.exists(audit):
            r.update(audit_summary(audit, r["t_exec"], r["phases"]))
            r["pods_extra"] = r["pod_creates_ok"] - r["pods_expected"]
    ceil_path = os.path.join(raw, "ceiling.json")
    ceil = json.load(open(ceil_path)) if os.path.exists(ceil_path) else None
    outdir = args.out or os.path.dirname(os.path.dirname(os.path.abspath(raw)))
    os.makedirs(outdir, exist_ok=True)
    report(args, [r for r in results if "error" not in r] + [r for r in results if "error" in r], ceil, outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
