package io.qkcm.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.qkcm.manager.ControllerCatalog;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * Every controller qkcm implements has its least-privilege role in src/main/kubernetes/kubernetes.yml
 * (generated from upstream's bootstrap policy by hack/gen/rbac.sh), bound to the ServiceAccount it
 * uses with --use-service-account-credentials. Fails when a controller is added without regenerating.
 */
class RbacManifestTest {

    @Test
    void everyImplementedControllerHasItsUpstreamRole() throws Exception {
        String manifest = Files.readString(Path.of("src/main/kubernetes/kubernetes.yml"));
        // a controller that requires special handling runs on the manager's own credentials, not a ServiceAccount
        List<String> clientNames = ControllerCatalog.upstream().all().stream().filter(ControllerDescriptor::implemented)
                .filter(d -> !d.requiresSpecialHandling()).map(ControllerDescriptor::clientName).distinct().sorted()
                .toList();
        assertThat(clientNames).contains("replicaset-controller", "deployment-controller", "generic-garbage-collector");
        for (String client : clientNames) {
            assertThat(manifest).as("run hack/gen/rbac.sh %s", String.join(" ", clientNames))
                    .contains("name: qkcm:controller:" + client + "\n")
                    .contains("  name: " + client + "\n  namespace: kube-system");
        }
        assertThat(manifest).doesNotContain("name: cluster-admin");
    }
}
