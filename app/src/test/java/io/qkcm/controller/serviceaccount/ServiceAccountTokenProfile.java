package io.qkcm.controller.serviceaccount;

import java.util.Map;

import io.qkcm.testing.ServiceAccountTokenApiServer;
import io.qkcm.testing.TestPki;
import io.quarkus.test.junit.QuarkusTestProfile;

/**
 * The token controllers against an API server that trusts the test signing key; the legacy token
 * cleaner with a short clean-up period and sync interval.
 */
public class ServiceAccountTokenProfile implements QuarkusTestProfile {

    public static final String CLEAN_UP_PERIOD = "3s";

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of(
                "qkcm.kubeconfig", ServiceAccountTokenApiServer.get().kubeconfig().toString(),
                "qkcm.controllers", "serviceaccount-token-controller,legacy-serviceaccount-token-cleaner-controller",
                "qkcm.service-account-private-key-file", TestPki.get().serviceAccountPrivateKey().toString(),
                "qkcm.legacy-service-account-token-clean-up-period", CLEAN_UP_PERIOD,
                "qkcm.legacy-service-account-token-cleaner-sync-interval", "1s");
    }
}
