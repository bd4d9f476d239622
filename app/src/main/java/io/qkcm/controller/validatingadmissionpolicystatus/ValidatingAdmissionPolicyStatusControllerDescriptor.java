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

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor
            .of(ValidatingAdmissionPolicyStatusController.NAME)
            .startedBy(ValidatingAdmissionPolicyStatusControllerDescriptor::start);

    private ValidatingAdmissionPolicyStatusControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new ValidatingAdmissionPolicyStatusController(context,
                context.options().concurrentSyncs("validating-admission-policy-status")));
    }
}
