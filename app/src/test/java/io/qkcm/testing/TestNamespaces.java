package io.qkcm.testing;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/** Namespaces of tests against {@link RealApiServer}: one fresh namespace per test, so tests never see each other's objects. */
public final class TestNamespaces {

    private TestNamespaces() {
    }

    /** Creates the namespace {@code <prefix>-<random base-36 suffix>} and returns its name. */
    public static String newNamespace(KubernetesClient client, String prefix) {
        String ns = prefix + "-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                .create();
        return ns;
    }
}
