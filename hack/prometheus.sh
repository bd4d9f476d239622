#!/usr/bin/env bash
# A Prometheus (Debian's package) that scrapes the controller manager of the local cluster
# (hack/local-cluster.sh) — qkcm, or upstream's kube-controller-manager run with QKCM_BINARY — on its
# secure port: https://127.0.0.1:<QKCM_SECURE_PORT>/metrics, TLS without verification (the serving
# certificate is self-signed), no credentials (local-cluster.sh's controller manager allows /metrics
# through --authorization-always-allow-paths). deploy/grafana/kube-controller-manager.json is the
# dashboard over these metrics; hack/render-dashboard.py draws it from this Prometheus.
#
# Usage:
#   hack/prometheus.sh up       install prometheus if missing (apt-get, as root), write the scrape config
#                               and start Prometheus in the background (restarts one left running)
#   hack/prometheus.sh down     stop it (its data directory is kept until the next `up`)
#   hack/prometheus.sh config   write and print the scrape config, check it with promtool; start nothing
#
# Settings (environment):
#   QKCM_CLUSTER_NAME   the local cluster's name (default qkcm); with KWOK_WORKDIR it names the directory
#   KWOK_WORKDIR        as for hack/local-cluster.sh (default ~/.kwok); Prometheus lives in
#                       $KWOK_WORKDIR/prometheus-<name>/ (prometheus.yml, data/, prometheus.log, pid)
#   QKCM_SECURE_PORT    the controller manager's secure port to scrape (default 10257)
#   PROMETHEUS_PORT     Prometheus' HTTP port on 127.0.0.1 (default 9090)
#   PROMETHEUS_TARGETS  more controller managers to scrape, space-separated host:port (e.g. an upstream
#                       kube-controller-manager on another local cluster), same job, told apart by instance
#   PROMETHEUS_SCRAPE_INTERVAL  (default 5s)
#   PROMETHEUS_JOB      the job label (default kube-controller-manager)
set -euo pipefail

NAME="${QKCM_CLUSTER_NAME:-qkcm}"
export KWOK_WORKDIR="${KWOK_WORKDIR:-$HOME/.kwok}"
DIR="$KWOK_WORKDIR/prometheus-$NAME"
TARGET_PORT="${QKCM_SECURE_PORT:-10257}"
PORT="${PROMETHEUS_PORT:-9090}"
INTERVAL="${PROMETHEUS_SCRAPE_INTERVAL:-5s}"
JOB="${PROMETHEUS_JOB:-kube-controller-manager}"
PIDFILE="$DIR/prometheus.pid"
LOGFILE="$DIR/prometheus.log"

log() { printf '[prometheus %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

install() {
  command -v prometheus >/dev/null && command -v promtool >/dev/null && return 0
  if [[ "$(id -u)" != 0 ]]; then
    echo "prometheus: not installed; run as root: apt-get update && apt-get install --no-install-recommends prometheus" >&2
    exit 1
  fi
  log "installing Debian's prometheus package (apt-get)"
  # Only the binaries are used: Debian's own service (/etc/init.d/prometheus, port 9090) is not
  # started here (in a container policy-rc.d usually forbids it anyway).
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
}

write_config() {
  mkdir -p "$DIR"
  local targets="'127.0.0.1:$TARGET_PORT'" t
  for t in ${PROMETHEUS_TARGETS:-}; do targets+=", '$t'"; done
  cat > "$DIR/prometheus.yml" <<EOF
# written by hack/prometheus.sh
global:
  scrape_interval: $INTERVAL
  evaluation_interval: $INTERVAL
scrape_configs:
  - job_name: $JOB
    scheme: https
    metrics_path: /metrics
    tls_config:
      insecure_skip_verify: true
    static_configs:
      - targets: [$targets]
EOF
  promtool check config "$DIR/prometheus.yml" >&2
}

running_pid() {
  local pid
  [[ -f "$PIDFILE" ]] || return 1
  pid="$(cat "$PIDFILE")"
  kill -0 "$pid" 2>/dev/null && [[ "$(ps -p "$pid" -o comm=)" == prometheus ]] && echo "$pid"
}

down() {
  local pid
  if pid="$(running_pid)"; then
    log "stopping prometheus (pid $pid)"
    kill -TERM "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  fi
  rm -f "$PIDFILE"
}

case "${1:-up}" in
  down) down; exit 0 ;;
  config) install; write_config; cat "$DIR/prometheus.yml"; exit 0 ;;
  up) ;;
  *) echo "usage: hack/prometheus.sh [up|down|config]" >&2; exit 1 ;;
esac

install
down
write_config
rm -rf "$DIR/data"
log "starting prometheus on http://127.0.0.1:$PORT, scraping https://127.0.0.1:$TARGET_PORT/metrics ${PROMETHEUS_TARGETS:+and $PROMETHEUS_TARGETS }every $INTERVAL"
nohup nice prometheus --config.file="$DIR/prometheus.yml" --storage.tsdb.path="$DIR/data" \
  --storage.tsdb.retention.time=2d --web.listen-address="127.0.0.1:$PORT" >"$LOGFILE" 2>&1 &
echo $! > "$PIDFILE"
for _ in $(seq 1 60); do
  if ! running_pid >/dev/null; then
    log "prometheus exited; its log ($LOGFILE):"; tail -n 20 "$LOGFILE" >&2; exit 1
  fi
  curl -sf --max-time 2 "http://127.0.0.1:$PORT/-/ready" >/dev/null && break
  sleep 1
done
cat >&2 <<EOF

  prometheus: http://127.0.0.1:$PORT (pid $(cat "$PIDFILE")), log $LOGFILE
  config:     $DIR/prometheus.yml
  targets:    curl -s http://127.0.0.1:$PORT/api/v1/targets
  dashboard:  /usr/bin/python3 hack/render-dashboard.py --prometheus http://127.0.0.1:$PORT
  stop:       hack/prometheus.sh down

EOF
