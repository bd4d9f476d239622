package io.qkcm.controller.job;

import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.qkcm.runtime.options.FeatureGates;

/** The feature gates the Job controller consults (all on by default in v1.34). */
public record JobFeatures(boolean backoffLimitPerIndex, boolean podIndexLabel, boolean successPolicy,
        boolean managedBy, boolean podReplacementPolicy) {

    /** Upstream's batch.JobControllerName: the spec.managedBy value this controller handles. */
    public static final String JOB_CONTROLLER_NAME = "kubernetes.io/job-controller";

    public static final JobFeatures DEFAULTS = new JobFeatures(true, true, true, true, true);

    public static JobFeatures from(FeatureGates gates) {
        return new JobFeatures(gates.enabled("JobBackoffLimitPerIndex"), gates.enabled("PodIndexLabel"),
                gates.enabled("JobSuccessPolicy"), gates.enabled("JobManagedBy"),
                gates.enabled("JobPodReplacementPolicy"));
    }

    /** Upstream's delayTerminalCondition: Complete/Failed wait for the pods to terminate. */
    public boolean delayTerminalCondition() {
        return managedBy || podReplacementPolicy;
    }

    /** The spec.managedBy of a Job this controller must leave alone, or null. */
    public String managedByExternalController(Job job) {
        if (managedBy) {
            String name = job.getSpec().getManagedBy();
            if (name != null && !name.equals(JOB_CONTROLLER_NAME)) {
                return name;
            }
        }
        return null;
    }
}
