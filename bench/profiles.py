#!/usr/bin/env python3
"""Summarizes the profiles of a `bench/run.sh --profile` run, per manager and phase, side by side.

    bench/profiles.py RAWDIR [--phase big-rs] [--top 25]

qkcm: the JFR recording (<tag>.jfr): execution samples of Java threads inside the phase's window, by
thread group, by package (inclusive: a sample counts once for every package on its stack) and by leaf
method. upstream: the back-to-back pprof CPU profiles (<tag>.pprof.<start>.pb.gz) that lie inside the
phase, merged by `go tool pprof`, flat and cumulative. Samples are shares of the manager's own samples:
compare shapes across managers, and CPU seconds from the run's results.md.
"""
import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import datetime as dt

JFR = os.environ.get("JFR", "/usr/lib/jvm/temurin-25-jdk-amd64/bin/jfr")


def jfr_samples(path):
    out = subprocess.run([JFR, "print", "--json", "--stack-depth", "64", "--events", "jdk.ExecutionSample", path],
                         capture_output=True, text=True, check=True).stdout
    for e in json.loads(out)["recording"]["events"]:
        v = e["values"]
        t = dt.datetime.fromisoformat(v["startTime"].replace("Z", "+00:00")).timestamp()
        thread = (v.get("sampledThread") or {}).get("javaName") or "?"
        frames = []
        for f in (v.get("stackTrace") or {}).get("frames", []):
            m = f["method"]
            frames.append(m["type"]["name"].replace("/", ".") + "." + m["name"])
        yield t, thread, frames


def package(frame):
    parts = frame.split(".")
    # class.method dropped; keep at most four package segments
    pkg = [p for p in parts[:-2]]
    return ".".join(pkg[:4]) or frame


def thread_group(name):
    return re.sub(r"\d+", "N", name)


def summarize_jfr(path, t0, t1, top):
    threads, pkgs, leaves = collections.Counter(), collections.Counter(), collections.Counter()
    n = 0
    for t, thread, frames in jfr_samples(path):
        if not (t0 <= t <= t1) or not frames:
            continue
        n += 1
        threads[thread_group(thread)] += 1
        for p in {package(f) for f in frames}:
            pkgs[p] += 1
        leaves[frames[0]] += 1
    lines = [f"{n} samples (Java threads)"]
    for title, c in (("threads", threads), ("packages, inclusive", pkgs), ("leaf methods", leaves)):
        lines.append(f"-- {title}")
        lines += [f"{k:6d} {100.0 * k / max(n, 1):5.1f}% {name}" for name, k in c.most_common(top)]
    return lines


def summarize_pprof(files, top):
    if not files:
        return ["no pprof profile inside the phase"]
    with tempfile.NamedTemporaryFile(suffix=".pb.gz") as merged:
        subprocess.run(["go", "tool", "pprof", "-proto", *files], stdout=merged, stderr=subprocess.DEVNULL,
                       check=True)
        lines = [f"{len(files)} profiles merged"]
        for flag in ("-top", "-top -cum"):
            out = subprocess.run(["go", "tool", "pprof", *flag.split(), f"-nodecount={top}", merged.name],
                                 capture_output=True, text=True, check=True).stdout
            lines.append(f"-- pprof {flag}")
            lines += [l for l in out.splitlines() if l.strip()]
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("rawdir")
    p.add_argument("--phase", default="big-rs")
    p.add_argument("--top", type=int, default=25)
    a = p.parse_args()
    for rj in sorted(glob.glob(os.path.join(a.rawdir, "*-rep*.json"))):
        tag = os.path.basename(rj)[:-len(".json")]
        r = json.load(open(rj))
        ph = r.get("phases", {}).get(a.phase)
        if not ph:
            continue
        print(f"== {tag}, phase {a.phase}: {ph['seconds']:.1f} s, manager CPU {ph['cpu_s']:.1f} s")
        jfr = os.path.join(a.rawdir, tag + ".jfr")
        if os.path.exists(jfr):
            lines = summarize_jfr(jfr, ph["t0"], ph["t1"], a.top)
        else:
            inside = []
            for f in sorted(glob.glob(os.path.join(a.rawdir, tag + ".pprof.*.pb.gz"))):
                start = int(f.rsplit(".pprof.", 1)[1].split(".")[0])
                # a profile overlapping the phase by at least half of it counts
                if start + 2.5 >= ph["t0"] and start + 2.5 <= ph["t1"]:
                    inside.append(f)
            lines = summarize_pprof(inside, a.top)
        print("\n".join(lines))
        print()


if __name__ == "__main__":
    sys.exit(main())
