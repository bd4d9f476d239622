package io.qkcm.controller.util.job;

import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;

/**
 * Upstream's pkg/controller/job/util: whether a Job has finished (a true Complete or Failed
 * condition). In the kit, as upstream's cronjob and ttl-after-finished controllers use it too.
 */
public final class JobUtil {

    public static final String COMPLETE = "Complete";
    public static final String FAILED = "Failed";

    private JobUtil() {
    }

    /** The type of the true Complete or Failed condition, or null while the Job runs. */
    public static String finishedCondition(Job job) {
        JobCondition c = finishedJobCondition(job);
        return c == null ? null : c.getType();
    }

    /** The first true Complete or Failed condition itself (the one {@link #finishedCondition} names), or null. */
    public static JobCondition finishedJobCondition(Job job) {
        if (job.getStatus() == null || job.getStatus().getConditions() == null) {
            return null;
        }
        for (JobCondition c : job.getStatus().getConditions()) {
            if ((COMPLETE.equals(c.getType()) || FAILED.equals(c.getType())) && "True".equals(c.getStatus())) {
                return c;
            }
        }
        return null;
    }

    public static boolean isJobFinished(Job job) {
        return finishedCondition(job) != null;
    }

    public static boolean isJobSucceeded(Job job) {
        if (job.getStatus() == null || job.getStatus().getConditions() == null) {
            return false;
        }
        for (JobCondition c : job.getStatus().getConditions()) {
            if (COMPLETE.equals(c.getType()) && "True".equals(c.getStatus())) {
                return true;
            }
        }
        return false;
    }
}
