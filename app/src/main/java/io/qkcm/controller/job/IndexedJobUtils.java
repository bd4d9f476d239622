package io.qkcm.controller.job;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.qkcm.controller.ActivePods;

/** Upstream's indexed_job_utils.go: completion indexes of Indexed Jobs and backoff per index. */
public final class IndexedJobUtils {

    public static final String COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index";
    public static final String INDEX_FAILURE_COUNT_ANNOTATION = "batch.kubernetes.io/job-index-failure-count";
    public static final String INDEX_IGNORED_FAILURE_COUNT_ANNOTATION = "batch.kubernetes.io/job-index-ignored-failure-count";
    public static final String COMPLETION_INDEX_ENV_NAME = "JOB_COMPLETION_INDEX";
    public static final int UNKNOWN_COMPLETION_INDEX = -1;
    /** apiserver's names.MaxGeneratedNameLength. */
    static final int MAX_GENERATED_NAME_LENGTH = 63 - 5;

    private static final Logger LOG = Logger.getLogger(IndexedJobUtils.class);

    /** Upstream's byCompletionIndex. */
    static final Comparator<Pod> BY_COMPLETION_INDEX = Comparator.comparingInt(p -> getCompletionIndex(p));

    private IndexedJobUtils() {
    }

    public static boolean isIndexedJob(Job job) {
        return "Indexed".equals(job.getSpec().getCompletionMode());
    }

    static boolean hasBackoffLimitPerIndex(Job job, JobFeatures features) {
        return features.backoffLimitPerIndex() && job.getSpec().getBackoffLimitPerIndex() != null;
    }

    static int completions(Job job) {
        return job.getSpec().getCompletions();
    }

    /** Upstream's calculateSucceededIndexes: the previous intervals and those with the new successes. */
    static OrderedIntervals[] calculateSucceededIndexes(Job job, List<Pod> pods) {
        int completions = completions(job);
        OrderedIntervals prev = OrderedIntervals.parse(job.getStatus().getCompletedIndexes(), completions);
        TreeSet<Integer> newSucceeded = new TreeSet<>();
        for (Pod p : pods) {
            int ix = getCompletionIndex(p);
            if ("Succeeded".equals(phase(p)) && ix != UNKNOWN_COMPLETION_INDEX && ix < completions
                    && TrackingUtils.hasJobTrackingFinalizer(p)) {
                newSucceeded.add(ix);
            }
        }
        return new OrderedIntervals[] { prev, prev.withOrderedIndexes(newSucceeded) };
    }

    /** Upstream's calculateFailedIndexes. */
    static OrderedIntervals calculateFailedIndexes(Job job, List<Pod> pods, JobFeatures features) {
        int completions = completions(job);
        OrderedIntervals prev = job.getStatus().getFailedIndexes() == null ? OrderedIntervals.EMPTY
                : OrderedIntervals.parse(job.getStatus().getFailedIndexes(), completions);
        TreeSet<Integer> newFailed = new TreeSet<>();
        for (Pod p : pods) {
            int ix = getCompletionIndex(p);
            if (ix != UNKNOWN_COMPLETION_INDEX && ix < completions && TrackingUtils.hasJobTrackingFinalizer(p)
                    && isIndexFailed(job, p, features)) {
                newFailed.add(ix);
            }
        }
        return prev.withOrderedIndexes(newFailed);
    }

    static boolean isIndexFailed(Job job, Pod pod, JobFeatures features) {
        boolean counted = false;
        if (JobPredicates.isPodFailed(pod, job, features)) {
            if (job.getSpec().getPodFailurePolicy() != null) {
                PodFailurePolicies.Match m = PodFailurePolicies.match(job.getSpec().getPodFailurePolicy(), pod,
                        features.backoffLimitPerIndex());
                if (PodFailurePolicies.FAIL_INDEX.equals(m.action())) {
                    return true;
                }
                counted = m.countFailed();
            } else {
                counted = true;
            }
        }
        return counted && getIndexFailureCount(pod) >= job.getSpec().getBackoffLimitPerIndex();
    }

