package io.qkcm.controller.certificates;

import java.time.Duration;
import java.util.List;

import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequest;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;
import io.qkcm.runtime.workqueue.RateLimiter;

/**
 * Upstream's {@code certificates.CertificateController} (pkg/controller/certificates/certificate_controller.go),
 * the frame the signing and approving controllers share: every add, update and delete of a
 * CertificateSigningRequest queues its name (JOSDK's primary events do it), the queue {@value #QUEUE} backs
 * off from 200 ms to 1000 s per key (max'ed with 10 qps / burst 100) and retries for as long as a key fails,
 * and a request that already has a certificate is left alone. {@link #handle} gets a copy of the cached
 * request to change.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public abstract class CertificateController extends KeyReconciler<CertificateSigningRequest> {

    /** Upstream's queue name, the same for every certificate controller. */
    public static final String QUEUE = "certificate";

    private final String name;
    private final SharedIndexInformer<CertificateSigningRequest> csrs;

    /** {@code name}: upstream's controller name in its logs (csrapproving, csrsigning-...). */
    protected CertificateController(ControllerContext context, String name, int workers) {
        super(context, CertificateSigningRequest.class, QUEUE, workers,
                RateLimiter.maxOf(RateLimiter.exponential(Duration.ofMillis(200), Duration.ofSeconds(1000)),
                        RateLimiter.bucket(10, 100)));
        this.name = name;
        this.csrs = context.informers().informerFor(CertificateSigningRequest.class);
    }

    /** The handler upstream passes to NewCertificateController; a copy the handler may change. */
    protected abstract void handle(CertificateSigningRequest csr) throws Exception;

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(csrs);
    }

    @Override
    public void onStart() {
        log.infof("Starting certificate controller: name %s", name);
    }

    @Override
    public void onShutdown() {
        log.infof("Shutting down certificate controller: name %s", name);
    }

    /** Upstream's syncFunc. */
    @Override
    protected void sync(String key) throws Exception {
        CertificateSigningRequest csr = csrs.getStore().getByKey(key);
        if (csr == null) {
            log.tracef("csr has been deleted: csr %s", key);
            return;
        }
        if (csr.getStatus() != null && csr.getStatus().getCertificate() != null
                && !csr.getStatus().getCertificate().isEmpty()) {
            // no need to do anything because it already has a cert
            return;
        }
        handle(DeepCopy.of(csr));
    }

    /** Upstream's processNextWorkItem: an ignorable error is retried quietly, any other logged. */
    @Override
    protected void logRetry(String key, int requeues, Exception e) {
        if (e instanceof IgnorableError) {
            log.debugf("Sync certificate request failed: csr %s err %s", key, e.getMessage());
        } else {
            log.errorf("Sync %s failed with : %s", key, shortMessage(e));
        }
    }

    /** How often a key has failed since it last succeeded (its backoff; tests). */
    public int requeues(String key) {
        return queue.numRequeues(key);
    }

    /** Upstream's ignorableError: retried with backoff like any other, but not worth an error line. */
    public static final class IgnorableError extends Exception {
        public IgnorableError(String message) {
            super(message, null, false, false);
        }
    }
}
