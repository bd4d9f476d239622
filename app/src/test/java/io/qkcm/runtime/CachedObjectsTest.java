package io.qkcm.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * Objects decoded from watch events (what the informers cache) share one empty additionalProperties map;
 * objects decoded any other way (API responses a controller may change) keep their own; unknown fields
 * are kept; copies through fabric8's builders get a map of their own again.
 */
class CachedObjectsTest {

    private static final String POD = """
            {"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1","namespace":"default","uid":"u1",\
            "labels":{"app":"web"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web",\
            "uid":"u2","controller":true}]},\
            "spec":{"containers":[{"name":"web","image":"nginx","ports":[{"containerPort":80}],\
            "resources":{"requests":{"cpu":"100m"}},"futureContainerField":"kept"}],"nodeName":"n1"},\
            "status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}""";

    private final KubernetesSerialization serialization = Json.create(new ObjectMapper(), true);

    @Test
    void watchEventObjectsShareTheEmptyMap() {
        Pod pod = (Pod) serialization.unmarshal("{\"type\":\"ADDED\",\"object\":" + POD + "}", WatchEvent.class).getObject();
        List<Map<String, Object>> maps = additionalPropertiesOf(pod);
        assertThat(maps).hasSizeGreaterThan(8);
        Container container = pod.getSpec().getContainers().get(0);
        // the one object with an unknown field keeps it in a map of its own
        assertThat(container.getAdditionalProperties()).containsEntry("futureContainerField", "kept");
        List<Map<String, Object>> own = maps.stream().filter(m -> m != Collections.<String, Object>emptyMap()).toList();
        assertThat(own).as("maps not shared").containsExactly(container.getAdditionalProperties());
        assertThat(container.getResources().getRequests().get("cpu").getAdditionalProperties())
                .isSameAs(Collections.emptyMap());
        // nothing else changed: equal to the same object decoded as an API response
        Pod response = serialization.unmarshal(POD, Pod.class);
        assertThat(pod).isEqualTo(response);
        assertThat(serialization.asJson(pod)).isEqualTo(serialization.asJson(response));
    }

    /** A pod as the API server writes it: managedFields (here amid metadata's other fields) with nested fieldsV1. */
    private static final String POD_WITH_MANAGED_FIELDS = POD.replace("\"uid\":\"u1\",", """
            "uid":"u1","managedFields":[{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1",\
            "time":"2026-11-25T22:54:35Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},\
            "f:app":{}},"f:ownerReferences":{".":{},"k:{\\"uid\\":\\"u2\\"}":{}}},"f:spec":{"f:containers":\
            {"k:{\\"name\\":\\"web\\"}":{".":{},"f:image":{}}}}}},{"manager":"kwok","operation":"Update",\
            "subresource":"status","fieldsV1":{"f:status":{"f:phase":{}}}}],""");

    @Test
    void watchEventObjectsAreDecodedWithoutManagedFields() {
        assertThat(POD_WITH_MANAGED_FIELDS).contains("\"managedFields\"").contains("\"labels\"");
        Pod cached = (Pod) serialization.unmarshal("{\"type\":\"ADDED\",\"object\":" + POD_WITH_MANAGED_FIELDS + "}",
                WatchEvent.class).getObject();
        assertThat(cached.getMetadata().getManagedFields()).isNull();
        // the fields after managedFields are decoded as before: the same object as without it
        Pod response = serialization.unmarshal(POD, Pod.class);
        response.getMetadata().setManagedFields(null);
        assertThat(cached).isEqualTo(response);
        // an API response (what a controller may send back) keeps them
        Pod withFields = serialization.unmarshal(POD_WITH_MANAGED_FIELDS, Pod.class);
        assertThat(withFields.getMetadata().getManagedFields()).extracting("manager")
                .containsExactly("kube-controller-manager", "kwok");
        assertThat(withFields.getMetadata().getManagedFields().get(0).getFieldsV1().getAdditionalProperties())
                .containsKeys("f:metadata", "f:spec");
    }

