package io.qkcm.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequest;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Distinct API identities for processes under test: a ServiceAccount bound to cluster-admin and a
 * kubeconfig carrying a TokenRequest token for it, so the audit log names who sent each request.
 */
public final class Identities {

    public static final String NAMESPACE = "qkcm-it";

    private final RealApiServer server;

    public Identities(RealApiServer server) {
        this.server = server;
    }

    /** The audit user name of a ServiceAccount made by {@link #kubeconfigFor}. */
    public static String user(String serviceAccount) {
        return "system:serviceaccount:" + NAMESPACE + ":" + serviceAccount;
    }

    /** The ClusterRoleBinding giving {@code serviceAccount} cluster-admin. */
    public static String binding(String serviceAccount) {
        return "qkcm-it-" + serviceAccount;
    }

    /** Creates the ServiceAccount and its cluster-admin binding; returns a kubeconfig file for it. */
    public Path kubeconfigFor(String serviceAccount) {
        try (KubernetesClient admin = server.newClient()) {
            admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata()
                    .build()).serverSideApply();
            admin.serviceAccounts().inNamespace(NAMESPACE).resource(new ServiceAccountBuilder().withNewMetadata()
                    .withName(serviceAccount).endMetadata().build()).serverSideApply();
            admin.rbac().clusterRoleBindings().resource(new ClusterRoleBindingBuilder().withNewMetadata()
                    .withName(binding(serviceAccount)).endMetadata()
                    .withNewRoleRef("rbac.authorization.k8s.io", "ClusterRole", "cluster-admin")
                    .addNewSubject().withKind("ServiceAccount").withName(serviceAccount).withNamespace(NAMESPACE)
                    .endSubject().build()).serverSideApply();
            return tokenKubeconfig(admin, NAMESPACE, serviceAccount);
        }
    }

    /** A kubeconfig authenticating as an existing ServiceAccount with a fresh bound token (1h). */
    public Path kubeconfigForExisting(String namespace, String serviceAccount) {
        try (KubernetesClient admin = server.newClient()) {
            return tokenKubeconfig(admin, namespace, serviceAccount);
        }
    }

    private static Path tokenKubeconfig(KubernetesClient admin, String namespace, String serviceAccount) {
        try {
            TokenRequest request = admin.serviceAccounts().inNamespace(namespace).withName(serviceAccount)
                    .tokenRequest(new TokenRequestBuilder().withNewSpec().withExpirationSeconds(3600L).endSpec().build());
            Config config = admin.getConfiguration();
            String ca = config.getCaCertData() != null ? config.getCaCertData()
                    : Base64.getEncoder().encodeToString(Files.readAllBytes(Path.of(config.getCaCertFile())));
            Path file = Files.createTempFile("qkcm-it-" + serviceAccount, ".kubeconfig");
            file.toFile().deleteOnExit();
            Files.writeString(file, """
                    apiVersion: v1
                    kind: Config
                    clusters:
                    - name: it
                      cluster:
                        server: %s
                        certificate-authority-data: %s
                    contexts:
                    - name: it
                      context:
                        cluster: it
                        user: %s
                    current-context: it
                    users:
                    - name: %s
                      user:
                        token: %s
                    """.formatted(config.getMasterUrl(), ca, serviceAccount, serviceAccount,
                    request.getStatus().getToken()));
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
