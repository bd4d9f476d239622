package io.qkcm.controller.job;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.PodFailurePolicy;
import io.fabric8.kubernetes.api.model.batch.v1.PodFailurePolicyBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.SuccessPolicy;
import io.fabric8.kubernetes.api.model.batch.v1.SuccessPolicyBuilder;
import io.qkcm.controller.job.OrderedIntervals.Interval;

/** Upstream's tables for the Job controller's pure logic (indexed_job_utils, success and pod failure policies, backoff). */
class JobUtilsTest {

    private static OrderedIntervals iv(int... bounds) {
        List<Interval> list = new ArrayList<>();
        for (int i = 0; i < bounds.length; i += 2) {
            list.add(new Interval(bounds[i], bounds[i + 1]));
        }
        return OrderedIntervals.of(list.toArray(new Interval[0]));
    }

    // ---- TestIntervalsHaveIndex ----

    @ParameterizedTest(name = "{0}")
    @CsvSource({ "empty,4,false,''", "before all,1,false,2-4;5-7", "after all,9,false,2-4;6-8",
            "in between,5,false,2-4;6-8", "in first,2,true,2-4;6-8", "in second,8,true,2-4;6-8" })
    void intervalsHaveIndex(String name, int index, boolean want, String intervals) {
        List<Integer> bounds = new ArrayList<>();
        if (!intervals.isEmpty()) {
            for (String p : intervals.split(";")) {
                String[] ab = p.split("-");
                bounds.add(Integer.parseInt(ab[0]));
                bounds.add(Integer.parseInt(ab[1]));
            }
        }
        assertThat(iv(bounds.stream().mapToInt(Integer::intValue).toArray()).has(index)).isEqualTo(want);
    }

    // ---- parseIndexesFromString and String() (status.completedIndexes / failedIndexes) ----

    @ParameterizedTest(name = "\"{0}\" with completions {1}")
    @CsvSource(delimiter = '|', value = {
            "''|10|''",
            "0|10|0",
            "0,1|10|0,1",
            "0,1,2|10|0-2",
            "1,3-5,7|10|1,3-5,7",
            "3-5,6-8|10|3-8",
            "0-2,5|4|0-2", // intervals at or past completions are dropped
            "2-9|5|2-4", // an interval past completions is cut
            "a,1,b-3,4|10|1,4", // corrupted intervals are skipped
            "5,7|5|''" })
    void parsesAndFormatsIntervals(String in, int completions, String want) {
        assertThat(OrderedIntervals.parse(in, completions).toString()).isEqualTo(want);
    }

    @Test
    void withOrderedIndexesMergesAdjacentAndOverlapping() {
        OrderedIntervals base = iv(2, 4, 8, 8);
        assertThat(base.withOrderedIndexes(List.of(0, 1, 5, 7, 9, 12)).toString()).isEqualTo("0-5,7-9,12");
        assertThat(base.withOrderedIndexes(List.of(0, 1, 5, 7, 9, 12)).total()).isEqualTo(10);
        assertThat(base.merge(iv(3, 10)).toString()).isEqualTo("2-10");
        assertThat(OrderedIntervals.EMPTY.withOrderedIndexes(List.of()).toString()).isEmpty();
    }

    // ---- TestFirstPendingIndexes ----

    private static Pod indexPod(String index, String phase) {
        PodBuilder b = new PodBuilder().withNewMetadata().withName("p" + index).withUid("uid-" + index).endMetadata()
                .withNewStatus().withPhase(phase).endStatus();
        if (index != null) {
            b.editMetadata().withAnnotations(Map.of(IndexedJobUtils.COMPLETION_INDEX_ANNOTATION, index)).endMetadata();
        }
        return b.build();
    }

    private static Job indexedJob(int completions) {
        return new JobBuilder().withNewMetadata().withName("job").withNamespace("ns").endMetadata().withNewSpec()
                .withCompletions(completions).withParallelism(1).withCompletionMode("Indexed").endSpec().withNewStatus()
                .endStatus().build();
    }

