package io.qkcm.controller.statefulset;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.apps.ControllerRevision;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetPersistentVolumeClaimRetentionPolicy;
import io.fabric8.kubernetes.api.model.apps.StatefulSetStatus;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.PodUtil;
import io.qkcm.controller.RealPodControl;
import io.qkcm.controller.history.ControllerHistory;
import io.qkcm.controller.history.GoJson;
import io.qkcm.controller.history.GoTypedJson;

/** Upstream's stateful_set_utils.go: identities, storage, claim ownership, revisions, status helpers. */
final class StatefulSetUtils {

    static final String API_VERSION = "apps/v1";
    static final String KIND = "StatefulSet";
    /** apps/v1 StatefulSetPodNameLabel. */
    static final String POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name";
    /** apps/v1 PodIndexLabel. */
    static final String POD_INDEX_LABEL = "apps.kubernetes.io/pod-index";
    /** apps/v1 StatefulSetRevisionLabel. */
    static final String REVISION_LABEL = ControllerHistory.CONTROLLER_REVISION_HASH_LABEL;
    static final String RETAIN = "Retain";
    static final String DELETE = "Delete";
    static final String ROLLING_UPDATE = "RollingUpdate";
    static final String ON_DELETE = "OnDelete";
    static final String PARALLEL = "Parallel";

    private static final Pattern STATEFUL_POD = Pattern.compile("(.*)-([0-9]+)$");
    private static final KubernetesSerialization SERIALIZATION = io.qkcm.runtime.Json.api();

    private StatefulSetUtils() {
    }

    record ParentAndOrdinal(String parent, int ordinal) {
    }

    static ParentAndOrdinal parentNameAndOrdinal(Pod pod) {
        Matcher m = STATEFUL_POD.matcher(pod.getMetadata().getName());
        if (!m.matches()) {
            return new ParentAndOrdinal("", -1);
        }
        int ordinal = -1;
        try {
            ordinal = Integer.parseInt(m.group(2));
        } catch (NumberFormatException e) {
            // beyond int32: no ordinal, as upstream
        }
        return new ParentAndOrdinal(m.group(1), ordinal);
    }

    static String parentName(Pod pod) {
        return parentNameAndOrdinal(pod).parent();
    }

    static int ordinal(Pod pod) {
        return parentNameAndOrdinal(pod).ordinal();
    }

    static int replicas(StatefulSet set) {
        Integer r = set.getSpec().getReplicas();
        return r == null ? 1 : r;
    }

    static int startOrdinal(StatefulSet set) {
        if (set.getSpec().getOrdinals() != null && set.getSpec().getOrdinals().getStart() != null) {
            return set.getSpec().getOrdinals().getStart();
        }
        return 0;
    }

    static int endOrdinal(StatefulSet set) {
        return startOrdinal(set) + replicas(set) - 1;
    }

    static boolean podInOrdinalRange(Pod pod, StatefulSet set) {
        int ordinal = ordinal(pod);
        return ordinal >= startOrdinal(set) && ordinal <= endOrdinal(set);
    }

    static String podName(StatefulSet set, int ordinal) {
        return set.getMetadata().getName() + "-" + ordinal;
    }

    static String persistentVolumeClaimName(StatefulSet set, PersistentVolumeClaim claim, int ordinal) {
        return claim.getMetadata().getName() + "-" + set.getMetadata().getName() + "-" + ordinal;
    }

    static boolean isMemberOf(StatefulSet set, Pod pod) {
        return parentName(pod).equals(set.getMetadata().getName());
    }

    static Map<String, String> labels(HasMetadata o) {
        Map<String, String> l = o.getMetadata().getLabels();
        return l == null ? Map.of() : l;
    }

    static boolean identityMatches(StatefulSet set, Pod pod) {
        ParentAndOrdinal po = parentNameAndOrdinal(pod);
        return po.ordinal() >= 0 && set.getMetadata().getName().equals(po.parent())
                && pod.getMetadata().getName().equals(podName(set, po.ordinal()))
                && Objects.equals(pod.getMetadata().getNamespace(), set.getMetadata().getNamespace())
                && pod.getMetadata().getName().equals(labels(pod).get(POD_NAME_LABEL));
    }

