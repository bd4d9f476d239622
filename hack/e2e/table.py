#!/usr/bin/env python3
"""Results of hack/e2e.sh: reads <out>/{upstream,qkcm}/report-{parallel,serial}.json (ginkgo JSON
reports), writes <out>/results.md and <out>/results.json (the specs that ran, condensed) and prints
the table: spec | upstream | qkcm, the specs that pass under upstream but not under qkcm first.
Exit status 1 when such a spec exists (or, without an upstream run, when a spec failed under qkcm)."""
import json
import os
import re
import sys

SIDES = ("upstream", "qkcm")
FAILED = {"failed", "panicked", "timedout", "interrupted", "aborted"}


def spec_text(r):
    return " ".join([t for t in r.get("ContainerHierarchyTexts") or [] if t] + [r.get("LeafNodeText", "")]).strip()


def reason(r):
    f = r.get("Failure") or {}
    msg = (f.get("Message") or "").strip()
    if not msg and f.get("ForwardedPanic"):
        msg = "panic: " + f["ForwardedPanic"]
    line = " ".join(msg.split())
    return (line[:160] + "…") if len(line) > 160 else line


def rank(r):
    # a real outcome beats a spec cut short by the suite timeout (or an interrupt)
    return 1 if r["state"] in ("timedout", "interrupted", "aborted") else 2


def load(side_dir):
    """spec text -> {state, secs, reason}, and the suite-level failures."""
    specs, suite = {}, []
    for phase in ("parallel", "serial"):
        p = os.path.join(side_dir, f"report-{phase}.json")
        if not os.path.exists(p):
            continue
        try:
            reports = json.load(open(p))
        except ValueError as e:
            suite.append(f"{phase}: unreadable report ({e})")
            continue
        for suite_report in reports:
            for r in suite_report.get("SpecReports") or []:
                state = r.get("State", "")
                if r.get("LeafNodeType") != "It":
                    if state in FAILED:
                        suite.append(f"{phase} {r.get('LeafNodeType')}: {state}: {reason(r)}")
                    continue
                # specs the focus/skip/label filters left out are reported as skipped without a message
                if state == "skipped" and not (r.get("Failure") or {}).get("Message"):
                    continue
                new = {
                    "state": state,
                    "secs": round((r.get("RunTime") or 0) / 1e9, 1),
                    "reason": reason(r) if state != "passed" else "",
                }
                text = spec_text(r)
                if text not in specs or rank(new) >= rank(specs[text]):
                    specs[text] = new
    return specs, suite


def not_implemented(side_dir):
    out = []
    p = os.path.join(side_dir, "not-implemented.txt")
    if os.path.exists(p):
        for line in open(p):
            if "\t" in line:
                c, rx = line.rstrip("\n").split("\t", 1)
                out.append((c, re.compile(rx)))
    return out


def cell(res, side, spec, ni):
    r = res[side].get(spec)
    if r is None:
        for c, rx in ni.get(side, []):
            if rx.search(spec):
                return f"not implemented ({c})"
        return "not run"
    s = r["state"]
    if s == "passed":
        return "pass"
    if s == "skipped":
        return "skipped"
    for c, rx in ni.get(side, []):
        if rx.search(spec):
            return f"{s.upper()} (needs {c}: not implemented)"
    return s.upper()


def esc(s):
    return s.replace("|", "\\|")


