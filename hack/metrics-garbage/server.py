#!/usr/bin/env python3
"""A metrics.k8s.io/v1beta1 server that answers discovery correctly and pod metrics with garbage.

hack/e2e-hpa.sh registers it behind the API server's aggregation layer (an APIService pointing at an
ExternalName Service, as kwokctl does for metrics-server) to show what horizontal-pod-autoscaler-controller
does when the metrics API it reads is up but returns nonsense: upstream's FailedGetResourceMetric event and
ScalingActive=False condition, no scaling, no hot loop.

The answer to a pod-metrics list is chosen per request by the first word of the file named by --mode-file:
  not-json      a 200 whose body is not JSON at all
  bad-quantity  a well-formed PodMetricsList whose cpu usage is not a quantity
  not-a-list    a PodMetricsList whose items is a string
Every request is appended to --log (method, path, mode), so the script can count the controller's reads.

Usage: server.py --port N --cert C --key K --mode-file F --log L
"""
import argparse
import datetime
import http.server
import json
import ssl
import sys

GROUP_VERSION = "metrics.k8s.io/v1beta1"


def discovery():
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": GROUP_VERSION,
        "resources": [
            {"name": "nodes", "singularName": "", "namespaced": False, "kind": "NodeMetrics", "verbs": ["get", "list"]},
            {"name": "pods", "singularName": "", "namespaced": True, "kind": "PodMetrics", "verbs": ["get", "list"]},
        ],
    }


def pod_metrics(mode, namespace):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    if mode == "not-json":
        return "<html><body>metrics are on holiday</body></html>"
    if mode == "not-a-list":
        return json.dumps({"kind": "PodMetricsList", "apiVersion": GROUP_VERSION, "metadata": {}, "items": "none"})
    # bad-quantity
    item = {
        "metadata": {"name": "web-garbage", "namespace": namespace},
        "timestamp": now,
        "window": "15s",
        "containers": [{"name": "web", "usage": {"cpu": "lots", "memory": "1Mi"}}],
    }
    return json.dumps({"kind": "PodMetricsList", "apiVersion": GROUP_VERSION, "metadata": {}, "items": [item]})


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        path = self.path.split("?", 1)[0].rstrip("/")
        try:
            with open(self.server.mode_file) as f:
                mode = (f.read().split() or ["not-json"])[0]
        except OSError:
            mode = "not-json"
        with open(self.server.log_file, "a") as log:
            log.write(f"{datetime.datetime.now().isoformat()} GET {path} {mode}\n")
        parts = path.split("/")
        if path == "/apis/" + GROUP_VERSION:
            self.send(200, json.dumps(discovery()))
        elif path == "/apis/metrics.k8s.io":
            self.send(200, json.dumps({"kind": "APIGroup", "apiVersion": "v1", "name": "metrics.k8s.io",
                                       "versions": [{"groupVersion": GROUP_VERSION, "version": "v1beta1"}],
                                       "preferredVersion": {"groupVersion": GROUP_VERSION, "version": "v1beta1"}}))
        elif len(parts) == 7 and parts[4] == "namespaces" and parts[6] == "pods":
            self.send(200, pod_metrics(mode, parts[5]))
        else:
            self.send(404, json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                       "reason": "NotFound", "code": 404, "message": "not found"}))

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
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--mode-file", required=True)
    ap.add_argument("--log", required=True)
    args = ap.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.mode_file = args.mode_file
    server.log_file = args.log
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    print(f"serving {GROUP_VERSION} garbage on 127.0.0.1:{args.port}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