    static List<PersistentVolumeClaim> claimTemplates(StatefulSet set) {
        List<PersistentVolumeClaim> t = set.getSpec().getVolumeClaimTemplates();
        return t == null ? List.of() : t;
    }

    static boolean storageMatches(StatefulSet set, Pod pod) {
        int ordinal = ordinal(pod);
        if (ordinal < 0) {
            return false;
        }
        Map<String, Volume> volumes = new LinkedHashMap<>();
        if (pod.getSpec().getVolumes() != null) {
            for (Volume v : pod.getSpec().getVolumes()) {
                volumes.put(v.getName(), v);
            }
        }
        for (PersistentVolumeClaim claim : claimTemplates(set)) {
            Volume volume = volumes.get(claim.getMetadata().getName());
            if (volume == null || volume.getPersistentVolumeClaim() == null || !Objects.equals(
                    volume.getPersistentVolumeClaim().getClaimName(), persistentVolumeClaimName(set, claim, ordinal))) {
                return false;
            }
        }
        return true;
    }

    static StatefulSetPersistentVolumeClaimRetentionPolicy retentionPolicy(StatefulSet set) {
        StatefulSetPersistentVolumeClaimRetentionPolicy p = set.getSpec().getPersistentVolumeClaimRetentionPolicy();
        if (p == null) {
            return new StatefulSetPersistentVolumeClaimRetentionPolicy(RETAIN, RETAIN);
        }
        return p;
    }

    static boolean matchesRef(OwnerReference ref, HasMetadata obj, String apiVersion, String kind) {
        return apiVersion.equals(ref.getApiVersion()) && kind.equals(ref.getKind())
                && Objects.equals(ref.getName(), obj.getMetadata().getName());
    }

    static boolean matchesSetRef(OwnerReference ref, StatefulSet set) {
        return matchesRef(ref, set, API_VERSION, KIND);
    }

    static boolean matchesPodRef(OwnerReference ref, Pod pod) {
        return matchesRef(ref, pod, "v1", "Pod");
    }

    static List<OwnerReference> ownerRefs(HasMetadata o) {
        List<OwnerReference> refs = o.getMetadata().getOwnerReferences();
        return refs == null ? List.of() : refs;
    }

    static boolean hasUnexpectedController(PersistentVolumeClaim claim, StatefulSet set, Pod pod) {
        StatefulSetPersistentVolumeClaimRetentionPolicy policy = retentionPolicy(set);
        if (RETAIN.equals(policy.getWhenScaled()) && RETAIN.equals(policy.getWhenDeleted())) {
            return false;
        }
        for (OwnerReference ref : ownerRefs(claim)) {
            if (matchesSetRef(ref, set)) {
                if (!Objects.equals(ref.getUid(), set.getMetadata().getUid())) {
                    return true;
                }
                continue;
            }
            if (matchesPodRef(ref, pod)) {
                if (!Objects.equals(ref.getUid(), pod.getMetadata().getUid())) {
                    return true;
                }
                continue;
            }
            if (Boolean.TRUE.equals(ref.getController())) {
                return true;
            }
        }
        return false;
    }

    static boolean hasNonControllerOwner(PersistentVolumeClaim claim, StatefulSet set, Pod pod) {
        for (OwnerReference ref : ownerRefs(claim)) {
            if (Objects.equals(ref.getUid(), set.getMetadata().getUid())
                    || Objects.equals(ref.getUid(), pod.getMetadata().getUid())) {
                if (!Boolean.TRUE.equals(ref.getController())) {
                    return true;
                }
            }
        }
        return false;
    }

    static boolean hasOwnerRef(HasMetadata target, HasMetadata owner) {
        String uid = owner.getMetadata().getUid();
        for (OwnerReference ref : ownerRefs(target)) {
            if (Objects.equals(ref.getUid(), uid)) {
                return true;
            }
        }
        return false;
    }

    static boolean hasStaleOwnerRef(PersistentVolumeClaim target, HasMetadata obj, String apiVersion, String kind) {
        for (OwnerReference ref : ownerRefs(target)) {
            if (matchesRef(ref, obj, apiVersion, kind)) {
                return !Objects.equals(ref.getUid(), obj.getMetadata().getUid());
            }
        }
        return false;
    }