    /** Upstream's firstPendingIndexes: the lowest {@code count} indexes neither done, failed nor running. */
    static List<Integer> firstPendingIndexes(SyncJobCtx ctx, int count, int completions, JobFeatures features) {
        if (count == 0) {
            return List.of();
        }
        List<Integer> result = new ArrayList<>(count);
        OrderedIntervals nonPending = ctx.succeededIndexes.withOrderedIndexes(getIndexes(ctx.activePods));
        if (JobPredicates.onlyReplaceFailedPods(ctx.job, features)) {
            nonPending = nonPending.withOrderedIndexes(getIndexes(ActivePods.filterTerminatingPods(ctx.pods)));
        }
        if (ctx.failedIndexes != null) {
            nonPending = nonPending.merge(ctx.failedIndexes);
        }
        int candidate = 0;
        for (OrderedIntervals.Interval iv : nonPending.intervals()) {
            for (; candidate < completions && result.size() < count && candidate < iv.first(); candidate++) {
                result.add(candidate);
            }
            if (candidate < iv.last() + 1) {
                candidate = iv.last() + 1;
            }
        }
        for (; candidate < completions && result.size() < count; candidate++) {
            result.add(candidate);
        }
        return result;
    }

    /** The completion indexes of the pods, ascending. */
    static TreeSet<Integer> getIndexes(List<Pod> pods) {
        TreeSet<Integer> result = new TreeSet<>();
        for (Pod p : pods) {
            int ix = getCompletionIndex(p);
            if (ix != UNKNOWN_COMPLETION_INDEX) {
                result.add(ix);
            }
        }
        return result;
    }

    /**
     * Upstream's appendDuplicatedIndexPodsForRemoval: pods without a valid index, or beyond
     * completions, and all but the most preferred to keep of pods sharing an index go to {@code rm};
     * the rest to {@code left}.
     */
    static void appendDuplicatedIndexPodsForRemoval(List<Pod> rm, List<Pod> left, List<Pod> input, int completions) {
        List<Pod> pods = new ArrayList<>(input);
        pods.sort(BY_COMPLETION_INDEX);
        int lastIndex = UNKNOWN_COMPLETION_INDEX;
        int firstRepeatPos = 0;
        int countLooped = 0;
        for (int i = 0; i < pods.size(); i++) {
            int ix = getCompletionIndex(pods.get(i));
            if (ix >= completions) {
                rm.addAll(pods.subList(i, pods.size()));
                break;
            }
            if (ix != lastIndex) {
                appendPodsWithSameIndex(rm, left, pods.subList(firstRepeatPos, i), lastIndex);
                firstRepeatPos = i;
                lastIndex = ix;
            }
            countLooped++;
        }
        appendPodsWithSameIndex(rm, left, pods.subList(firstRepeatPos, countLooped), lastIndex);
    }

    private static void appendPodsWithSameIndex(List<Pod> rm, List<Pod> left, List<Pod> pods, int ix) {
        if (ix == UNKNOWN_COMPLETION_INDEX) {
            rm.addAll(pods);
            return;
        }
        if (pods.size() == 1) {
            left.add(pods.get(0));
            return;
        }
        if (pods.isEmpty()) {
            return;
        }
        List<Pod> sorted = new ArrayList<>(pods);
        ActivePods.sort(sorted, ActivePods.DELETION_ORDER);
        rm.addAll(sorted.subList(0, sorted.size() - 1));
        left.add(sorted.get(sorted.size() - 1));
    }

