#!/usr/bin/env python3
"""Where the big ReplicaSet's pod creates wait, from the API server's audit log of a bench/run.sh run:

  bench/waits.py bench/results/<date>/<run>/raw/<time>

Per manager and repetition, the pod creates of the big-RS phase (received until its pods all existed):
- the burst (first create received to last answered) and its rate;
- the server's time per create (received to response complete, median and 90th percentile): when it is the
  lower of the two managers', the API server is not what holds that manager back;
- creates in flight at the server, on average over the burst: how many the manager keeps sent at once;
- the time with none in flight, and the pauses longer than 5 ms (ms): the manager was not sending, e.g. a sync
  waiting for its expectations (its creates seen in the watch) before the next batch.
The audit policy logs only the manager's own user, so every create is the manager's."""
import datetime, glob, json, os, statistics, sys


def ts(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def creates(audit, t0, t1):
    out = []
    with open(audit) as f:
        for line in f:
            e = json.loads(line)
            if (e["stage"] == "ResponseComplete" and e["verb"] == "create"
                    and e.get("objectRef", {}).get("resource") == "pods"):
                a, b = ts(e["requestReceivedTimestamp"]), ts(e["stageTimestamp"])
                if t0 <= a <= t1:
                    out.append((a, b))
    return sorted(out)


def main(raw):
    for audit in sorted(glob.glob(os.path.join(raw, "*.audit.log"))):
        tag = os.path.basename(audit)[:-len(".audit.log")]
        phase = json.load(open(os.path.join(raw, tag + ".json")))["phases"].get("big-rs")
        if not phase or "t_pods_exist" not in phase:
            continue
        cr = creates(audit, phase["t0"], phase["t_pods_exist"] + 1)
        if not cr:
            continue
        first, last = cr[0][0], max(b for _, b in cr)
        window = last - first
        lat = sorted(b - a for a, b in cr)
        edges = sorted([(a, 1) for a, _ in cr] + [(b, -1) for _, b in cr])
        n, prev, idle, area, pauses = 0, first, 0.0, 0.0, []
        for t, d in edges:
            if n == 0 and t > prev:
                idle += t - prev
                if t - prev > 0.005:
                    pauses.append(round(1000 * (t - prev)))
            area += n * (t - prev)
            n, prev = n + d, t
        print(f"{tag:18s} {len(cr)} creates in {window:.2f} s ({len(cr) / window:.0f}/s); server time per create "
              f"p50 {1000 * statistics.median(lat):.1f} ms, p90 {1000 * lat[int(0.9 * len(lat))]:.1f} ms; in flight "
              f"{area / window:.1f} on average; none in flight {idle:.2f} s ({100 * idle / window:.0f}%), "
              f"longest pauses {sorted(pauses, reverse=True)[:4]} ms")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
