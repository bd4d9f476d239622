package io.qkcm.controller.cronjob;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.CronJobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobSpec;
import io.fabric8.kubernetes.api.model.batch.v1.JobSpecBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.GoTime;

/**
 * Upstream's TestControllerV2SyncCronJob, case by case: the table is extracted from
 * cronjob_controllerv2_test.go (v1.34.4) by hack/golden/cronschedule/synccases.py, and each case is set up
 * and checked as upstream's harness does (fake job and CronJob controls, a fixed now).
 */
class CronJobControllerSyncTableTest {

    static final long NO_DEAD = -12345;
    static final String NAMESPACE = "snazzycats";

    static Stream<Arguments> cases() throws Exception {
        try (InputStream in = CronJobControllerSyncTableTest.class.getResourceAsStream("/cronjob/upstream-sync-cases.json")) {
            JsonNode all = new ObjectMapper().readTree(in);
            List<Arguments> out = new ArrayList<>();
            all.forEach(c -> out.add(Arguments.of(c.get("name").asText(), c)));
            assertThat(out).hasSize(74);
            return out.stream();
        }
    }

    static JobSpec jobSpec() {
        return new JobSpecBuilder().withParallelism(1).withCompletions(1).withNewTemplate().withNewMetadata()
                .withLabels(Map.of("foo", "bar")).endMetadata().withNewSpec().addNewContainer().withImage("foo/bar").endContainer()
                .endSpec().endTemplate().build();
    }

    /** Upstream's cronJob(). */
    static CronJob cronJob() {
        return new CronJobBuilder().withNewMetadata().withName("mycronjob").withNamespace(NAMESPACE).withUid("1a2b3c")
                .withCreationTimestamp("2016-05-19T09:59:00Z").endMetadata()
                .withNewSpec().withSchedule("* * * * ?").withConcurrencyPolicy("Allow")
                .withNewJobTemplate().withNewMetadata().withLabels(Map.of("a", "b")).withAnnotations(Map.of("x", "y")).endMetadata()
                .withSpec(jobSpec()).endJobTemplate().endSpec()
                .withNewStatus().endStatus()
                .build();
    }

    static KubernetesClientException error(String kind) {
        return switch (kind) {
            case "AlreadyExists" -> CronJobTestSupport.apiError(409, "AlreadyExists", "job.batch \"\" already exists");
            case "BadRequest" -> CronJobTestSupport.apiError(400, "BadRequest", "request is invalid");
            case "InternalError" -> CronJobTestSupport.apiError(500, "InternalError", "Internal error occurred: quota for # of jobs reached");
            case "NamespaceTerminating" -> new KubernetesClientException(new StatusBuilder().withStatus("Failure").withCode(0)
                    .withNewDetails().addNewCause().withReason("NamespaceTerminating")
                    .withMessage("namespace default is being terminated").withField("metadata.namespace").endCause().endDetails().build());
            default -> throw new IllegalArgumentException(kind);
        };
    }

