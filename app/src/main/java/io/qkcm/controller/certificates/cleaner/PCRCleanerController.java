package io.qkcm.controller.certificates.cleaner;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.GenericFilter;
import io.qkcm.runtime.informers.GroupVersionResource;
import io.qkcm.runtime.informers.MetadataClient;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * podcertificaterequest-cleaner-controller (upstream pkg/controller/certificates/cleaner/pcrcleaner.go):
 * every polling interval, each PodCertificateRequest in the cache whose creation is at least the threshold
 * ago (upstream: 15 minutes, by which every request's flow should be over, whatever its state) is deleted,
 * with its UID as precondition. Time comes from the injected clock.
 *
 * <p>Upstream has no work queue ({@code wait.UntilWithContext(worker, pollingInterval)}); as in the CSR
 * cleaner, the pass is the sync of one key no request can have ({@value #PASS_KEY}), queued at start and by
 * each pass for the next one a polling interval after it ends; request events queue nothing.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class PCRCleanerController extends KeyReconciler<PodCertificateRequest> {

    public static final String NAME = "podcertificaterequest-cleaner-controller";
    static final String PASS_KEY = "pcr-cleaner:pass";

    /** Upstream's start function: threshold and polling interval. */
    static final Duration THRESHOLD = Duration.ofMinutes(15);
    static final Duration POLLING_INTERVAL = Duration.ofMinutes(5);

    private final SharedIndexInformer<PodCertificateRequest> pcrs;
    private static final GroupVersionResource PCRS = new GroupVersionResource("certificates.k8s.io", "v1alpha1",
            "podcertificaterequests");

    private final MetadataClient requests;
    private final Clock clock;
    private final Duration threshold;
    private final Duration pollingInterval;

    public PCRCleanerController(ControllerContext context, Clock clock, Duration threshold, Duration pollingInterval) {
        super(context, PodCertificateRequest.class, "pcr-cleaner", 1);
        this.pcrs = context.informers().informerFor(PodCertificateRequest.class);
        this.requests = new MetadataClient(context.client());
        this.clock = clock;
        this.threshold = threshold;
        this.pollingInterval = pollingInterval;
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        // upstream's Run does not wait for the cache (its first pass may see an empty list); waiting only
        // spares that empty pass
        return List.of(pcrs);
    }

    /** No request event queues anything: the pass runs on its own period. */
    @Override
    protected GenericFilter<? super PodCertificateRequest> primaryFilter() {
        return pcr -> false;
    }

    @Override
    public void onStart() {
        log.info("Starting PodCertificateRequest cleaner controller");
        queue.add(PASS_KEY);
    }

    @Override
    public void onShutdown() {
        log.info("Shutting down PodCertificateRequest cleaner controller");
    }

    /** Queues a pass now (tests, after moving the clock). */
    void resync() {
        queue.add(PASS_KEY);
    }

    @Override
    protected void sync(String key) {
        if (!PASS_KEY.equals(key)) {
            return;
        }
        try {
            worker();
        } finally {
            // wait.Until: the next pass a period after this one ended
            queue.addAfter(PASS_KEY, pollingInterval);
        }
    }

    /** Upstream's worker: every cached request through handle; an error is logged and the pass goes on. */
    private void worker() {
        for (PodCertificateRequest pcr : pcrs.getStore().list()) {
            try {
                handle(pcr);
            } catch (KubernetesClientException e) {
                log.errorf("Error while attempting to clean PodCertificateRequest: pcr %s/%s err unable to delete "
                        + "PodCertificateRequest \"%s/%s\": %s", pcr.getMetadata().getNamespace(),
                        pcr.getMetadata().getName(), pcr.getMetadata().getNamespace(), pcr.getMetadata().getName(),
                        shortMessage(e));
            }
        }
    }

    /** Upstream's handle: deleted once now is not before creation + threshold; already gone is fine. */
    void handle(PodCertificateRequest pcr) {
        Instant created;
        try {
            created = Instant.parse(pcr.getMetadata().getCreationTimestamp());
        } catch (NullPointerException | DateTimeParseException e) {
            created = Instant.EPOCH; // Go's zero time: always past the threshold
        }
        if (clock.instant().isBefore(created.plus(threshold))) {
            return;
        }
        try {
            // fabric8's DSL cannot send a UID precondition
            requests.delete(PCRS, pcr.getMetadata().getNamespace(), pcr.getMetadata().getName(),
                    pcr.getMetadata().getUid(), null, null);
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404) {
                throw e;
            }
        }
    }
}
