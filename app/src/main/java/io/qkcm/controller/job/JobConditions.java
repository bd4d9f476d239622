package io.qkcm.controller.job;

import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatus;

import static io.qkcm.controller.job.JobPredicates.nz;

/**
 * The Job conditions of upstream's job_controller.go (newCondition, newFailedConditionForFailureTarget,
 * ensureJobConditionStatus, …): their times come from the controller's clock, their types from the
 * feature gates (FailureTarget and SuccessCriteriaMet before the terminal condition).
 */
final class JobConditions {

    private final Clock clock;
    private final JobFeatures features;

    JobConditions(Clock clock, JobFeatures features) {
        this.clock = clock;
        this.features = features;
    }

    JobCondition newFailedConditionForFailureTarget(JobCondition condition) {
        return newCondition("Failed", "True", condition.getReason(), condition.getMessage());
    }

    JobCondition newCondition(String type, String status, String reason, String message) {
        String now = now();
        return new JobConditionBuilder().withType(type).withStatus(status).withLastProbeTime(now)
                .withLastTransitionTime(now).withReason(reason).withMessage(message).build();
    }

    JobCondition newFailureCondition(String reason, String message) {
        return newCondition(features.delayTerminalCondition() ? "FailureTarget" : "Failed", "True", reason, message);
    }

    JobCondition newSuccessCondition() {
        String type = features.delayTerminalCondition() ? "SuccessCriteriaMet" : "Complete";
        String reason = "";
        String message = "";
        if (features.successPolicy()) {
            reason = "CompletionsReached";
            message = "Reached expected number of succeeded pods";
        }
        return newCondition(type, "True", reason, message);
    }

    /**
     * Upstream's ensureJobConditionStatus: updates the condition of that type if it differs, or adds
     * it unless its status is False. Returns whether the conditions changed.
     */
    boolean ensureJobConditionStatus(JobStatus status, String type, String condStatus, String reason,
            String message) {
        JobCondition existing = findConditionByType(status.getConditions(), type);
        if (existing != null) {
            if (!Objects.equals(existing.getStatus(), condStatus) || !Objects.equals(nz(existing.getReason()), nz(reason))
                    || !Objects.equals(nz(existing.getMessage()), nz(message))) {
                JobCondition c = newCondition(type, condStatus, reason, message);
                List<JobCondition> list = conditions(status);
                list.set(list.indexOf(existing), c);
                return true;
            }
            return false;
        }
        if (!"False".equals(condStatus)) {
            conditions(status).add(newCondition(type, condStatus, reason, message));
            return true;
        }
        return false;
    }

    static List<JobCondition> conditions(JobStatus status) {
        if (status.getConditions() == null) {
            status.setConditions(new ArrayList<>());
        } else if (!(status.getConditions() instanceof ArrayList)) {
            status.setConditions(new ArrayList<>(status.getConditions()));
        }
        return status.getConditions();
    }

    static JobCondition findConditionByType(List<JobCondition> list, String type) {
        if (list == null) {
            return null;
        }
        for (JobCondition c : list) {
            if (type.equals(c.getType())) {
                return c;
            }
        }
        return null;
    }

    JobCondition hasSuccessCriteriaMetCondition(Job job) {
        if (features.successPolicy() || features.delayTerminalCondition()) {
            JobCondition c = findConditionByType(job.getStatus().getConditions(), "SuccessCriteriaMet");
            if (c != null && "True".equals(c.getStatus())) {
                return c;
            }
        }
        return null;
    }

    boolean isSuccessCriteriaMetCondition(JobCondition cond) {
        return (features.successPolicy() || features.delayTerminalCondition()) && cond != null
                && "SuccessCriteriaMet".equals(cond.getType()) && "True".equals(cond.getStatus());
    }

    /** A condition's time: now, to the second, as the API server would serialize it. */
    String now() {
        return clock.instant().truncatedTo(ChronoUnit.SECONDS).toString();
    }
}
