package io.qkcm.controller.deployment.util;

import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.fabric8.kubernetes.api.model.apps.DeploymentStatus;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetCondition;
import io.qkcm.controller.hash.ControllerHash;

/** Port of upstream pkg/controller/deployment/util/deployment_util.go (and the RS helpers of controller_utils.go). */
public final class DeploymentUtil {

    public static final String REVISION_ANNOTATION = "deployment.kubernetes.io/revision";
    public static final String REVISION_HISTORY_ANNOTATION = "deployment.kubernetes.io/revision-history";
    public static final String DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas";
    public static final String MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas";
    public static final String DEPRECATED_ROLLBACK_TO = "deprecated.deployment.rollback.to";
    public static final String LAST_APPLIED_CONFIG_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration";
    public static final String DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY = "pod-template-hash";

    public static final String ROLLBACK_REVISION_NOT_FOUND = "DeploymentRollbackRevisionNotFound";
    public static final String ROLLBACK_TEMPLATE_UNCHANGED = "DeploymentRollbackTemplateUnchanged";
    public static final String ROLLBACK_DONE = "DeploymentRollback";
    public static final String REPLICA_SET_UPDATED_REASON = "ReplicaSetUpdated";
    public static final String FAILED_RS_CREATE_REASON = "ReplicaSetCreateError";
    public static final String NEW_REPLICA_SET_REASON = "NewReplicaSetCreated";
    public static final String FOUND_NEW_RS_REASON = "FoundNewReplicaSet";
    public static final String NEW_RS_AVAILABLE_REASON = "NewReplicaSetAvailable";
    public static final String TIMED_OUT_REASON = "ProgressDeadlineExceeded";
    public static final String PAUSED_DEPLOY_REASON = "DeploymentPaused";
    public static final String RESUMED_DEPLOY_REASON = "DeploymentResumed";
    public static final String MINIMUM_REPLICAS_AVAILABLE = "MinimumReplicasAvailable";
    public static final String MINIMUM_REPLICAS_UNAVAILABLE = "MinimumReplicasUnavailable";

    public static final String PROGRESSING = "Progressing";
    public static final String AVAILABLE = "Available";
    public static final String REPLICA_FAILURE = "ReplicaFailure";

    public static final String ROLLING_UPDATE = "RollingUpdate";
    public static final String RECREATE = "Recreate";

    private static final Set<String> ANNOTATIONS_TO_SKIP = Set.of(LAST_APPLIED_CONFIG_ANNOTATION, REVISION_ANNOTATION,
            REVISION_HISTORY_ANNOTATION, DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, DEPRECATED_ROLLBACK_TO);

    private DeploymentUtil() {
    }

    // ---- time -----------------------------------------------------------------------------

    /** metav1.Now() as it will be stored: RFC 3339 with second precision. */
    public static String nowString(java.time.Clock clock) {
        return formatTime(clock.instant());
    }

    public static String formatTime(Instant t) {
        return DateTimeFormatter.ISO_INSTANT.format(t.truncatedTo(ChronoUnit.SECONDS));
    }

    public static Instant parseTime(String t) {
        return t == null || t.isEmpty() ? Instant.EPOCH : Instant.parse(t);
    }

    // ---- conditions -----------------------------------------------------------------------

    public static DeploymentCondition newCondition(java.time.Clock clock, String type, String status, String reason,
            String message) {
        String ts = nowString(clock);
        DeploymentCondition c = new DeploymentCondition();
        c.setType(type);
        c.setStatus(status);
        c.setLastUpdateTime(ts);
        c.setLastTransitionTime(ts);
        c.setReason(reason);
        c.setMessage(message);
        return c;
    }

    public static DeploymentCondition getCondition(DeploymentStatus status, String type) {
        if (status == null || status.getConditions() == null) {
            return null;
        }
        for (DeploymentCondition c : status.getConditions()) {
            if (type.equals(c.getType())) {
                return io.qkcm.runtime.DeepCopy.of(c);
            }
        }
        return null;
    }

