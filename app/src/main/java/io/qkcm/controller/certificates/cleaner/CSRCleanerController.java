package io.qkcm.controller.certificates.cleaner;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequest;
import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequestCondition;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.GenericFilter;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * certificatesigningrequest-cleaner-controller (upstream pkg/controller/certificates/cleaner/cleaner.go):
 * every hour, every CertificateSigningRequest in the cache is deleted when it is approved and issued and
 * its Approved condition was updated over 1 h ago, denied or failed over 1 h ago (the condition's
 * lastUpdateTime), pending (no condition) and created over 24 h ago, or approved and issued with a
 * certificate whose NotAfter has passed. Time comes from the injected clock.
 *
 * <p>Upstream has no work queue ({@code wait.UntilWithContext(worker, pollingInterval)}). As in
 * pod-garbage-collector-controller, the pass is the sync of one key no request can have ({@value #PASS_KEY}:
 * a ':' is not allowed in a name), queued by the Operator's start and by each pass for the next one an
 * hour after it ends; request events queue nothing.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class CSRCleanerController extends KeyReconciler<CertificateSigningRequest> {

    public static final String NAME = "certificatesigningrequest-cleaner-controller";
    static final String PASS_KEY = "csr-cleaner:pass";

    /** Upstream's pollingInterval and expirations. */
    static final Duration POLLING_INTERVAL = Duration.ofHours(1);
    static final Duration APPROVED_EXPIRATION = Duration.ofHours(1);
    static final Duration DENIED_EXPIRATION = Duration.ofHours(1);
    static final Duration PENDING_EXPIRATION = Duration.ofHours(24);

    private static final Pattern PEM_BLOCK = Pattern.compile("-----BEGIN ([^\\r\\n-]*)-----(.*?)-----END \\1-----",
            Pattern.DOTALL);

    private final SharedIndexInformer<CertificateSigningRequest> csrs;
    private final Clock clock;

    public CSRCleanerController(ControllerContext context, Clock clock) {
        super(context, CertificateSigningRequest.class, "csr-cleaner", 1);
        this.csrs = context.informers().informerFor(CertificateSigningRequest.class);
        this.clock = clock;
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(csrs);
    }

    /** No request event queues anything: the pass runs on its own period. */
    @Override
    protected GenericFilter<? super CertificateSigningRequest> primaryFilter() {
        return csr -> false;
    }

    @Override
    public void onStart() {
        log.info("Starting CSR cleaner controller");
        queue.add(PASS_KEY);
    }

    @Override
    public void onShutdown() {
        log.info("Shutting down CSR cleaner controller");
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
        } catch (RuntimeException e) {
            log.errorf("CSR cleaner pass failed: %s", shortMessage(e));
        } finally {
            // wait.Until: the next pass a period after this one ended
            queue.addAfter(PASS_KEY, POLLING_INTERVAL);
        }
    }

    /** Upstream's worker: every cached request through handle; an error is logged and the pass goes on. */
    private void worker() {
        for (CertificateSigningRequest csr : csrs.getStore().list()) {
            try {
                handle(csr);
            } catch (KubernetesClientException e) {
                log.errorf("Error while attempting to clean CSR: csr %s err unable to delete CSR \"%s\": %s",
                        csr.getMetadata().getName(), csr.getMetadata().getName(), shortMessage(e));
            }
        }
    }

    private void handle(CertificateSigningRequest csr) {
        Instant now = clock.instant();
        if (isIssuedPastDeadline(csr, now) || isDeniedPastDeadline(csr, now) || isFailedPastDeadline(csr, now)
                || isPendingPastDeadline(csr, now) || isIssuedExpired(csr, now)) {
            try {
                context.client().certificates().v1().certificateSigningRequests()
                        .withName(csr.getMetadata().getName()).delete();
            } catch (KubernetesClientException e) {
                if (e.getCode() != 404) {
                    throw e;
                }
                // already gone: upstream logs the NotFound; nothing is left to clean
                log.debugf("CSR %s was already deleted", csr.getMetadata().getName());
            }
        }
    }

    private boolean isIssuedExpired(CertificateSigningRequest csr, Instant now) {
        for (CertificateSigningRequestCondition c : conditions(csr)) {
            if ("Approved".equals(c.getType()) && isIssued(csr) && isExpired(csr, now)) {
                log.infof("Cleaning CSR as the associated certificate is expired.: csr %s", csr.getMetadata().getName());
                return true;
            }
        }
        return false;
    }

    private boolean isPendingPastDeadline(CertificateSigningRequest csr, Instant now) {
        // no condition: kubectl shows it as Pending
        if (conditions(csr).isEmpty() && isOlderThan(csr.getMetadata().getCreationTimestamp(), PENDING_EXPIRATION, now)) {
            log.infof("Cleaning CSR as it is more than pendingExpiration duration old and unhandled.: csr %s "
                    + "pendingExpiration %s", csr.getMetadata().getName(), "24h0m0s");
            return true;
        }
        return false;
    }

    private boolean isDeniedPastDeadline(CertificateSigningRequest csr, Instant now) {
        for (CertificateSigningRequestCondition c : conditions(csr)) {
            if ("Denied".equals(c.getType()) && isOlderThan(c.getLastUpdateTime(), DENIED_EXPIRATION, now)) {
                log.infof("Cleaning CSR as it is more than deniedExpiration duration old and denied.: csr %s "
                        + "deniedExpiration %s", csr.getMetadata().getName(), "1h0m0s");
                return true;
            }
        }
        return false;
    }

    private boolean isFailedPastDeadline(CertificateSigningRequest csr, Instant now) {
        for (CertificateSigningRequestCondition c : conditions(csr)) {
            if ("Failed".equals(c.getType()) && isOlderThan(c.getLastUpdateTime(), DENIED_EXPIRATION, now)) {
                log.infof("Cleaning CSR as it is more than deniedExpiration duration old and failed.: csr %s "
                        + "deniedExpiration %s", csr.getMetadata().getName(), "1h0m0s");
                return true;
            }
        }
        return false;
    }

    private boolean isIssuedPastDeadline(CertificateSigningRequest csr, Instant now) {
        for (CertificateSigningRequestCondition c : conditions(csr)) {
            if ("Approved".equals(c.getType()) && isIssued(csr) && isOlderThan(c.getLastUpdateTime(), APPROVED_EXPIRATION, now)) {
                log.infof("Cleaning CSR as it is more than approvedExpiration duration old and approved.: csr %s "
                        + "approvedExpiration %s", csr.getMetadata().getName(), "1h0m0s");
                return true;
            }
        }
        return false;
    }

    /** Upstream's isOlderThan: a set time more than {@code d} before now. */
    static boolean isOlderThan(String time, Duration d, Instant now) {
        if (time == null || time.isEmpty()) {
            return false;
        }
        try {
            return Duration.between(Instant.parse(time), now).compareTo(d) > 0;
        } catch (DateTimeParseException e) {
            return false;
        }
    }

    private static boolean isIssued(CertificateSigningRequest csr) {
        return csr.getStatus() != null && csr.getStatus().getCertificate() != null
                && !csr.getStatus().getCertificate().isEmpty();
    }

    /** Upstream's isExpired: the first certificate of the first PEM block, NotAfter before now. */
    static boolean isExpired(CertificateSigningRequest csr, Instant now) {
        if (!isIssued(csr)) {
            return false;
        }
        try {
            String pem = new String(Base64.getDecoder().decode(csr.getStatus().getCertificate()), StandardCharsets.ISO_8859_1);
            Matcher m = PEM_BLOCK.matcher(pem);
            if (!m.find()) {
                return false;
            }
            byte[] der = Base64.getMimeDecoder().decode(m.group(2).getBytes(StandardCharsets.ISO_8859_1));
            X509Certificate cert = (X509Certificate) CertificateFactory.getInstance("X.509")
                    .generateCertificate(new ByteArrayInputStream(der));
            return now.isAfter(cert.getNotAfter().toInstant());
        } catch (Exception e) {
            return false; // not a certificate upstream can read: never expired
        }
    }

    private static List<CertificateSigningRequestCondition> conditions(CertificateSigningRequest csr) {
        if (csr.getStatus() == null || csr.getStatus().getConditions() == null) {
            return List.of();
        }
        return csr.getStatus().getConditions();
    }
}
