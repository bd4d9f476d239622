"""Normalises (uids, times, random names, node placement, pod IPs) and diffs the objects and events
collected by collect.sh for upstream and qkcm. Usage: normalize_diff.py <dir>"""
import json, os, re, sys
NODES = os.environ.get("SCENARIO") == "nodes"
STORAGE = os.environ.get("SCENARIO") == "storage"
LIVE_NODE = re.compile(r"\bnode-\d{6}\b")
def norm_obj(o):
    md = o["metadata"]
    kind = o["kind"]
    name = md["name"]
    if kind in ("Pod", "ResourceClaim"):
        name = re.sub(r"-[a-z0-9]{5}$", "-xxxxx", name)
    # generated claims' names (generateName) are random; the pod's status names them
    for cs in (o.get("status") or {}).get("resourceClaimStatuses") or []:
        if cs.get("resourceClaimName"):
            cs["resourceClaimName"] = re.sub(r"-[a-z0-9]{5}$", "-xxxxx", cs["resourceClaimName"])
    for k in ["uid", "resourceVersion", "creationTimestamp", "managedFields", "generateName" if kind != "Pod" else "_"]:
        md.pop(k, None)
    md["name"] = name
    for ref in md.get("ownerReferences", []):
        ref.pop("uid", None)
    if kind in ("Endpoints", "EndpointSlice"):
        o = norm_endpoints(o)
        md = o["metadata"]
        if kind == "EndpointSlice":
            name = md.get("labels", {}).get("kubernetes.io/service-name", name) + "-xxxxx/" + o.get("addressType", "")
            md["name"] = name
        # the trigger time is a timestamp; whether it is there is what can be compared
        ann = md.get("annotations", {})
        if "endpoints.kubernetes.io/last-change-trigger-time" in ann:
            ann["endpoints.kubernetes.io/last-change-trigger-time"] = "<time>"
    st = o.get("status", {})
    if kind == "Pod":
        o["spec"].pop("nodeName", None)
        for k in ["podIP", "podIPs", "hostIP", "hostIPs", "startTime", "conditions", "containerStatuses"]:
            st.pop(k, None)
    for c in st.get("conditions", []):
        for t in ["lastTransitionTime", "lastProbeTime", "lastUpdateTime"]:
            c.pop(t, None)
    if kind == "PersistentVolumeClaim" and not STORAGE:
        o.pop("status", None)
    if kind == "PodDisruptionBudget" and st.get("disruptedPods"):
        # pod names are random; which pods and when differs, how many does not
        st["disruptedPods"] = len(st["disruptedPods"])
    # the ServiceAccount admission plugin names the projected token volume randomly
    o = json.loads(generic(re.sub(r"kube-api-access-[a-z0-9]{5}", "kube-api-access-xxxxx", json.dumps(o))))
    return kind, generic(name), o
UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
CRON_JOB = re.compile(r"\b(tick)-\d{7,9}\b")
def generic(text):
    """UIDs (Job selectors and labels carry the Job's), timestamps and the scheduled minute in a
    CronJob's Job names differ from run to run by nature."""
    return CRON_JOB.sub(r"\1-<minute>", TIME.sub("<time>", UID.sub("<uid>", text)))
