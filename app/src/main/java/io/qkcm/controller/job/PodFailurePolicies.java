package io.qkcm.controller.job;

import java.util.List;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.batch.v1.PodFailurePolicy;
import io.fabric8.kubernetes.api.model.batch.v1.PodFailurePolicyOnExitCodesRequirement;
import io.fabric8.kubernetes.api.model.batch.v1.PodFailurePolicyOnPodConditionsPattern;
import io.fabric8.kubernetes.api.model.batch.v1.PodFailurePolicyRule;

/** Upstream's pod_failure_policy.go: which rule of {@code spec.podFailurePolicy} a failed pod matches. */
public final class PodFailurePolicies {

    public static final String FAIL_JOB = "FailJob";
    public static final String FAIL_INDEX = "FailIndex";
    public static final String IGNORE = "Ignore";
    public static final String COUNT = "Count";

    private PodFailurePolicies() {
    }

    /**
     * What matching a failed pod gives: the job failure message (FailJob only), whether the failure
     * counts towards the backoff limit, and the action of the matched rule (null when none matched).
     */
    public record Match(String failJobMessage, boolean countFailed, String action) {
        static final Match NONE = new Match(null, true, null);
    }

    /** Upstream's matchPodFailurePolicy; {@code backoffLimitPerIndexGate} is JobBackoffLimitPerIndex. */
    public static Match match(PodFailurePolicy policy, Pod failedPod, boolean backoffLimitPerIndexGate) {
        if (policy == null) {
            return Match.NONE;
        }
        List<PodFailurePolicyRule> rules = policy.getRules() == null ? List.of() : policy.getRules();
        PodStatus status = failedPod.getStatus() == null ? new PodStatus() : failedPod.getStatus();
        for (int index = 0; index < rules.size(); index++) {
            PodFailurePolicyRule rule = rules.get(index);
            if (rule.getOnExitCodes() != null) {
                ContainerStatus cs = matchOnExitCodes(status, rule.getOnExitCodes());
                if (cs != null) {
                    switch (String.valueOf(rule.getAction())) {
                        case IGNORE:
                            return new Match(null, false, IGNORE);
                        case FAIL_INDEX:
                            if (backoffLimitPerIndexGate) {
                                return new Match(null, true, FAIL_INDEX);
                            }
                            break;
                        case COUNT:
                            return new Match(null, true, COUNT);
                        case FAIL_JOB:
                            String msg = String.format("Container %s for pod %s/%s failed with exit code %d matching %s rule at index %d",
                                    cs.getName(), failedPod.getMetadata().getNamespace(), failedPod.getMetadata().getName(),
                                    cs.getState().getTerminated().getExitCode(), rule.getAction(), index);
                            return new Match(msg, true, FAIL_JOB);
                        default:
                            break;
                    }
                }
            } else if (rule.getOnPodConditions() != null) {
                PodCondition pc = matchOnPodConditions(status, rule.getOnPodConditions());
                if (pc != null) {
                    switch (String.valueOf(rule.getAction())) {
                        case IGNORE:
                            return new Match(null, false, IGNORE);
                        case FAIL_INDEX:
                            if (backoffLimitPerIndexGate) {
                                return new Match(null, true, FAIL_INDEX);
                            }
                            break;
                        case COUNT:
                            return new Match(null, true, COUNT);
                        case FAIL_JOB:
                            String msg = String.format("Pod %s/%s has condition %s matching %s rule at index %d",
                                    failedPod.getMetadata().getNamespace(), failedPod.getMetadata().getName(),
                                    pc.getType(), rule.getAction(), index);
                            return new Match(msg, true, FAIL_JOB);
                        default:
                            break;
                    }
                }
            }
        }
        return Match.NONE;
    }

    static ContainerStatus matchOnExitCodes(PodStatus status, PodFailurePolicyOnExitCodesRequirement requirement) {
        ContainerStatus cs = matchingContainer(status.getContainerStatuses(), requirement);
        if (cs != null) {
            return cs;
        }
        return matchingContainer(status.getInitContainerStatuses(), requirement);
    }

    static PodCondition matchOnPodConditions(PodStatus status, List<PodFailurePolicyOnPodConditionsPattern> patterns) {
        if (status.getConditions() == null) {
            return null;
        }
        for (PodCondition c : status.getConditions()) {
            for (PodFailurePolicyOnPodConditionsPattern p : patterns) {
                if (java.util.Objects.equals(c.getType(), p.getType())
                        && java.util.Objects.equals(c.getStatus(), p.getStatus())) {
                    return c;
                }
            }
        }
        return null;
    }

    private static ContainerStatus matchingContainer(List<ContainerStatus> statuses,
            PodFailurePolicyOnExitCodesRequirement requirement) {
        if (statuses == null) {
            return null;
        }
        for (ContainerStatus cs : statuses) {
            if (cs.getState() == null || cs.getState().getTerminated() == null) {
                continue;
            }
            if (requirement.getContainerName() == null || requirement.getContainerName().equals(cs.getName())) {
                Integer exit = cs.getState().getTerminated().getExitCode();
                int exitCode = exit == null ? 0 : exit;
                if (exitCode != 0 && exitCodeMatches(exitCode, requirement)) {
                    return cs;
                }
            }
        }
        return null;
    }

    static boolean exitCodeMatches(int exitCode, PodFailurePolicyOnExitCodesRequirement requirement) {
        List<Integer> values = requirement.getValues() == null ? List.of() : requirement.getValues();
        switch (String.valueOf(requirement.getOperator())) {
            case "In":
                return values.contains(exitCode);
            case "NotIn":
                return !values.contains(exitCode);
            default:
                return false;
        }
    }
}
