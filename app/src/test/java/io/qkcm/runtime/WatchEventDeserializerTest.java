package io.qkcm.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * One-pass watch-event decoding gives exactly what fabric8's two-pass decoding gives, for the shapes the
 * API server sends and for the ones it does not (kind not first, unknown kinds, errors, null).
 */
class WatchEventDeserializerTest {

    private static final String POD = """
            {"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-7d9f8-abcde","generateName":"web-7d9f8-",\
            "namespace":"default","uid":"2b1c3d4e-0000-4000-8000-000000000001","resourceVersion":"4711",\
            "creationTimestamp":"2026-11-25T10:00:00Z","labels":{"app":"web","pod-template-hash":"7d9f8"},\
            "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7d9f8",\
            "uid":"2b1c3d4e-0000-4000-8000-000000000002","controller":true,"blockOwnerDeletion":true}],\
            "managedFields":[{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1",\
            "time":"2026-11-25T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{}}}}]},\
            "spec":{"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":80,"protocol":"TCP"}],\
            "resources":{"requests":{"cpu":"100m","memory":"64Mi"}},"terminationMessagePolicy":"File"}],\
            "restartPolicy":"Always","terminationGracePeriodSeconds":30,"nodeName":"kwok-node-1",\
            "tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute",\
            "tolerationSeconds":300}],"priority":0},\
            "status":{"phase":"Running","conditions":[{"type":"Ready","status":"True",\
            "lastTransitionTime":"2026-11-25T10:00:02Z"}],"podIP":"10.0.0.7","startTime":"2026-11-25T10:00:01Z",\
            "containerStatuses":[{"name":"web","ready":true,"restartCount":0,"image":"nginx:1.27","imageID":"",\
            "state":{"running":{"startedAt":"2026-11-25T10:00:01Z"}}}]},"futureField":{"x":[1,2.5,true,null]}}""";

    static List<String> events() {
        return List.of(
                // as the API server writes them: kind, apiVersion, then the rest
                "{\"type\":\"ADDED\",\"object\":" + POD + "}",
                "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"ReplicaSet\",\"apiVersion\":\"apps/v1\",\"metadata\":"
                        + "{\"name\":\"web\",\"namespace\":\"default\",\"resourceVersion\":\"9\"},\"spec\":{\"replicas\":3,"
                        + "\"selector\":{\"matchLabels\":{\"app\":\"web\"}}},\"status\":{\"replicas\":2,\"readyReplicas\":1}}}",
                "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":"
                        + "\"12746\",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"},\"creationTimestamp\":null},"
                        + "\"spec\":{\"containers\":null},\"status\":{}}}",
                "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                        + "\"Failure\",\"message\":\"too old resource version: 1 (2)\",\"reason\":\"Expired\",\"code\":410}}",
                // not the server's order: apiVersion first, type after object, kind late, kind missing
                "{\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}},\"type\":\"DELETED\"}",
                "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p\"},\"kind\":\"Pod\",\"apiVersion\":\"v1\"}}",
                "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"apiVersion\":\"v1\"}}",
                // a kind fabric8 does not know, a non-string kind, no object, an unknown top-level field
                "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Widget\",\"apiVersion\":\"example.com/v1\",\"metadata\":"
                        + "{\"name\":\"w\"},\"spec\":{\"size\":3}}}",
                "{\"type\":\"ADDED\",\"object\":{\"kind\":{\"odd\":1},\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"x\"}}}",
                "{\"type\":\"ADDED\",\"object\":null}",
                "{\"type\":\"ADDED\",\"extra\":[1,{\"a\":\"b\"}],\"object\":" + POD + "}");
    }

    @ParameterizedTest
    @MethodSource("events")
    void decodesAsFabric8Does(String json) {
        // managedFields decoded too here: skipping them for the caches is CachedObjectsTest's
        KubernetesSerialization direct = Json.create(new ObjectMapper(), true, true, true, false);
        KubernetesSerialization tree = Json.create(new ObjectMapper(), false);
        WatchEvent expected = tree.unmarshal(json, WatchEvent.class);
        WatchEvent actual = direct.unmarshal(json, WatchEvent.class);
        assertThat(actual).isEqualTo(expected);
        assertThat(actual.getObject() == null ? null : actual.getObject().getClass())
                .isEqualTo(expected.getObject() == null ? null : expected.getObject().getClass());
    }

    @ParameterizedTest
    @MethodSource("events")
    void decodesTheSameFromAStream(String json) {
        // fabric8's other entry point (bytes), which goes through the same deserializer
        KubernetesSerialization direct = Json.create(new ObjectMapper(), true, true, true, false);
        KubernetesSerialization tree = Json.create(new ObjectMapper(), false);
        WatchEvent expected = tree.unmarshal(new java.io.ByteArrayInputStream(json.getBytes()), WatchEvent.class);
        assertThat((WatchEvent) direct.unmarshal(new java.io.ByteArrayInputStream(json.getBytes()), WatchEvent.class))
                .isEqualTo(expected);
    }

    @org.junit.jupiter.api.Test
    void bindsTheServersShapeInOnePass() {
        KubernetesSerialization direct = Json.create(new ObjectMapper(), true);
        long before = WatchEventDeserializer.DIRECT.sum();
        WatchEvent pod = direct.unmarshal("{\"type\":\"ADDED\",\"object\":" + POD + "}", WatchEvent.class);
        assertThat(pod.getObject()).isInstanceOf(Pod.class);
        assertThat(((Pod) pod.getObject()).getSpec().getContainers().get(0).getResources().getRequests().get("cpu")
                .toString()).isEqualTo("100m");
        assertThat(((Pod) pod.getObject()).getAdditionalProperties()).containsKey("futureField");
        assertThat(WatchEventDeserializer.DIRECT.sum()).isEqualTo(before + 1);

        WatchEvent rs = direct.unmarshal(events().get(1), WatchEvent.class);
        assertThat(rs.getObject()).isInstanceOf(ReplicaSet.class);
        WatchEvent status = direct.unmarshal(events().get(3), WatchEvent.class);
        assertThat(status.getObject()).isInstanceOf(Status.class);
        WatchEvent widget = direct.unmarshal(events().get(7), WatchEvent.class);
        assertThat(widget.getObject()).isInstanceOf(GenericKubernetesResource.class);
    }
}
