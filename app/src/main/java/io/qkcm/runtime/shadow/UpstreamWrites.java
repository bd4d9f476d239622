package io.qkcm.runtime.shadow;

import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.runtime.Json;
import io.qkcm.runtime.ManagedFieldsTap;
import io.qkcm.runtime.shadow.ShadowAction.Side;

/**
 * Upstream's writes as the shared informers see them. Attribution is by field manager: each object's
 * managedFields are read as it is decoded ({@link ManagedFieldsTap}, before the caches drop them) and
 * the entries of upstream's manager ({@code kube-controller-manager}, its user agent's name) kept per
 * object version. An added object carrying such an entry was created by upstream; an update that changed
 * such an entry (its time or fields, per subresource) was written by upstream; deletions carry no
 * manager and are passed on as seen, for qkcm's intended deletes to meet. Objects created before shadow
 * mode started (the informers' first list) are not actions.
 */
public final class UpstreamWrites implements ManagedFieldsTap {

    public static final String UPSTREAM_MANAGER = "kube-controller-manager";
    /**
     * The field managers upstream's controllers name in their server-side applies (pkg/controller: the ClusterRole
     * aggregation, the ServiceCIDRs' status, the ValidatingAdmissionPolicies' status, the pods' status of the
     * ResourceClaim controller, the storage version migrator): theirs too, whatever the user agent.
     */
    public static final java.util.Set<String> UPSTREAM_APPLY_MANAGERS = java.util.Set.of("clusterrole-aggregation-controller",
            "service-cidr-controller", "validatingadmissionpolicy-status", "ResourceClaimController",
            "storage-version-migrator-controller");
    private static final int MAX_PENDING = 50_000;

