package io.qkcm.controller.certificates.approver;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * certificatesigningrequest-approving-controller's descriptor and start function (upstream's
 * {@code newCertificateSigningRequestApprovingControllerDescriptor} and its start function in
 * cmd/kube-controller-manager/app/certificates.go).
 */
public final class CertificateSigningRequestApprovingControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(CSRApprovingController.NAME)
            .withAliases("csrapproving")
            .withClientName("certificate-controller")
            .startedBy(CertificateSigningRequestApprovingControllerDescriptor::start);

    private CertificateSigningRequestApprovingControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new CSRApprovingController(context));
    }
}
