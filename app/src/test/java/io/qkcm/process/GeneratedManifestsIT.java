package io.qkcm.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.testing.AuditLog;
import io.qkcm.testing.Conflicts;
import io.qkcm.testing.Identities;
import io.qkcm.testing.QkcmProcess;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.TestKubelet;

/**
 * The generated deployment manifests (target/kubernetes/kubernetes.yml) against a real API server:
 * every object is accepted, and qkcm running as the generated ServiceAccount with
 * --use-service-account-credentials (each controller as kube-system/&lt;client-name&gt;) performs a
 * rollout and a cascading delete without a single 403 — least privilege that is also enough.
 */
class GeneratedManifestsIT {

    private static final Path MANIFESTS = Path.of("target/kubernetes/kubernetes.yml");
    private static final String SA_PREFIX = "system:serviceaccount:kube-system:";

    @Test
    void generatedManifestsAreAcceptedAndTheirRbacIsSufficientForARollout() throws Exception {
        RealApiServer server = RealApiServer.audited();
        AuditLog audit = new AuditLog(server.auditLog().orElseThrow());
        String ns = "rbac-it-" + System.nanoTime();
        try (KubernetesClient admin = server.newClient()) {
            List<HasMetadata> objects;
            try (InputStream in = Files.newInputStream(MANIFESTS)) {
                objects = admin.load(in).items();
            }
            assertThat(objects).extracting(HasMetadata::getKind)
                    .contains("ServiceAccount", "Deployment", "ClusterRole", "ClusterRoleBinding", "RoleBinding");
            assertThat(objects).filteredOn(o -> o.getKind().equals("ClusterRoleBinding"))
                    .allSatisfy(o -> assertThat(((io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding) o)
                            .getRoleRef().getName()).isNotEqualTo("cluster-admin"));
            for (HasMetadata o : objects) {
                admin.resource(o).forceConflicts().serverSideApply(); // the API server accepts each of them
            }
            Deployment qkcm = admin.apps().deployments().inNamespace("kube-system").withName("qkcm").get();
            assertThat(qkcm.getSpec().getReplicas()).isEqualTo(2);
            assertThat(qkcm.getSpec().getTemplate().getSpec().getServiceAccountName()).isEqualTo("qkcm");
            // the pod runs as the images' non-root user (USER 1001 in Dockerfile.jvm and Dockerfile.native,
            // pinned by ImageFilesConsistencyTest), so the files the images own are the files it reads
            var podSecurity = qkcm.getSpec().getTemplate().getSpec().getSecurityContext();
            assertThat(podSecurity.getRunAsUser()).isEqualTo(1001L);
            assertThat(podSecurity.getRunAsNonRoot()).isTrue();

            Path kubeconfig = new Identities(server).kubeconfigForExisting("kube-system", "qkcm");
            admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                    .create();
            Instant started = Instant.now();
            AtomicBoolean kubeletRunning = new AtomicBoolean(true);
            try (QkcmProcess process = QkcmProcess.java("generated-rbac", Map.of(), List.of(
                    "--kubeconfig=" + kubeconfig, "--use-service-account-credentials=true", "--secure-port=0",
                    "--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s",
                    "--leader-elect-retry-period=1s"))) {
                Thread kubelet = startKubelet(admin, ns, kubeletRunning);
                try {
                    admin.apps().deployments().inNamespace(ns).resource(deployment("nginx:1.27.2")).create();
                    awaitRolledOut(admin, ns, process, "nginx:1.27.2");
                    Conflicts.retry(() -> admin.apps().deployments().inNamespace(ns).withName("web").edit(d -> {
                        d.getSpec().getTemplate().getSpec().getContainers().get(0).setImage("nginx:1.27.3");
                        return d;
                    }));
                    awaitRolledOut(admin, ns, process, "nginx:1.27.3");
                    assertThat(admin.apps().replicaSets().inNamespace(ns).list().getItems()).hasSize(2);
                    // cascading delete: the garbage collector removes the ReplicaSets
                    admin.apps().deployments().inNamespace(ns).withName("web").delete();
                    await().atMost(Duration.ofMinutes(2)).untilAsserted(() -> assertThat(
                            admin.apps().replicaSets().inNamespace(ns).list().getItems()).isEmpty());
                } finally {
                    kubeletRunning.set(false);
                    kubelet.join(5_000);
                }
                assertThat(process.alive()).as("qkcm still running; stderr:\n%s", process.stderr()).isTrue();
            }

            List<AuditLog.Entry> ours = audit.entries(e -> e.user().startsWith(SA_PREFIX)
                    && !e.time().isBefore(started));
            assertThat(ours).filteredOn(e -> e.code() == 403).as("requests refused by RBAC").isEmpty();
            // each controller really acted under its own upstream identity
            assertThat(ours).anySatisfy(e -> assertWrite(e, "replicaset-controller", "create", "pods"));
            assertThat(ours).anySatisfy(e -> assertWrite(e, "deployment-controller", "create", "replicasets"));
            assertThat(ours).anySatisfy(e -> assertWrite(e, "generic-garbage-collector", "delete", "replicasets"));
            assertThat(ours).anySatisfy(e -> assertWrite(e, "qkcm", "update", "leases"));
        } finally {
            try (KubernetesClient admin = server.newClient()) {
                admin.namespaces().withName(ns).delete();
                admin.apps().deployments().inNamespace("kube-system").withName("qkcm").delete();
            }
        }
    }