    /**
     * Upstream's getPodsWithDelayedDeletionPerIndex: per index with no success, failure or active pod,
     * the last failed pod, whose finalizer stays until its replacement carries the failure count.
     */
    static Map<Integer, Pod> getPodsWithDelayedDeletionPerIndex(SyncJobCtx ctx, JobFeatures features) {
        TreeSet<Integer> activeIndexes = getIndexes(ctx.activePods);
        Map<Integer, Pod> result = new HashMap<>();
        int completions = completions(ctx.job);
        for (Pod p : JobPredicates.getValidPodsWithFilter(ctx, java.util.Set.of(), pod -> true)) {
            if (!JobPredicates.isPodFailed(p, ctx.job, features)) {
                continue;
            }
            int ix = getCompletionIndex(p);
            if (ix == UNKNOWN_COMPLETION_INDEX || ix >= completions) {
                continue;
            }
            if (ctx.succeededIndexes.has(ix) || (ctx.failedIndexes != null && ctx.failedIndexes.has(ix))
                    || activeIndexes.contains(ix)) {
                continue;
            }
            Pod last = result.get(ix);
            if (last != null) {
                if (getIndexAbsoluteFailureCount(last) <= getIndexAbsoluteFailureCount(p)
                        && !BackoffUtils.getFinishedTime(p).isBefore(BackoffUtils.getFinishedTime(last))) {
                    result.put(ix, p);
                }
            } else {
                result.put(ix, p);
            }
        }
        return result;
    }

    static void addIndexFailureCountAnnotation(PodTemplateSpec template, Job job, Pod podBeingReplaced,
            JobFeatures features) {
        int[] counts = getNewIndexFailureCounts(job, podBeingReplaced, features);
        annotations(template).put(INDEX_FAILURE_COUNT_ANNOTATION, Integer.toString(counts[0]));
        if (counts[1] > 0) {
            annotations(template).put(INDEX_IGNORED_FAILURE_COUNT_ANNOTATION, Integer.toString(counts[1]));
        }
    }

    /** Upstream's getNewIndexFailureCounts: {failures, ignored failures} of the replacement pod. */
    static int[] getNewIndexFailureCounts(Job job, Pod podBeingReplaced, JobFeatures features) {
        if (podBeingReplaced == null) {
            return new int[] { 0, 0 };
        }
        int failures = parseIndexFailureCountAnnotation(podBeingReplaced);
        int ignored = parseIndexFailureIgnoreCountAnnotation(podBeingReplaced);
        if (job.getSpec().getPodFailurePolicy() != null) {
            if (PodFailurePolicies.match(job.getSpec().getPodFailurePolicy(), podBeingReplaced,
                    features.backoffLimitPerIndex()).countFailed()) {
                failures++;
            } else {
                ignored++;
            }
        } else {
            failures++;
        }
        return new int[] { failures, ignored };
    }

    /** Upstream's getCompletionIndex: the annotation's non-negative value, else -1. */
    public static int getCompletionIndex(Pod pod) {
        return getCompletionIndex(pod.getMetadata().getAnnotations());
    }

    public static int getCompletionIndex(Map<String, String> annotations) {
        if (annotations == null) {
            return UNKNOWN_COMPLETION_INDEX;
        }
        String v = annotations.get(COMPLETION_INDEX_ANNOTATION);
        if (v == null) {
            return UNKNOWN_COMPLETION_INDEX;
        }
        long i;
        try {
            i = OrderedIntervals.atoi(v);
        } catch (NumberFormatException e) {
            return UNKNOWN_COMPLETION_INDEX;
        }
        if (i < 0 || i > Integer.MAX_VALUE) {
            return i < 0 ? UNKNOWN_COMPLETION_INDEX : Integer.MAX_VALUE;
        }
        return (int) i;
    }

    static int getIndexFailureCount(Pod pod) {
        return parseIndexFailureCountAnnotation(pod);
    }

    static int getIndexAbsoluteFailureCount(Pod pod) {
        return parseIndexFailureCountAnnotation(pod) + parseIndexFailureIgnoreCountAnnotation(pod);
    }

    static int parseIndexFailureCountAnnotation(Pod pod) {
        Map<String, String> a = pod.getMetadata().getAnnotations();
        String v = a == null ? null : a.get(INDEX_FAILURE_COUNT_ANNOTATION);
        return v == null ? 0 : parseInt32(v);
    }

