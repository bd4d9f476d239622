package io.qkcm.controller.ttlafterfinished;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;

/** Upstream's ttlafterfinished_controller_test (TestTimeLeft), plus jobFinishTime and needsCleanup. */
class TTLAfterFinishedTest {

    private static final Instant NOW = Instant.parse("2026-03-04T05:06:07Z");

    /** Upstream's newJob: a Complete and/or a Failed condition at the given times, and the TTL. */
    static Job newJob(Instant completionTime, Instant failedTime, Integer ttl) {
        List<JobCondition> conditions = new ArrayList<>();
        if (completionTime != null) {
            conditions.add(new JobConditionBuilder().withType("Complete").withStatus("True")
                    .withLastTransitionTime(completionTime.toString()).build());
        }
        if (failedTime != null) {
            conditions.add(new JobConditionBuilder().withType("Failed").withStatus("True")
                    .withLastTransitionTime(failedTime.toString()).build());
        }
        return new JobBuilder().withNewMetadata().withName("foobar").withNamespace("default").endMetadata()
                .withNewSpec().withNewSelector().withMatchLabels(Map.of("foo", "bar")).endSelector()
                .withTtlSecondsAfterFinished(ttl)
                .withNewTemplate().withNewMetadata().withLabels(Map.of("foo", "bar")).endMetadata()
                .withNewSpec().addNewContainer().withImage("foo/bar").endContainer().endSpec().endTemplate()
                .endSpec().withNewStatus().withConditions(conditions).endStatus().build();
    }

    record Case(String name, Instant completionTime, Instant failedTime, Integer ttl, String expectErr,
            Duration expectedTimeLeft, Instant expectedExpireAt) {
    }

    @Test
    void timeLeft() {
        List<Case> cases = List.of(
                new Case("Error case: Job unfinished", null, null, 100, "should not be cleaned up", null, null),
                new Case("Error case: Job completed now, no TTL", NOW, null, null, "should not be cleaned up", null, null),
                new Case("Job completed now, 0s TTL", NOW, null, 0, null, Duration.ZERO, NOW),
                new Case("Job completed now, 10s TTL", NOW, null, 10, null, Duration.ofSeconds(10), NOW.plusSeconds(10)),
                new Case("Job completed 10s ago, 15s TTL", NOW.minusSeconds(10), null, 15, null, Duration.ofSeconds(5),
                        NOW.plusSeconds(5)),
                new Case("Error case: Job failed now, no TTL", null, NOW, null, "should not be cleaned up", null, null),
                new Case("Job failed now, 0s TTL", null, NOW, 0, null, Duration.ZERO, NOW),
                new Case("Job failed now, 10s TTL", null, NOW, 10, null, Duration.ofSeconds(10), NOW.plusSeconds(10)),
                new Case("Job failed 10s ago, 15s TTL", null, NOW.minusSeconds(10), 15, null, Duration.ofSeconds(5),
                        NOW.plusSeconds(5)),
                // clock skew: finished in the future; the time left exceeds the TTL, so the Job is queued again
                new Case("Job completed 30s in the future, 10s TTL", NOW.plusSeconds(30), null, 10, null,
                        Duration.ofSeconds(40), NOW.plusSeconds(40)));
        for (Case c : cases) {
            Job job = newJob(c.completionTime(), c.failedTime(), c.ttl());
            if (c.expectErr() != null) {
                assertThatThrownBy(() -> TTLAfterFinishedController.timeLeft(job, NOW)).as(c.name())
                        .hasMessageContaining(c.expectErr());
                continue;
            }
            TTLAfterFinishedController.TimeLeft left = TTLAfterFinishedController.timeLeft(job, NOW);
            assertThat(left.remaining()).as(c.name()).isEqualTo(c.expectedTimeLeft());
            assertThat(left.expireAt()).as(c.name()).isEqualTo(c.expectedExpireAt());
        }
    }

    @Test
    void needsCleanupWantsATtlAndATrueFinishedCondition() {
        assertThat(TTLAfterFinishedController.needsCleanup(newJob(NOW, null, 0))).isTrue();
        assertThat(TTLAfterFinishedController.needsCleanup(newJob(null, NOW, 5))).isTrue();
        assertThat(TTLAfterFinishedController.needsCleanup(newJob(NOW, null, null))).isFalse();
        assertThat(TTLAfterFinishedController.needsCleanup(newJob(null, null, 5))).isFalse();
        Job falseComplete = newJob(NOW, null, 5);
        falseComplete.getStatus().getConditions().get(0).setStatus("False");
        assertThat(TTLAfterFinishedController.needsCleanup(falseComplete)).isFalse();
        Job suspended = newJob(null, null, 5);
        suspended.getStatus().setConditions(List.of(new JobConditionBuilder().withType("Suspended").withStatus("True")
                .withLastTransitionTime(NOW.toString()).build()));
        assertThat(TTLAfterFinishedController.needsCleanup(suspended)).isFalse();
        Job noStatus = newJob(null, null, 5);
        noStatus.setStatus(null);
        assertThat(TTLAfterFinishedController.needsCleanup(noStatus)).isFalse();
    }

    @Test
    void jobFinishTimeIsTheFinishedConditionsTransition() {
        assertThat(TTLAfterFinishedController.jobFinishTime(newJob(NOW, null, 0))).isEqualTo(NOW);
        assertThat(TTLAfterFinishedController.jobFinishTime(newJob(null, NOW.minusSeconds(3), 0)))
                .isEqualTo(NOW.minusSeconds(3));
        // the first true finished condition wins, as upstream iterates the conditions in order
        assertThat(TTLAfterFinishedController.jobFinishTime(newJob(NOW, NOW.plusSeconds(9), 0))).isEqualTo(NOW);
        Job zeroTime = newJob(NOW, null, 0);
        zeroTime.getStatus().getConditions().get(0).setLastTransitionTime(null);
        assertThatThrownBy(() -> TTLAfterFinishedController.jobFinishTime(zeroTime))
                .hasMessage("unable to find the time when the Job default/foobar finished");
        assertThatThrownBy(() -> TTLAfterFinishedController.jobFinishTime(newJob(null, null, 0)))
                .hasMessage("unable to find the status of the finished Job default/foobar");
    }
}