    private final ShadowMatcher matcher;
    private final String manager;
    private final Instant since;
    /**
     * uid@resourceVersion → upstream's entries by subresource and when the version was decoded, from decoding to
     * the handler. The decoding time is the write's time: it precedes every handler of the informer, so a sync of
     * qkcm's that the version triggered starts after it, whichever handler the informer ran first.
     */
    private final Map<String, Decoded> decoded = Collections.synchronizedMap(
            new LinkedHashMap<>(1024, 0.75f, false) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Decoded> eldest) {
                    return size() > MAX_PENDING; // decoded for a cache no handler here reads (metadata informers)
                }
            });
    /** uid → upstream's entries on the last version seen. */
    private final Map<String, Map<String, String>> last = new ConcurrentHashMap<>();
    /** uid → every manager's entries on the last version seen. */
    private final Map<String, String> lastAll = new ConcurrentHashMap<>();

    public UpstreamWrites(ShadowMatcher matcher, String manager, Instant since) {
        this.matcher = matcher;
        this.manager = manager;
        this.since = since;
    }

    @Override
    public void observe(ObjectMeta meta) {
        List<ManagedFieldsEntry> entries = meta.getManagedFields();
        if (meta.getUid() == null) {
            return;
        }
        if (entries == null || entries.isEmpty()) {
            return;
        }
        Map<String, String> mine = new TreeMap<>();
        Map<String, String> othersLatest = new TreeMap<>();
        StringBuilder all = new StringBuilder();
        for (ManagedFieldsEntry e : entries) {
            String sub = e.getSubresource() == null ? "" : e.getSubresource();
            String entry = e.getOperation() + " " + e.getTime() + " " + (e.getFieldsV1() == null ? ""
                    : String.valueOf(e.getFieldsV1().getAdditionalProperties()));
            all.append(e.getManager()).append('/').append(sub).append(' ').append(entry).append('\n');
            if (manager.equals(e.getManager()) || UPSTREAM_APPLY_MANAGERS.contains(e.getManager())) {
                mine.merge(sub, entry, (a, b) -> a + "\n" + b);
            } else if (e.getTime() != null) {
                othersLatest.merge(sub, e.getTime(), (a, b) -> a.compareTo(b) >= 0 ? a : b);
            }
        }
        // other managers' only: marked (no entries kept, their newest time and a digest of them: what a removal that
        // leaves its writer no entry changes), so that a version never seen here is one without any
        decoded.put(meta.getUid() + "@" + meta.getResourceVersion(), mine.isEmpty()
                ? new Decoded(Map.of(), Map.of(), "~/ - " + newestTime(all.toString()) + " " + all.toString().hashCode(),
                        matcher.now(), false)
                : new Decoded(mine, othersLatest, all.toString(), matcher.now(), false));
    }

    /** Watches {@code type}'s shared informer for upstream's writes. */
    public <T extends HasMetadata> void watch(Class<T> type, SharedIndexInformer<T> informer) {
        String group = HasMetadata.getGroup(type);
        String resource = group + "/" + HasMetadata.getPlural(type);
        boolean events = group.isEmpty() && HasMetadata.getPlural(type).equals("events");
        informer.addEventHandler(new ResourceEventHandler<T>() {
            @Override
            public void onAdd(T obj) {
                Decoded seen = take(obj);
                Map<String, String> entries = seen.entries();
                last.put(uid(obj), entries);
                lastAll.put(uid(obj), seen.all());
                ObjectMeta m = obj.getMetadata();
                if (seen.noManager() && !events && m.getCreationTimestamp() != null
                        && !Instant.parse(m.getCreationTimestamp()).isBefore(since.minusSeconds(1))) {
                    // whoever created it: it can only confirm a creation qkcm intended, as a delete does
                    Map<String, Object> object = asMap(obj);
                    matcher.submit(new ShadowAction(Side.UPSTREAM, ShadowMatcher.NO_MANAGER, "create", resource, "", ns(m),
                            Normalise.createName(object, Map.of()), 0, object, seen.at()));
                    return;
                }
                if (entries.isEmpty() || m.getCreationTimestamp() == null
                        || Instant.parse(m.getCreationTimestamp()).isBefore(since.minusSeconds(1))) {
                    if (events && !entries.isEmpty()) {
                        // said before shadow mode started: what qkcm's controllers say at their start may repeat it
                        priorEvent(asMap(obj), m, seen.at());
                    }
                    return;
                }
                Map<String, Object> object = asMap(obj);
                if (events) {
                    event(object, m, seen.at());
                    return;
                }
                String name = Normalise.createName(object, Map.of());
                matcher.submit(new ShadowAction(Side.UPSTREAM, ShadowMatcher.UNATTRIBUTED, "create", resource, "",
                        ns(m), name, 0, object, seen.at()));
            }

            @Override
            public void onUpdate(T old, T obj) {
                ObjectMeta m = obj.getMetadata();
                if (Objects.equals(old.getMetadata().getResourceVersion(), m.getResourceVersion())) {
                    return; // a resync or relist: nothing was written
                }
                Decoded seen = take(obj);
                Map<String, String> entries = seen.entries();
                Map<String, String> before = last.put(uid(obj), entries);
                String allBefore = lastAll.put(uid(obj), seen.all());
                if (before == null) {
                    before = Map.of();
                }
                if (m.getDeletionTimestamp() != null && old.getMetadata().getDeletionTimestamp() == null) {
                    matcher.submit(new ShadowAction(Side.UPSTREAM, ShadowMatcher.UNATTRIBUTED, "delete", resource, "",
                            ns(m), m.getName(), 0, null, seen.at()));
                }
                Map<String, Object> object = null;
                for (Map.Entry<String, String> e : entries.entrySet()) {
                    if (e.getValue().equals(before.get(e.getKey()))) {
                        continue;
                    }
                    if (object == null) {
                        object = asMap(obj);
                    }
                    if (events) {
                        event(object, m, seen.at());
                        return;
                    }
                    matcher.submit(new ShadowAction(Side.UPSTREAM, ShadowMatcher.UNATTRIBUTED, "update", resource,
                            e.getKey(), ns(m), m.getName(), 0, object, seen.at()));
                }
                if (object == null && !events && !seen.all().isEmpty() && m.getDeletionTimestamp() == null
                        && noEntryOfTheWrite(newestTime(seen.all()), seen.at())) {
                    // A write that left no field manager's entry with its time (every entry is seconds older than the
                    // version): one that only removed fields (a node's taint), which leaves its writer no entry. Whose
                    // it was cannot be told: it can only confirm an update qkcm intended, as a deletion does.
                    matcher.submit(new ShadowAction(Side.UPSTREAM, ShadowMatcher.NO_MANAGER, "update", resource,
                            statusChanged(old, obj) ? "status" : "", ns(m), m.getName(), 0, asMap(obj), seen.at()));
                    return;
                }
                if (object == null && !events && !entries.isEmpty() && seen.all().equals(allBefore)
                        && m.getDeletionTimestamp() == null) {
                    // A write that left every entry as it was: the same manager wrote the same fields again within the
                    // second its entry's time already says. It is upstream's when upstream's entry of the part that
                    // changed is the newest one there. (A deletion's changes carry no manager: not this case.)
                    String sub = statusChanged(old, obj) ? "status" : "";
                    String mine = entries.get(sub);
                    String others = seen.othersLatest().get(sub);
                    String time = mine == null ? null : mine.split(" ", 3)[1];
                    if (time != null && (others == null || time.compareTo(others) > 0
                            || (!sub.isEmpty() && time.compareTo(others) == 0))) {
                        matcher.submit(new ShadowAction(Side.UPSTREAM, ShadowMatcher.UNATTRIBUTED, "update", resource,
                                sub, ns(m), m.getName(), 0, asMap(obj), seen.at()));
                    }
                }
            }

            @Override
            public void onDelete(T obj, boolean finalStateUnknown) {
                ObjectMeta m = obj.getMetadata();
                last.remove(uid(obj));
                lastAll.remove(uid(obj));
                if (!events) {
                    matcher.submit(new ShadowAction(Side.UPSTREAM, ShadowMatcher.UNATTRIBUTED, "delete", resource, "",
                            ns(m), m.getName(), 0, null, matcher.now()));
                }
                if (resource.equals("/namespaces")) {
                    // the namespace controller's last write, the finalize that empties spec.finalizers, is seen only
                    // as the Namespace's deletion that follows it at once
                    matcher.submit(new ShadowAction(Side.UPSTREAM, ShadowMatcher.UNATTRIBUTED, "update", resource,
                            "finalize", "", m.getName(), 0, null, matcher.now()));
                }
            }
        });
    }

    private void event(Map<String, Object> object, ObjectMeta m, Instant at) {
        String key = Normalise.eventKey(object);
        if (key != null) {
            matcher.submit(new ShadowAction(Side.UPSTREAM, ShadowMatcher.UNATTRIBUTED, "event", "events", "", ns(m), key, 0,
                    object, at));
        }
    }

    private void priorEvent(Map<String, Object> object, ObjectMeta m, Instant at) {
        String key = Normalise.eventKey(object);
        if (key != null) {
            matcher.priorEvent(new ShadowAction(Side.UPSTREAM, ShadowMatcher.UNATTRIBUTED, "event", "events", "", ns(m), key,
                    0, object, at));
        }
    }

    private Decoded take(HasMetadata obj) {
        Decoded seen = decoded.remove(uid(obj) + "@" + obj.getMetadata().getResourceVersion());
        // the tap sees managedFields only when the object has some: a version it never saw had none (the API server
        // keeps no entry for a write that set no field but the identity, e.g. a namespace's default ServiceAccount)
        return seen == null ? new Decoded(Map.of(), Map.of(), "", matcher.now(), true) : seen;
    }

    /**
     * Whether the newest entry time is older than the write seen at {@code at} by more than the entries' one-second
     * precision and some clock skew: the writer left no entry.
     */
    static boolean noEntryOfTheWrite(String newest, Instant at) {
        try {
            return !newest.isEmpty() && Instant.parse(newest).isBefore(at.minus(NO_ENTRY_MARGIN));
        } catch (java.time.format.DateTimeParseException e) {
            return false;
        }
    }

    static final java.time.Duration NO_ENTRY_MARGIN = java.time.Duration.ofSeconds(3);

    /** The newest time among the entries {@link Decoded#all} lists (one per line: manager/subresource operation time fields). */
    static String newestTime(String all) {
        String newest = "";
        for (String line : all.split("\n")) {
            String[] f = line.split(" ", 4);
            if (f.length >= 3 && !f[2].equals("null") && f[2].compareTo(newest) > 0) {
                newest = f[2];
            }
        }
        return newest;
    }

    private static boolean statusChanged(HasMetadata old, HasMetadata obj) {
        return !Objects.equals(asMap(old).get("status"), asMap(obj).get("status"));
    }

    /**
     * Upstream's managedFields entries of one object version by subresource, the newest time of every other
     * manager's entries by subresource, all entries as one string, when the version was decoded, and whether it had
     * no managedFields at all.
     */
    private record Decoded(Map<String, String> entries, Map<String, String> othersLatest, String all, Instant at,
            boolean noManager) {
    }

    private static String uid(HasMetadata obj) {
        return obj.getMetadata().getUid();
    }

    private static String ns(ObjectMeta m) {
        return m.getNamespace() == null ? "" : m.getNamespace();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(HasMetadata obj) {
        return Json.api().convertValue(obj, Map.class);
    }
}