    static String time(JsonNode tc, String field, String otherwise) {
        return tc.has(field) ? tc.get(field).asText() : otherwise;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void syncCronJobAsUpstream(String name, JsonNode tc) throws Exception {
        String now = time(tc, "now", null);
        Instant nowInstant = now == null ? Instant.ofEpochSecond(-62135596800L) : Instant.parse(now); // Go's zero time
        String jobCreationTime = time(tc, "jobCreationTime", null);
        Instant jobCreation = jobCreationTime == null ? Instant.ofEpochSecond(-62135596800L) : Instant.parse(jobCreationTime);
        try (CronJobTestSupport s = new CronJobTestSupport(nowInstant)) {
            CronJob cj = cronJob();
            cj.getSpec().setConcurrencyPolicy(tc.has("concurrencyPolicy") ? tc.get("concurrencyPolicy").asText() : "");
            cj.getSpec().setSuspend(tc.path("suspend").asBoolean(false));
            cj.getSpec().setSchedule(tc.get("schedule").asText());
            cj.getSpec().setTimeZone(tc.has("timeZone") ? tc.get("timeZone").asText() : null);
            cj.getSpec().setSuccessfulJobsHistoryLimit(tc.has("successfulJobsHistoryLimit") ? tc.get("successfulJobsHistoryLimit").asInt() : null);
            long deadline = tc.path("deadline").asLong(0);
            if (deadline != NO_DEAD) {
                cj.getSpec().setStartingDeadlineSeconds(deadline);
            }
            boolean ranPreviously = tc.path("ranPreviously").asBoolean(false);
            boolean stillActive = tc.path("stillActive").asBoolean(false);
            boolean notInLister = tc.path("jobStillNotFoundInLister").asBoolean(false);

            Job job = null;
            List<Job> js = new ArrayList<>();
            CronJob realCJ = CronJobController.deepCopy(cj);
            if (ranPreviously) {
                cj.getMetadata().setCreationTimestamp(time(tc, "cronjobCreationTime", "2016-05-19T08:59:00Z"));
                cj.getStatus().setLastScheduleTime(time(tc, "lastScheduleTime", "2016-05-19T09:01:00Z"));
                job = CronJobUtils.getJobFromTemplate2(cj, jobCreation, true, s.clock.getZone());
                job.getMetadata().setUid("1234");
                job.getMetadata().setNamespace(NAMESPACE);
                ObjectReference ref = CronJobController.getRef(job);
                if (tc.path("jobPresentInCJActiveStatus").asBoolean(false)) {
                    cj.getStatus().setActive(new ArrayList<>(List.of(ref)));
                }
                if (stillActive) {
                    realCJ.getStatus().setActive(new ArrayList<>(List.of(ref)));
                } else {
                    job.setStatus(new io.fabric8.kubernetes.api.model.batch.v1.JobStatus());
                    job.getStatus().setCompletionTime(GoTime.rfc3339NanoUtc(jobCreation.plusSeconds(10)));
                    job.getStatus().setConditions(new ArrayList<>(List.of(
                            new JobConditionBuilder().withType("Complete").withStatus("True").build())));
                }
                if (!notInLister) {
                    js.add(job);
                }
            } else {
                cj.getMetadata().setCreationTimestamp(time(tc, "cronjobCreationTime", "2016-05-19T09:59:00Z"));
                assertThat(stillActive).as("test setup: this case makes no sense").isFalse();
            }

            s.jobControl.job = job;
            s.jobControl.createErr = tc.has("jobCreateError") ? error(tc.get("jobCreateError").asText()) : null;
            s.jobControl.err = tc.has("jobGetErr") ? error(tc.get("jobGetErr").asText()) : null;
            s.cjControl.cronJob = realCJ;

            CronJob cjCopy = CronJobController.deepCopy(cj);
            CronJobController.SyncResult r = s.controller.syncCronJob(cjCopy, js);

            if (tc.path("expectErr").asBoolean(false)) {
                assertThat(r.error()).as("%s: error", name).isNotNull();
            }
            if (tc.path("expectRequeueAfter").asBoolean(false)) {
                assertThat(r.requeueAfter()).as("%s: requeueAfter", name).isEqualTo(tc.path("expectedRequeueDuration").asLong(0));
            }
            assertThat(r.updateStatus()).as("%s: updateStatus", name).isEqualTo(tc.path("expectUpdateStatus").asBoolean(false));
            if (ranPreviously && !stillActive) {
                assertThat(cjCopy.getStatus().getLastSuccessfulTime()).as("%s: lastSuccessfulTime", name).isNotNull();
                assertThat(Instant.parse(cjCopy.getStatus().getLastSuccessfulTime())).as("%s: lastSuccessfulTime", name)
                        .isEqualTo(jobCreation.plusSeconds(10));
            }
            boolean expectCreate = tc.path("expectCreate").asBoolean(false);
            assertThat(s.jobControl.jobs).as("%s: jobs started", name).hasSize(expectCreate ? 1 : 0);
            for (Job created : s.jobControl.jobs) {
                OwnerReference ref = ControllerRefManager.controllerOf(created);
                assertThat(ref).as("%s: controllerRef", name).isNotNull();
                assertThat(ref.getApiVersion()).isEqualTo("batch/v1");
                assertThat(ref.getKind()).isEqualTo("CronJob");
                assertThat(ref.getName()).isEqualTo(cj.getMetadata().getName());
                assertThat(ref.getUid()).isEqualTo(cj.getMetadata().getUid());
                assertThat(ref.getController()).isTrue();
            }
            boolean expectDelete = tc.path("expectDelete").asBoolean(false);
            assertThat(s.jobControl.deleteJobName).as("%s: jobs deleted", name).hasSize(expectDelete ? 1 : 0);

            int expectedWarnings = tc.path("expectedWarnings").asInt(0);
            int expectedEvents = expectedWarnings;
            if (expectCreate) {
                expectedEvents++;
            }
            if (expectDelete) {
                expectedEvents++;
            }
            if (tc.path("expectCompleted").asBoolean(false)) {
                expectedEvents++;
            }
            if (name.equals("still active, is time, F")) {
                expectedEvents++;
            }
            assertThat(s.events).as("%s: events", name).hasSize(expectedEvents);
            assertThat(s.events.stream().filter(e -> e.startsWith("Warning")).count()).as("%s: warnings %s", name, s.events)
                    .isEqualTo(expectedWarnings);
            assertThat(cjCopy).isNotSameAs(cj);
        }
    }
}