POD_NAME = re.compile(r"-[a-z0-9]{8,10}-[a-z0-9]{5}$|-[a-z0-9]{5}$")
def norm_endpoints(o):
    """Pod IPs and nodes depend on scheduling, pod names are random: compare the structure, with
    endpoints listed in a canonical order."""
    def target(t):
        if not t: return t
        t = dict(t); t.pop("uid", None); t.pop("resourceVersion", None)
        t["name"] = POD_NAME.sub("-xxxxx", t.get("name", "")) if t.get("name", "").startswith("web-") else t.get("name")
        return t
    def addr(a):
        a = dict(a)
        if "targetRef" in a: a["targetRef"] = target(a["targetRef"])
        if a.get("targetRef"): a["ip"] = "<pod-ip>"; a.pop("nodeName", None)
        return a
    for ss in o.get("subsets", []) or []:
        for k in ("addresses", "notReadyAddresses"):
            if k in ss: ss[k] = sorted((addr(a) for a in ss[k]), key=lambda a: json.dumps(a, sort_keys=True))
    if o["kind"] == "EndpointSlice":
        eps = []
        for e in o.get("endpoints") or []:
            e = dict(e)
            if e.get("targetRef"):
                e["targetRef"] = target(e["targetRef"]); e["addresses"] = ["<pod-ip>"]; e.pop("nodeName", None)
            eps.append(e)
        o["endpoints"] = sorted(eps, key=lambda e: json.dumps(e, sort_keys=True))
    return o
DEAD = {}
def load(label):
    items = json.load(open(f"{sys.argv[1]}/{label}.objects.json"))["items"]
    if NODES:
        # how many pods the dead node ran depends on the scheduler's placement: those are compared by what
        # happened to them (printed below), the others object by object
        dead = [o for o in items if o["kind"] == "Pod" and o["spec"].get("nodeName") == "<dead-node>"]
        DEAD[label] = [(bool(o["metadata"].get("deletionTimestamp")),
                        sorted((c["type"], c["status"], c.get("reason")) for c in o.get("status", {}).get("conditions", [])
                               if c["type"] in ("Ready", "DisruptionTarget"))) for o in dead]
        items = [o for o in items if o not in dead]
    return sorted([norm_obj(o) for o in items], key=lambda x: (x[0], x[1], json.dumps(x[2], sort_keys=True)))
def events(label):
    ev = json.load(open(f"{sys.argv[1]}/{label}.events.json"))["items"]
    out = set()
    for e in ev:
        # the nodes scenario also compares what happened to the dead node and its pods (not the scheduler's)
        if NODES and e["involvedObject"]["kind"] in ("Node", "Pod"):
            if e["source"].get("component") in (None, "default-scheduler"):
                continue  # the scheduler's placements differ by nature
            # the live nodes are interchangeable (which one died differs); the dead one is <dead-node>
            msg = LIVE_NODE.sub("<node>", generic(re.sub(r"-[a-z0-9]{8,10}-[a-z0-9]{5}\b", "-xxxxx", e["message"])))
            out.add((e["source"].get("component"), e["involvedObject"]["kind"],
                     LIVE_NODE.sub("<node>", POD_NAME.sub("-xxxxx", e["involvedObject"]["name"])), e["type"], e["reason"], msg))
            continue
        if e["involvedObject"]["kind"] in ("PersistentVolume", "ResourceClaim", "ResourceQuota", "PodDisruptionBudget", "ReplicaSet", "ReplicationController", "Service", "Endpoints", "EndpointSlice",
                                           "Job", "CronJob", "DaemonSet", "StatefulSet", "PersistentVolumeClaim"):
            msg = generic(re.sub(r"-[a-z0-9]{5}\b", "-xxxxx", e["message"]))
            # an external provisioner names itself <name>_<host>_<uuid> per start
            source = re.sub(r"_[^_]+_[0-9a-f-]{36}$", "_<identity>", e["source"].get("component") or "")
            out.add((source, e["involvedObject"]["kind"], generic(e["involvedObject"]["name"]), e["type"], e["reason"], msg))
    return out
def grouped(items):
    """(kind, name) -> that key's normalised objects, sorted: pods of one owner share a name pattern."""
    out = {}
    for kind, name, o in items:
        out.setdefault((kind, name), []).append(o)
    return {k: sorted(v, key=lambda o: json.dumps(o, sort_keys=True)) for k, v in out.items()}
