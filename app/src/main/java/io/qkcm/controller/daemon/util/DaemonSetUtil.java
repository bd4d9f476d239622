package io.qkcm.controller.daemon.util;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.NodeAffinity;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.RollingUpdateDaemonSet;

/** Upstream's pkg/controller/daemon/util (daemonset_util.go). */
public final class DaemonSetUtil {

    /** apps.DefaultDaemonSetUniqueLabelKey (= ControllerRevisionHashLabelKey). */
    public static final String DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY = "controller-revision-hash";
    /** extensions.DaemonSetTemplateGenerationKey. */
    public static final String DAEMON_SET_TEMPLATE_GENERATION_KEY = "pod-template-generation";
    /** apps.DeprecatedTemplateGeneration annotation. */
    public static final String DEPRECATED_TEMPLATE_GENERATION = "deprecated.daemonset.template.generation";

    public static final String TAINT_NODE_NOT_READY = "node.kubernetes.io/not-ready";
    public static final String TAINT_NODE_UNREACHABLE = "node.kubernetes.io/unreachable";
    public static final String TAINT_NODE_DISK_PRESSURE = "node.kubernetes.io/disk-pressure";
    public static final String TAINT_NODE_MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure";
    public static final String TAINT_NODE_PID_PRESSURE = "node.kubernetes.io/pid-pressure";
    public static final String TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable";
    public static final String TAINT_NODE_NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable";

    /** metav1.ObjectNameField. */
    public static final String OBJECT_NAME_FIELD = "metadata.name";

    private DaemonSetUtil() {
    }

    /** Thrown where upstream returns a parse error. */
    public static final class ParseException extends Exception {
        public ParseException(String message) {
            super(message);
        }
    }

    /**
     * Upstream's GetTemplateGeneration: the deprecated annotation's value; null when absent, a
     * {@link ParseException} when it is not an int64.
     */
    public static Long getTemplateGeneration(DaemonSet ds) throws ParseException {
        Map<String, String> annotations = ds.getMetadata().getAnnotations();
        if (annotations == null || !annotations.containsKey(DEPRECATED_TEMPLATE_GENERATION)) {
            return null;
        }
        String value = annotations.get(DEPRECATED_TEMPLATE_GENERATION);
        try {
            return Long.parseLong(value == null ? "" : value);
        } catch (NumberFormatException e) {
            throw new ParseException("strconv.ParseInt: parsing \"" + value + "\": invalid syntax");
        }
    }

    /** getTemplateGeneration with upstream's "a parse error means nil". */
    public static Long templateGenerationOrNull(DaemonSet ds) {
        try {
            return getTemplateGeneration(ds);
        } catch (ParseException e) {
            return null;
        }
    }

    private static Toleration toleration(String key, String effect) {
        Toleration t = new Toleration();
        t.setKey(key);
        t.setOperator("Exists");
        t.setEffect(effect);
        return t;
    }

    /** Upstream's AddOrUpdateDaemonPodTolerations. */
    public static void addOrUpdateDaemonPodTolerations(PodSpec spec) {
        addOrUpdateTolerationInPodSpec(spec, toleration(TAINT_NODE_NOT_READY, "NoExecute"));
        addOrUpdateTolerationInPodSpec(spec, toleration(TAINT_NODE_UNREACHABLE, "NoExecute"));
        addOrUpdateTolerationInPodSpec(spec, toleration(TAINT_NODE_DISK_PRESSURE, "NoSchedule"));
        addOrUpdateTolerationInPodSpec(spec, toleration(TAINT_NODE_MEMORY_PRESSURE, "NoSchedule"));
        addOrUpdateTolerationInPodSpec(spec, toleration(TAINT_NODE_PID_PRESSURE, "NoSchedule"));
        addOrUpdateTolerationInPodSpec(spec, toleration(TAINT_NODE_UNSCHEDULABLE, "NoSchedule"));
        if (Boolean.TRUE.equals(spec.getHostNetwork())) {
            addOrUpdateTolerationInPodSpec(spec, toleration(TAINT_NODE_NETWORK_UNAVAILABLE, "NoSchedule"));
        }
    }

    private static String s(String v) {
        return v == null ? "" : v;
    }

    /** v1.Toleration.MatchToleration: same key, effect, operator and value. */
    public static boolean matchToleration(Toleration a, Toleration b) {
        return s(a.getKey()).equals(s(b.getKey())) && s(a.getEffect()).equals(s(b.getEffect()))
                && s(a.getOperator()).equals(s(b.getOperator())) && s(a.getValue()).equals(s(b.getValue()));
    }

