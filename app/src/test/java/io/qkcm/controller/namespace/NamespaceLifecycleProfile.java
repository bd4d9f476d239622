package io.qkcm.controller.namespace;

import java.util.Map;

import io.qkcm.testing.TestPki;
import io.quarkus.test.junit.QuarkusTestProfile;

/** namespace-controller with the per-namespace publishers (default SA, kube-root-ca.crt). */
public class NamespaceLifecycleProfile implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of(
                "qkcm.controllers",
                "namespace-controller,serviceaccount-controller,root-ca-certificate-publisher-controller",
                "qkcm.root-ca-file", TestPki.get().rootCaFile().toString(),
                // quick re-examination, so a missed event cannot hide behind the 5m default
                "qkcm.namespace-sync-period", "30s");
    }
}
