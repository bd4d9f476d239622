"""Normalises (uids, times, random names, node placement, pod IPs) and diffs the objects and events
collected by collect.sh for upstream and qkcm. Usage: normalize_diff.py <dir>"""
import json, re, sys
def norm_obj(o):
    md = o["metadata"]
    kind = o["kind"]
    name = md["name"]
    if kind == "Pod":
        name = re.sub(r"-[a-z0-9]{5}$", "-xxxxx", name)
    for k in ["uid", "resourceVersion", "creationTimestamp", "managedFields", "generateName" if kind != "Pod" else "_"]:
        md.pop(k, None)
    md["name"] = name
    for ref in md.get("ownerReferences", []):
        ref.pop("uid", None)
    st = o.get("status", {})
    if kind == "Pod":
        o["spec"].pop("nodeName", None)
        for k in ["podIP", "podIPs", "hostIP", "hostIPs", "startTime", "conditions", "containerStatuses"]:
            st.pop(k, None)
    for c in st.get("conditions", []):
        for t in ["lastTransitionTime", "lastProbeTime", "lastUpdateTime"]:
            c.pop(t, None)
    # the ServiceAccount admission plugin names the projected token volume randomly
    o = json.loads(re.sub(r"kube-api-access-[a-z0-9]{5}", "kube-api-access-xxxxx", json.dumps(o)))
    return kind, name, o
def load(label):
    items = json.load(open(f"{sys.argv[1]}/{label}.objects.json"))["items"]
    return sorted([norm_obj(o) for o in items], key=lambda x: (x[0], x[1], json.dumps(x[2], sort_keys=True)))
def events(label):
    ev = json.load(open(f"{sys.argv[1]}/{label}.events.json"))["items"]
    out = set()
    for e in ev:
        if e["involvedObject"]["kind"] in ("ReplicaSet", "ReplicationController"):
            msg = re.sub(r"-[a-z0-9]{5}\b", "-xxxxx", e["message"])
            out.add((e["source"].get("component"), e["involvedObject"]["kind"], e["involvedObject"]["name"], e["type"], e["reason"], msg))
    return out
a, b = load("upstream"), load("qkcm")
diffs = 0
for (ka, na, oa), (kb, nb, ob) in zip(a, b):
    if json.dumps(oa, sort_keys=True) != json.dumps(ob, sort_keys=True):
        diffs += 1
        print("DIFF", ka, na); print(" upstream:", json.dumps(oa, sort_keys=True)[:600]); print(" qkcm:    ", json.dumps(ob, sort_keys=True)[:600])
print("objects:", len(a), "vs", len(b), "differing:", diffs)
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
for (ka, na, oa), (kb, nb, ob) in zip(a, b):
    print(ka, na); walk(oa, ob)
