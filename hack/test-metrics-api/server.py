#!/usr/bin/env python3
"""A small metrics API server for hack/e2e-hpa.sh, served behind the API server's aggregation layer.

kube-apiserver proxies each group version to it through an APIService that points at an ExternalName
Service (as kwokctl does for metrics-server). It serves, with correct discovery for each:

  custom.metrics.k8s.io/v1beta2   pods metrics (the file's value is the total over the pods matching the
                                  request's labelSelector, listed through kubectl, split evenly, as a load
                                  spread over replicas) and object metrics of Deployments
  external.metrics.k8s.io/v1beta1 external metrics (one value)
  metrics.k8s.io/v1beta1          pod metrics that are garbage, to show what the HPA does when the
                                  resource metrics API is up but answers nonsense

The values are read per request from the JSON file --values:
  {"pods": {"<metric>": "<whole number>"}, "object": {"<metric>": "<quantity>"},
   "external": {"<metric>": "<quantity>"}, "garbage": "not-json" | "bad-quantity" | "not-a-list"}
garbage modes: not-json (a 200 whose body is not JSON), bad-quantity (a well-formed PodMetricsList whose
cpu usage is not a quantity), not-a-list (a PodMetricsList whose items is a string). A metric missing
from the file is a 404, as an adapter answers for a metric it does not know. Every request is appended
to --log ("<time> GET <path> <garbage mode>") so the script can count the controller's reads.

Usage: server.py --port N --cert C --key K --values F --log L --kubectl K --kubeconfig C
"""
import argparse
import datetime
import http.server
import json
import ssl
import subprocess
import sys
import urllib.parse

METRICS = "metrics.k8s.io/v1beta1"
CUSTOM = "custom.metrics.k8s.io/v1beta2"
EXTERNAL = "external.metrics.k8s.io/v1beta1"


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def resource_list(group_version, resources):
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
            "resources": [{"name": name, "singularName": "", "namespaced": namespaced, "kind": kind,
                           "verbs": ["get", "list"]} for name, namespaced, kind in resources]}


def status(code, message):
    return code, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message,
                  "reason": "NotFound" if code == 404 else "InternalError", "code": code}


def garbage_pods(mode, namespace):
    if mode == "not-json":
        return 200, "<html><body>metrics are on holiday</body></html>"
    if mode == "not-a-list":
        return 200, {"kind": "PodMetricsList", "apiVersion": METRICS, "metadata": {}, "items": "none"}
    item = {"metadata": {"name": "web-garbage", "namespace": namespace}, "timestamp": now(), "window": "15s",
            "containers": [{"name": "web", "usage": {"cpu": "lots", "memory": "1Mi"}}]}
    return 200, {"kind": "PodMetricsList", "apiVersion": METRICS, "metadata": {}, "items": [item]}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        path = urllib.parse.unquote(url.path).rstrip("/")  # clients send pods/%2A/<metric>
        query = urllib.parse.parse_qs(url.query)
        try:
            with open(self.server.args.values) as f:
                values = json.load(f)
        except (OSError, ValueError):
            values = {}
        mode = values.get("garbage", "not-json")
        with open(self.server.args.log, "a") as log:
            log.write(f"{datetime.datetime.now().isoformat()} GET {path} {mode}\n")
        try:
            code, body = self.answer(path, query, values, mode)
        except Exception as e:  # a bug here must show in the e2e log, not hang the aggregator
            code, body = status(500, f"test metrics API: {e!r}")
        self.send(code, body if isinstance(body, str) else json.dumps(body))

    def answer(self, path, query, values, mode):
        parts = path.split("/")
        # discovery: the aggregator's availability check and the clients' version probing
        if path == "/apis/" + METRICS:
            return 200, resource_list(METRICS, [("nodes", False, "NodeMetrics"), ("pods", True, "PodMetrics")])
        if path == "/apis/" + CUSTOM:
            return 200, resource_list(CUSTOM, [("pods/" + m, True, "MetricValueList") for m in values.get("pods", {})]
                                      + [("deployments.apps/" + m, True, "MetricValueList") for m in values.get("object", {})])
        if path == "/apis/" + EXTERNAL:
            return 200, resource_list(EXTERNAL, [(m, True, "ExternalMetricValueList") for m in values.get("external", {})])
        # /apis/metrics.k8s.io/v1beta1/namespaces/<ns>/pods
        if path.startswith("/apis/" + METRICS + "/") and len(parts) == 7 and parts[4] == "namespaces" and parts[6] == "pods":
            return garbage_pods(mode, parts[5])
        # /apis/custom.metrics.k8s.io/v1beta2/namespaces/<ns>/pods/*/<metric>
        if path.startswith("/apis/" + CUSTOM + "/") and len(parts) == 9 and parts[6] == "pods" and parts[7] == "*":
            ns, metric = parts[5], parts[8]
            if metric not in values.get("pods", {}):
                return status(404, f"the server could not find the metric {metric} for pods")
            selector = query.get("labelSelector", [""])[0]
            pods = subprocess.run([self.server.args.kubectl, "--kubeconfig", self.server.args.kubeconfig, "-n", ns,
                                   "get", "pods", "-l", selector, "-o", "jsonpath={.items[*].metadata.name}"],
                                  check=True, capture_output=True, text=True, timeout=20).stdout.split()
            total = int(values["pods"][metric])
            share = f"{total * 1000 // max(len(pods), 1)}m"
            items = [{"describedObject": {"kind": "Pod", "namespace": ns, "name": p, "apiVersion": "/v1"},
                      "metric": {"name": metric}, "timestamp": now(), "windowSeconds": 60,
                      "value": share} for p in pods]
            return 200, {"kind": "MetricValueList", "apiVersion": CUSTOM, "metadata": {}, "items": items}
        # /apis/custom.metrics.k8s.io/v1beta2/namespaces/<ns>/deployments.apps/<name>/<metric>
        if path.startswith("/apis/" + CUSTOM + "/") and len(parts) == 9 and parts[6] == "deployments.apps":
            ns, name, metric = parts[5], parts[7], parts[8]
            if metric not in values.get("object", {}):
                return status(404, f"the server could not find the metric {metric} for deployments.apps {name}")
            item = {"describedObject": {"kind": "Deployment", "namespace": ns, "name": name, "apiVersion": "apps/v1"},
                    "metric": {"name": metric}, "timestamp": now(), "windowSeconds": 60,
                    "value": values["object"][metric]}
            return 200, {"kind": "MetricValueList", "apiVersion": CUSTOM, "metadata": {}, "items": [item]}
        # /apis/external.metrics.k8s.io/v1beta1/namespaces/<ns>/<metric>
        if path.startswith("/apis/" + EXTERNAL + "/") and len(parts) == 7 and parts[4] == "namespaces":
            metric = parts[6]
            if metric not in values.get("external", {}):
                return status(404, f"the server could not find the external metric {metric}")
            item = {"metricName": metric, "metricLabels": {}, "timestamp": now(), "value": values["external"][metric]}
            return 200, {"kind": "ExternalMetricValueList", "apiVersion": EXTERNAL, "metadata": {}, "items": [item]}
        return status(404, "not found")

    def send(self, code, body):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, fmt, *args):
        pass


def main():
    ap = argparse.ArgumentParser()
    for name in ("--cert", "--key", "--values", "--log", "--kubectl", "--kubeconfig"):
        ap.add_argument(name, required=True)
    ap.add_argument("--port", type=int, required=True)
    args = ap.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.args = args
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    print(f"serving {METRICS}, {CUSTOM}, {EXTERNAL} on 127.0.0.1:{args.port}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