    @Test
    void managedFieldsAreDecodedWhenTheSkipIsOff() {
        KubernetesSerialization s = Json.create(new ObjectMapper(), true, true, true, true);
        // the variant with managedFields decoded (bench/decode measures it)
        KubernetesSerialization withoutSkip = Json.create(new ObjectMapper(), true, true, true, false);
        String event = "{\"type\":\"MODIFIED\",\"object\":" + POD_WITH_MANAGED_FIELDS + "}";
        assertThat(((Pod) s.unmarshal(event, WatchEvent.class).getObject()).getMetadata().getManagedFields()).isNull();
        assertThat(((Pod) withoutSkip.unmarshal(event, WatchEvent.class).getObject()).getMetadata().getManagedFields())
                .hasSize(2);
    }

    @Test
    void otherObjectsKeepTheirOwnMaps() {
        Pod response = serialization.unmarshal(POD, Pod.class);
        assertThat(additionalPropertiesOf(response)).noneMatch(m -> m == Collections.<String, Object>emptyMap());
        response.getMetadata().setAdditionalProperty("x", 1);
        assertThat(response.getMetadata().getAdditionalProperties()).containsEntry("x", 1);
    }

    @Test
    void buildersCopyTheSharedMapIntoOneOfTheirOwn() {
        Pod cached = (Pod) serialization.unmarshal("{\"type\":\"MODIFIED\",\"object\":" + POD + "}", WatchEvent.class).getObject();
        assertThatThrownBy(() -> cached.setAdditionalProperty("x", 1)).isInstanceOf(UnsupportedOperationException.class);
        // fabric8's builders (the way controllers copy a cached object before changing it) copy the map
        Pod copy = new PodBuilder(cached).editMetadata().addToLabels("b", "c").endMetadata().build();
        copy.setAdditionalProperty("x", 1);
        copy.getMetadata().setAdditionalProperty("y", 2);
        copy.getSpec().getContainers().get(0).setAdditionalProperty("z", 3);
        assertThat(cached.getAdditionalProperties()).isEmpty();
        assertThat(cached.getMetadata().getAdditionalProperties()).isEmpty();
        // and the clone fabric8 makes by serialization too
        Pod clone = serialization.clone(cached);
        clone.getMetadata().setAdditionalProperty("y", 2);
        assertThat(cached.getMetadata().getAdditionalProperties()).isEmpty();
    }

    @Test
    void onlyPublicModelClassesAreTouched() {
        assertThat(CachedObjects.accessorsFor(Pod.class)).isNotNull();
        assertThat(CachedObjects.accessorsFor(WatchEvent.class)).isNotNull();
        assertThat(CachedObjects.accessorsFor(String.class)).isNull();
        assertThat(CachedObjects.accessorsFor(CachedObjectsTest.class)).isNull();
    }

    /** Every additionalProperties map reachable from {@code root} through the model's getters. */
    private static List<Map<String, Object>> additionalPropertiesOf(Object root) {
        List<Map<String, Object>> maps = new ArrayList<>();
        collect(root, maps, new IdentityHashMap<>());
        return maps;
    }

    @SuppressWarnings("unchecked")
    private static void collect(Object o, List<Map<String, Object>> maps, IdentityHashMap<Object, Boolean> seen) {
        if (o == null || seen.put(o, Boolean.TRUE) != null) {
            return;
        }
        if (o instanceof List<?> list) {
            list.forEach(e -> collect(e, maps, seen));
            return;
        }
        if (o instanceof Map<?, ?> map) {
            map.values().forEach(e -> collect(e, maps, seen));
            return;
        }
        if (!o.getClass().getName().startsWith("io.fabric8.kubernetes.api.model")) {
            return;
        }
        for (var m : o.getClass().getMethods()) {
            if (m.getParameterCount() != 0 || !m.getName().startsWith("get") || m.getName().equals("getClass")) {
                continue;
            }
            try {
                Object v = m.invoke(o);
                if (m.getName().equals("getAdditionalProperties")) {
                    maps.add((Map<String, Object>) v);
                } else {
                    collect(v, maps, seen);
                }
            } catch (ReflectiveOperationException e) {
                throw new AssertionError(e);
            }
        }
    }
}
