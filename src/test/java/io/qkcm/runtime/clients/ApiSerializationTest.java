package io.qkcm.runtime.clients;

import static org.assertj.core.api.Assertions.assertThat;

import java.security.KeyStore;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/** The shared, Blackbird-backed serialization reads and writes API objects exactly as fabric8's default. */
class ApiSerializationTest {

    private final KubernetesSerialization tuned = ApiSerialization.forClient();
    private final KubernetesSerialization plain = new KubernetesSerialization();

    static Pod pod() {
        return new PodBuilder().withNewMetadata().withName("web-1").withNamespace("ns").withUid("u1")
                .withLabels(Map.of("app", "web")).withAnnotations(Map.of("a", "b")).withResourceVersion("7")
                .addNewOwnerReference().withApiVersion("apps/v1").withKind("ReplicaSet").withName("web")
                .withUid("rs1").withController(true).withBlockOwnerDeletion(true).endOwnerReference()
                .addToFinalizers("f").endMetadata()
                .withNewSpec().withNodeName("n1").withTerminationGracePeriodSeconds(0L)
                .addNewContainer().withName("app").withImage("pause").addToArgs("x")
                .withNewResources().addToRequests("cpu", new Quantity("100m")).endResources()
                .addNewPort().withContainerPort(80).withName("http").endPort().endContainer().endSpec()
                .withNewStatus().withPhase("Running").addNewCondition().withType("Ready").withStatus("True")
                .withLastTransitionTime("2026-11-25T10:00:00Z").endCondition().endStatus()
                .build();
    }

    @Test
    void oneSerializationForAllClients() {
        assertThat(ApiSerialization.forClient()).isSameAs(tuned).isNotNull();
    }

    @Test
    void readsAndWritesAsFabric8sDefault() {
        Pod pod = pod();
        String json = plain.asJson(pod);
        assertThat(tuned.asJson(pod)).isEqualTo(json);
        Pod read = tuned.unmarshal(json, Pod.class);
        assertThat(read).isEqualTo(plain.unmarshal(json, Pod.class)).isEqualTo(pod);
        assertThat(read.getMetadata().getOwnerReferences().get(0).getController()).isTrue();

        Deployment d = new DeploymentBuilder().withNewMetadata().withName("d").withGeneration(3L).endMetadata()
                .withNewSpec().withReplicas(5).withNewStrategy().withType("RollingUpdate").withNewRollingUpdate()
                .withMaxSurge(new IntOrString("25%")).withMaxUnavailable(new IntOrString(0)).endRollingUpdate()
                .endStrategy().endSpec().build();
        String dj = plain.asJson(d);
        assertThat(tuned.asJson(d)).isEqualTo(dj);
        assertThat(tuned.unmarshal(dj, Deployment.class)).isEqualTo(d);
        // fields the model does not know are kept, as with fabric8's default
        Pod extra = tuned.unmarshal("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"futureField\":{\"x\":1}}",
                Pod.class);
        assertThat(extra.getAdditionalProperties()).containsKey("futureField");
        assertThat(tuned.asJson(extra)).isEqualTo(plain.asJson(extra));
    }

    @Test
    void inMemoryKeyStoresKeepTheirKeysWithOneIteration() throws Exception {
        SharedTransports.cheapInMemoryKeyStores();
        assertThat(System.getProperty(SharedTransports.KEY_PBE_ITERATIONS)).isNotNull();
        // a secret key: protected with the same PBE key derivation as a private key, no certificate needed
        javax.crypto.SecretKey key = new javax.crypto.spec.SecretKeySpec(new byte[] { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                12, 13, 14, 15, 16 }, "AES");
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null);
        ks.setEntry("k", new KeyStore.SecretKeyEntry(key), new KeyStore.PasswordProtection("changeit".toCharArray()));
        assertThat(ks.getKey("k", "changeit".toCharArray()).getEncoded()).isEqualTo(key.getEncoded());
        assertThat(List.of(ks.aliases().nextElement())).containsExactly("k");
    }
}