    static boolean isClaimOwnerUpToDate(PersistentVolumeClaim claim, StatefulSet set, Pod pod) {
        if (hasStaleOwnerRef(claim, set, API_VERSION, KIND) || hasStaleOwnerRef(claim, pod, "v1", "Pod")) {
            return true;
        }
        if (hasUnexpectedController(claim, set, pod)) {
            return !(hasOwnerRef(claim, set) || hasOwnerRef(claim, pod));
        }
        if (hasNonControllerOwner(claim, set, pod)) {
            return false;
        }
        StatefulSetPersistentVolumeClaimRetentionPolicy policy = retentionPolicy(set);
        String scaled = policy.getWhenScaled();
        String deleted = policy.getWhenDeleted();
        if (RETAIN.equals(scaled) && DELETE.equals(deleted)) {
            return hasOwnerRef(claim, set) && !hasOwnerRef(claim, pod);
        } else if (DELETE.equals(scaled) && RETAIN.equals(deleted)) {
            if (hasOwnerRef(claim, set)) {
                return false;
            }
            boolean podScaledDown = !podInOrdinalRange(pod, set);
            return podScaledDown == hasOwnerRef(claim, pod);
        } else if (DELETE.equals(scaled) && DELETE.equals(deleted)) {
            boolean podScaledDown = !podInOrdinalRange(pod, set);
            if (podScaledDown == hasOwnerRef(claim, set)) {
                return false;
            }
            return podScaledDown == hasOwnerRef(claim, pod);
        }
        // Retain/Retain, or an unknown policy treated as Retain
        return !(hasOwnerRef(claim, set) || hasOwnerRef(claim, pod));
    }

    /** Sets the claim's owner references for the policy (the claim is a copy). */
    static void updateClaimOwnerRefForSetAndPod(PersistentVolumeClaim claim, StatefulSet set, Pod pod) {
        boolean unexpectedController = hasUnexpectedController(claim, set, pod);
        List<OwnerReference> refs = new ArrayList<>();
        for (OwnerReference ref : ownerRefs(claim)) {
            if (!(matchesSetRef(ref, set) || matchesPodRef(ref, pod))) {
                refs.add(ref);
            }
        }
        if (!unexpectedController) {
            StatefulSetPersistentVolumeClaimRetentionPolicy policy = retentionPolicy(set);
            String scaled = policy.getWhenScaled();
            String deleted = policy.getWhenDeleted();
            if (RETAIN.equals(scaled) && DELETE.equals(deleted)) {
                addControllerRef(refs, set, API_VERSION, KIND);
            } else if (DELETE.equals(scaled) && RETAIN.equals(deleted)) {
                if (!podInOrdinalRange(pod, set)) {
                    addControllerRef(refs, pod, "v1", "Pod");
                }
            } else if (DELETE.equals(scaled) && DELETE.equals(deleted)) {
                if (!podInOrdinalRange(pod, set)) {
                    addControllerRef(refs, pod, "v1", "Pod");
                } else {
                    addControllerRef(refs, set, API_VERSION, KIND);
                }
            }
        }
        claim.getMetadata().setOwnerReferences(refs);
    }

    static void addControllerRef(List<OwnerReference> refs, HasMetadata owner, String apiVersion, String kind) {
        for (OwnerReference ref : refs) {
            if (Objects.equals(ref.getUid(), owner.getMetadata().getUid())) {
                return;
            }
        }
        refs.add(ControllerRefManager.newControllerRef(owner, apiVersion, kind));
    }

