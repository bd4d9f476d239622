package io.qkcm.runtime.clients;

import java.time.Duration;
import java.time.Instant;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequest;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.OAuthTokenProvider;

/**
 * {@code --use-service-account-credentials}, as upstream's dynamic controller client builder: each
 * controller authenticates as the ServiceAccount {@code kube-system/<controller-name>} (created if
 * missing), with a bound token from the TokenRequest API (1h, renewed when 20% of its life is left).
 * The API server's bootstrap policy binds upstream's {@code system:controller:<name>} roles to exactly
 * these accounts, so each controller gets only the permissions upstream's would.
 */
final class ServiceAccountCredentials implements OAuthTokenProvider {

    private static final Logger LOG = Logger.getLogger(ServiceAccountCredentials.class);
    static final String NAMESPACE = "kube-system";
    private static final long EXPIRATION_SECONDS = 3600;
    private static final int LEEWAY_PERCENT = 20;

    private final KubernetesClient root;
    private final String serviceAccount;
    private String token;
    private Instant refreshAt = Instant.EPOCH;

    ServiceAccountCredentials(KubernetesClient root, String serviceAccount) {
        this.root = root;
        this.serviceAccount = serviceAccount;
    }

    @Override
    public synchronized String getToken() {
        if (token == null || Instant.now().isAfter(refreshAt)) {
            refresh();
        }
        return token;
    }

    private void refresh() {
        KubernetesClientException last = null;
        long backoff = 500;
        for (int attempt = 0; attempt < 4; attempt++) {
            try {
                ensureServiceAccount();
                TokenRequest request = new TokenRequestBuilder().withNewSpec()
                        .withExpirationSeconds(EXPIRATION_SECONDS).endSpec().build();
                TokenRequest issued = root.serviceAccounts().inNamespace(NAMESPACE).withName(serviceAccount)
                        .tokenRequest(request);
                Duration lifetime = Duration.between(Instant.now(),
                        Instant.parse(issued.getStatus().getExpirationTimestamp()));
                if (lifetime.compareTo(Duration.ofMinutes(10)) < 0) {
                    lifetime = Duration.ofMinutes(10); // clock skew: pin to a minimum lifetime, as upstream
                }
                token = issued.getStatus().getToken();
                refreshAt = Instant.now().plus(lifetime.minus(lifetime.multipliedBy(LEEWAY_PERCENT).dividedBy(100)));
                return;
            } catch (KubernetesClientException e) {
                last = e;
                LOG.warnf("get token for %s/%s failed: %s", NAMESPACE, serviceAccount, e.getMessage());
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    break;
                }
                backoff *= 2;
            }
        }
        if (token == null) {
            throw new KubernetesClientException("failed to get token for " + NAMESPACE + "/" + serviceAccount, last);
        }
        // keep using the current token until it really expires; retry on the next request
    }

    private void ensureServiceAccount() {
        if (root.serviceAccounts().inNamespace(NAMESPACE).withName(serviceAccount).get() != null) {
            return;
        }
        try {
            root.serviceAccounts().inNamespace(NAMESPACE).resource(new ServiceAccountBuilder().withNewMetadata()
                    .withName(serviceAccount).withNamespace(NAMESPACE).endMetadata().build()).create();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
        }
    }
}
