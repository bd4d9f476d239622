#!/usr/bin/env python3
"""Draws a Grafana dashboard's panels into one PNG without Grafana.

Reads the dashboard JSON (default deploy/grafana/kube-controller-manager.json), resolves its template
variables the way Grafana would (the datasource is the Prometheus given; query variables
`label_values(selector, label)` through Prometheus' label values API, the first value unless one is
given with --var; multi-value variables with "All" use their allValue), replaces Grafana's
`$__rate_interval` (max(step + scrape interval, 4 × scrape interval), the scrape interval read from
Prometheus' configuration) and `$__interval`, runs every target of every panel against the Prometheus
HTTP API (/api/v1/query_range) and draws the panels at their gridPos: time series as lines (stacked
where the panel stacks), stat panels as their last value (with the panel's value mappings) over a
sparkline. The title says that it was rendered from the JSON and Prometheus, not by Grafana.

It prints one line per target (series returned, whether any value is non-zero) and exits 1 when a
target returned no series (with --allow-empty it only reports them).

Requires matplotlib (Debian: apt-get install python3-matplotlib, then run with /usr/bin/python3; or
pip install matplotlib).

  hack/render-dashboard.py --prometheus http://127.0.0.1:9090 --last 15m \\
      --var instance=127.0.0.1:10257 --out docs/dashboard.png
"""
import argparse
import datetime as dt
import json
import math
import os
import re
import sys
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_duration(s):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)", s)
    if not m:
        raise ValueError(f"not a duration: {s}")
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


def prom_duration(seconds):
    seconds = int(math.ceil(seconds))
    return f"{seconds // 60}m" if seconds % 60 == 0 else f"{seconds}s"


def parse_time(s):
    if re.fullmatch(r"\d+(\.\d+)?", s):
        return float(s)
    return dt.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


class Prometheus:
    def __init__(self, url):
        self.url = url.rstrip("/")

    def get(self, path, params):
        q = urllib.parse.urlencode(params, doseq=True)
        with urllib.request.urlopen(f"{self.url}{path}?{q}", timeout=60) as r:
            body = json.load(r)
        if body.get("status") != "success":
            raise RuntimeError(f"{path}: {body}")
        return body["data"]

    def scrape_interval(self):
        cfg = self.get("/api/v1/status/config", {})["yaml"]
        m = re.search(r"scrape_interval:\s*(\S+)", cfg)
        return parse_duration(m.group(1)) if m else 15.0


def substitute(expr, values):
    # longest names first, so that $instance is not taken for a prefix of $instances
    for name in sorted(values, key=len, reverse=True):
        expr = expr.replace("${" + name + "}", values[name]).replace("$" + name, values[name])
    return expr


def resolve_variables(dash, prom, given, start, end):
    values = {}
    for v in dash.get("templating", {}).get("list", []):
        name = v["name"]
        if v["type"] == "datasource":
            values[name] = "prometheus"
            continue
        if v["type"] != "query":
            raise SystemExit(f"variable {name}: type {v['type']} not supported by this renderer")
        if name in given:
            values[name] = given[name]
            continue
        q = v.get("definition") or (v["query"]["query"] if isinstance(v["query"], dict) else v["query"])
        m = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\)\s*", q)
        if not m:
            raise SystemExit(f"variable {name}: only label_values(selector, label) is supported: {q}")
        selector, label = substitute(m.group(1), values), m.group(2)
        opts = sorted(prom.get(f"/api/v1/label/{label}/values",
                               {"match[]": selector, "start": start, "end": end}))
        if v.get("includeAll") and v.get("current", {}).get("value") in (["$__all"], "$__all"):
            values[name] = v.get("allValue") or "(" + "|".join(re.escape(o) for o in opts) + ")"
        elif opts:
            values[name] = opts[0]
        else:
            raise SystemExit(f"variable {name}: {q} has no values in Prometheus (is anything scraped?)")
    return values


def fmt_value(v, unit):
    if v is None or math.isnan(v):
        return "no data"
    if unit == "s":
        for lim, div, suf in ((86400, 86400, " d"), (3600, 3600, " h"), (60, 60, " min"), (1, 1, " s"),
                              (1e-3, 1e-3, " ms"), (1e-6, 1e-6, " µs")):
            if abs(v) >= lim:
                return f"{v / div:.3g}{suf}"
        return f"{v * 1e9:.3g} ns" if v else "0 s"
    if unit in ("reqps", "ops"):
        return f"{v:.3g} /s"
    if unit == "bytes":
        for div, suf in ((2**30, " GiB"), (2**20, " MiB"), (2**10, " KiB")):
            if abs(v) >= div:
                return f"{v / div:.3g}{suf}"
        return f"{v:.0f} B"
    return f"{v:.4g}"