    public static void setCondition(DeploymentStatus status, DeploymentCondition condition) {
        DeploymentCondition current = getCondition(status, condition.getType());
        if (current != null && Objects.equals(current.getStatus(), condition.getStatus())
                && Objects.equals(current.getReason(), condition.getReason())) {
            return;
        }
        if (current != null && Objects.equals(current.getStatus(), condition.getStatus())) {
            condition.setLastTransitionTime(current.getLastTransitionTime());
        }
        List<DeploymentCondition> conditions = filterOutCondition(status.getConditions(), condition.getType());
        conditions.add(condition);
        status.setConditions(conditions);
    }

    public static void removeCondition(DeploymentStatus status, String type) {
        status.setConditions(filterOutCondition(status.getConditions(), type));
    }

    private static List<DeploymentCondition> filterOutCondition(List<DeploymentCondition> conditions, String type) {
        List<DeploymentCondition> out = new ArrayList<>();
        if (conditions != null) {
            for (DeploymentCondition c : conditions) {
                if (!type.equals(c.getType())) {
                    out.add(c);
                }
            }
        }
        return out;
    }

    public static DeploymentCondition replicaSetToDeploymentCondition(ReplicaSetCondition cond) {
        DeploymentCondition c = new DeploymentCondition();
        c.setType(cond.getType());
        c.setStatus(cond.getStatus());
        c.setLastTransitionTime(cond.getLastTransitionTime());
        c.setLastUpdateTime(cond.getLastTransitionTime());
        c.setReason(cond.getReason());
        c.setMessage(cond.getMessage());
        return c;
    }

    // ---- revisions and annotations --------------------------------------------------------

    public static Map<String, String> annotations(io.fabric8.kubernetes.api.model.HasMetadata obj) {
        if (obj.getMetadata().getAnnotations() == null) {
            obj.getMetadata().setAnnotations(new LinkedHashMap<>());
        }
        return obj.getMetadata().getAnnotations();
    }

    public static boolean setDeploymentRevision(Deployment d, String revision) {
        Map<String, String> a = annotations(d);
        if (!revision.equals(a.get(REVISION_ANNOTATION))) {
            a.put(REVISION_ANNOTATION, revision);
            return true;
        }
        return false;
    }

    /** Revision of an object; 0 without the annotation; NumberFormatException if not an int64. */
    public static long revision(io.fabric8.kubernetes.api.model.HasMetadata obj) {
        Map<String, String> a = obj.getMetadata().getAnnotations();
        String v = a == null ? null : a.get(REVISION_ANNOTATION);
        if (v == null) {
            return 0;
        }
        return Long.parseLong(v);
    }

    public static long maxRevision(List<ReplicaSet> rss) {
        long max = 0;
        for (ReplicaSet rs : rss) {
            if (rs == null) {
                continue;
            }
            try {
                long v = revision(rs);
                if (v > max) {
                    max = v;
                }
            } catch (NumberFormatException e) {
                // upstream logs and skips
            }
        }
        return max;
    }

    public static long lastRevision(List<ReplicaSet> rss) {
        long max = 0;
        long secMax = 0;
        for (ReplicaSet rs : rss) {
            if (rs == null) {
                continue;
            }
            long v;
            try {
                v = revision(rs);
            } catch (NumberFormatException e) {
                continue;
            }
            if (v >= max) {
                secMax = max;
                max = v;
            } else if (v > secMax) {
                secMax = v;
            }
        }
        return secMax;
    }