    /** Upstream's helper.AddOrUpdateTolerationInPodSpec; true if the spec changed. */
    public static boolean addOrUpdateTolerationInPodSpec(PodSpec spec, Toleration toleration) {
        List<Toleration> podTolerations = spec.getTolerations() == null ? List.of() : spec.getTolerations();
        List<Toleration> newTolerations = new ArrayList<>();
        boolean updated = false;
        for (Toleration old : podTolerations) {
            if (matchToleration(toleration, old)) {
                // Semantic.DeepEqual: the four matched fields are equal, so only tolerationSeconds remains
                if (Objects.equals(toleration.getTolerationSeconds(), old.getTolerationSeconds())) {
                    return false;
                }
                newTolerations.add(toleration);
                updated = true;
                continue;
            }
            newTolerations.add(old);
        }
        if (!updated) {
            newTolerations.add(toleration);
        }
        spec.setTolerations(newTolerations);
        return true;
    }

    /**
     * Upstream's CreatePodTemplate: a copy of the template with the daemon tolerations, the
     * {@code pod-template-generation} label (when the generation is known) and the revision hash label.
     */
    public static PodTemplateSpec createPodTemplate(PodTemplateSpec template, Long generation, String hash) {
        PodTemplateSpec newTemplate = new PodTemplateSpecBuilder(template).build();
        if (newTemplate.getSpec() == null) {
            newTemplate.setSpec(new PodSpec());
        }
        addOrUpdateDaemonPodTolerations(newTemplate.getSpec());
        if (newTemplate.getMetadata() == null) {
            newTemplate.setMetadata(new ObjectMeta());
        }
        Map<String, String> labels = newTemplate.getMetadata().getLabels() == null ? new LinkedHashMap<>()
                : new LinkedHashMap<>(newTemplate.getMetadata().getLabels());
        if (generation != null) {
            labels.put(DAEMON_SET_TEMPLATE_GENERATION_KEY, Long.toString(generation));
        }
        if (hash != null && !hash.isEmpty()) {
            labels.put(DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY, hash);
        }
        newTemplate.getMetadata().setLabels(labels);
        return newTemplate;
    }

    /** Upstream's AllowsSurge. */
    public static boolean allowsSurge(DaemonSet ds) {
        try {
            return surgeCount(ds, 1) > 0;
        } catch (ParseException e) {
            return false;
        }
    }

    private static boolean isRollingUpdate(DaemonSet ds) {
        return ds.getSpec().getUpdateStrategy() != null
                && "RollingUpdate".equals(ds.getSpec().getUpdateStrategy().getType());
    }

    /** Upstream's SurgeCount. */
    public static int surgeCount(DaemonSet ds, int numberToSchedule) throws ParseException {
        if (!isRollingUpdate(ds)) {
            return 0;
        }
        RollingUpdateDaemonSet r = ds.getSpec().getUpdateStrategy().getRollingUpdate();
        if (r == null || r.getMaxSurge() == null) {
            return 0;
        }
        return getScaledValueFromIntOrPercent(r.getMaxSurge(), numberToSchedule, true);
    }

    /** Upstream's UnavailableCount. */
    public static int unavailableCount(DaemonSet ds, int numberToSchedule) throws ParseException {
        if (!isRollingUpdate(ds)) {
            return 0;
        }
        RollingUpdateDaemonSet r = ds.getSpec().getUpdateStrategy().getRollingUpdate();
        if (r == null) {
            return 0;
        }
        return getScaledValueFromIntOrPercent(r.getMaxUnavailable(), numberToSchedule, true);
    }

    /** intstr.GetScaledValueFromIntOrPercent. */
    public static int getScaledValueFromIntOrPercent(IntOrString intOrPercent, int total, boolean roundUp)
            throws ParseException {
        if (intOrPercent == null) {
            throw new ParseException("nil value for IntOrString");
        }
        if (intOrPercent.getIntVal() != null) {
            return intOrPercent.getIntVal();
        }
        String s = intOrPercent.getStrVal();
        if (s == null || !s.endsWith("%")) {
            throw new ParseException("invalid value for IntOrString: invalid type: string is not a percentage");
        }
        int v;
        try {
            v = Integer.parseInt(s.substring(0, s.length() - 1));
        } catch (NumberFormatException e) {
            throw new ParseException("invalid value for IntOrString: invalid value \"" + s + "\": "
                    + "strconv.Atoi: parsing \"" + s.substring(0, s.length() - 1) + "\": invalid syntax");
        }
        double value = (double) v * total / 100;
        return (int) (roundUp ? Math.ceil(value) : Math.floor(value));
    }

