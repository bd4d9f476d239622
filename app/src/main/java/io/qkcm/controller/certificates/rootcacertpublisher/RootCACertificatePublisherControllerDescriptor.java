package io.qkcm.controller.certificates.rootcacertpublisher;

import java.nio.charset.StandardCharsets;

import io.qkcm.controller.RootCA;
import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * root-ca-certificate-publisher-controller's descriptor and start function (upstream's
 * {@code newRootCACertificatePublisherControllerDescriptor} and its start function in cmd/kube-controller-
 * manager/app/certificates.go).
 */
public final class RootCACertificatePublisherControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(RootCACertPublisher.NAME)
            .withAliases("root-ca-cert-publisher")
            .withClientName("root-ca-cert-publisher")
            .startedBy(RootCACertificatePublisherControllerDescriptor::start);

    private RootCACertificatePublisherControllerDescriptor() {
    }

    /** The CA from --root-ca-file, else the API client's CA data. */
    static Controller start(ControllerContext context) {
        return context.operate(new RootCACertPublisher(context,
                new String(RootCA.load(context), StandardCharsets.UTF_8)));
    }
}
