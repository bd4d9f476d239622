package io.qkcm.runtime.clients;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.runtime.Json;
import io.qkcm.runtime.protobuf.ProtobufWire;
import io.qkcm.testing.RealApiServer;

/**
 * Creates and updates in protobuf against a real API server: the answers equal what a JSON read gives, errors
 * carry the server's Status (409 Conflict, AlreadyExists) as fabric8's do, an object protobuf cannot carry and
 * the JSON content type go as JSON, and a create whose answer is lost is sent once and fails as an I/O error.
 */
class ProtobufWritesTest {

    @BeforeEach
    @AfterEach
    void protobufAgain() {
        ProtobufWire.reset();
    }

    private static KubernetesClient client() {
        Config config = Config.fromKubeconfig(RealApiServer.get().kubeconfigYaml());
        return new KubernetesClientBuilder().withConfig(config).withKubernetesSerialization(Json.api()).build();
    }

    private static String namespace(KubernetesClient client) {
        String ns = "protobuf-writes-" + Long.toString(System.nanoTime(), 36);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
        return ns;
    }

    private static String withoutManagedFields(io.fabric8.kubernetes.api.model.HasMetadata o) {
        io.fabric8.kubernetes.api.model.HasMetadata copy = Json.api().unmarshal(Json.api().asJson(o), o.getClass());
        copy.getMetadata().setManagedFields(null);
        return Json.api().asJson(copy);
    }

    private static ReplicaSet replicaSet(String ns) {
        return new ReplicaSetBuilder().withNewMetadata().withName("rs").withNamespace(ns).endMetadata()
                .withNewSpec().withReplicas(2).withNewSelector().addToMatchLabels("app", "w").endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app", "w").endMetadata()
                .withNewSpec().addNewContainer().withName("c").withImage("registry.k8s.io/pause:3.10").endContainer().endSpec()
                .endTemplate().endSpec().build();
    }

    @Test
    void aGenerateNameCreateIsSentInProtobufAndAnsweredAsJsonReadsIt() {
        try (KubernetesClient client = client()) {
            String ns = namespace(client);
            long sent = ProtobufWrites.SENT.sum();
            Pod pod = new PodBuilder().withNewMetadata().withGenerateName("web-").addToLabels("app", "w").endMetadata()
                    .withNewSpec().addNewContainer().withName("c").withImage("registry.k8s.io/pause:3.10").endContainer()
                    .endSpec().build();
            Pod created = ProtobufWrites.create(client, ns, pod);
            assertThat(ProtobufWrites.SENT.sum()).isEqualTo(sent + 1);
            assertThat(created.getMetadata().getName()).startsWith("web-");
            assertThat(created.getMetadata().getNamespace()).isEqualTo(ns);
            Pod read = client.pods().inNamespace(ns).withName(created.getMetadata().getName()).get();
            assertThat(withoutManagedFields(created)).isEqualTo(withoutManagedFields(read));
            assertThat(client.pods().inNamespace(ns).list().getItems()).hasSize(1);
        }
    }

