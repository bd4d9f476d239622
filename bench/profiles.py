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


def jfr_samples(path, event):
    """(time, thread, frames, weight) per sample. jdk.CPUTimeSample (JDK 25, Linux: sampled per thread on CPU
    time, each weighted by its sampling period in ms) when the recording has it, else jdk.ExecutionSample
    (wall-clock sampling of running Java threads, weight 1)."""
    out = subprocess.run([JFR, "print", "--json", "--stack-depth", "64", "--events", event, path],
                         capture_output=True, text=True, check=True).stdout
    for e in json.loads(out)["recording"]["events"]:
        v = e["values"]
        if v.get("failed"):
            continue
        t = dt.datetime.fromisoformat(v["startTime"].replace("Z", "+00:00")).timestamp()
        thread = (v.get("sampledThread") or v.get("eventThread") or {}).get("javaName") or "?"
        frames = []
        for f in (v.get("stackTrace") or {}).get("frames", []):
            m = f["method"]
            frames.append(m["type"]["name"].replace("/", ".") + "." + m["name"])
        weight = 1.0
        if event == "jdk.CPUTimeSample":
            weight = period_ms(v.get("samplingPeriod"))
        yield t, thread, frames, weight


def period_ms(value):
    """jfr's JSON writes a duration as ISO-8601 ("PT0.001S") or nanoseconds."""
    if isinstance(value, (int, float)):
        return value / 1e6
    m = re.fullmatch(r"PT([\d.]+)S", str(value or ""))
    return float(m.group(1)) * 1000 if m else 1.0


def has_cpu_time_samples(path):
    out = subprocess.run([JFR, "summary", path], capture_output=True, text=True, check=True).stdout
    return re.search(r"^\s*jdk\.CPUTimeSample\s+[1-9]", out, re.M) is not None


def package(frame):
    parts = frame.split(".")
    # class.method dropped; keep at most four package segments
    pkg = [p for p in parts[:-2]]
    return ".".join(pkg[:4]) or frame


def thread_group(name):
    return re.sub(r"\d+", "N", name)


def summarize_jfr(path, t0, t1, top, own):
    event = "jdk.CPUTimeSample" if has_cpu_time_samples(path) else "jdk.ExecutionSample"
    threads, pkgs, leaves, methods = (collections.Counter() for _ in range(4))
    n, total = 0, 0.0
    for t, thread, frames, w in jfr_samples(path, event):
        if not (t0 <= t <= t1) or not frames:
            continue
        n += 1
        total += w
        threads[thread_group(thread)] += w
        for p in {package(f) for f in frames}:
            pkgs[p] += w
        leaves[frames[0]] += w
        for f in set(frames):
            if f.startswith(own):
                methods[f] += w
    unit = "ms of CPU" if event == "jdk.CPUTimeSample" else "samples"
    lines = [f"{n} samples of {event} (Java threads), {total:.0f} {unit}"]
    for title, c in (("threads", threads), ("packages, inclusive", pkgs), ("leaf methods", leaves),
                     (f"{own}* methods, inclusive", methods)):
        lines.append(f"-- {title}")
        lines += [f"{k:8.0f} {100.0 * k / max(total, 1):5.1f}% {name}" for name, k in c.most_common(top)]
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
    p.add_argument("--own", default="io.qkcm.", help="prefix of the methods listed by inclusive CPU")
    p.add_argument("--threads", action="store_true",
                   help="instead of the profiles: the phase's CPU seconds by thread name, per repetition "
                        "(bench.py's threads_cpu_s, read from /proc; needs no --profile)")
    a = p.parse_args()
    for rj in sorted(glob.glob(os.path.join(a.rawdir, "*-rep*.json"))):
        tag = os.path.basename(rj)[:-len(".json")]
        r = json.load(open(rj))
        ph = r.get("phases", {}).get(a.phase)
        if not ph:
            continue
        print(f"== {tag}, phase {a.phase}: {ph['seconds']:.1f} s, manager CPU {ph['cpu_s']:.1f} s")
        if a.threads:
            for name, c in list(ph.get("threads_cpu_s", {}).items())[:a.top]:
                print(f"{c:8.2f} s {100.0 * c / max(ph['cpu_s'], 1e-9):5.1f}% {name}")
            print()
            continue
        jfr = os.path.join(a.rawdir, tag + ".jfr")
        if os.path.exists(jfr):
            lines = summarize_jfr(jfr, ph["t0"], ph["t1"], a.top, a.own)
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