    /** The pod's claims from the set's templates, by template name, in template order. */
    static Map<String, PersistentVolumeClaim> persistentVolumeClaims(StatefulSet set, Pod pod) {
        int ordinal = ordinal(pod);
        Map<String, PersistentVolumeClaim> claims = new LinkedHashMap<>();
        for (PersistentVolumeClaim template : claimTemplates(set)) {
            PersistentVolumeClaim claim = io.qkcm.runtime.DeepCopy.of(template);
            ObjectMeta meta = template.getMetadata() == null ? new ObjectMeta()
                    : io.qkcm.runtime.DeepCopy.of(template.getMetadata());
            claim.setMetadata(meta);
            meta.setName(persistentVolumeClaimName(set, template, ordinal));
            meta.setNamespace(set.getMetadata().getNamespace());
            Map<String, String> matchLabels = set.getSpec().getSelector() == null ? null
                    : set.getSpec().getSelector().getMatchLabels();
            if (meta.getLabels() != null && !meta.getLabels().isEmpty()) {
                Map<String, String> l = new LinkedHashMap<>(meta.getLabels());
                if (matchLabels != null) {
                    l.putAll(matchLabels);
                }
                meta.setLabels(l);
            } else {
                meta.setLabels(matchLabels == null ? null : new LinkedHashMap<>(matchLabels));
            }
            claims.put(template.getMetadata().getName(), claim);
        }
        return claims;
    }

    static void updateStorage(StatefulSet set, Pod pod) {
        List<Volume> current = pod.getSpec().getVolumes() == null ? List.of() : pod.getSpec().getVolumes();
        Map<String, PersistentVolumeClaim> claims = persistentVolumeClaims(set, pod);
        List<Volume> volumes = new ArrayList<>();
        for (Map.Entry<String, PersistentVolumeClaim> e : claims.entrySet()) {
            volumes.add(new VolumeBuilder().withName(e.getKey()).withNewPersistentVolumeClaim()
                    .withClaimName(e.getValue().getMetadata().getName()).withReadOnly(false).endPersistentVolumeClaim()
                    .build());
        }
        for (Volume v : current) {
            if (!claims.containsKey(v.getName())) {
                volumes.add(v);
            }
        }
        pod.getSpec().setVolumes(volumes);
    }

    static void initIdentity(StatefulSet set, Pod pod, boolean podIndexLabel) {
        updateIdentity(set, pod, podIndexLabel);
        pod.getSpec().setHostname(pod.getMetadata().getName());
        pod.getSpec().setSubdomain(set.getSpec().getServiceName());
    }

    static void updateIdentity(StatefulSet set, Pod pod, boolean podIndexLabel) {
        int ordinal = ordinal(pod);
        pod.getMetadata().setName(podName(set, ordinal));
        pod.getMetadata().setNamespace(set.getMetadata().getNamespace());
        Map<String, String> l = pod.getMetadata().getLabels() == null ? new LinkedHashMap<>()
                : new LinkedHashMap<>(pod.getMetadata().getLabels());
        l.put(POD_NAME_LABEL, pod.getMetadata().getName());
        if (podIndexLabel) {
            l.put(POD_INDEX_LABEL, Integer.toString(ordinal));
        }
        pod.getMetadata().setLabels(l);
    }

    static boolean isRunningAndReady(Pod pod) {
        return "Running".equals(PodUtil.phase(pod)) && PodUtil.isReady(pod);
    }

    static boolean isRunningAndAvailable(Pod pod, int minReadySeconds) {
        return PodUtil.isAvailable(pod, minReadySeconds, Instant.now());
    }

    static boolean isCreated(Pod pod) {
        String phase = PodUtil.phase(pod);
        return phase != null && !phase.isEmpty();
    }

    static boolean isPending(Pod pod) {
        return "Pending".equals(PodUtil.phase(pod));
    }

    static boolean isFailed(Pod pod) {
        return "Failed".equals(PodUtil.phase(pod));
    }

    static boolean isSucceeded(Pod pod) {
        return "Succeeded".equals(PodUtil.phase(pod));
    }

    static boolean isTerminating(Pod pod) {
        return pod.getMetadata().getDeletionTimestamp() != null;
    }

    static boolean isUnavailable(Pod pod, int minReadySeconds) {
        return !isRunningAndAvailable(pod, minReadySeconds) || isTerminating(pod);
    }

    static boolean allowsBurst(StatefulSet set) {
        return PARALLEL.equals(set.getSpec().getPodManagementPolicy());
    }

    static int minReadySeconds(StatefulSet set) {
        Integer m = set.getSpec().getMinReadySeconds();
        return m == null ? 0 : m;
    }