    @Test
    void updatesAndStatusUpdatesAnswerTheStoredObjectAndConflictAsFabric8Does() {
        try (KubernetesClient client = client()) {
            String ns = namespace(client);
            ReplicaSet rs = ProtobufWrites.create(client, replicaSet(ns));
            ReplicaSet scaled = new ReplicaSetBuilder(rs).editSpec().withReplicas(3).endSpec().build();
            ReplicaSet afterScale = ProtobufWrites.update(client, scaled);
            assertThat(afterScale.getSpec().getReplicas()).isEqualTo(3);
            assertThat(afterScale.getMetadata().getResourceVersion()).isNotEqualTo(rs.getMetadata().getResourceVersion());

            ReplicaSet withStatus = new ReplicaSetBuilder(afterScale).withNewStatus().withReplicas(3).withReadyReplicas(1)
                    .withObservedGeneration(afterScale.getMetadata().getGeneration()).endStatus().build();
            ReplicaSet afterStatus = ProtobufWrites.updateStatus(client, withStatus);
            assertThat(afterStatus.getStatus().getReadyReplicas()).isEqualTo(1);
            ReplicaSet read = client.apps().replicaSets().inNamespace(ns).withName("rs").get();
            assertThat(withoutManagedFields(afterStatus)).isEqualTo(withoutManagedFields(read));

            // written from the version before: the server's 409 with its Status, as fabric8 throws it
            assertThatThrownBy(() -> ProtobufWrites.updateStatus(client, withStatus))
                    .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                        assertThat(e.getCode()).isEqualTo(409);
                        assertThat(e.getStatus().getReason()).isEqualTo("Conflict");
                    });
            assertThatThrownBy(() -> ProtobufWrites.create(client, replicaSet(ns)))
                    .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                        assertThat(e.getCode()).isEqualTo(409);
                        assertThat(e.getStatus().getReason()).isEqualTo("AlreadyExists");
                    });
        }
    }

    @Test
    void aGetReadsInProtobufWhatJsonReadsAndIsNullWhenTheObjectDoesNotExist() {
        try (KubernetesClient client = client()) {
            String ns = namespace(client);
            Lease lease = client.resource(new LeaseBuilder().withNewMetadata().withName("kcm").withNamespace(ns).endMetadata()
                    .withNewSpec().withHolderIdentity("me").withLeaseDurationSeconds(15).endSpec().build()).create();
            long gets = ProtobufWrites.GETS.sum();
            Lease read = ProtobufWrites.get(client, Lease.class, ns, "kcm");
            assertThat(ProtobufWrites.GETS.sum()).isEqualTo(gets + 1);
            // in full, managedFields too, as fabric8's get
            assertThat(Json.api().asJson(read)).isEqualTo(Json.api().asJson(client.leases().inNamespace(ns).withName("kcm").get()));
            assertThat(read.getMetadata().getResourceVersion()).isEqualTo(lease.getMetadata().getResourceVersion());
            assertThat(ProtobufWrites.get(client, Lease.class, ns, "absent")).isNull();
            assertThat(ProtobufWrites.GETS.sum()).isEqualTo(gets + 2);


            ProtobufWire.contentType("application/json");
            assertThat(ProtobufWrites.get(client, Lease.class, ns, "kcm").getSpec().getHolderIdentity()).isEqualTo("me");
            assertThat(ProtobufWrites.get(client, Lease.class, ns, "absent")).isNull();
            assertThat(ProtobufWrites.GETS.sum()).isEqualTo(gets + 2);
        }
    }

    @Test
    void whatProtobufCannotCarryAndTheJsonContentTypeGoAsJson() {
        try (KubernetesClient client = client()) {
            String ns = namespace(client);
            long sent = ProtobufWrites.SENT.sum();
            // a property the descriptors lack: JSON, which the server prunes as it always does
            ConfigMap unknown = new ConfigMapBuilder().withNewMetadata().withName("unknown").withNamespace(ns).endMetadata()
                    .addToData("k", "v").build();
            unknown.setAdditionalProperty("newerField", "x");
            assertThat(ProtobufWrites.create(client, unknown).getData()).containsEntry("k", "v");
            assertThat(ProtobufWrites.SENT.sum()).isEqualTo(sent);

            ProtobufWire.contentType("application/json");
            ConfigMap plain = new ConfigMapBuilder().withNewMetadata().withName("plain").withNamespace(ns).endMetadata().build();
            assertThat(ProtobufWrites.create(client, plain).getMetadata().getUid()).isNotBlank();
            assertThat(ProtobufWrites.SENT.sum()).isEqualTo(sent);

            ProtobufWire.reset();
            ProtobufWire.writesInProtobuf(false); // shadow mode
            ConfigMap shadow = new ConfigMapBuilder().withNewMetadata().withName("shadow").withNamespace(ns).endMetadata().build();
            assertThat(ProtobufWrites.create(client, shadow).getMetadata().getUid()).isNotBlank();
            assertThat(ProtobufWrites.SENT.sum()).isEqualTo(sent);
        }
    }

    /** A create whose connection drops after the request went out: sent once, thrown as an I/O error (code 0). */
    @Test
    void aCreateWhoseAnswerIsLostIsSentOnceAndFailsAsAnIoError() throws Exception {
        AtomicInteger posts = new AtomicInteger();
        try (ServerSocket server = new ServerSocket(0)) {
            Thread accept = new Thread(() -> {
                while (!server.isClosed()) {
                    try (Socket s = server.accept()) {
                        InputStream in = s.getInputStream();
                        byte[] head = new byte[4];
                        if (in.read(head) == 4 && new String(head).equals("POST")) {
                            posts.incrementAndGet();
                        }
                        Thread.sleep(200); // the request is in; the answer never comes
                    } catch (IOException | InterruptedException e) {
                        return;
                    }
                }
            });
            accept.setDaemon(true);
            accept.start();
            Config config = new ConfigBuilder(Config.empty()).withMasterUrl("http://127.0.0.1:" + server.getLocalPort())
                    .withRequestRetryBackoffLimit(0).build();
            try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config)
                    .withKubernetesSerialization(Json.api()).build()) {
                Pod pod = new PodBuilder().withNewMetadata().withGenerateName("lost-").endMetadata()
                        .withNewSpec().addNewContainer().withName("c").withImage("i").endContainer().endSpec().build();
                assertThatThrownBy(() -> ProtobufWrites.create(client, "ns", pod))
                        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                            assertThat(e.getCode()).isLessThanOrEqualTo(0); // no answer: what ApiErrors.isOutcomeUnknown reads as an I/O error
                            // an I/O error, as ApiErrors.isOutcomeUnknown reads it (Vert.x's closed connection is one)
                            assertThat(org.assertj.core.util.Throwables.getRootCause(e))
                                    .isInstanceOfAny(IOException.class, io.vertx.core.VertxException.class);
                        });
            }
            Thread.sleep(500); // long enough for a re-send (fabric8 retries after 100 ms and more) to arrive
            assertThat(posts.get()).isEqualTo(1);
        }
    }
}