def axis_formatter(unit):
    from matplotlib.ticker import FuncFormatter
    return FuncFormatter(lambda v, _: fmt_value(v, unit) if v else "0")


def legend_text(fmt, metric):
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: metric.get(m.group(1), ""), fmt) if fmt else str(metric)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dashboard", default=os.path.join(ROOT, "deploy/grafana/kube-controller-manager.json"))
    ap.add_argument("--prometheus", default="http://127.0.0.1:9090")
    ap.add_argument("--last", default="15m", help="time range ending at --end (default 15m)")
    ap.add_argument("--start", help="RFC 3339 or unix time (instead of --last)")
    ap.add_argument("--end", help="RFC 3339 or unix time (default now)")
    ap.add_argument("--step", help="query_range step (default: range / 240, at least the scrape interval)")
    ap.add_argument("--var", action="append", default=[], metavar="NAME=VALUE",
                    help="template variable value (default: the first value Prometheus has)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs/dashboard.png"))
    ap.add_argument("--subtitle", default="", help="one more line under the title (e.g. what was running)")
    ap.add_argument("--allow-empty", action="store_true", help="exit 0 even when a target returned no series")
    args = ap.parse_args()

    try:
        import matplotlib
    except ImportError:
        sys.exit(f"render-dashboard: {sys.executable} has no matplotlib: apt-get install python3-matplotlib and run "
                 "with /usr/bin/python3, or pip install matplotlib")
    matplotlib.use("Agg")
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt
    plt.rcParams["text.parse_math"] = False  # "$job = ..." is text, not TeX

    with open(args.dashboard) as f:
        dash = json.load(f)
    prom = Prometheus(args.prometheus)
    end = parse_time(args.end) if args.end else dt.datetime.now(dt.timezone.utc).timestamp()
    start = parse_time(args.start) if args.start else end - parse_duration(args.last)
    scrape = prom.scrape_interval()
    step = parse_duration(args.step) if args.step else max(scrape, math.ceil((end - start) / 240))
    given = dict(kv.split("=", 1) for kv in args.var)
    values = resolve_variables(dash, prom, given, start, end)
    values["__interval"] = prom_duration(step)
    values["__rate_interval"] = prom_duration(max(step + scrape, 4 * scrape))

    panels = dash["panels"]
    rows = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in panels)
    unit_h = 0.33  # inches per grid row (Grafana: 30 px)
    header = 1.1
    width = 22.0
    fig = plt.figure(figsize=(width, rows * unit_h + header), dpi=90)
    H = rows * unit_h + header

    def box(gp):
        x0 = gp["x"] / 24
        w = gp["w"] / 24
        top = (H - header - gp["y"] * unit_h) / H
        h = gp["h"] * unit_h / H
        return x0, top - h, w, h

    shown = {k: v for k, v in values.items() if not k.startswith("__") and k != "datasource"}
    t0 = dt.datetime.fromtimestamp(start, dt.timezone.utc)
    t1 = dt.datetime.fromtimestamp(end, dt.timezone.utc)
    fig.text(0.005, 1 - 0.25 / H, f"{dash['title']}", fontsize=16, weight="bold", va="top")
    fig.text(0.005, 1 - 0.62 / H,
             f"Rendered by hack/render-dashboard.py from {os.path.relpath(args.dashboard, ROOT)} and Prometheus "
             f"query_range ({args.prometheus}) — not by Grafana.   "
             + "   ".join(f"${k} = {v}" for k, v in shown.items())
             + f"   |   {t0:%Y-%m-%d %H:%M:%S} – {t1:%H:%M:%S} UTC, step {prom_duration(step)}, "
               f"$__rate_interval = {values['__rate_interval']}",
             fontsize=9, va="top", color="#333")
    if args.subtitle:
        fig.text(0.005, 1 - 0.88 / H, args.subtitle, fontsize=9, va="top", color="#555")

    empty = 0
    for p in panels:
        x0, y0, w, h = box(p["gridPos"])
        if p["type"] == "row":
            fig.text(x0 + 0.003, y0 + h * 0.5, p["title"], fontsize=12, weight="bold", va="center", color="#1f4e79")
            fig.add_artist(plt.Line2D([x0, x0 + w], [y0 + h * 0.05] * 2, color="#1f4e79", lw=0.8))
            continue
        pad_x, pad_top, pad_bottom = 0.06, 0.42 / H, 0.12 / H
        defaults = p.get("fieldConfig", {}).get("defaults", {})
        unit = defaults.get("unit", "none")
        series = []
        for t in p.get("targets", []):
            expr = substitute(t["expr"], values)
            data = prom.get("/api/v1/query_range", {"query": expr, "start": start, "end": end, "step": step})
            res = data["result"]
            nonzero = any(float(v) != 0 for s in res for _, v in s["values"] if not math.isnan(float(v)))
            print(f"{p['title']:<28} {t['refId']}: {len(res):3d} series{'' if nonzero else ', all zero' if res else ''}"
                  f"   {expr}")
            if not res:
                empty += 1
            for s in res:
                xs = [dt.datetime.fromtimestamp(float(ts), dt.timezone.utc) for ts, _ in s["values"]]
                ys = [float(v) for _, v in s["values"]]
                series.append((legend_text(t.get("legendFormat"), s["metric"]), xs, ys))
        series.sort(key=lambda s: s[0])

        ax = fig.add_axes([x0 + pad_x * w, y0 + pad_bottom + (0.0 if p["type"] == "stat" else h * 0.30),
                           w * (1 - 1.3 * pad_x), h * (0.55 if p["type"] == "stat" else 0.70) - pad_top])
        fig.text(x0 + 0.004, y0 + h - 0.08 / H, p["title"], fontsize=10, weight="bold", va="top")
        fig.add_artist(plt.Rectangle((x0 + 0.001, y0 + 0.02 / H), w - 0.002, h - 0.04 / H, fill=False,
                                     edgecolor="#bbb", lw=0.6, transform=fig.transFigure))
        if not series:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes, color="red")
            ax.set_xticks([]); ax.set_yticks([])
            continue
        if p["type"] == "stat":
            mappings = {}
            for mp in defaults.get("mappings", []):
                if mp.get("type") == "value":
                    mappings.update({k: v.get("text", k) for k, v in mp["options"].items()})
            texts = []
            for label, xs, ys in series:
                last = next((v for v in reversed(ys) if not math.isnan(v)), None)
                key = None if last is None else (str(int(last)) if float(last).is_integer() else str(last))
                texts.append((label, mappings.get(key, fmt_value(last, unit))))
                ax.fill_between(xs, ys, alpha=0.15, color="#1f77b4", step="post")
                ax.plot(xs, ys, lw=0.8, color="#1f77b4", drawstyle="steps-post")
            ax.axis("off")
            big = "   ".join(f"{v}" + (f" ({l})" if len(texts) > 1 else "") for l, v in texts)
            fig.text(x0 + w * 0.5, y0 + h * 0.62, big, fontsize=20 if len(big) < 20 else 13,
                     ha="center", va="center", weight="bold", color="#2a7a2a")
            continue
        stack = defaults.get("custom", {}).get("stacking", {}).get("mode") == "normal"
        colors = plt.get_cmap("tab20").colors
        base = None
        legend_items = []
        for i, (label, xs, ys) in enumerate(series):
            c = colors[i % len(colors)]
            if stack:
                ys2 = [0.0 if math.isnan(v) else v for v in ys]
                lower = base if base is not None and len(base) == len(ys2) else [0.0] * len(ys2)
                upper = [a + b for a, b in zip(lower, ys2)]
                ax.fill_between(xs, lower, upper, color=c, alpha=0.45, lw=0)
                ax.plot(xs, upper, color=c, lw=0.8)
                base = upper
            else:
                ax.plot(xs, ys, color=c, lw=1.1)
            if any(v != 0 for v in ys if not math.isnan(v)):
                legend_items.append((label, c))
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(axis_formatter(unit))
        ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M" if end - start > 900 else "%H:%M:%S",
                                                          tz=dt.timezone.utc))
        ax.tick_params(labelsize=7)
        ax.grid(True, lw=0.3, alpha=0.6)
        ax.set_xlim(t0, t1)
        zero = len(series) - len(legend_items)
        handles = [plt.Line2D([], [], color=c, lw=3) for _, c in legend_items]
        labels = [l for l, _ in legend_items]
        if zero:
            handles.append(plt.Line2D([], [], color="none"))
            labels.append(f"+{zero} series all zero" if legend_items else f"{zero} series, all zero")
        ncol = max(1, min(len(labels), int(w * 24 / 3)))
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(0, -0.12), ncol=ncol, fontsize=6.5,
                  frameon=False, handlelength=1.0, columnspacing=1.0)

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    fig.savefig(args.out)
    print(f"wrote {args.out}; {empty} target(s) without data")
    return 1 if empty and not args.allow_empty else 0


if __name__ == "__main__":
    sys.exit(main())
