package io.qkcm.controller.certificates.signer;

import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequest;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.controller.certificates.CertificateController;
import io.qkcm.runtime.josdk.ControllerContext;

/**
 * certificatesigningrequest-signing-controller (upstream pkg/controller/certificates/signer): the built-in
 * signers kubernetes.io/kube-apiserver-client, kube-apiserver-client-kubelet, kubelet-serving and
 * legacy-unknown, each with the CA of its flags.
 *
 * <p>Upstream runs one CertificateController per signer, each with its own "certificate" queue and five
 * workers, each handler returning at once for a request of another signer name. Here the signers share
 * one queue (five workers per signer): a request is handed to the signer of its name, and a name qkcm does
 * not sign is left alone, as every one of upstream's loops leaves it.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class CSRSigningController extends CertificateController {

    public static final String NAME = "certificatesigningrequest-signing-controller";
    /** Upstream's worker count of each signer's loop (hard-coded in its start function). */
    static final int WORKERS_PER_SIGNER = 5;

    private final Map<String, Signer> signers;

    CSRSigningController(ControllerContext context, List<Signer> signers) {
        super(context, "csrsigning", WORKERS_PER_SIGNER * Math.max(1, signers.size()));
        this.signers = signers.stream().collect(Collectors.toMap(Signer::signerName, Function.identity()));
    }

    @Override
    protected void handle(CertificateSigningRequest csr) throws Exception {
        Signer signer = csr.getSpec() == null ? null : signers.get(csr.getSpec().getSignerName());
        if (signer != null) {
            signer.handle(csr);
        }
    }

    /** The signer names this controller signs for. */
    public java.util.Set<String> signerNames() {
        return signers.keySet();
    }
}