a, b = grouped(load("upstream")), grouped(load("qkcm"))
pairs, diffs = [], 0
for key in sorted(set(a) | set(b)):
    la, lb = a.get(key, []), b.get(key, [])
    if len(la) != len(lb):
        print("COUNT", key[0], key[1], "upstream", len(la), "qkcm", len(lb))
    for oa, ob in zip(la, lb):
        pairs.append((key, oa, ob))
        if json.dumps(oa, sort_keys=True) != json.dumps(ob, sort_keys=True):
            diffs += 1
            print("DIFF", key[0], key[1]); print(" upstream:", json.dumps(oa, sort_keys=True)[:600]); print(" qkcm:    ", json.dumps(ob, sort_keys=True)[:600])
print("objects:", sum(map(len, a.values())), "vs", sum(map(len, b.values())), "differing:", diffs)
ea, eb = events("upstream"), events("qkcm")
print("event (source, kind, name, type, reason, message) only upstream:", sorted(ea - eb))
print("only qkcm:", sorted(eb - ea))
print("common:", len(ea & eb))
def walk(a, b, path=""):
    if type(a) != type(b):
        print("  ", path, a, "!=", b); return
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            walk(a.get(k), b.get(k), path + "." + k)
    elif isinstance(a, list):
        if len(a) != len(b): print("  ", path, "len", len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)): walk(x, y, f"{path}[{i}]")
    elif a != b:
        print("  ", path, repr(a)[:80], "!=", repr(b)[:80])
for (kind, name), oa, ob in pairs:
    print(kind, name); walk(oa, ob)
if NODES:
    # the dead node as each manager left it, and the time each step took from the moment it went silent
    for label in ("upstream", "qkcm"):
        print("timings", label, json.load(open(f"{sys.argv[1]}/{label}.timings.json")))
    for label in ("upstream", "qkcm"):
        print("pods on the dead node", label, len(DEAD[label]), "as (deleting, Ready/DisruptionTarget):",
              sorted(set(json.dumps(d) for d in DEAD[label])))
    na, nb = (norm_obj(json.load(open(f"{sys.argv[1]}/{l}.node.json")))[2] for l in ("upstream", "qkcm"))
    for n in (na, nb):
        # node-lifecycle's NoSchedule pass (on the node's update) and its NoExecute pass (every 100 ms) race
        # to add their unreachable taint first, under upstream as under qkcm: compared as a set
        n["spec"]["taints"] = sorted(n["spec"].get("taints") or [], key=lambda t: json.dumps(t, sort_keys=True))
    print("Node <dead-node>"); walk(na, nb)
if os.environ.get("SCENARIO") == "policy":
    # what the API server refused (quota admission, working from the quota's status) and how the drain ended
    for label in ("upstream", "qkcm"):
        refused = open(f"{sys.argv[1]}/{label}.refused").read().split() if os.path.exists(f"{sys.argv[1]}/{label}.refused") else []
        drain = open(f"{sys.argv[1]}/{label}.drain.log").read().strip().splitlines()
        print("policy", label, "refused:", " ".join(refused) or "none", "| drain:", drain[-1] if drain else "")
    # the HPA and its Deployment (times dropped), and the events of namespace autoscale
    def hpa(label):
        out = {}
        for o in json.load(open(f"{sys.argv[1]}/{label}.hpa.json"))["items"]:
            o.get("status", {}).pop("lastScaleTime", None)
            kind, name, n = norm_obj(o)
            out[(kind, name)] = n
        return out
    ha, hb = hpa("upstream"), hpa("qkcm")
    for key in sorted(set(ha) | set(hb)):
        same = json.dumps(ha.get(key), sort_keys=True) == json.dumps(hb.get(key), sort_keys=True)
        print("autoscale", key[0], key[1], "same" if same else "DIFF")
        if not same:
            walk(ha.get(key), hb.get(key))
    def hpa_events(label):
        return {(e["source"].get("component"), e["involvedObject"]["kind"], POD_NAME.sub("-xxxxx", e["involvedObject"]["name"]),
                 e["type"], e["reason"], POD_NAME.sub("-xxxxx", e["message"]))
                for e in json.load(open(f"{sys.argv[1]}/{label}.hpa-events.json"))["items"]
                if e["source"].get("component") not in (None, "default-scheduler")}
    xa, xb = hpa_events("upstream"), hpa_events("qkcm")
    print("autoscale events only upstream:", sorted(xa - xb))
    print("autoscale events only qkcm:", sorted(xb - xa))
    print("autoscale events common:", len(xa & xb))
