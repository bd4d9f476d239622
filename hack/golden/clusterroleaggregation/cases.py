# Writes cases.jsonl: upstream's TestSyncClusterRole table (clusterroleaggregation_controller_test.go)
# and a few more selectors and rule shapes. The bootstrap case is appended from a live API server by
# the README's commands.
import json

def rules(*rs):
    return [dict(r) for r in rs]

hammer = [{"verbs": ["hammer"], "resources": ["nails"]}, {"verbs": ["hammer"], "resources": ["wedges"]}]
chisel = [{"verbs": ["chisel"], "resources": ["mortises"]}]
saw = [{"verbs": ["saw"], "resources": ["boards"]}]

def role(name, labels, rs):
    r = {"metadata": {"name": name}}
    if labels is not None:
        r["metadata"]["labels"] = labels
    if rs is not None:
        r["rules"] = rs
    return r

def combined(selectors, *rs, name="combined"):
    r = {"metadata": {"name": name}, "aggregationRule": {"clusterRoleSelectors": selectors}}
    all_rules = [x for group in rs for x in group]
    if all_rules:
        r["rules"] = all_rules
    return r

def ml(*maps):
    return [{"matchLabels": m} for m in maps]

cases = [
    ("remove dead rules", [role("hammer", {"foo": "bar"}, hammer), combined(ml({"foo": "bar"}), saw)]),
    ("strip rules", [role("hammer", {"foo": "not-bar"}, hammer), combined(ml({"foo": "bar"}), hammer)]),
    ("select properly and put in order", [role("hammer", {"foo": "bar"}, hammer), role("chisel", {"foo": "bar"}, chisel),
        role("saw", {"foo": "not-bar"}, saw), combined(ml({"foo": "bar"}))]),
    ("select properly with multiple selectors", [role("hammer", {"foo": "bar"}, hammer), role("chisel", {"foo": "bar"}, chisel),
        role("saw", {"foo": "not-bar"}, saw), combined(ml({"foo": "bar"}, {"foo": "not-bar"}))]),
    ("select properly remove duplicates", [role("hammer", {"foo": "bar"}, hammer), role("chisel", {"foo": "bar"}, chisel),
        role("saw", {"foo": "bar"}, saw), role("other-saw", {"foo": "not-bar"}, saw),
        combined(ml({"foo": "bar"}, {"foo": "not-bar"}))]),
    ("no diff skip", [role("hammer", {"foo": "bar"}, hammer), combined(ml({"foo": "bar"}), hammer)]),
    # beyond upstream's table
    ("not aggregating", [role("hammer", {"foo": "bar"}, hammer), role("combined", None, saw)]),
    ("missing role", [role("hammer", {"foo": "bar"}, hammer)]),
    ("empty selector selects every other role", [role("b", None, saw), role("a", {"x": "y"}, chisel),
        combined([{}], hammer)]),
    ("no selectors strips rules", [role("hammer", {"foo": "bar"}, hammer), combined([], hammer)]),
    ("no selectors and no rules skip", [role("hammer", {"foo": "bar"}, hammer), combined([])]),
    ("self is skipped", [role("hammer", {"foo": "bar"}, hammer),
        {"metadata": {"name": "combined", "labels": {"foo": "bar"}}, "aggregationRule": {"clusterRoleSelectors": ml({"foo": "bar"})}, "rules": saw}]),
    ("match expressions", [role("a", {"tier": "one"}, chisel), role("b", {"tier": "two"}, saw), role("c", {"tier": "three"}, hammer),
        role("d", None, [{"verbs": ["get"], "resources": ["d"]}]),
        combined([{"matchExpressions": [{"key": "tier", "operator": "In", "values": ["two", "three"]}]},
                  {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]},
                  {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["three"]}]},
                  {"matchExpressions": [{"key": "tier", "operator": "Exists"}], "matchLabels": {"tier": "one"}}])]),
    ("invalid selector", [role("a", {"tier": "one"}, chisel),
        combined([{"matchExpressions": [{"key": "tier", "operator": "In", "values": []}]}], saw)]),
    ("invalid operator", [role("a", {"tier": "one"}, chisel),
        combined([{"matchExpressions": [{"key": "tier", "operator": "Bogus", "values": ["x"]}]}], saw)]),
    ("invalid label value", [role("a", {"tier": "one"}, chisel), combined(ml({"tier": "not valid!"}), saw)]),
    ("rule identity is exact", [
        role("a", {"agg": "true"}, [{"verbs": ["get", "list"], "resources": ["pods"]},
                                    {"verbs": ["list", "get"], "resources": ["pods"]},
                                    {"verbs": ["get", "list"], "resources": ["pods"], "apiGroups": [""]},
                                    {"verbs": ["get", "list"], "resources": ["pods"]}]),
        role("b", {"agg": "true"}, [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/healthz/*"]},
                                    {"verbs": ["get", "list"], "resources": ["pods"], "apiGroups": [""]},
                                    {"verbs": ["get"], "resources": ["configmaps"], "resourceNames": ["x", "y"], "apiGroups": [""]},
                                    {"verbs": ["get"], "resources": ["configmaps"], "resourceNames": ["y", "x"], "apiGroups": [""]},
                                    {"verbs": ["get"], "resources": ["configmaps"], "resourceNames": [], "apiGroups": [""]},
                                    {"verbs": ["get"], "resources": ["configmaps"], "apiGroups": [""]}]),
        combined(ml({"agg": "true"}))]),
    ("rules in another order are rewritten", [role("a", {"agg": "true"}, chisel), role("b", {"agg": "true"}, saw),
        combined(ml({"agg": "true"}), saw, chisel)]),
    ("empty result over empty rules skip", [role("a", {"agg": "true"}, None), role("b", {"agg": "true"}, []),
        {"metadata": {"name": "combined"}, "aggregationRule": {"clusterRoleSelectors": ml({"agg": "true"})}, "rules": []}]),
    ("empty result over rules applies no rules", [role("a", {"agg": "true"}, None), combined(ml({"agg": "true"}), saw)]),
]

with open("cases.jsonl", "w") as f:
    for name, roles in cases:
        sync = "combined"
        f.write(json.dumps({"name": name, "clusterRoles": roles, "sync": sync}) + "\n")
    # chains: fixed point over aggregations of aggregations
    f.write(json.dumps({"name": "chain", "fixedPoint": True, "clusterRoles": [
        role("leaf-view", {"to-view": "true"}, [{"verbs": ["get"], "resources": ["widgets"], "apiGroups": ["example.com"]}]),
        {"metadata": {"name": "my-view", "labels": {"to-edit": "true"}}, "aggregationRule": {"clusterRoleSelectors": ml({"to-view": "true"})}},
        role("leaf-edit", {"to-edit": "true"}, [{"verbs": ["create"], "resources": ["widgets"], "apiGroups": ["example.com"]}]),
        {"metadata": {"name": "my-edit", "labels": {"to-admin": "true"}}, "aggregationRule": {"clusterRoleSelectors": ml({"to-edit": "true"})}},
        {"metadata": {"name": "my-admin"}, "aggregationRule": {"clusterRoleSelectors": ml({"to-admin": "true"}, {"to-edit": "true"})}},
    ]}) + "\n")