    static void setPodRevision(Pod pod, String revision) {
        Map<String, String> l = pod.getMetadata().getLabels() == null ? new LinkedHashMap<>()
                : new LinkedHashMap<>(pod.getMetadata().getLabels());
        l.put(REVISION_LABEL, revision);
        pod.getMetadata().setLabels(l);
    }

    static String podRevision(Pod pod) {
        String r = labels(pod).get(REVISION_LABEL);
        return r == null ? "" : r;
    }

    static Pod newStatefulSetPod(StatefulSet set, int ordinal, boolean podIndexLabel) {
        Pod pod = RealPodControl.getPodFromTemplate(set.getSpec().getTemplate(), set,
                ControllerRefManager.newControllerRef(set, API_VERSION, KIND));
        pod.getMetadata().setName(podName(set, ordinal));
        initIdentity(set, pod, podIndexLabel);
        updateStorage(set, pod);
        return pod;
    }

    static String updateStrategyType(StatefulSet set) {
        if (set.getSpec().getUpdateStrategy() == null || set.getSpec().getUpdateStrategy().getType() == null) {
            return ROLLING_UPDATE;
        }
        return set.getSpec().getUpdateStrategy().getType();
    }

    /** The partition when a rollingUpdate is set (upstream dereferences it; the API server defaults it to 0). */
    static Integer partition(StatefulSet set) {
        if (set.getSpec().getUpdateStrategy() == null || set.getSpec().getUpdateStrategy().getRollingUpdate() == null) {
            return null;
        }
        Integer p = set.getSpec().getUpdateStrategy().getRollingUpdate().getPartition();
        return p == null ? 0 : p;
    }

    static int statusInt(Integer i) {
        return i == null ? 0 : i;
    }

    static Pod newVersionedStatefulSetPod(StatefulSet currentSet, StatefulSet updateSet, String currentRevision,
            String updateRevision, int ordinal, boolean podIndexLabel) {
        Integer partition = partition(currentSet);
        int currentReplicas = currentSet.getStatus() == null ? 0 : statusInt(currentSet.getStatus().getCurrentReplicas());
        // upstream's condition, with its operator precedence: (RollingUpdate && no rollingUpdate && ordinal below
        // the current replicas) || (rollingUpdate && ordinal below the partition)
        if ((ROLLING_UPDATE.equals(updateStrategyType(currentSet)) && partition == null
                && ordinal < startOrdinal(currentSet) + currentReplicas)
                || (partition != null && ordinal < startOrdinal(currentSet) + partition)) {
            Pod pod = newStatefulSetPod(currentSet, ordinal, podIndexLabel);
            setPodRevision(pod, currentRevision);
            return pod;
        }
        Pod pod = newStatefulSetPod(updateSet, ordinal, podIndexLabel);
        setPodRevision(pod, updateRevision);
        return pod;
    }

    /** Upstream's getPatch: {"spec":{"template":{...,"$patch":"replace"}}}, keys sorted, as Go marshals it. */
    static String getPatch(StatefulSet set) {
        return getPatch(set, null);
    }

    /**
     * getPatch of the set, after {@code legacyscheme.Scheme.Default(set)} when {@code defaults} is given (only
     * the template's defaults can show in the patch; see {@link PodTemplateDefaults}).
     */
    static String getPatch(StatefulSet set, PodTemplateDefaults defaults) {
        JsonNode template = GoTypedJson.podTemplateSpec(set.getSpec().getTemplate());
        if (defaults != null) {
            defaults.apply((ObjectNode) template);
        }
        ((ObjectNode) template).put("$patch", "replace");
        ObjectNode spec = JsonNodeFactory.instance.objectNode();
        spec.set("template", template);
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        root.set("spec", spec);
        return GoJson.sorted(root);
    }

    /** Upstream's newRevision: the revision of the set's template, with the set's annotations. */
    static ControllerRevision newRevision(StatefulSet set, long revision, Integer collisionCount) {
        return newRevision(set, revision, collisionCount, null);
    }