    public static boolean setNewReplicaSetAnnotations(Deployment d, ReplicaSet newRS, String newRevision, boolean exists,
            int revHistoryLimitInChars) {
        boolean changed = copyDeploymentAnnotationsToReplicaSet(d, newRS);
        Map<String, String> a = annotations(newRS);
        String oldRevision = a.get(REVISION_ANNOTATION);
        boolean ok = oldRevision != null;
        long oldRevisionInt;
        try {
            oldRevisionInt = Long.parseLong(oldRevision == null ? "" : oldRevision);
        } catch (NumberFormatException e) {
            if (oldRevision != null && !oldRevision.isEmpty()) {
                return false;
            }
            oldRevisionInt = 0;
        }
        long newRevisionInt;
        try {
            newRevisionInt = Long.parseLong(newRevision);
        } catch (NumberFormatException e) {
            return false;
        }
        if (oldRevisionInt < newRevisionInt) {
            a.put(REVISION_ANNOTATION, newRevision);
            changed = true;
        }
        if (ok && oldRevisionInt < newRevisionInt) {
            String history = a.getOrDefault(REVISION_HISTORY_ANNOTATION, "");
            List<String> oldRevisions = new ArrayList<>(Arrays.asList(history.split(",", -1)));
            if (oldRevisions.get(0).isEmpty()) {
                a.put(REVISION_HISTORY_ANNOTATION, oldRevision);
            } else {
                int totalLen = history.length() + oldRevision.length() + 1;
                int start = 0;
                while (totalLen > revHistoryLimitInChars && start < oldRevisions.size()) {
                    totalLen = totalLen - oldRevisions.get(start).length() - 1;
                    start++;
                }
                if (totalLen <= revHistoryLimitInChars) {
                    List<String> kept = new ArrayList<>(oldRevisions.subList(start, oldRevisions.size()));
                    kept.add(oldRevision);
                    a.put(REVISION_HISTORY_ANNOTATION, String.join(",", kept));
                }
            }
        }
        if (!exists && setReplicasAnnotations(newRS, replicas(d), replicas(d) + maxSurge(d))) {
            changed = true;
        }
        return changed;
    }

    public static boolean skipCopyAnnotation(String key) {
        return ANNOTATIONS_TO_SKIP.contains(key);
    }

    static boolean copyDeploymentAnnotationsToReplicaSet(Deployment d, ReplicaSet rs) {
        boolean changed = false;
        Map<String, String> rsAnnotations = annotations(rs);
        Map<String, String> dAnnotations = d.getMetadata().getAnnotations();
        if (dAnnotations == null) {
            return false;
        }
        for (Map.Entry<String, String> e : dAnnotations.entrySet()) {
            String k = e.getKey();
            String v = e.getValue() == null ? "" : e.getValue();
            if (skipCopyAnnotation(k) || (rsAnnotations.containsKey(k) && v.equals(rsAnnotations.get(k)))) {
                continue;
            }
            rsAnnotations.put(k, v);
            changed = true;
        }
        return changed;
    }

    public static void setDeploymentAnnotationsTo(Deployment d, ReplicaSet rollbackToRS) {
        Map<String, String> kept = new LinkedHashMap<>();
        if (d.getMetadata().getAnnotations() != null) {
            d.getMetadata().getAnnotations().forEach((k, v) -> {
                if (skipCopyAnnotation(k)) {
                    kept.put(k, v);
                }
            });
        }
        if (rollbackToRS.getMetadata().getAnnotations() != null) {
            rollbackToRS.getMetadata().getAnnotations().forEach((k, v) -> {
                if (!skipCopyAnnotation(k)) {
                    kept.put(k, v);
                }
            });
        }
        d.getMetadata().setAnnotations(kept);
    }

    public static boolean setReplicasAnnotations(ReplicaSet rs, int desired, int max) {
        boolean updated = false;
        Map<String, String> a = annotations(rs);
        String desiredString = Integer.toString(desired);
        if (!desiredString.equals(a.get(DESIRED_REPLICAS_ANNOTATION))) {
            a.put(DESIRED_REPLICAS_ANNOTATION, desiredString);
            updated = true;
        }
        String maxString = Integer.toString(max);
        if (!maxString.equals(a.get(MAX_REPLICAS_ANNOTATION))) {
            a.put(MAX_REPLICAS_ANNOTATION, maxString);
            updated = true;
        }
        return updated;
    }

