# Appends to cases.jsonl the fixed-point cases over kube-apiserver v1.34.4's bootstrap ClusterRoles
# (bootstrap-clusterroles.json, `kubectl get clusterroles -o json` of a fresh API server with
# --authorization-mode RBAC, cut to name, labels, aggregationRule and rules), alone and with a CRD's
# aggregate-to-view/edit/admin roles.
import json
roles = []
for item in json.load(open("bootstrap-clusterroles.json"))["items"]:
    r = {"metadata": {"name": item["metadata"]["name"]}}
    if item["metadata"].get("labels"):
        r["metadata"]["labels"] = item["metadata"]["labels"]
    if "aggregationRule" in item:
        r["aggregationRule"] = item["aggregationRule"]
    if "rules" in item:
        r["rules"] = item["rules"]
    roles.append(r)
crd = [
    {"metadata": {"name": "widgets-view", "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
     "rules": [{"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get", "list", "watch"]}]},
    {"metadata": {"name": "widgets-edit", "labels": {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}},
     "rules": [{"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["create", "update", "patch", "delete"]}]},
    {"metadata": {"name": "widgets-admin", "labels": {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}},
     "rules": [{"apiGroups": ["example.com"], "resources": ["widgets/finalizers"], "verbs": ["update"]}]},
]
with open("cases.jsonl", "a") as f:
    f.write(json.dumps({"name": "bootstrap", "fixedPoint": True, "clusterRoles": roles}) + "\n")
    f.write(json.dumps({"name": "bootstrap with a CRD's roles", "fixedPoint": True, "clusterRoles": roles + crd}) + "\n")
