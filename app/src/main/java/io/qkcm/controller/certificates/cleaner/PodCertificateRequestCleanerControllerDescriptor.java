package io.qkcm.controller.certificates.cleaner;

import java.time.Clock;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * podcertificaterequest-cleaner-controller's descriptor and start function (upstream's
 * {@code newPodCertificateRequestCleanerControllerDescriptor} and its start function in
 * cmd/kube-controller-manager/app/certificates.go): off unless the PodCertificateRequest gate is on.
 */
public final class PodCertificateRequestCleanerControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(PCRCleanerController.NAME)
            .withClientName("podcertificaterequestcleaner")
            .requiringFeatureGates("PodCertificateRequest")
            .startedBy(PodCertificateRequestCleanerControllerDescriptor::start);

    private PodCertificateRequestCleanerControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new PCRCleanerController(context, Clock.systemUTC(), PCRCleanerController.THRESHOLD,
                PCRCleanerController.POLLING_INTERVAL));
    }
}