    static Stream<Arguments> firstPendingIndexes() {
        return Stream.of(
                Arguments.of("cnt greater than completions", 5, 3, List.of(), iv(), null, List.of(0, 1, 2)),
                Arguments.of("cnt less than completions", 2, 5, List.of(), iv(), null, List.of(0, 1)),
                Arguments.of("first pods active", 3, 10, List.of(indexPod("0", "Running"), indexPod("1", "Pending")), iv(),
                        null, List.of(2, 3, 4)),
                Arguments.of("last pods active or succeeded", 6, 6, List.of(indexPod("6", "Pending")), iv(4, 5), null,
                        List.of(0, 1, 2, 3)),
                Arguments.of("mixed", 5, 20,
                        List.of(indexPod("3", "Pending"), indexPod("5", "Running"), indexPod("8", "Pending"),
                                indexPod(null, "Running"), indexPod("-3", "Running")),
                        iv(2, 4, 9, 9), null, List.of(0, 1, 6, 7, 10)),
                Arguments.of("with failed indexes", 5, 20, List.of(indexPod("3", "Pending"), indexPod("9", "Pending")),
                        iv(1, 1, 5, 5, 9, 9), iv(2, 2, 6, 7), List.of(0, 4, 8, 10, 11)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void firstPendingIndexes(String name, int cnt, int completions, List<Pod> active, OrderedIntervals succeeded,
            OrderedIntervals failed, List<Integer> want) {
        SyncJobCtx ctx = new SyncJobCtx();
        ctx.job = indexedJob(1);
        ctx.activePods = active;
        ctx.pods = active;
        ctx.succeededIndexes = succeeded;
        ctx.failedIndexes = failed;
        assertThat(IndexedJobUtils.firstPendingIndexes(ctx, cnt, completions, JobFeatures.DEFAULTS)).isEqualTo(want);
    }

    // ---- TestAppendDuplicatedIndexPodsForRemoval (shape) ----

    @Test
    void duplicatedAndInvalidIndexesAreRemovedFirst() {
        List<Pod> pods = List.of(indexPod("0", "Running"), indexPod(null, "Running"), indexPod("2", "Pending"),
                indexPod("2", "Running"), indexPod("5", "Running"), indexPod("1", "Running"));
        List<Pod> rm = new ArrayList<>();
        List<Pod> left = new ArrayList<>();
        IndexedJobUtils.appendDuplicatedIndexPodsForRemoval(rm, left, pods, 4);
        // no index, beyond completions, and the pending duplicate of index 2 (the running one is kept)
        assertThat(rm).extracting(p -> p.getMetadata().getName()).containsExactlyInAnyOrder("pnull", "p5", "p2");
        assertThat(rm).filteredOn(p -> "p2".equals(p.getMetadata().getName())).extracting(p -> p.getStatus().getPhase())
                .containsExactly("Pending");
        assertThat(left).extracting(p -> p.getMetadata().getName()).containsExactly("p0", "p1", "p2");
    }

    // ---- TestPodGenerateNameWithIndex ----

    @ParameterizedTest(name = "{0}")
    @CsvSource({ "short job name,indexed-job,1,indexed-job-1-",
            "job name exceeds MaxGeneneratedNameLength,hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooo,1,hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhh-1-",
            "job name with index suffix exceeds MaxGeneratedNameLength,hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhoo,1,hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhh-1-",
            "long index,hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooo,999999,hhhhhooooohhhhhooooohhhhhooooohhhhhooooohhhhhooooo-999999-" })
    void podGenerateNameWithIndex(String name, String jobName, int index, String want) {
        assertThat(IndexedJobUtils.podGenerateNameWithIndex(jobName, index)).isEqualTo(want);
        assertThat(want.length()).isLessThanOrEqualTo(58);
    }

    // ---- TestMatchSuccessPolicy ----

    private static SuccessPolicy rule(String indexes, Integer count) {
        return new SuccessPolicyBuilder().addNewRule().withSucceededIndexes(indexes).withSucceededCount(count).endRule()
                .build();
    }

    static Stream<Arguments> successPolicy() {
        return Stream.of(
                Arguments.of("successPolicy is null", null, iv(0, 0), null),
                Arguments.of("any rules are nothing", new SuccessPolicy(List.of()), iv(0, 0), null),
                Arguments.of("succeededIndexes is invalid format", rule("invalid-form", null), iv(0, 0), null),
                Arguments.of("succeededIndexes matched", rule("0-2", null), iv(0, 2, 4, 7), "Matched rules at index 0"),
                Arguments.of("succeededIndexes didn't match", rule("3", null), iv(0, 2), null),
                Arguments.of("succeededCount matched", rule(null, 2), iv(0, 2), "Matched rules at index 0"),
                Arguments.of("succeededCount didn't match", rule(null, 4), iv(0, 2), null),
                Arguments.of("multiple rules; one met",
                        new SuccessPolicyBuilder().addNewRule().withSucceededIndexes("9").endRule().addNewRule()
                                .withSucceededIndexes("4,6").endRule().build(),
                        iv(0, 2, 4, 7), "Matched rules at index 1"),
                Arguments.of("indexes and count; met", rule("3-6", 2), iv(0, 2, 4, 7), "Matched rules at index 0"),
                Arguments.of("indexes and count; not met", rule("3-6", 2), iv(0, 2, 6, 7), null),
                Arguments.of("no succeeded indexes", rule(null, 4), iv(), null),
                Arguments.of("rules a proper subset", rule("2-4,6-8", null), iv(1, 5, 6, 9), "Matched rules at index 0"),
                Arguments.of("rules equal", rule("2-4,6-9", null), iv(2, 4, 6, 9), "Matched rules at index 0"),
                Arguments.of("rules a subset", rule("2-4,8-12", null), iv(2, 5, 7, 15), "Matched rules at index 0"),
                Arguments.of("rules empty", rule("", null), iv(1, 3), null),
                Arguments.of("rules beyond completions", rule("10-12,14-16", null), iv(1, 3, 5, 7), null),
                Arguments.of("rules overlap at first", rule("1-3,5-7", null), iv(2, 4, 6, 8), null),
                Arguments.of("rules overlap at first, with count", rule("1-3,5-7", 4), iv(2, 4, 6, 8),
                        "Matched rules at index 0"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void successPolicy(String name, SuccessPolicy policy, OrderedIntervals succeeded, String want) {
        assertThat(SuccessPolicies.match(policy, 10, succeeded)).isEqualTo(want);
    }

    // ---- TestMatchPodFailurePolicy ----

    private static Pod failedPod(int exitCode, String conditionType, String conditionStatus) {
        PodBuilder b = new PodBuilder().withNewMetadata().withName("mypod").withNamespace("default").endMetadata()
                .withNewStatus().withPhase("Failed").endStatus();
        if (exitCode >= 0 || exitCode < -1) {
            b.editStatus().withContainerStatuses(new ContainerStatusBuilder().withName("main-container").withNewState()
                    .withNewTerminated().withExitCode(exitCode).endTerminated().endState().build()).endStatus();
        }
        if (conditionType != null) {
            b.editStatus().addNewCondition().withType(conditionType).withStatus(conditionStatus).endCondition().endStatus();
        }
        return b.build();
    }

    private static PodFailurePolicy exitCodes(Object... ruleSpecs) {
        PodFailurePolicyBuilder b = new PodFailurePolicyBuilder();
        for (int i = 0; i < ruleSpecs.length; i += 3) {
            b.addNewRule().withAction((String) ruleSpecs[i]).withNewOnExitCodes().withOperator((String) ruleSpecs[i + 1])
                    .withValues((List<Integer>) cast(ruleSpecs[i + 2])).endOnExitCodes().endRule();
        }
        return b.build();
    }

    @SuppressWarnings("unchecked")
    private static List<Integer> cast(Object o) {
        return (List<Integer>) o;
    }

    private static PodFailurePolicy onConditions(String action, String type, String status) {
        return new PodFailurePolicyBuilder().addNewRule().withAction(action).addNewOnPodCondition().withType(type)
                .withStatus(status).endOnPodCondition().endRule().build();
    }

    static Stream<Arguments> podFailurePolicy() {
        String failJobAt1 = "Container main-container for pod default/mypod failed with exit code 2 matching FailJob rule at index 1";
        return Stream.of(
                Arguments.of("unknown action skipped", exitCodes("UnknownAction", "In", List.of(1, 2), "FailJob", "In",
                        List.of(2, 3)), failedPod(2, null, null), failJobAt1, true, "FailJob"),
                Arguments.of("unknown operator skipped", exitCodes("FailJob", "UnknownOperator", List.of(1, 2), "FailJob",
                        "In", List.of(2, 3)), failedPod(2, null, null), failJobAt1, true, "FailJob"),
                Arguments.of("no policy rules", new PodFailurePolicy(List.of()), failedPod(2, null, null), null, true, null),
                Arguments.of("ignore rule matched for exit codes", exitCodes("Ignore", "In", List.of(1, 2, 3)),
                        failedPod(2, null, null), null, false, "Ignore"),
                Arguments.of("ignore rule matched on negative exit codes", exitCodes("Ignore", "In", List.of(-1, -2, -3)),
                        failedPod(-2, null, null), null, false, "Ignore"),
                Arguments.of("successful containers are skipped", exitCodes("FailJob", "NotIn", List.of(5, 6, 7)),
                        failedPod(0, null, null), null, true, null),
                Arguments.of("NotIn with 0", exitCodes("FailJob", "NotIn", List.of(0)), failedPod(1, null, null),
                        "Container main-container for pod default/mypod failed with exit code 1 matching FailJob rule at index 0",
                        true, "FailJob"),
                Arguments.of("count rule matched for exit codes", exitCodes("Count", "In", List.of(1, 2, 3)),
                        failedPod(2, null, null), null, true, "Count"),
                Arguments.of("FailIndex matched for exit codes", exitCodes("FailIndex", "In", List.of(1, 2, 3)),
                        failedPod(2, null, null), null, true, "FailIndex"),
                Arguments.of("ignore rule matched for pod conditions", onConditions("Ignore", "DisruptionTarget", "True"),
                        failedPod(-1, "DisruptionTarget", "True"), null, false, "Ignore"),
                Arguments.of("ignore rule matches by the status=False", onConditions("Ignore", "ResourceLimitExceeded", "False"),
                        failedPod(-1, "ResourceLimitExceeded", "False"), null, false, "Ignore"),
                Arguments.of("ignore rule does not match False against True",
                        onConditions("Ignore", "DisruptionTarget", "False"), failedPod(-1, "DisruptionTarget", "True"), null,
                        true, null),
                Arguments.of("job fail rule matched for pod conditions", onConditions("FailJob", "DisruptionTarget", "True"),
                        failedPod(-1, "DisruptionTarget", "True"),
                        "Pod default/mypod has condition DisruptionTarget matching FailJob rule at index 0", true, "FailJob"),
                Arguments.of("count rule matched for pod conditions", onConditions("Count", "DisruptionTarget", "True"),
                        failedPod(-1, "DisruptionTarget", "True"), null, true, "Count"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void podFailurePolicy(String name, PodFailurePolicy policy, Pod pod, String wantMessage, boolean wantCountFailed,
            String wantAction) {
        PodFailurePolicies.Match m = PodFailurePolicies.match(policy, pod, true);
        assertThat(m.failJobMessage()).isEqualTo(wantMessage);
        assertThat(m.countFailed()).isEqualTo(wantCountFailed);
        assertThat(m.action()).isEqualTo(wantAction);
    }

    @Test
    void failIndexIsSkippedWithoutTheBackoffLimitPerIndexGate() {
        PodFailurePolicies.Match m = PodFailurePolicies.match(exitCodes("FailIndex", "In", List.of(1, 2, 3)),
                failedPod(2, null, null), false);
        assertThat(m.action()).isNull();
        assertThat(m.countFailed()).isTrue();
    }

    // ---- TestGetRemainingBackoffTime ----

    private static final Instant T0 = Instant.parse("2009-11-10T23:00:00Z");

    @ParameterizedTest(name = "{0} failures at +{1}s → {2}s")
    @CsvSource({ "0,0,0", "1,0,5", "1,1,4", "1,5,0", "1,6,0", "3,0,20", "8,0,640", "9,0,700" })
    void remainingBackoffTime(int failures, int elapsed, int want) {
        BackoffUtils.BackoffRecord r = new BackoffUtils.BackoffRecord("k", failures, failures == 0 ? null : T0);
        Clock clock = Clock.fixed(T0.plusSeconds(elapsed), ZoneOffset.UTC);
        assertThat(r.remainingTime(clock, Duration.ofSeconds(5), Duration.ofSeconds(700))).isEqualTo(Duration.ofSeconds(want));
    }

    @Test
    void upstreamDefaultsDoubleFromTenSecondsToTenMinutes() {
        Clock clock = Clock.fixed(T0, ZoneOffset.UTC);
        int[] want = { 10, 20, 40, 80, 160, 320, 600, 600 };
        for (int i = 0; i < want.length; i++) {
            assertThat(BackoffUtils.remainingTimeForFailuresCount(clock, BackoffUtils.DEFAULT_POD_FAILURE_BACKOFF,
                    BackoffUtils.MAX_POD_FAILURE_BACKOFF, i + 1, T0)).isEqualTo(Duration.ofSeconds(want[i]));
        }
    }

    // ---- TestNewBackoffRecord ----

    private static Pod finishedAt(String phase, Instant t) {
        return new PodBuilder().withNewMetadata().withName("p").endMetadata().withNewStatus().withPhase(phase)
                .addNewContainerStatus().withName("c").withNewState().withNewTerminated().withFinishedAt(t.toString())
                .endTerminated().endState().endContainerStatus().endStatus().build();
    }

    @Test
    void newBackoffRecordCountsFailuresAfterTheLastSuccess() {
        BackoffUtils.BackoffStore store = new BackoffUtils.BackoffStore();
        // no pods: a new empty record
        assertThat(store.newBackoffRecord("k", List.of(), List.of())).isEqualTo(new BackoffUtils.BackoffRecord("k", 0, null));
        // failures only: added to the stored count, last failure time of the latest
        store.updateBackoffRecord(new BackoffUtils.BackoffRecord("k", 1, T0));
        assertThat(store.newBackoffRecord("k", List.of(),
                List.of(finishedAt("Failed", T0.plusSeconds(10)), finishedAt("Failed", T0.plusSeconds(5)))))
                .isEqualTo(new BackoffUtils.BackoffRecord("k", 3, T0.plusSeconds(10)));
        // a success resets; failures after it count
        assertThat(store.newBackoffRecord("k", List.of(finishedAt("Succeeded", T0.plusSeconds(7))),
                List.of(finishedAt("Failed", T0.plusSeconds(5)), finishedAt("Failed", T0.plusSeconds(9)),
                        finishedAt("Failed", T0.plusSeconds(12)))))
                .isEqualTo(new BackoffUtils.BackoffRecord("k", 2, T0.plusSeconds(12)));
        // a success alone resets
        assertThat(store.newBackoffRecord("k", List.of(finishedAt("Succeeded", T0.plusSeconds(7))), List.of()))
                .isEqualTo(new BackoffUtils.BackoffRecord("k", 0, null));
    }

    // ---- TestGetFinishedTime ----

    @Test
    void finishedTimeFallsBackFromContainersToReadyToDeletionToCreation() {
        Instant created = T0.minusSeconds(100);
        Pod base = new PodBuilder().withNewMetadata().withName("p").withCreationTimestamp(created.toString()).endMetadata()
                .withNewStatus().endStatus().build();
        assertThat(BackoffUtils.getFinishedTime(base)).isEqualTo(created);
        Pod deleted = new PodBuilder(base).editMetadata().withDeletionTimestamp(T0.toString())
                .withDeletionGracePeriodSeconds(30L).endMetadata().build();
        assertThat(BackoffUtils.getFinishedTime(deleted)).isEqualTo(T0.minusSeconds(30));
        Pod notReady = new PodBuilder(deleted).editStatus().addNewCondition().withType("Ready").withStatus("False")
                .withLastTransitionTime(T0.minusSeconds(50).toString()).endCondition().endStatus().build();
        assertThat(BackoffUtils.getFinishedTime(notReady)).isEqualTo(T0.minusSeconds(50));
        Pod terminated = new PodBuilder(notReady).editStatus().addNewContainerStatus().withName("a").withNewState()
                .withNewTerminated().withFinishedAt(T0.minusSeconds(60).toString()).endTerminated().endState()
                .endContainerStatus().addNewContainerStatus().withName("b").withNewState().withNewTerminated()
                .withFinishedAt(T0.minusSeconds(55).toString()).endTerminated().endState().endContainerStatus().endStatus()
                .build();
        assertThat(BackoffUtils.getFinishedTime(terminated)).isEqualTo(T0.minusSeconds(55));
        // one container still running: not from containers
        Pod running = new PodBuilder(terminated).editStatus().addNewContainerStatus().withName("c").withNewState()
                .withNewRunning().endRunning().endState().endContainerStatus().endStatus().build();
        assertThat(BackoffUtils.getFinishedTime(running)).isEqualTo(T0.minusSeconds(50));
    }

    // ---- index failure counts ----

    @Test
    void indexFailureCountsOfTheReplacement() {
        Job job = indexedJob(3);
        Pod replaced = new PodBuilder(indexPod("1", "Failed")).editMetadata()
                .addToAnnotations(IndexedJobUtils.INDEX_FAILURE_COUNT_ANNOTATION, "2")
                .addToAnnotations(IndexedJobUtils.INDEX_IGNORED_FAILURE_COUNT_ANNOTATION, "1").endMetadata().build();
        assertThat(IndexedJobUtils.getNewIndexFailureCounts(job, null, JobFeatures.DEFAULTS)).containsExactly(0, 0);
        assertThat(IndexedJobUtils.getNewIndexFailureCounts(job, replaced, JobFeatures.DEFAULTS)).containsExactly(3, 1);
        job.getSpec().setPodFailurePolicy(onConditions("Ignore", "DisruptionTarget", "True"));
        Pod disrupted = new PodBuilder(replaced).editStatus().addNewCondition().withType("DisruptionTarget")
                .withStatus("True").endCondition().endStatus().build();
        assertThat(IndexedJobUtils.getNewIndexFailureCounts(job, disrupted, JobFeatures.DEFAULTS)).containsExactly(2, 2);
        assertThat(IndexedJobUtils.parseInt32("-1")).isZero();
        assertThat(IndexedJobUtils.parseInt32("x")).isZero();
        assertThat(IndexedJobUtils.getCompletionIndex(Map.of(IndexedJobUtils.COMPLETION_INDEX_ANNOTATION, "-3")))
                .isEqualTo(IndexedJobUtils.UNKNOWN_COMPLETION_INDEX);
    }
}