    /** Upstream's IsPodUpdated: the hash label or the template generation label matches. */
    public static boolean isPodUpdated(Pod pod, String hash, Long dsTemplateGeneration) {
        Map<String, String> labels = pod.getMetadata().getLabels() == null ? Map.of() : pod.getMetadata().getLabels();
        boolean templateMatches = dsTemplateGeneration != null
                && Long.toString(dsTemplateGeneration).equals(labels.get(DAEMON_SET_TEMPLATE_GENERATION_KEY));
        boolean hashMatches = hash != null && !hash.isEmpty() && hash.equals(labels.get(DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY));
        return hashMatches || templateMatches;
    }

    /**
     * Upstream's ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity becomes the one
     * term {@code metadata.name In [nodeName]} (the given affinity is modified and returned).
     */
    public static Affinity replaceDaemonSetPodNodeNameNodeAffinity(Affinity affinity, String nodeName) {
        NodeSelectorRequirement req = new NodeSelectorRequirement(OBJECT_NAME_FIELD, "In",
                new ArrayList<>(List.of(nodeName)));
        NodeSelectorTerm term = new NodeSelectorTerm();
        term.setMatchFields(new ArrayList<>(List.of(req)));
        NodeSelector nodeSelector = new NodeSelector(new ArrayList<>(List.of(term)));
        if (affinity == null) {
            Affinity a = new Affinity();
            NodeAffinity na = new NodeAffinity();
            na.setRequiredDuringSchedulingIgnoredDuringExecution(nodeSelector);
            a.setNodeAffinity(na);
            return a;
        }
        if (affinity.getNodeAffinity() == null) {
            NodeAffinity na = new NodeAffinity();
            na.setRequiredDuringSchedulingIgnoredDuringExecution(nodeSelector);
            affinity.setNodeAffinity(na);
            return affinity;
        }
        NodeAffinity na = affinity.getNodeAffinity();
        if (na.getRequiredDuringSchedulingIgnoredDuringExecution() == null) {
            na.setRequiredDuringSchedulingIgnoredDuringExecution(nodeSelector);
            return affinity;
        }
        na.getRequiredDuringSchedulingIgnoredDuringExecution().setNodeSelectorTerms(new ArrayList<>(List.of(term)));
        return affinity;
    }

    /**
     * Upstream's GetTargetNodeName: {@code spec.nodeName}, else the node named by the required
     * {@code metadata.name In [x]} node affinity term of a pending pod.
     */
    public static String getTargetNodeName(Pod pod) throws ParseException {
        String ns = pod.getMetadata().getNamespace();
        String name = pod.getMetadata().getName();
        if (pod.getSpec() != null && pod.getSpec().getNodeName() != null && !pod.getSpec().getNodeName().isEmpty()) {
            return pod.getSpec().getNodeName();
        }
        if (pod.getSpec() == null || pod.getSpec().getAffinity() == null
                || pod.getSpec().getAffinity().getNodeAffinity() == null
                || pod.getSpec().getAffinity().getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution() == null) {
            throw new ParseException("no spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution for pod "
                    + ns + "/" + name);
        }
        List<NodeSelectorTerm> terms = pod.getSpec().getAffinity().getNodeAffinity()
                .getRequiredDuringSchedulingIgnoredDuringExecution().getNodeSelectorTerms();
        if (terms == null || terms.isEmpty()) {
            throw new ParseException("no nodeSelectorTerms in requiredDuringSchedulingIgnoredDuringExecution of pod "
                    + ns + "/" + name);
        }
        for (NodeSelectorTerm term : terms) {
            if (term.getMatchFields() == null) {
                continue;
            }
            for (NodeSelectorRequirement exp : term.getMatchFields()) {
                if (OBJECT_NAME_FIELD.equals(exp.getKey()) && "In".equals(exp.getOperator())) {
                    List<String> values = exp.getValues() == null ? List.of() : exp.getValues();
                    if (values.size() != 1) {
                        throw new ParseException("the matchFields value of '" + OBJECT_NAME_FIELD
                                + "' is not unique for pod " + ns + "/" + name);
                    }
                    return values.get(0);
                }
            }
        }
        throw new ParseException("no node name found for pod " + ns + "/" + name);
    }
}
