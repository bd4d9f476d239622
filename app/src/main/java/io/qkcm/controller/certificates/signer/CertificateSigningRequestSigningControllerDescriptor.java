package io.qkcm.controller.certificates.signer;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jboss.logging.Logger;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;
import io.qkcm.runtime.options.ControllerManagerOptions;

/**
 * certificatesigningrequest-signing-controller's descriptor and start function (upstream's
 * {@code newCertificateSigningRequestSigningControllerDescriptor} and
 * {@code startCertificateSigningRequestSigningController} in cmd/kube-controller-manager/app/certificates.go):
 * without --cluster-signing-cert-file/--cluster-signing-key-file nor any per-signer file the controller
 * skips itself; both kinds at once, or a CA that does not load, fail the start.
 */
public final class CertificateSigningRequestSigningControllerDescriptor {

    private static final Logger LOG = Logger.getLogger(CertificateSigningRequestSigningControllerDescriptor.class);

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(CSRSigningController.NAME)
            .withAliases("csrsigning")
            .withClientName("certificate-controller")
            .startedBy(CertificateSigningRequestSigningControllerDescriptor::start);

    /** Each signer and the flag prefix of its own files, in upstream's order. */
    private static final String[][] SIGNERS = {
            { Signer.KUBELET_SERVING, "cluster-signing-kubelet-serving" },
            { Signer.KUBE_APISERVER_CLIENT_KUBELET, "cluster-signing-kubelet-client" },
            { Signer.KUBE_APISERVER_CLIENT, "cluster-signing-kube-apiserver-client" },
            { Signer.LEGACY_UNKNOWN, "cluster-signing-legacy-unknown" } };

    private CertificateSigningRequestSigningControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        CSRSigningController controller = newController(context, Clock.systemUTC());
        return controller == null ? null : context.operate(controller);
    }

    /** The controller with its flags read once, or null when it skips itself. */
    static CSRSigningController newController(ControllerContext context, Clock clock) {
        ControllerManagerOptions options = context.options();
        String certFile = options.string("cluster-signing-cert-file");
        String keyFile = options.string("cluster-signing-key-file");
        boolean missingSingleSigningFile = certFile.isEmpty() || keyFile.isEmpty();
        boolean anySpecific = false;
        for (String[] s : SIGNERS) {
            anySpecific |= !options.string(s[1] + "-cert-file").isEmpty() || !options.string(s[1] + "-key-file").isEmpty();
        }
        if (missingSingleSigningFile && !anySpecific) {
            LOG.info("Skipping CSR signer controller because no csr cert/key was specified");
            return null;
        }
        if (!missingSingleSigningFile && anySpecific) {
            throw new IllegalArgumentException("cannot specify default and per controller certs at the same time");
        }
        Duration certTTL = options.duration("cluster-signing-duration");
        List<Signer> signers = new ArrayList<>();
        for (String[] s : SIGNERS) {
            // with any per-signer file set, --cluster-signing-{cert,key}-file are used by no signer
            String cert = anySpecific ? options.string(s[1] + "-cert-file") : certFile;
            String key = anySpecific ? options.string(s[1] + "-key-file") : keyFile;
            if (cert.isEmpty() && key.isEmpty()) {
                LOG.infof("Skipping CSR signer controller because specific files were specified for other signers "
                        + "and not this one: controller %s", s[0]);
                continue;
            }
            try {
                signers.add(new Signer(s[0], new CAProvider(cert, key), context.client(), certTTL, clock));
            } catch (CAProvider.CAException e) {
                throw new IllegalArgumentException("failed to start " + s[0] + " certificate controller: "
                        + e.getMessage());
            }
        }
        return new CSRSigningController(context, signers);
    }
}