    static int parseIndexFailureIgnoreCountAnnotation(Pod pod) {
        Map<String, String> a = pod.getMetadata().getAnnotations();
        String v = a == null ? null : a.get(INDEX_IGNORED_FAILURE_COUNT_ANNOTATION);
        return v == null ? 0 : parseInt32(v);
    }

    static int parseInt32(String v) {
        long n;
        try {
            n = OrderedIntervals.atoi(v);
        } catch (NumberFormatException e) {
            LOG.errorf("Failed to parse the value %s", v);
            return 0;
        }
        if (n < 0 || n > Integer.MAX_VALUE) {
            LOG.infof("The value is invalid: %d", n);
            return 0;
        }
        return (int) n;
    }

    /** Adds JOB_COMPLETION_INDEX (from the pod's label or annotation) to every container. */
    static void addCompletionIndexEnvVariables(PodTemplateSpec template, JobFeatures features) {
        if (template.getSpec().getInitContainers() != null) {
            template.getSpec().getInitContainers().forEach(c -> addCompletionIndexEnvVariable(c, features));
        }
        if (template.getSpec().getContainers() != null) {
            template.getSpec().getContainers().forEach(c -> addCompletionIndexEnvVariable(c, features));
        }
    }

    private static void addCompletionIndexEnvVariable(Container container, JobFeatures features) {
        if (container.getEnv() != null) {
            for (EnvVar v : container.getEnv()) {
                if (COMPLETION_INDEX_ENV_NAME.equals(v.getName())) {
                    return;
                }
            }
        }
        String fieldPath = features.podIndexLabel()
                ? "metadata.labels['" + COMPLETION_INDEX_ANNOTATION + "']"
                : "metadata.annotations['" + COMPLETION_INDEX_ANNOTATION + "']";
        List<EnvVar> env = container.getEnv() == null ? new ArrayList<>() : new ArrayList<>(container.getEnv());
        env.add(new EnvVarBuilder().withName(COMPLETION_INDEX_ENV_NAME).withNewValueFrom().withNewFieldRef()
                .withFieldPath(fieldPath).endFieldRef().endValueFrom().build());
        container.setEnv(env);
    }

    static void addCompletionIndexAnnotation(PodTemplateSpec template, int index) {
        annotations(template).put(COMPLETION_INDEX_ANNOTATION, Integer.toString(index));
    }

    static void addCompletionIndexLabel(PodTemplateSpec template, int index) {
        ObjectMeta meta = meta(template);
        Map<String, String> labels = meta.getLabels() == null ? new LinkedHashMap<>() : new LinkedHashMap<>(meta.getLabels());
        labels.put(COMPLETION_INDEX_ANNOTATION, Integer.toString(index));
        meta.setLabels(labels);
    }

    private static ObjectMeta meta(PodTemplateSpec template) {
        if (template.getMetadata() == null) {
            template.setMetadata(new ObjectMeta());
        }
        return template.getMetadata();
    }

    private static Map<String, String> annotations(PodTemplateSpec template) {
        ObjectMeta meta = meta(template);
        if (meta.getAnnotations() == null) {
            meta.setAnnotations(new LinkedHashMap<>());
        } else if (!(meta.getAnnotations() instanceof LinkedHashMap)) {
            meta.setAnnotations(new LinkedHashMap<>(meta.getAnnotations()));
        }
        return meta.getAnnotations();
    }

    /** Upstream's podGenerateNameWithIndex: {@code <job>-<index>-}, the job name cut to fit. */
    static String podGenerateNameWithIndex(String jobName, int index) {
        String appendIndex = "-" + index + "-";
        String prefix = jobName + appendIndex;
        if (prefix.length() > MAX_GENERATED_NAME_LENGTH) {
            prefix = prefix.substring(0, MAX_GENERATED_NAME_LENGTH - appendIndex.length()) + appendIndex;
        }
        return prefix;
    }

    private static String phase(Pod p) {
        return p.getStatus() == null ? null : p.getStatus().getPhase();
    }
}
