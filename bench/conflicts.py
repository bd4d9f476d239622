#!/usr/bin/env python3
"""Where a manager's 409 Conflicts come from, from a bench run's audit logs (issue 36, lever 2).

    bench/conflicts.py bench/results/<run>/raw/<time> [--phase scale-up] [--trace 5]

For each <manager>-rep<N>.audit.log beside its <manager>-rep<N>.json (bench.py's raw data): the manager's
writes and their 409s per phase, by controller (the user agent's last element), verb and resource; then,
per controller and resource, the manager's last successful write to the same object before each
conflict (the audit policy logs at Metadata level, so no resourceVersions: only the manager writes
Deployments and ReplicaSets in these scenarios, besides the harness's own scale patches): which
controller made it and how long before — its own write not yet in its cache, or another controller's.
--trace N prints the N first conflicts of each kind with the writes before them on the same object.
"""
import argparse
import collections
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (bench.py's audit reading)


def load(path):
    """bench.py's reading of the audit log, the controller named by the user agent's last element."""
    reqs = bench.read_audit(path)
    for a in reqs:
        a["ua"] = a["ua"].split("/")[-1]
    return reqs


def phase_of(t, phases):
    for p, v in phases.items():
        if p != "startup" and v["t0"] <= t <= v["t1"]:
            return p
    return "startup" if t <= phases.get("startup", {}).get("t1", 0) else "other"


WRITES = ("create", "update", "patch", "delete")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("--phase", help="only this phase")
    ap.add_argument("--trace", type=int, default=0)
    ap.add_argument("--summary", action="store_true", help="only a table: 409s per manager (median of its "
                                                           "repetitions) by phase and kind")
    args = ap.parse_args()
    totals = collections.defaultdict(lambda: collections.defaultdict(list))
    reps = collections.Counter()
    for log in sorted(glob.glob(os.path.join(args.raw, "*.audit.log"))):
        tag = os.path.basename(log)[:-len(".audit.log")]
        meta = os.path.join(args.raw, tag + ".json")
        phases = json.load(open(meta)).get("phases", {}) if os.path.exists(meta) else {}
        reqs = load(log)
        print(f"== {tag}: {len(reqs)} requests")
        by = collections.Counter()
        writes = collections.Counter()
        last = {}  # object -> (rv, writer ua, t) of the last successful write
        stale = collections.Counter()
        traces = collections.defaultdict(list)
        history = collections.defaultdict(list)
        for a in reqs:
            ph = phase_of(a["t"], phases)
            if args.phase and ph != args.phase:
                continue
            if a["verb"] not in WRITES:
                continue
            kind = f"{a['ua']} {a['verb']} {a['resource']}{'/' + a['sub'] if a['sub'] else ''}"
            obj = (a["resource"], a["ns"], a["name"])
            writes[(ph, kind)] += 1
            if a["code"] == 409:
                by[(ph, kind)] += 1
                prev = last.get(obj)
                if prev is None:
                    who = "no earlier write"
                else:
                    dt = a["t"] - prev[2]
                    bucket = "<50ms" if dt < 0.05 else "<200ms" if dt < 0.2 else "<1s" if dt < 1 else ">=1s"
                    who = f"{'own write' if prev[1] == a['ua'] else prev[1]} {prev[0]} {bucket} before"
                stale[(kind, who)] += 1
                if len(traces[kind]) < args.trace:
                    traces[kind].append((a, list(history[obj][-4:])))
            elif a["code"] and 200 <= a["code"] < 300:
                last[obj] = (f"{a['verb']}{'/' + a['sub'] if a['sub'] else ''}", a["ua"], a["t"])
            history[obj].append(a)
        manager = tag.rsplit("-rep", 1)[0]
        reps[manager] += 1
        for key in set(by) | {("all", "all")}:
            totals[key][manager].append(sum(by.values()) if key == ("all", "all") else by[key])
        if args.summary:
            continue
        for (ph, kind), n in sorted(by.items(), key=lambda x: -x[1]):
            print(f"  {ph:14s} {n:5d} 409 of {writes[(ph, kind)]:6d}  {kind}")
        print("  the version the conflicting write missed was written by:")
        for (kind, who), n in sorted(stale.items(), key=lambda x: -x[1]):
            print(f"    {n:5d}  {kind}  <- {who}")
        for kind, ts in traces.items():
            for a, hist in ts:
                print(f"  trace {kind} {a['ns']}/{a['name']} t={a['t']:.3f}")
                for h in hist:
                    print(f"      {h['t'] - a['t']:+.3f}s {h['ua']} {h['verb']} {h['sub'] or ''} code {h['code']}")


    if args.summary:
        managers = sorted({m for v in totals.values() for m in v})
        print("| phase | write | " + " | ".join(managers) + " |")
        print("|---|---|" + "---|" * len(managers))
        for (ph, kind), per in sorted(totals.items(), key=lambda x: (x[0] != ("all", "all"), x[0])):
            cells = []
            for m in managers:
                v = sorted(per.get(m, []) + [0] * (reps[m] - len(per.get(m, []))))  # reps without such a 409
                cells.append(str(v[len(v) // 2]) if v else "0")
            print(f"| {ph} | {kind} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
