package io.qkcm.controller.validatingadmissionpolicystatus;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * validatingadmissionpolicy-status-controller's descriptor and start function (upstream's
 * {@code newValidatingAdmissionPolicyStatusControllerDescriptor} and its start function in
 * cmd/kube-controller-manager/app/validatingadmissionpolicystatus.go): no alias, no feature gate, on by default,
 * --concurrent-validating-admission-policy-status-syncs workers (5).
 */
public final class ValidatingAdmissionPolicyStatusControllerDescriptor {

    /** What qkcm's type checking does not reproduce of upstream's (cel-go's) warnings. */
    static final String PARTIAL = "type checking on cel-java: a string.format() call on literals is not checked "
            + "at compile time (cel-go's format validator), so its bad clauses get no warning";

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor
            .of(ValidatingAdmissionPolicyStatusController.NAME)
            .startedBy(ValidatingAdmissionPolicyStatusControllerDescriptor::start)
            .partially(PARTIAL);

    private ValidatingAdmissionPolicyStatusControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new ValidatingAdmissionPolicyStatusController(context,
                context.options().concurrentSyncs("validating-admission-policy-status")));
    }
}
