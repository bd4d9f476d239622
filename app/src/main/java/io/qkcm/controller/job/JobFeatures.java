package io.qkcm.controller.job;

import io.qkcm.runtime.options.FeatureGates;

/** The feature gates the Job controller consults (all on by default in v1.34). */
public record JobFeatures(boolean backoffLimitPerIndex, boolean podIndexLabel, boolean successPolicy,
        boolean managedBy, boolean podReplacementPolicy) {

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
}
