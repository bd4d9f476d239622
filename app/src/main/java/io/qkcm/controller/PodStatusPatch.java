package io.qkcm.controller;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;

/**
 * Upstream's pod status patch (pkg/util/pod PatchPodStatus): the strategic merge patch
 * {@code CreateTwoWayMergePatch(Pod{Status: old}, Pod{UID: uid, Status: new})} a controller sends to the
 * {@code status} subresource (the UID is the precondition; no request when nothing changed), and
 * pkg/api/v1/pod's {@code UpdatePodCondition}.
 *
 * <p>The patch is computed for the status fields controllers change (phase, reason, message,
 * observedGeneration and the conditions list, merged by {@code type}); it is byte for byte what
 * upstream sends (keys sorted, Go's JSON escaping, Go's shape of a condition: omitted empty
 * strings and zero generations, {@code null} zero times). A change to any other status field is
 * refused rather than patched differently from upstream.
 */
public final class PodStatusPatch {

    private PodStatusPatch() {
    }

    /** A deep copy of a pod status (Go's {@code DeepCopy}). */
    public static PodStatus copy(PodStatus status) {
        if (status == null) {
            return new PodStatus();
        }
        PodStatus copy = io.qkcm.runtime.DeepCopy.of(status);
        if (status.getConditions() != null) {
            List<PodCondition> conditions = new ArrayList<>();
            for (PodCondition c : status.getConditions()) {
                conditions.add(new PodConditionBuilder(c).build());
            }
            copy.setConditions(conditions);
        }
        return copy;
    }

    /**
     * Upstream's {@code UpdatePodCondition}: adds the condition, or replaces the one of its type,
     * keeping the old transition time when the status did not change. Returns whether anything
     * changed. {@code condition}'s lastTransitionTime is set (now, or the old one).
     */
    public static boolean updatePodCondition(PodStatus status, PodCondition condition, Instant now) {
        condition.setLastTransitionTime(metaTime(now));
        List<PodCondition> conditions = status.getConditions() == null ? new ArrayList<>()
                : new ArrayList<>(status.getConditions());
        int index = -1;
        for (int i = 0; i < conditions.size(); i++) {
            if (Objects.equals(conditions.get(i).getType(), condition.getType())) {
                index = i;
                break;
            }
        }
        if (index < 0) {
            conditions.add(condition);
            status.setConditions(conditions);
            return true;
        }
        PodCondition old = conditions.get(index);
        if (Objects.equals(condition.getStatus(), old.getStatus())) {
            condition.setLastTransitionTime(old.getLastTransitionTime());
        }
        boolean equal = Objects.equals(condition.getStatus(), old.getStatus())
                && Objects.equals(emptyToNull(condition.getReason()), emptyToNull(old.getReason()))
                && Objects.equals(emptyToNull(condition.getMessage()), emptyToNull(old.getMessage()))
                && Objects.equals(emptyToNull(condition.getLastProbeTime()), emptyToNull(old.getLastProbeTime()))
                && Objects.equals(emptyToNull(condition.getLastTransitionTime()), emptyToNull(old.getLastTransitionTime()));
        conditions.set(index, condition);
        status.setConditions(conditions);
        return !equal;
    }

    /** metav1.Time's JSON form: RFC 3339 in UTC, whole seconds. */
    public static String metaTime(Instant t) {
        return t.truncatedTo(ChronoUnit.SECONDS).toString();
    }

    /** The patch, or {@code null} when it holds nothing but the UID (upstream's "unchanged": no request). */
    public static String prepare(String uid, PodStatus oldStatus, PodStatus newStatus) {
        PodStatus o = oldStatus == null ? new PodStatus() : oldStatus;
        PodStatus n = newStatus == null ? new PodStatus() : newStatus;
        requireSame(o, n);
        Map<String, Object> status = new TreeMap<>();
        scalar(status, "message", emptyToNull(o.getMessage()), emptyToNull(n.getMessage()));
        scalar(status, "observedGeneration", zeroToNull(o.getObservedGeneration()), zeroToNull(n.getObservedGeneration()));
        scalar(status, "phase", emptyToNull(o.getPhase()), emptyToNull(n.getPhase()));
        scalar(status, "reason", emptyToNull(o.getReason()), emptyToNull(n.getReason()));
        conditions(status, o.getConditions(), n.getConditions());
        if (status.isEmpty()) {
            return null;
        }
        Map<String, Object> patch = new TreeMap<>();
        if (uid != null && !uid.isEmpty()) {
            patch.put("metadata", Map.of("uid", uid));
        }
        patch.put("status", status);
        return GoJson.write(patch);
    }

    private static void requireSame(PodStatus o, PodStatus n) {
        PodStatus a = copy(o);
        PodStatus b = copy(n);
        for (PodStatus s : List.of(a, b)) {
            s.setMessage(null);
            s.setObservedGeneration(null);
            s.setPhase(null);
            s.setReason(null);
            s.setConditions(null);
        }
        if (!a.equals(b)) {
            throw new IllegalArgumentException("PodStatusPatch covers phase, reason, message, observedGeneration and conditions only");
        }
    }

    private static void scalar(Map<String, Object> patch, String key, Object o, Object n) {
        if (Objects.equals(o, n)) {
            return;
        }
        patch.put(key, n == null ? GoJson.NULL : n);
    }

