package io.qkcm.controller.history;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.util.RawValue;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apps.ControllerRevision;
import io.qkcm.controller.ControllerRefManager;

/**
 * Upstream's pkg/controller/history (controller_history.go), its package-level functions: naming,
 * hashing, building, ordering and comparing ControllerRevisions. The revision data is kept as the exact
 * JSON bytes upstream puts in {@code Data.Raw}: a revision built here holds them as a raw JSON value (sent
 * verbatim), one read from a cache is rendered back to them by {@link #rawData} (Go's escaping).
 */
public final class ControllerHistory {

    /**
     * {@code apps/v1} ControllerRevisionHashLabelKey, the label the workload controllers put on their pods
     * (StatefulSet, DaemonSet: {@code controller-revision-hash}).
     */
    public static final String CONTROLLER_REVISION_HASH_LABEL = "controller-revision-hash";
    /** Upstream's history.ControllerRevisionHashLabel: the hash label NewControllerRevision puts on a revision. */
    public static final String REVISION_HASH_LABEL = "controller.kubernetes.io/hash";

    private static final String ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789";
    private static final int FNV32_OFFSET = 0x811c9dc5;
    private static final int FNV32_PRIME = 0x01000193;

    private ControllerHistory() {
    }

    /** {@code prefix-hash}, the prefix cut to 223 bytes so the name stays within 253. */
    public static String controllerRevisionName(String prefix, String hash) {
        if (prefix.length() > 223) {
            prefix = prefix.substring(0, 223);
        }
        return prefix + "-" + hash;
    }

    /**
     * Upstream's NewControllerRevision. The revision carries {@code rawData} verbatim (sent as is), the
     * template labels plus {@link #REVISION_HASH_LABEL}, and a controller reference to {@code parent}.
     */
    public static ControllerRevision newControllerRevision(HasMetadata parent, String parentApiVersion,
            String parentKind, Map<String, String> templateLabels, String rawData, long revision,
            Integer collisionCount) {
        Map<String, String> labels = new HashMap<>();
        if (templateLabels != null) {
            labels.putAll(templateLabels);
        }
        ControllerRevision cr = new ControllerRevision();
        cr.setMetadata(new ObjectMetaBuilder().withLabels(labels)
                .withOwnerReferences(ControllerRefManager.newControllerRef(parent, parentApiVersion, parentKind))
                .build());
        cr.setData(new RawValue(rawData));
        cr.setRevision(revision);
        String hash = hashControllerRevision(cr, collisionCount);
        cr.getMetadata().setName(controllerRevisionName(parent.getMetadata().getName(), hash));
        cr.getMetadata().getLabels().put(REVISION_HASH_LABEL, hash);
        // upstream leaves the namespace to the client call (the parent's)
        cr.getMetadata().setNamespace(parent.getMetadata().getNamespace());
        return cr;
    }

    /**
     * Upstream's HashControllerRevision: FNV-32 (not 32a) over the data's bytes, then the probe's decimal
     * digits when given, printed in decimal and safe-encoded (rand.SafeEncodeString).
     */
    public static String hashControllerRevision(ControllerRevision revision, Integer probe) {
        int h = FNV32_OFFSET;
        byte[] raw = rawData(revision).getBytes(StandardCharsets.UTF_8);
        h = fnv32(h, raw);
        if (probe != null) {
            h = fnv32(h, Long.toString(probe.longValue()).getBytes(StandardCharsets.US_ASCII));
        }
        return safeEncodeString(Integer.toUnsignedString(h));
    }

    static int fnv32(int h, byte[] bytes) {
        for (byte b : bytes) {
            h *= FNV32_PRIME;
            h ^= (b & 0xff);
        }
        return h;
    }

    /** rand.SafeEncodeString: each character mapped into the vowel-free alphabet. */
    static String safeEncodeString(String s) {
        StringBuilder out = new StringBuilder(s.length());
        s.codePoints().forEach(c -> out.append(ALPHANUMS.charAt(c % ALPHANUMS.length())));
        return out.toString();
    }

    /**
     * The data as upstream's {@code Data.Raw}: the raw JSON of a revision built here, else the cached
     * data written back compact, in its order, with Go's escaping; empty when there is none.
     */
    public static String rawData(ControllerRevision revision) {
        Object data = revision.getData();
        if (data == null) {
            return "";
        }
        if (data instanceof RawValue rv) {
            Object raw = rv.rawValue();
            return raw == null ? "" : raw.toString();
        }
        return GoJson.compact(data);
    }

    /** A copy whose data is {@link #rawData} as a raw JSON value, so a write sends upstream's bytes. */
    static ControllerRevision withRawData(ControllerRevision revision) {
        ControllerRevision copy = new io.fabric8.kubernetes.api.model.apps.ControllerRevisionBuilder(revision).build();
        copy.setMetadata(io.qkcm.runtime.DeepCopy.of(revision.getMetadata()));
        copy.setData(revision.getData() == null ? null : new RawValue(rawData(revision)));
        return copy;
    }

    private static final Comparator<ControllerRevision> BY_REVISION = Comparator
            .comparingLong((ControllerRevision r) -> r.getRevision() == null ? 0L : r.getRevision())
            .thenComparing(ControllerHistory::creationTimestamp)
            .thenComparing(r -> r.getMetadata().getName() == null ? "" : r.getMetadata().getName());

    private static Instant creationTimestamp(ControllerRevision r) {
        String ts = r.getMetadata() == null ? null : r.getMetadata().getCreationTimestamp();
        if (ts == null || ts.isEmpty()) {
            return Instant.MIN; // Go's zero time sorts first
        }
        return Instant.parse(ts);
    }

    /** Upstream's SortControllerRevisions: stable, by revision, then creation time, then name. */
    public static void sortControllerRevisions(List<ControllerRevision> revisions) {
        if (revisions != null) {
            revisions.sort(BY_REVISION);
        }
    }

    /** Upstream's EqualRevision: both null, or the same data bytes. */
    public static boolean equalRevision(ControllerRevision lhs, ControllerRevision rhs) {
        if (lhs == null || rhs == null) {
            return lhs == rhs;
        }
        return rawData(lhs).equals(rawData(rhs));
    }

    /** Upstream's FindEqualRevisions: those equal to {@code needle}, in order. */
    public static List<ControllerRevision> findEqualRevisions(List<ControllerRevision> revisions,
            ControllerRevision needle) {
        List<ControllerRevision> eq = new ArrayList<>();
        if (revisions != null) {
            for (ControllerRevision r : revisions) {
                if (equalRevision(r, needle)) {
                    eq.add(r);
                }
            }
        }
        return eq;
    }
}
