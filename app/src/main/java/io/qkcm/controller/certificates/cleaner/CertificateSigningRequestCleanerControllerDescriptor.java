package io.qkcm.controller.certificates.cleaner;

import java.time.Clock;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * certificatesigningrequest-cleaner-controller's descriptor and start function (upstream's
 * {@code newCertificateSigningRequestCleanerControllerDescriptor} and its start function in
 * cmd/kube-controller-manager/app/certificates.go).
 */
public final class CertificateSigningRequestCleanerControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(CSRCleanerController.NAME)
            .withAliases("csrcleaner")
            .withClientName("certificate-controller")
            .startedBy(CertificateSigningRequestCleanerControllerDescriptor::start);

    private CertificateSigningRequestCleanerControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new CSRCleanerController(context, Clock.systemUTC()));
    }
}