    private static void conditions(Map<String, Object> patch, List<PodCondition> oldList, List<PodCondition> newList) {
        List<Map<String, Object>> o = goShape(oldList);
        List<Map<String, Object>> n = goShape(newList);
        if (o.isEmpty() && n.isEmpty()) {
            return;
        }
        if (o.isEmpty()) {
            patch.put("conditions", n);
            return;
        }
        if (n.isEmpty()) {
            patch.put("conditions", GoJson.NULL);
            return;
        }
        Map<String, Map<String, Object>> oldByType = new LinkedHashMap<>();
        o.forEach(c -> oldByType.putIfAbsent((String) c.get("type"), c));
        Map<String, Map<String, Object>> newByType = new LinkedHashMap<>();
        n.forEach(c -> newByType.putIfAbsent((String) c.get("type"), c));
        List<Object> changes = new ArrayList<>();
        for (Map<String, Object> c : n) {
            String type = (String) c.get("type");
            Map<String, Object> before = oldByType.get(type);
            if (before == null) {
                changes.add(c);
                continue;
            }
            Map<String, Object> diff = diffMaps(before, c);
            if (!diff.isEmpty()) {
                diff.put("type", type);
                changes.add(diff);
            }
        }
        List<String> deleted = new ArrayList<>();
        for (String type : oldByType.keySet()) {
            if (!newByType.containsKey(type)) {
                deleted.add(type);
            }
        }
        deleted.sort(Comparator.naturalOrder());
        for (String type : deleted) {
            Map<String, Object> directive = new TreeMap<>();
            directive.put("$patch", "delete");
            directive.put("type", type);
            changes.add(directive);
        }
        List<String> oldOrder = o.stream().map(c -> (String) c.get("type")).filter(newByType::containsKey).toList();
        List<String> newOrder = n.stream().map(c -> (String) c.get("type")).filter(oldByType::containsKey).toList();
        boolean orderSame = oldOrder.equals(newOrder);
        if (!changes.isEmpty() || !orderSame) {
            List<Object> order = new ArrayList<>();
            for (Map<String, Object> c : n) {
                order.add(Map.of("type", c.get("type")));
            }
            patch.put("$setElementOrder/conditions", order);
        }
        if (!changes.isEmpty()) {
            patch.put("conditions", changes);
        }
    }

    private static Map<String, Object> diffMaps(Map<String, Object> o, Map<String, Object> n) {
        Map<String, Object> diff = new TreeMap<>();
        for (Map.Entry<String, Object> e : n.entrySet()) {
            if (!o.containsKey(e.getKey()) || !Objects.equals(o.get(e.getKey()), e.getValue())) {
                diff.put(e.getKey(), e.getValue());
            }
        }
        for (String k : o.keySet()) {
            if (!n.containsKey(k)) {
                diff.put(k, GoJson.NULL);
            }
        }
        return diff;
    }

    /** A condition as Go marshals it: empty strings and zero generations omitted, zero times null. */
    private static List<Map<String, Object>> goShape(List<PodCondition> conditions) {
        List<Map<String, Object>> out = new ArrayList<>();
        if (conditions == null) {
            return out;
        }
        for (PodCondition c : conditions) {
            Map<String, Object> m = new TreeMap<>();
            m.put("type", c.getType() == null ? "" : c.getType());
            m.put("status", c.getStatus() == null ? "" : c.getStatus());
            m.put("lastProbeTime", nullable(c.getLastProbeTime()));
            m.put("lastTransitionTime", nullable(c.getLastTransitionTime()));
            if (zeroToNull(c.getObservedGeneration()) != null) {
                m.put("observedGeneration", c.getObservedGeneration());
            }
            if (emptyToNull(c.getReason()) != null) {
                m.put("reason", c.getReason());
            }
            if (emptyToNull(c.getMessage()) != null) {
                m.put("message", c.getMessage());
            }
            out.add(m);
        }
        return out;
    }

    private static Object nullable(String time) {
        String t = emptyToNull(time);
        return t == null ? GoJson.NULL : t;
    }

    private static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    private static Long zeroToNull(Long l) {
        return l == null || l == 0L ? null : l;
    }

    /** Go's encoding/json for maps (sorted keys), lists, strings, integers and null. */
    static final class GoJson {

        /** JSON null as a map value (Java maps here hold no nulls). */
        static final Object NULL = new Object() {
            @Override
            public String toString() {
                return "null";
            }
        };

        private GoJson() {
        }

        static String write(Object value) {
            StringBuilder sb = new StringBuilder();
            write(sb, value);
            return sb.toString();
        }

        private static void write(StringBuilder sb, Object value) {
            if (value == null || value == NULL) {
                sb.append("null");
            } else if (value instanceof Map<?, ?> map) {
                sb.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : new TreeMap<>(map).entrySet()) {
                    if (!first) {
                        sb.append(',');
                    }
                    first = false;
                    string(sb, String.valueOf(e.getKey()));
                    sb.append(':');
                    write(sb, e.getValue());
                }
                sb.append('}');
            } else if (value instanceof List<?> list) {
                sb.append('[');
                for (int i = 0; i < list.size(); i++) {
                    if (i > 0) {
                        sb.append(',');
                    }
                    write(sb, list.get(i));
                }
                sb.append(']');
            } else if (value instanceof Number || value instanceof Boolean) {
                sb.append(value);
            } else {
                string(sb, value.toString());
            }
        }

        private static void string(StringBuilder sb, String s) {
            sb.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"' -> sb.append("\\\"");
                    case '\\' -> sb.append("\\\\");
                    case '\n' -> sb.append("\\n");
                    case '\r' -> sb.append("\\r");
                    case '\t' -> sb.append("\\t");
                    case '<', '>', '&', '\u2028', '\u2029' -> sb.append(String.format("\\u%04x", (int) c));
                    default -> {
                        if (c < 0x20) {
                            sb.append(String.format("\\u%04x", (int) c));
                        } else {
                            sb.append(c);
                        }
                    }
                }
            }
            sb.append('"');
        }
    }
}