def main(out, *more):
    """out: a results directory; more: directories of later runs (e.g. of specs the first run's
    time bound cut off), whose outcomes replace the first's missing or cut-short ones."""
    res, suite, ni = {}, {}, {}
    sides = [s for s in SIDES if any(os.path.isdir(os.path.join(d, s)) for d in (out,) + more)]
    for s in sides:
        res[s], suite[s], ni[s] = {}, [], []
        for d in (out,) + more:
            if not os.path.isdir(os.path.join(d, s)):
                continue
            specs, su = load(os.path.join(d, s))
            for k, v in specs.items():
                if k not in res[s] or rank(v) >= rank(res[s][k]):
                    res[s][k] = v
            suite[s] += su
            ni[s] += not_implemented(os.path.join(d, s))
    specs = sorted(set().union(*[set(res[s]) for s in sides])) if sides else []
    compare = "upstream" in sides and "qkcm" in sides

    def outcome(side, spec):
        c = cell(res, side, spec, ni)
        r = res[side].get(spec)
        if c == "pass":
            return "pass"
        if "not implemented" in c:
            return "ni"
        if c == "skipped":
            return "skip"
        if r is None or "suite timeout occurred" in r["reason"]:
            return "none"  # not reached, or cut short, within the time bound
        return "fail"

    def group(spec):
        q = outcome("qkcm", spec) if "qkcm" in sides else ""
        if not compare:
            return {"pass": 3, "skip": 4, "none": 2.5, "ni": 0.5}.get(q, 0)
        u = outcome("upstream", spec)
        if u == "pass" and q == "fail":
            return 0  # qkcm's bugs
        if u == "pass" and q == "ni":
            return 0.5
        if u == "fail" and q == "pass":
            return 1
        if u == "fail" and q in ("fail", "ni"):
            return 2  # kwok's limits (no runtime, exec, logs, network, kubelet)
        if u == "pass" and q == "pass":
            return 3
        if u == "skip" and q == "skip":
            return 4
        return 2.5

    titles = {0: "Pass under upstream, fail under qkcm (qkcm's bugs)" if compare else "Fail under qkcm",
              0.5: "Need a controller qkcm does not implement yet",
              1: "Pass under qkcm, fail under upstream",
              2: "Fail under both (kwok: no container runtime, exec, logs, pod network or real kubelet — not qkcm's)",
              2.5: "Incomplete: not reached (or cut short) within the time bound on one side",
              3: "Pass under both" if compare else "Pass",
              4: "Skipped at run time by the spec itself (provider, storage class)"}
    lines = []
    counts = {}
    for s in sides:
        st = {}
        for r in res[s].values():
            st[r["state"]] = st.get(r["state"], 0) + 1
        counts[s] = st
        lines.append(f"- {s}: " + ", ".join(f"{v} {k}" for k, v in sorted(st.items())) + (
            f"; {sum(1 for sp in specs if cell(res, s, sp, ni).startswith('not implemented'))} not run (not implemented)"
            if ni.get(s) else ""))
        for f in suite[s]:
            lines.append(f"  - suite-level failure under {s}: {f}")
    groups = {}
    for sp in specs:
        groups.setdefault(group(sp), []).append(sp)
    body = []
    for g in sorted(groups):
        body.append(f"\n### {titles[g]} ({len(groups[g])})\n")
        hdr = "| spec | " + " | ".join(sides) + " | reason (qkcm's failure, else upstream's) |"
        body.append(hdr)
        body.append("|" + " --- |" * (len(sides) + 2))
        for sp in groups[g]:
            why = ""
            if "qkcm" in sides and sp in res["qkcm"] and res["qkcm"][sp]["reason"]:
                why = res["qkcm"][sp]["reason"]
            elif "upstream" in sides and sp in res["upstream"]:
                why = res["upstream"][sp]["reason"]
            row = [esc(sp)] + [cell(res, s, sp, ni) for s in sides] + [esc(why)]
            body.append("| " + " | ".join(row) + " |")
    timing = []
    for s in sides:
        for tp in [os.path.join(d, s, "timing.txt") for d in (out,) + more]:
            if not os.path.exists(tp):
                continue
            for line in open(tp):
                f = line.rstrip("\n").split("\t")
                if len(f) >= 3:
                    timing.append(f"- {f[0]}, {f[1]} phase: {f[2]}" + (f" ({f[3].strip()})" if len(f) > 3 and f[3].strip() else ""))
    sel = os.path.join(out, "selection.txt")
    head = ""
    if os.path.exists(sel):
        head = "## Selection\n\n```\n" + open(sel).read().strip() + "\n```\n\n"
    if timing:
        head += "## Timings\n\n" + "\n".join(timing) + "\n\n"
    text = head + "## Summary\n\n" + "\n".join(lines) + "\n" + "\n".join(body) + "\n"
    open(os.path.join(out, "results.md"), "w").write(text)
    json.dump({s: res[s] for s in sides}, open(os.path.join(out, "results.json"), "w"), indent=1, sort_keys=True)
    print(text)
    return 1 if groups.get(0) else 0  # not implemented yet is known, not a regression


def remaining(side_dirs, listing):
    """A ginkgo focus regex of the specs in `listing` (e2e.test's dry-run output, one spec a line
    with its labels) that no side_dirs' reports have a real outcome for (not run, or cut short by the
    suite timeout); empty when none is left."""
    done = set()
    for d in side_dirs:
        if os.path.isdir(d):
            done |= {k for k, v in load(d)[0].items() if rank(v) == 2}
    left = []
    for line in open(listing):
        spec = re.sub(r" \[[^]]*\]$", "", line.strip())  # the trailing "[sig-apps, Conformance]" labels
        if spec and spec not in done:
            left.append(re.escape(spec).replace("\\ ", " ") + "$")  # ginkgo matches no "^" here
    return "|".join(left)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--remaining"]:
        print(remaining(sys.argv[2:-1], sys.argv[-1]))
        sys.exit(0)
    sys.exit(main(*sys.argv[1:]))