    private static void assertWrite(AuditLog.Entry e, String serviceAccount, String verb, String resource) {
        assertThat(e.user()).isEqualTo(SA_PREFIX + serviceAccount);
        assertThat(e.verb()).isEqualTo(verb);
        assertThat(e.resource()).isEqualTo(resource);
        assertThat(e.code()).isBetween(200, 299);
    }

    private static void awaitRolledOut(KubernetesClient admin, String ns, QkcmProcess process, String image) {
        await().atMost(Duration.ofMinutes(3)).untilAsserted(() -> {
            assertThat(process.alive()).as("qkcm exited; stderr:\n%s", process.stderr()).isTrue();
            Deployment d = admin.apps().deployments().inNamespace(ns).withName("web").get();
            assertThat(d.getStatus()).isNotNull();
            assertThat(d.getStatus().getObservedGeneration()).isEqualTo(d.getMetadata().getGeneration());
            assertThat(d.getStatus().getUpdatedReplicas()).isEqualTo(2);
            assertThat(d.getStatus().getAvailableReplicas()).isEqualTo(2);
            assertThat(d.getStatus().getReplicas()).isEqualTo(2);
            assertThat(d.getSpec().getTemplate().getSpec().getContainers().get(0).getImage()).isEqualTo(image);
        });
    }

    /** There is no kubelet: make new pods ready and finish the deletion of terminating ones. */
    private static Thread startKubelet(KubernetesClient admin, String ns, AtomicBoolean running) {
        TestKubelet kubelet = new TestKubelet(admin);
        Thread t = new Thread(() -> {
            while (running.get()) {
                try {
                    for (Pod p : admin.pods().inNamespace(ns).list().getItems()) {
                        if (p.getMetadata().getDeletionTimestamp() != null) {
                            admin.pods().inNamespace(ns).resource(p).withGracePeriod(0).delete();
                        } else if (p.getStatus() == null || !"Running".equals(p.getStatus().getPhase())) {
                            kubelet.runningAndReady(p);
                        }
                    }
                    Thread.sleep(300);
                } catch (KubernetesClientException e) {
                    // a pod went away or changed under us: the next round sees the new state
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "test-kubelet");
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static Deployment deployment(String image) {
        return new DeploymentBuilder().withNewMetadata().withName("web").endMetadata()
                .withNewSpec().withReplicas(2)
                .withNewSelector().addToMatchLabels("app", "web").endSelector()
                .withNewStrategy().withType("RollingUpdate").withNewRollingUpdate()
                .withNewMaxSurge(1).withNewMaxUnavailable(0).endRollingUpdate().endStrategy()
                .withNewTemplate().withNewMetadata().addToLabels("app", "web").endMetadata()
                .withNewSpec().addNewContainer().withName("nginx").withImage(image).endContainer().endSpec()
                .endTemplate().endSpec().build();
    }
}
