#!/usr/bin/env python3
"""Start-up series on a running local cluster (hack/local-cluster.sh up --no-qkcm): starts each manager
in turn, N times, alternating, and reads from its own log when it served /healthz, began the campaign and
won the Lease (the first write). The Lease is deleted before every start, so each first write is a create,
as in a new cluster. Both managers log these three moments (klog or JBoss logging, millisecond stamps),
so upstream is measured in the same way beside qkcm.

  bench/startup/series.py --reps 5 --manager qkcm=bin/qkcm --manager upstream=<kube-controller-manager>
  (a manager may carry an environment: --manager 'name=ENV=1 OTHER=2 bin/qkcm')

With --cpu-at S, the process' CPU time S seconds after exec is read too (the start's CPU; the kill
comes right after). Reports exec → serving, → campaign, → Lease won per start and the median per manager, and the
ratio of each manager's median to the last manager's (put upstream last)."""
import argparse, datetime, os, re, shlex, signal, statistics, subprocess, sys, time

MOMENTS = [("serving", re.compile(r"Serving securely on")),
           ("campaign", re.compile(r"attempting to acquire leader lease")),
           ("lease", re.compile(r"successfully acquired lease"))]
STAMP = re.compile(r"(\d\d):(\d\d):(\d\d)\.(\d{3,6})")


def stamp(line, day):
    m = STAMP.search(line)
    if not m:
        return None
    h, mi, s, frac = m.groups()
    t = day.replace(hour=int(h), minute=int(mi), second=int(s), microsecond=int(frac.ljust(6, "0")))
    return t.timestamp()


def process_cpu(pid):
    """utime + stime in seconds of pid and its descendants (bin/qkcm execs java; a wrapper may not)."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [pid]
    while todo:
        q = todo.pop()
        try:
            with open(f"/proc/{q}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            with open(f"/proc/{q}/task/{q}/children") as f:
                todo += [int(c) for c in f.read().split()]
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def one(cmd, env, args, kubectl, logfile, timeout, settle):
    subprocess.run(kubectl + ["-n", "kube-system", "delete", "lease", "kube-controller-manager",
                              "--ignore-not-found", "--wait=true"], check=True, stdout=subprocess.DEVNULL)
    time.sleep(1.0)
    day = datetime.datetime.now(datetime.timezone.utc)
    with open(logfile, "w") as log:
        t0 = time.time()
        p = subprocess.Popen(cmd + args, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        found = {}
        deadline = t0 + timeout
        while time.time() < deadline and len(found) < len(MOMENTS):
            time.sleep(0.05)
            with open(logfile, errors="replace") as f:
                for line in f:
                    for name, rx in MOMENTS:
                        if name not in found and rx.search(line):
                            t = stamp(line, day)
                            if t is not None:
                                found[name] = t - t0
        if settle:
            # the process' CPU (all its threads, children included) at a fixed time after exec
            time.sleep(max(0.0, t0 + settle - time.time()))
            found["cpu"] = process_cpu(p.pid)
        else:
            time.sleep(0.5)
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--manager", action="append", required=True, help="name=[ENV=v ...] command")
    ap.add_argument("--cluster", default=os.path.expanduser("~/.kwok/clusters/qkcm"))
    ap.add_argument("--kubectl", default=os.path.expanduser("~/.kubeapitest/k8s/1.34.4-linux-amd64/kubectl"))
    ap.add_argument("--logs", default="/tmp/qkcm-startup-series")
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--cpu-at", type=float, default=0,
                    help="also read the process' CPU this many seconds after exec (0: not read)")
    a = ap.parse_args()
    c = a.cluster
    args = [f"--kubeconfig={c}/kubeconfig.yaml", "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
            "--bind-address=127.0.0.1", "--secure-port=10357", f"--root-ca-file={c}/pki/ca.crt",
            f"--service-account-private-key-file={c}/pki/admin.key", "--leader-elect=true",
            "--node-monitor-period=5s", "--node-monitor-grace-period=40s"]
    kubectl = [a.kubectl, "--kubeconfig", f"{c}/kubeconfig.yaml"]
    os.makedirs(a.logs, exist_ok=True)
    managers = []
    for spec in a.manager:
        name, rest = spec.split("=", 1)
        words = shlex.split(rest)
        env = dict(os.environ)
        while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
            k, v = words.pop(0).split("=", 1)
            env[k] = v
        managers.append((name, words, env))
    results = {name: [] for name, _, _ in managers}
    for r in range(a.reps):
        for name, cmd, env in managers:
            found = one(cmd, env, args, kubectl, f"{a.logs}/{name}-{r + 1}.log", a.timeout, a.cpu_at)
            results[name].append(found)
            print(f"rep {r + 1} {name:12s} " + "  ".join(
                f"{m}={found[m]:.3f}" if m in found else f"{m}=—" for m in [m for m, _ in MOMENTS] + ["cpu"]), flush=True)
    print()
    moments = [m for m, _ in MOMENTS] + (["cpu"] if a.cpu_at else [])
    print("| exec → (median of %d, s) | " % a.reps + " | ".join(
        m if m != "cpu" else f"CPU s at {a.cpu_at:g} s" for m in moments) + " |")
    print("|---|" + "---|" * len(moments))
    medians = {}
    for name, _, _ in managers:
        medians[name] = {m: statistics.median([f[m] for f in results[name] if m in f]) if any(
            m in f for f in results[name]) else None for m in moments}
        print(f"| {name} | " + " | ".join("—" if medians[name][m] is None else f"{medians[name][m]:.3f}"
                                         for m in moments) + " |")
    ref = managers[-1][0]
    for name, _, _ in managers[:-1]:
        print(f"| {name}/{ref} | " + " | ".join(
            "—" if not medians[name][m] or not medians[ref][m] else f"{medians[name][m] / medians[ref][m]:.2f}×"
            for m in moments) + " |")


if __name__ == "__main__":
    sys.exit(main())
