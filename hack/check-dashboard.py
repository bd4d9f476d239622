#!/usr/bin/env python3
"""Checks deploy/grafana/kube-controller-manager.json (or the dashboard given).

1. Structure: schemaVersion, uid, title; a `datasource` variable of type datasource (query prometheus)
   that every panel, target and query variable uses (uid ${datasource}); every panel but rows has a
   type, title and targets with an expr and a refId unique in the panel; ids unique; gridPos inside the
   24 columns and no two panels overlapping.
2. PromQL: every target's expr and every variable's label_values selector, with the template variables
   replaced by sample values ($__rate_interval by 1m), must parse: they are written as recording rules
   into a temporary file and checked with `promtool check rules` (Debian: apt-get install prometheus;
   skipped with a warning when promtool is missing, an error with --require-promtool).
3. Metric names and labels: every metric a selector names must be in every scrape given with --metrics
   FILE (repeatable; a controller manager's /metrics, e.g. `curl -sk https://127.0.0.1:10257/metrics`;
   default: deploy/grafana/scrapes/*.txt, qkcm's and upstream v1.34.4's scraped on the local cluster),
   with every label the selector matches on (job and instance come from Prometheus) and every label
   the expression groups by (`by (...)`).

Exits 1 on the first kind of failure it finds, after printing all of them.

  hack/check-dashboard.py [--dashboard FILE] [--metrics qkcm.txt --metrics upstream.txt]
  (no scrape check: --metrics none)
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = {"datasource": "prometheus", "job": "kube-controller-manager", "instance": "127.0.0.1:10257",
          "queue": ".*", "__rate_interval": "1m", "__interval": "15s", "__range": "1h"}
SELECTOR = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}")
MATCHER = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*\"")
GROUPING = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")
DS_UID = "${datasource}"


def substitute(expr):
    for name in sorted(SAMPLE, key=len, reverse=True):
        expr = expr.replace("${" + name + "}", SAMPLE[name]).replace("$" + name, SAMPLE[name])
    return expr


def parse_exposition(path):
    labels = {}
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s", line)
            if m:
                labels.setdefault(m.group(1), set()).update(re.findall(r"([a-zA-Z_][a-zA-Z0-9_]*)=\"", m.group(3) or ""))
    return labels


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dashboard", default=os.path.join(ROOT, "deploy/grafana/kube-controller-manager.json"))
    ap.add_argument("--metrics", action="append", default=[], metavar="FILE")
    ap.add_argument("--require-promtool", action="store_true")
    args = ap.parse_args()
    if not args.metrics:
        args.metrics = sorted(glob.glob(os.path.join(ROOT, "deploy/grafana/scrapes/*.txt")))
    args.metrics = [m for m in args.metrics if m != "none"]
    errors = []
    err = errors.append

    with open(args.dashboard) as f:
        dash = json.load(f)

    # 1. structure
    if not isinstance(dash.get("schemaVersion"), int) or dash["schemaVersion"] < 36:
        err(f"schemaVersion {dash.get('schemaVersion')!r}: expected an integer >= 36 (Grafana 9+)")
    for key in ("uid", "title"):
        if not dash.get(key):
            err(f"dashboard has no {key}")
    variables = dash.get("templating", {}).get("list", [])
    names = [v.get("name") for v in variables]
    ds = [v for v in variables if v.get("type") == "datasource"]
    if not ds or ds[0].get("name") != "datasource" or ds[0].get("query") != "prometheus":
        err("no variable `datasource` of type datasource with query prometheus")
    exprs = []  # (where, expr)
    for v in variables:
        if v.get("type") == "query":
            if v.get("datasource", {}).get("uid") != DS_UID:
                err(f"variable {v['name']}: datasource is not {DS_UID}")
            q = v.get("definition") or (v["query"]["query"] if isinstance(v.get("query"), dict) else v.get("query"))
            m = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\)\s*", q or "")
            if not m:
                err(f"variable {v['name']}: not label_values(selector, label): {q!r}")
            else:
                exprs.append((f"variable {v['name']}", m.group(1), [m.group(2)]))
        elif v.get("type") != "datasource":
            err(f"variable {v.get('name')}: type {v.get('type')} not expected")
    for used in set(re.findall(r"\$\{?(\w+)", json.dumps(dash.get("panels", [])))) - set(names) - {"__rate_interval", "__interval", "__range"}:
        err(f"panels use ${used}, which is not a variable")

    panels = dash.get("panels") or []
    if not panels:
        err("no panels")
    ids, cells = set(), {}
    for p in panels:
        where = f"panel {p.get('id')} {p.get('title')!r}"
        if p.get("id") in ids:
            err(f"{where}: duplicate id")
        ids.add(p.get("id"))
        gp = p.get("gridPos", {})
        if not all(isinstance(gp.get(k), int) for k in "xywh") or gp["x"] < 0 or gp["x"] + gp["w"] > 24:
            err(f"{where}: gridPos {gp} not inside the 24 columns")
        else:
            for x in range(gp["x"], gp["x"] + gp["w"]):
                for y in range(gp["y"], gp["y"] + gp["h"]):
                    if (x, y) in cells:
                        err(f"{where}: overlaps {cells[(x, y)]}")
                        break
                    cells[(x, y)] = where
                else:
                    continue
                break
        if p.get("type") == "row":
            if p.get("panels"):
                err(f"{where}: collapsed rows are not expected")
            continue
        if not p.get("type") or not p.get("title"):
            err(f"{where}: no type or title")
        if p.get("datasource", {}).get("uid") != DS_UID:
            err(f"{where}: datasource is not {DS_UID}")
        targets = p.get("targets") or []
        if not targets:
            err(f"{where}: no targets")
        refs = [t.get("refId") for t in targets]
        if len(set(refs)) != len(refs) or None in refs:
            err(f"{where}: refIds missing or not unique: {refs}")
        for t in targets:
            if t.get("datasource", {}).get("uid") != DS_UID:
                err(f"{where} {t.get('refId')}: datasource is not {DS_UID}")
            if not (t.get("expr") or "").strip():
                err(f"{where} {t.get('refId')}: no expr")
            else:
                exprs.append((f"{where} {t.get('refId')}", t["expr"], []))
    print(f"structure: {len(panels)} panels, {sum(1 for p in panels if p.get('type') != 'row')} with queries, "
          f"{len(exprs)} PromQL expressions, variables {names}")

    # 2. PromQL parses
    promtool = shutil.which("promtool")
    if not promtool:
        (err if args.require_promtool else print)("promtool not found (apt-get install prometheus): PromQL not parsed")
    else:
        with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
            rules = [{"record": f"dashboard:expr{i}", "expr": substitute(e)} for i, (_, e, _) in enumerate(exprs)]
            json.dump({"groups": [{"name": "dashboard", "rules": rules}]}, f)  # JSON is YAML
        r = subprocess.run([promtool, "check", "rules", f.name], capture_output=True, text=True)
        os.unlink(f.name)
        if r.returncode != 0:
            err("promtool check rules failed:\n" + r.stdout + r.stderr)
        else:
            print(f"promql: all {len(rules)} expressions parse (promtool check rules)")

    # 3. metric names and labels exist in every scrape
    for path in args.metrics:
        exposed = parse_exposition(path)
        checked = set()
        for where, e, extra_labels in exprs:
            sels = SELECTOR.findall(e)
            if not sels and re.fullmatch(r"\s*[a-zA-Z_:][a-zA-Z0-9_:]*\s*", e):
                sels = [(e.strip(), "")]  # a bare metric name
            if not sels:
                err(f"{where}: no metric{{...}} selector found in {e!r}")
            grouping = {l.strip() for g in GROUPING.findall(e) for l in g.split(",") if l.strip()} | set(extra_labels)
            for metric, matchers in sels:
                if metric not in exposed:
                    err(f"{os.path.basename(path)}: {where}: metric {metric} not exposed")
                    continue
                need = {l for l, _ in MATCHER.findall(matchers)} - {"job", "instance"}
                missing = need - exposed[metric]
                if missing:
                    err(f"{os.path.basename(path)}: {where}: {metric} has no label(s) {sorted(missing)}")
                checked.add(metric)
            have = set().union(*[exposed.get(m, set()) for m, _ in sels]) if sels else set()
            if grouping - have - {"job", "instance"}:
                err(f"{os.path.basename(path)}: {where}: grouped by {sorted(grouping - have)}, not labels of {[m for m, _ in sels]}")
        print(f"metrics: {path}: {len(checked)} metric names checked: {' '.join(sorted(checked))}")

    for e in errors:
        print("ERROR:", e, file=sys.stderr)
    print("OK" if not errors else f"{len(errors)} error(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