    public static boolean replicasAnnotationsNeedUpdate(ReplicaSet rs, int desired, int max) {
        Map<String, String> a = rs.getMetadata().getAnnotations();
        if (a == null) {
            return true;
        }
        return !Integer.toString(desired).equals(a.get(DESIRED_REPLICAS_ANNOTATION))
                || !Integer.toString(max).equals(a.get(MAX_REPLICAS_ANNOTATION));
    }

    /** getNonNegativeInt32FromAnnotation: null when absent or invalid. */
    public static Integer nonNegativeInt32Annotation(ReplicaSet rs, String key) {
        Map<String, String> a = rs.getMetadata().getAnnotations();
        String v = a == null ? null : a.get(key);
        if (v == null) {
            return null;
        }
        try {
            if (v.isEmpty() || v.startsWith("+") || v.startsWith("-")) {
                return null;
            }
            long l = Long.parseUnsignedLong(v);
            if (l < 0 || l > 0xFFFFFFFFL || l > Integer.MAX_VALUE) {
                return null;
            }
            return (int) l;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    // ---- strategy arithmetic --------------------------------------------------------------

    public static int replicas(Deployment d) {
        Integer r = d.getSpec().getReplicas();
        return r == null ? 1 : r;
    }

    public static int replicas(ReplicaSet rs) {
        Integer r = rs.getSpec().getReplicas();
        return r == null ? 1 : r;
    }

    public static boolean isRollingUpdate(Deployment d) {
        return d.getSpec().getStrategy() != null && ROLLING_UPDATE.equals(d.getSpec().getStrategy().getType());
    }

    public static String strategyType(Deployment d) {
        return d.getSpec().getStrategy() == null ? null : d.getSpec().getStrategy().getType();
    }

    private static IntOrString rollingMaxSurge(Deployment d) {
        var ru = d.getSpec().getStrategy().getRollingUpdate();
        return ru == null ? null : ru.getMaxSurge();
    }

    private static IntOrString rollingMaxUnavailable(Deployment d) {
        var ru = d.getSpec().getStrategy().getRollingUpdate();
        return ru == null ? null : ru.getMaxUnavailable();
    }

    /** intstr.GetScaledValueFromIntOrPercent. */
    public static int scaledValue(IntOrString v, int total, boolean roundUp) {
        if (v == null) {
            throw new IllegalArgumentException("nil value for IntOrString");
        }
        if (v.getStrVal() == null && v.getIntVal() != null) {
            return v.getIntVal();
        }
        String s = v.getStrVal();
        if (s == null) {
            return 0;
        }
        if (!s.endsWith("%")) {
            throw new IllegalArgumentException("invalid value for IntOrString: invalid type: string is not a percentage");
        }
        int pct;
        try {
            pct = Integer.parseInt(s.substring(0, s.length() - 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid value \"" + s + "\": " + e.getMessage());
        }
        double value = (double) pct * (double) total / 100;
        return (int) (roundUp ? Math.ceil(value) : Math.floor(value));
    }

    /** ResolveFenceposts: {surge, unavailable}. */
    public static int[] resolveFenceposts(IntOrString maxSurge, IntOrString maxUnavailable, int desired) {
        int surge = scaledValue(maxSurge == null ? new IntOrString(0) : maxSurge, desired, true);
        int unavailable = scaledValue(maxUnavailable == null ? new IntOrString(0) : maxUnavailable, desired, false);
        if (surge == 0 && unavailable == 0) {
            unavailable = 1;
        }
        return new int[] {surge, unavailable};
    }

    public static int maxUnavailable(Deployment d) {
        if (!isRollingUpdate(d) || replicas(d) == 0) {
            return 0;
        }
        int mu = resolveFenceposts(rollingMaxSurge(d), rollingMaxUnavailable(d), replicas(d))[1];
        return Math.min(mu, replicas(d));
    }

    public static int minAvailable(Deployment d) {
        if (!isRollingUpdate(d)) {
            return 0;
        }
        return replicas(d) - maxUnavailable(d);
    }

    public static int maxSurge(Deployment d) {
        if (!isRollingUpdate(d)) {
            return 0;
        }
        return resolveFenceposts(rollingMaxSurge(d), rollingMaxUnavailable(d), replicas(d))[0];
    }

    public static int replicaSetProportion(ReplicaSet rs, Deployment d, int toAdd, int added) {
        if (rs == null || replicas(rs) == 0 || toAdd == 0 || toAdd == added) {
            return 0;
        }
        int fraction = replicaSetFraction(rs, d);
        int allowed = toAdd - added;
        if (toAdd > 0) {
            return Math.min(fraction, allowed);
        }
        return Math.max(fraction, allowed);
    }

    static int replicaSetFraction(ReplicaSet rs, Deployment d) {
        if (replicas(d) == 0) {
            return -replicas(rs);
        }
        int deploymentMaxReplicas = replicas(d) + maxSurge(d);
        Integer before = nonNegativeInt32Annotation(rs, MAX_REPLICAS_ANNOTATION);
        int beforeScale;
        if (before == null || before == 0) {
            beforeScale = intOf(d.getStatus() == null ? null : d.getStatus().getReplicas());
            if (beforeScale == 0) {
                return 0;
            }
        } else {
            beforeScale = before;
        }
        int scaleBase = replicas(rs);
        double newRSsize = (double) (scaleBase * deploymentMaxReplicas) / (double) beforeScale;
        return roundToInt32(newRSsize) - replicas(rs);
    }

    /** Go math.Round (half away from zero) then int32. */
    static int roundToInt32(double a) {
        return (int) (Math.signum(a) * Math.floor(Math.abs(a) + 0.5));
    }

    public static int intOf(Integer i) {
        return i == null ? 0 : i;
    }

    public static long longOf(Long l) {
        return l == null ? 0 : l;
    }

    public static int newRSNewReplicas(Deployment d, List<ReplicaSet> allRSs, ReplicaSet newRS) {
        String type = strategyType(d);
        if (ROLLING_UPDATE.equals(type)) {
            int maxSurge = scaledValue(rollingMaxSurge(d), replicas(d), true);
            int current = replicaCount(allRSs);
            int maxTotal = replicas(d) + maxSurge;
            if (current >= maxTotal) {
                return replicas(newRS);
            }
            int scaleUp = maxTotal - current;
            scaleUp = Math.min(scaleUp, replicas(d) - replicas(newRS));
            return replicas(newRS) + scaleUp;
        } else if (RECREATE.equals(type)) {
            return replicas(d);
        }
        throw new IllegalArgumentException("deployment type " + type + " isn't supported");
    }

    public static boolean isSaturated(Deployment d, ReplicaSet rs) {
        if (rs == null) {
            return false;
        }
        Map<String, String> a = rs.getMetadata().getAnnotations();
        String desiredString = a == null ? null : a.get(DESIRED_REPLICAS_ANNOTATION);
        int desired;
        try {
            desired = Integer.parseInt(desiredString == null ? "" : desiredString);
        } catch (NumberFormatException e) {
            return false;
        }
        return replicas(rs) == replicas(d) && desired == replicas(d)
                && intOf(rs.getStatus() == null ? null : rs.getStatus().getAvailableReplicas()) == replicas(d);
    }

    public static boolean hasProgressDeadline(Deployment d) {
        Integer p = d.getSpec().getProgressDeadlineSeconds();
        return p != null && p != Integer.MAX_VALUE;
    }

    public static boolean hasRevisionHistoryLimit(Deployment d) {
        Integer p = d.getSpec().getRevisionHistoryLimit();
        return p != null && p != Integer.MAX_VALUE;
    }

    // ---- counts ---------------------------------------------------------------------------

    public static int replicaCount(List<ReplicaSet> rss) {
        int n = 0;
        for (ReplicaSet rs : rss) {
            if (rs != null) {
                n += replicas(rs);
            }
        }
        return n;
    }

    private static io.fabric8.kubernetes.api.model.apps.ReplicaSetStatus st(ReplicaSet rs) {
        return rs.getStatus() == null ? new io.fabric8.kubernetes.api.model.apps.ReplicaSetStatus() : rs.getStatus();
    }

    public static int actualReplicaCount(List<ReplicaSet> rss) {
        int n = 0;
        for (ReplicaSet rs : rss) {
            if (rs != null) {
                n += intOf(st(rs).getReplicas());
            }
        }
        return n;
    }

    public static int readyReplicaCount(List<ReplicaSet> rss) {
        int n = 0;
        for (ReplicaSet rs : rss) {
            if (rs != null) {
                n += intOf(st(rs).getReadyReplicas());
            }
        }
        return n;
    }

    public static int availableReplicaCount(List<ReplicaSet> rss) {
        int n = 0;
        for (ReplicaSet rs : rss) {
            if (rs != null) {
                n += intOf(st(rs).getAvailableReplicas());
            }
        }
        return n;
    }

    public static Integer terminatingReplicaCount(List<ReplicaSet> rss) {
        int n = 0;
        for (ReplicaSet rs : rss) {
            if (rs == null) {
                continue;
            }
            var s = st(rs);
            if (longOf(s.getObservedGeneration()) == 0 && s.getTerminatingReplicas() == null) {
                continue;
            }
            if (s.getTerminatingReplicas() == null) {
                return null;
            }
            n += s.getTerminatingReplicas();
        }
        return n;
    }

    public static boolean deploymentComplete(Deployment d, DeploymentStatus s) {
        return intOf(s.getUpdatedReplicas()) == replicas(d) && intOf(s.getReplicas()) == replicas(d)
                && intOf(s.getAvailableReplicas()) == replicas(d)
                && longOf(s.getObservedGeneration()) >= longOf(d.getMetadata().getGeneration());
    }

    public static boolean deploymentProgressing(Deployment d, DeploymentStatus newStatus) {
        DeploymentStatus old = d.getStatus() == null ? new DeploymentStatus() : d.getStatus();
        int oldOld = intOf(old.getReplicas()) - intOf(old.getUpdatedReplicas());
        int newOld = intOf(newStatus.getReplicas()) - intOf(newStatus.getUpdatedReplicas());
        return intOf(newStatus.getUpdatedReplicas()) > intOf(old.getUpdatedReplicas()) || newOld < oldOld
                || intOf(newStatus.getReadyReplicas()) > intOf(old.getReadyReplicas())
                || intOf(newStatus.getAvailableReplicas()) > intOf(old.getAvailableReplicas());
    }

    public static boolean deploymentTimedOut(Deployment d, DeploymentStatus newStatus, java.time.Clock clock) {
        if (!hasProgressDeadline(d)) {
            return false;
        }
        DeploymentCondition c = getCondition(newStatus, PROGRESSING);
        if (c == null) {
            return false;
        }
        if (NEW_RS_AVAILABLE_REASON.equals(c.getReason())) {
            return false;
        }
        if (TIMED_OUT_REASON.equals(c.getReason())) {
            return true;
        }
        Instant from = parseTime(c.getLastUpdateTime());
        return from.plusSeconds(d.getSpec().getProgressDeadlineSeconds()).isBefore(clock.instant());
    }

    // ---- finding ReplicaSets --------------------------------------------------------------

    /** EqualIgnoreHash: Semantic.DeepEqual of the templates without the pod-template-hash label. */
    public static boolean equalIgnoreHash(PodTemplateSpec t1, PodTemplateSpec t2) {
        return templateIdentity(t1).equals(templateIdentity(t2));
    }

    /**
     * Renderings of ReplicaSet templates by uid and generation: the API server bumps a ReplicaSet's generation
     * on every change of its spec, and the template is in the spec. Keyed by resourceVersion before, every
     * status write of the ReplicaSet controller made the next Deployment sync render the template again (5% of
     * qkcm's CPU in the scale-up, bench/results/2026-11-28-ab/profile.md).
     */
    private static final Map<String, String> RS_IDENTITIES = boundedRenderings();

    /** A synchronized map of renderings that drops its least recently used beyond 4,096. */
    private static Map<String, String> boundedRenderings() {
        return java.util.Collections.synchronizedMap(new LinkedHashMap<>(256, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
                return size() > 4096;
            }
        });
    }

    private static String templateIdentity(ReplicaSet rs) {
        String uid = rs.getMetadata().getUid();
        Long generation = rs.getMetadata().getGeneration();
        if (uid == null || generation == null) {
            return templateIdentity(rs.getSpec().getTemplate());
        }
        String key = uid + "/" + generation;
        String cached = RS_IDENTITIES.get(key);
        if (cached == null) {
            cached = templateIdentity(rs.getSpec().getTemplate());
            RS_IDENTITIES.put(key, cached);
        }
        return cached;
    }

    /**
     * The rendering of the Deployment's own template for the sync in progress on this thread: one sync
     * compares it with the ReplicaSets' 3–4 times (isScalingEvent and the rollout each find the new and
     * the old ReplicaSets), and it was rendered each time (3.6% of the CPU samples at QPS 1000,
     * bench/results/2026-11-26-copies). Renderings are kept by the Deployment's uid and generation: the
     * API server bumps the generation on every change of the spec, so one generation has one template.
     * Only the template object the sync began with is answered from it (a rollback replaces the
     * template with another object, which is rendered anew); outside a sync nothing is kept.
     */
    public static final class SyncRendering implements AutoCloseable {
        private static final ThreadLocal<SyncRendering> CURRENT = new ThreadLocal<>();
        private static final Map<String, String> BY_GENERATION = boundedRenderings();

        private final PodTemplateSpec template;
        private final String key;
        private String identity;

        private SyncRendering(PodTemplateSpec template, String key) {
            this.template = template;
            this.key = key;
        }

        /** Opens the scope of one sync of {@code d} (the sync's own copy) on this thread. */
        public static SyncRendering open(Deployment d) {
            String uid = d.getMetadata().getUid();
            Long generation = d.getMetadata().getGeneration();
            SyncRendering r = new SyncRendering(d.getSpec().getTemplate(),
                    uid == null || generation == null ? null : uid + "/" + generation);
            CURRENT.set(r);
            return r;
        }

        static String identityOf(PodTemplateSpec t) {
            SyncRendering r = CURRENT.get();
            if (r == null || t == null || r.template != t) {
                return templateIdentity(t);
            }
            if (r.identity == null) {
                String cached = r.key == null ? null : BY_GENERATION.get(r.key);
                if (cached == null) {
                    cached = templateIdentity(t);
                    if (r.key != null) {
                        BY_GENERATION.put(r.key, cached);
                    }
                }
                r.identity = cached;
            }
            return r.identity;
        }

        @Override
        public void close() {
            CURRENT.remove();
        }
    }

    private static String templateIdentity(PodTemplateSpec t) {
        return ControllerHash.spewForEqualityWithoutLabel(t, DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY);
    }

    public static final Comparator<ReplicaSet> BY_CREATION_TIMESTAMP = (a, b) -> {
        Instant ta = parseTime(a.getMetadata().getCreationTimestamp());
        Instant tb = parseTime(b.getMetadata().getCreationTimestamp());
        if (ta.equals(tb)) {
            return a.getMetadata().getName().compareTo(b.getMetadata().getName());
        }
        return ta.compareTo(tb);
    };

    public static final Comparator<ReplicaSet> BY_SIZE_OLDER = (a, b) -> {
        if (replicas(a) == replicas(b)) {
            return BY_CREATION_TIMESTAMP.compare(a, b);
        }
        return Integer.compare(replicas(b), replicas(a));
    };

    public static final Comparator<ReplicaSet> BY_SIZE_NEWER = (a, b) -> {
        if (replicas(a) == replicas(b)) {
            return BY_CREATION_TIMESTAMP.compare(b, a);
        }
        return Integer.compare(replicas(b), replicas(a));
    };

    public static final Comparator<ReplicaSet> BY_REVISION = (a, b) -> {
        long r1;
        long r2;
        try {
            r1 = revision(a);
            r2 = revision(b);
        } catch (NumberFormatException e) {
            return BY_CREATION_TIMESTAMP.compare(a, b);
        }
        if (r1 == r2) {
            return BY_CREATION_TIMESTAMP.compare(a, b);
        }
        return Long.compare(r1, r2);
    };

    /**
     * FindNewReplicaSet. Like upstream it sorts {@code rsList} in place (oldest first), which fixes the
     * order every later step of the sync sees (e.g. which ReplicaFailure condition is reported).
     */
    public static ReplicaSet findNewReplicaSet(Deployment d, List<ReplicaSet> rsList) {
        rsList.sort(BY_CREATION_TIMESTAMP);
        String want = SyncRendering.identityOf(d.getSpec().getTemplate());
        for (ReplicaSet rs : rsList) {
            if (templateIdentity(rs).equals(want)) {
                return rs;
            }
        }
        return null;
    }

    /** FindOldReplicaSets: {requiredRSs (non-zero), allOldRSs}. */
    public static List<List<ReplicaSet>> findOldReplicaSets(Deployment d, List<ReplicaSet> rsList) {
        List<ReplicaSet> required = new ArrayList<>();
        List<ReplicaSet> all = new ArrayList<>();
        ReplicaSet newRS = findNewReplicaSet(d, rsList);
        for (ReplicaSet rs : rsList) {
            if (newRS != null && Objects.equals(rs.getMetadata().getUid(), newRS.getMetadata().getUid())) {
                continue;
            }
            all.add(rs);
            if (replicas(rs) != 0) {
                required.add(rs);
            }
        }
        return List.of(required, all);
    }

    public static List<ReplicaSet> filterActive(List<ReplicaSet> rss) {
        List<ReplicaSet> out = new ArrayList<>();
        for (ReplicaSet rs : rss) {
            if (rs != null && replicas(rs) > 0) {
                out.add(rs);
            }
        }
        return out;
    }

    public static ReplicaSet findActiveOrLatest(ReplicaSet newRS, List<ReplicaSet> oldRSs) {
        if (newRS == null && oldRSs.isEmpty()) {
            return null;
        }
        oldRSs.sort(BY_CREATION_TIMESTAMP.reversed());
        List<ReplicaSet> all = new ArrayList<>(oldRSs);
        all.add(newRS);
        List<ReplicaSet> active = filterActive(all);
        switch (active.size()) {
            case 0:
                return newRS != null ? newRS : oldRSs.get(0);
            case 1:
                return active.get(0);
            default:
                return null;
        }
    }

    public static void setFromReplicaSetTemplate(Deployment d, PodTemplateSpec template) {
        PodTemplateSpec copy = io.qkcm.runtime.DeepCopy.of(template);
        if (copy.getMetadata() != null && copy.getMetadata().getLabels() != null) {
            Map<String, String> labels = new LinkedHashMap<>(copy.getMetadata().getLabels());
            labels.remove(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY);
            copy.getMetadata().setLabels(labels);
        }
        d.getSpec().setTemplate(copy);
    }

    // ---- labels ---------------------------------------------------------------------------

    public static Map<String, String> cloneAndAddLabel(Map<String, String> labels, String key, String value) {
        Map<String, String> out = new HashMap<>();
        if (labels != null) {
            out.putAll(labels);
        }
        out.put(key, value);
        return new java.util.TreeMap<>(out);
    }

    public static LabelSelector cloneSelectorAndAddLabel(LabelSelector selector, String key, String value) {
        LabelSelector copy = selector == null ? new LabelSelector() : io.qkcm.runtime.DeepCopy.of(selector);
        Map<String, String> ml = new java.util.TreeMap<>();
        if (copy.getMatchLabels() != null) {
            ml.putAll(copy.getMatchLabels());
        }
        ml.put(key, value);
        return new LabelSelectorBuilder(copy).withMatchLabels(ml).build();
    }
}
