package io.qkcm.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.deser.BeanDeserializerBase;
import com.fasterxml.jackson.databind.deser.DefaultDeserializationContext;
import com.fasterxml.jackson.databind.deser.SettableBeanProperty;
import com.fasterxml.jackson.databind.deser.impl.MethodProperty;
import com.fasterxml.jackson.databind.deser.std.DelegatingDeserializer;
import com.fasterxml.jackson.module.blackbird.BlackbirdModule;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/** The shared, Blackbird-backed serialization reads and writes API objects exactly as fabric8's default. */
class ApiSerializationTest {

    private final KubernetesSerialization tuned = io.qkcm.runtime.Json.api();
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
        assertThat(io.qkcm.runtime.Json.api()).isSameAs(tuned).isNotNull();
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

    /**
     * Pins two library internals the decoding's speed rests on (bench/results/2026-11-25-decode): Jackson
     * asks the last registered module's BeanDeserializerModifier first, so Blackbird registered after
     * fabric8's modules replaces the setters before fabric8 wraps them; and Blackbird keeps its setter for
     * a property of a model type only because CachedObjects' wrapper is marked as one of Jackson's own.
     */
    @Test
    void blackbirdGeneratesTheModelsSettersUnderFabric8sWrappers() throws Exception {
        ObjectMapper last = new ObjectMapper();
        Json.create(last, true, true);
        for (String property : List.of("nodeName", "containers", "affinity", "securityContext")) {
            assertThat(chain(last, PodSpec.class, property)).as(property)
                    .anyMatch(c -> c.getName().startsWith("com.fasterxml.jackson.module.blackbird."))
                    .last().isEqualTo(MethodProperty.class);
        }
        // registered first (as until 2026-11-25), it sees only fabric8's wrappers: reflection everywhere
        ObjectMapper first = new ObjectMapper().registerModule(new BlackbirdModule());
        Json.create(first, true, false);
        assertThat(chain(first, PodSpec.class, "nodeName"))
                .noneMatch(c -> c.getName().startsWith("com.fasterxml.jackson.module.blackbird."));
    }

    /** The classes of a bean property's delegation chain, outermost first, as bound by {@code mapper}. */
    private static List<Class<?>> chain(ObjectMapper mapper, Class<?> type, String property) throws Exception {
        DeserializationContext ctxt = ((DefaultDeserializationContext) mapper.getDeserializationContext())
                .createInstance(mapper.getDeserializationConfig(), null, null);
        JsonDeserializer<Object> d = ctxt.findRootValueDeserializer(mapper.constructType(type));
        while (d instanceof DelegatingDeserializer dd) {
            @SuppressWarnings("unchecked")
            JsonDeserializer<Object> inner = (JsonDeserializer<Object>) dd.getDelegatee();
            d = inner;
        }
        SettableBeanProperty p = ((BeanDeserializerBase) d).findProperty(property);
        List<Class<?>> classes = new java.util.ArrayList<>();
        while (p != null) {
            classes.add(p.getClass());
            SettableBeanProperty next = null;
            for (Class<?> k = p.getClass(); k != null && next == null; k = k.getSuperclass()) {
                for (Field f : k.getDeclaredFields()) {
                    if (SettableBeanProperty.class.isAssignableFrom(f.getType()) && !Modifier.isStatic(f.getModifiers())) {
                        f.setAccessible(true);
                        next = (SettableBeanProperty) f.get(p);
                        break;
                    }
                }
            }
            p = next;
        }
        return classes;
    }

}