if os.environ.get("SCENARIO") == "certificates":
    # CSRs: conditions and what the issued certificate says (keys and serials are random by nature);
    # cluster-info's JWS signatures, the token Secrets left, and who the issued certificate authenticates as
    import base64, datetime
    from cryptography import x509
    def cert_summary(pem):
        c = x509.load_pem_x509_certificate(base64.b64decode(pem))
        out = {"subject": c.subject.rfc4514_string(), "issuer": c.issuer.rfc4514_string(),
               "lifetime_s": int((c.not_valid_after_utc - c.not_valid_before_utc).total_seconds()),
               "serial_bits": c.serial_number.bit_length() > 64, "extensions": {}}
        for e in c.extensions:
            v = e.value
            if isinstance(v, x509.KeyUsage):
                v = [k for k in ("digital_signature", "key_encipherment", "key_cert_sign", "crl_sign") if getattr(v, k)]
            elif isinstance(v, x509.ExtendedKeyUsage):
                v = [u._name for u in v]
            elif isinstance(v, x509.BasicConstraints):
                v = {"ca": v.ca}
            elif isinstance(v, x509.AuthorityKeyIdentifier):
                v = "present"
            else:
                v = str(type(v).__name__)
            out["extensions"][e.oid._name] = (e.critical, v)
        return out
    def csrs(label):
        out = {}
        for o in json.load(open(f"{sys.argv[1]}/{label}.csr.json"))["items"]:
            st = o.get("status", {})
            out[o["metadata"]["name"]] = {
                "conditions": [(c["type"], c["status"], c.get("reason"), c.get("message")) for c in st.get("conditions", [])],
                "certificate": cert_summary(st["certificate"]) if st.get("certificate") else None}
        return out
    ca, cb = csrs("upstream"), csrs("qkcm")
    for name in sorted(set(ca) | set(cb)):
        same = json.dumps(ca.get(name), sort_keys=True) == json.dumps(cb.get(name), sort_keys=True)
        print("CSR", name, "same" if same else "DIFF")
        if not same:
            print("  upstream:", json.dumps(ca.get(name), sort_keys=True)); print("  qkcm:    ", json.dumps(cb.get(name), sort_keys=True))
    ia, ib = (json.load(open(f"{sys.argv[1]}/{l}.cluster-info.json"))["data"] for l in ("upstream", "qkcm"))
    print("cluster-info data keys:", sorted(ia), "vs", sorted(ib), "| byte-identical:", ia == ib)
    ta, tb = ([s["metadata"]["name"] for s in json.load(open(f"{sys.argv[1]}/{l}.tokens.json"))["items"]] for l in ("upstream", "qkcm"))
    print("bootstrap tokens left:", sorted(ta), "vs", sorted(tb))
    for label in ("upstream", "qkcm"):
        print("whoami", label, open(f"{sys.argv[1]}/{label}.whoami.json").read().replace("\n", " ")[:300])
if STORAGE:
    # the claim deleted while a pod used it: still there, held by its protection finalizer
    for label in ("upstream", "qkcm"):
        t = open(f"{sys.argv[1]}/{label}.pvc-in-use.json").read()
        try:
            md = json.loads(t)["metadata"]
            print("pvc in use after delete", label, "finalizers:", md.get("finalizers"), "deleting:", "deletionTimestamp" in md)
        except ValueError:
            print("pvc in use after delete", label, t.strip()[:200])