    /** newRevision of the set, after the API's defaulting of it when {@code defaults} is given. */
    static ControllerRevision newRevision(StatefulSet set, long revision, Integer collisionCount,
            PodTemplateDefaults defaults) {
        ControllerRevision cr = ControllerHistory.newControllerRevision(set, API_VERSION, KIND,
                set.getSpec().getTemplate().getMetadata() == null ? null
                        : set.getSpec().getTemplate().getMetadata().getLabels(),
                getPatch(set, defaults), revision, collisionCount);
        Map<String, String> annotations = new LinkedHashMap<>();
        if (set.getMetadata().getAnnotations() != null) {
            annotations.putAll(set.getMetadata().getAnnotations());
        }
        cr.getMetadata().setAnnotations(annotations);
        return cr;
    }

    /** Upstream's ApplyRevision: the set with the revision's template ("$patch":"replace" replaces it whole). */
    static StatefulSet applyRevision(StatefulSet set, ControllerRevision revision) {
        StatefulSet clone = io.qkcm.runtime.DeepCopy.of(set);
        JsonNode data = GoJson.parse(ControllerHistory.rawData(revision));
        JsonNode template = data.path("spec").path("template");
        if (template.isObject()) {
            ObjectNode t = ((ObjectNode) template).deepCopy();
            t.remove("$patch");
            clone.getSpec().setTemplate(SERIALIZATION.convertValue(t, PodTemplateSpec.class));
        }
        return clone;
    }

    static long nextRevision(List<ControllerRevision> revisions) {
        if (revisions.isEmpty()) {
            return 1;
        }
        Long r = revisions.get(revisions.size() - 1).getRevision();
        return (r == null ? 0 : r) + 1;
    }

    static boolean inconsistentStatus(StatefulSet set, StatefulSetStatus status) {
        StatefulSetStatus cur = set.getStatus() == null ? new StatefulSetStatus() : set.getStatus();
        return lng(status.getObservedGeneration()) > lng(cur.getObservedGeneration())
                || statusInt(status.getReplicas()) != statusInt(cur.getReplicas())
                || statusInt(status.getCurrentReplicas()) != statusInt(cur.getCurrentReplicas())
                || statusInt(status.getReadyReplicas()) != statusInt(cur.getReadyReplicas())
                || statusInt(status.getUpdatedReplicas()) != statusInt(cur.getUpdatedReplicas())
                || !Objects.equals(str(status.getCurrentRevision()), str(cur.getCurrentRevision()))
                || statusInt(status.getAvailableReplicas()) != statusInt(cur.getAvailableReplicas())
                || !Objects.equals(str(status.getUpdateRevision()), str(cur.getUpdateRevision()));
    }

    private static long lng(Long l) {
        return l == null ? 0 : l;
    }

    private static String str(String s) {
        return s == null ? "" : s;
    }

    static void completeRollingUpdate(StatefulSet set, StatefulSetStatus status) {
        int replicas = replicas(set);
        if (ROLLING_UPDATE.equals(updateStrategyType(set)) && statusInt(status.getUpdatedReplicas()) == replicas
                && statusInt(status.getReadyReplicas()) == replicas && statusInt(status.getReplicas()) == replicas) {
            status.setCurrentReplicas(status.getUpdatedReplicas());
            status.setCurrentRevision(status.getUpdateRevision());
        }
    }

    static final Comparator<Pod> ASCENDING_ORDINAL = Comparator.comparingInt(StatefulSetUtils::ordinal);
    static final Comparator<Pod> DESCENDING_ORDINAL = ASCENDING_ORDINAL.reversed();

    /** Upstream's getStatefulSetMaxUnavailable (used only with MaxUnavailableStatefulSet). */
    static int maxUnavailable(IntOrString maxUnavailable, int replicaCount) {
        int n;
        if (maxUnavailable == null) {
            n = 1;
        } else if (maxUnavailable.getIntVal() != null) {
            n = maxUnavailable.getIntVal();
        } else {
            String s = maxUnavailable.getStrVal();
            if (s == null || !s.endsWith("%")) {
                throw new IllegalArgumentException("invalid value for IntOrString: invalid type: string is not a percentage");
            }
            int pct;
            try {
                pct = Integer.parseInt(s.substring(0, s.length() - 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("invalid value \"" + s + "\": " + e.getMessage());
            }
            n = (int) Math.floor((double) pct * replicaCount / 100.0);
        }
        return Math.max(n, 1);
    }
}
