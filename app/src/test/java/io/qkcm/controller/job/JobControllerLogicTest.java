package io.qkcm.controller.job;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatus;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatusBuilder;
import io.qkcm.controller.util.job.JobUtil;

/** Pure parts of job_controller.go and tracking_utils.go, from upstream's tables. */
class JobControllerLogicTest {

    // ---- TestJobBackoffForOnFailure (pastBackoffLimitOnFailure) ----

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "backoffLimit 0 should have 1 pod active,OnFailure,0,0,Running,false",
            "backoffLimit 1 with restartCount 0 should have 1 pod active,OnFailure,1,0,Running,false",
            "backoffLimit 1 with restartCount 1 and podRunning,OnFailure,1,1,Running,true",
            "backoffLimit 1 with restartCount 1 and podPending,OnFailure,1,1,Pending,true",
            "too many job failures with podRunning - single pod,OnFailure,2,2,Running,true",
            "not enough failures,OnFailure,3,2,Running,false",
            "backoffLimit 0 with restartCount 1,OnFailure,0,1,Running,true",
            "finished pods are not counted,OnFailure,1,5,Succeeded,false",
            "restartPolicy Never is not counted,Never,1,5,Running,false" })
    void pastBackoffLimitOnFailure(String name, String restartPolicy, int backoffLimit, int restarts, String phase,
            boolean want) {
        Job job = new JobBuilder().withNewSpec().withBackoffLimit(backoffLimit).withNewTemplate().withNewSpec()
                .withRestartPolicy(restartPolicy).endSpec().endTemplate().endSpec().build();
        Pod pod = new PodBuilder().withNewMetadata().withName("p").endMetadata().withNewStatus().withPhase(phase)
                .addNewContainerStatus().withName("c").withRestartCount(restarts).endContainerStatus().endStatus().build();
        assertThat(JobSyncer.pastBackoffLimitOnFailure(job, List.of(pod))).isEqualTo(want);
    }

    // ---- cleanUncountedPodsWithoutFinalizers (part of TestTrackJobStatusAndRemoveFinalizers) ----

    @Test
    void uncountedPodsWithoutFinalizersMoveIntoTheCounters() {
        JobStatus status = new JobStatusBuilder().withSucceeded(3).withFailed(1).withNewUncountedTerminatedPods()
                .withSucceeded("a", "b", "c").withFailed("d", "e").endUncountedTerminatedPods().build();
        // b and e still carry the finalizer
        assertThat(JobStatusTracker.cleanUncountedPodsWithoutFinalizers(status, Set.of("b", "e"))).isTrue();
        assertThat(status.getSucceeded()).isEqualTo(5);
        assertThat(status.getFailed()).isEqualTo(2);
        assertThat(status.getUncountedTerminatedPods().getSucceeded()).containsExactly("b");
        assertThat(status.getUncountedTerminatedPods().getFailed()).containsExactly("e");
        // nothing changes a second time
        assertThat(JobStatusTracker.cleanUncountedPodsWithoutFinalizers(status, Set.of("b", "e"))).isFalse();
        assertThat(status.getSucceeded()).isEqualTo(5);
    }

    // ---- isPodFailed / onlyReplaceFailedPods ----

    @Test
    void deletedPodsCountAsFailedUnlessOnlyFailedPodsAreReplaced() {
        Pod deleting = new PodBuilder().withNewMetadata().withName("p").withDeletionTimestamp("2024-01-01T00:00:00Z")
                .endMetadata().withNewStatus().withPhase("Running").endStatus().build();
        Job job = new JobBuilder().withNewSpec().endSpec().build();
        assertThat(JobPredicates.isPodFailed(deleting, job, JobFeatures.DEFAULTS)).isTrue();
        job.getSpec().setPodReplacementPolicy("Failed");
        assertThat(JobPredicates.isPodFailed(deleting, job, JobFeatures.DEFAULTS)).isFalse();
        job.getSpec().setPodReplacementPolicy("TerminatingOrFailed");
        job.getSpec().setPodFailurePolicy(new io.fabric8.kubernetes.api.model.batch.v1.PodFailurePolicy(List.of()));
        assertThat(JobPredicates.isPodFailed(deleting, job, JobFeatures.DEFAULTS)).isFalse();
        Pod succeededDeleting = new PodBuilder(deleting).editStatus().withPhase("Succeeded").endStatus().build();
        assertThat(JobPredicates.isPodFailed(succeededDeleting, new JobBuilder().withNewSpec().endSpec().build(),
                JobFeatures.DEFAULTS)).isFalse();
    }

    // ---- TestUIDTrackingExpectations ----

    @Test
    void finalizerRemovalExpectations() {
        TrackingUtils.UidTrackingExpectations exp = new TrackingUtils.UidTrackingExpectations();
        exp.expectFinalizersRemoved("ns/a", List.of("u1", "u2"));
        exp.expectFinalizersRemoved("ns/a", List.of("u3"));
        exp.expectFinalizersRemoved("ns/b", List.of("u1"));
        assertThat(exp.getExpectedUIDs("ns/a")).containsExactlyInAnyOrder("u1", "u2", "u3");
        exp.finalizerRemovalObserved("ns/a", "u2");
        exp.finalizerRemovalObserved("ns/a", "unknown");
        assertThat(exp.getExpectedUIDs("ns/a")).containsExactlyInAnyOrder("u1", "u3");
        assertThat(exp.getExpectedUIDs("ns/b")).containsExactly("u1");
        exp.deleteExpectations("ns/a");
        assertThat(exp.getExpectedUIDs("ns/a")).isEmpty();
        assertThat(exp.getExpectedUIDs("ns/b")).containsExactly("u1");
    }

    // ---- util: TestFinishedCondition / TestIsJobSucceeded ----

    @ParameterizedTest(name = "{0}")
    @CsvSource({ "Complete True,Complete,True,Complete,true", "Complete False,Complete,False,,false",
            "Failed True,Failed,True,Failed,false", "Suspended True,Suspended,True,,false",
            "FailureTarget True,FailureTarget,True,,false", "SuccessCriteriaMet True,SuccessCriteriaMet,True,,false" })
    void finishedCondition(String name, String type, String status, String wantType, boolean wantSucceeded) {
        Job job = new JobBuilder().withNewStatus().addNewCondition().withType(type).withStatus(status).endCondition()
                .endStatus().build();
        assertThat(JobUtil.finishedCondition(job)).isEqualTo(wantType);
        assertThat(JobUtil.isJobFinished(job)).isEqualTo(wantType != null);
        assertThat(JobUtil.isJobSucceeded(job)).isEqualTo(wantSucceeded);
    }

    // ---- activePodsForRemoval ----

    @Test
    void surplusPodsAreRemovedInRankingOrder() {
        Job job = new JobBuilder().withNewSpec().endSpec().build();
        Pod running = new PodBuilder().withNewMetadata().withName("running").withCreationTimestamp("2024-01-01T00:00:00Z")
                .endMetadata().withNewSpec().withNodeName("n").endSpec().withNewStatus().withPhase("Running").endStatus()
                .build();
        Pod pending = new PodBuilder().withNewMetadata().withName("pending").withCreationTimestamp("2024-01-01T00:00:00Z")
                .endMetadata().withNewSpec().endSpec().withNewStatus().withPhase("Pending").endStatus().build();
        assertThat(JobPodManager.activePodsForRemoval(job, List.of(running, pending), 1))
                .extracting(p -> p.getMetadata().getName()).containsExactly("pending");
        assertThat(JobPodManager.activePodsForRemoval(job, List.of(running, pending), 0)).isEmpty();
    }

    @Test
    void trackingFinalizerPatchIsUpstreams() {
        Pod pod = new PodBuilder().withNewMetadata().withName("p").withFinalizers("other", TrackingUtils.JOB_TRACKING_FINALIZER)
                .endMetadata().build();
        assertThat(TrackingUtils.removeTrackingFinalizerPatch(pod))
                .isEqualTo("{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"batch.kubernetes.io/job-tracking\"]}}");
        assertThat(TrackingUtils.removeTrackingFinalizerPatch(new PodBuilder().withNewMetadata().endMetadata().build())).isNull();
    }

    @Test
    void trackingErrorsKeepTheApiErrorsCode() {
        var conflict = new io.fabric8.kubernetes.client.KubernetesClientException("conflict", 409,
                new io.fabric8.kubernetes.api.model.StatusBuilder().withCode(409).withReason("Conflict")
                        .withMessage("the object has been modified").build());
        var inner = new JobStatusTracker.TrackingException("adding uncounted pods to status: the object has been modified", conflict);
        var outer = new JobStatusTracker.TrackingException("tracking status: x", inner);
        assertThat(outer.getCode()).isEqualTo(409);
        assertThat(outer.getCause()).isSameAs(inner);
        assertThat(io.qkcm.controller.ApiErrors.isConflict(outer)).isTrue();
    }
}
