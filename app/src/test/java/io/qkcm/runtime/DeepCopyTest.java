package io.qkcm.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.ControllerRevision;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * {@link DeepCopy}'s copies are equal to their originals and share nothing a controller could change with
 * them: every model object, list and map reachable from a copy is its own.
 */
class DeepCopyTest {

    private static final KubernetesSerialization JSON = Json.api();

    static final String META = """
            "metadata":{"name":"web","namespace":"default","uid":"u1","resourceVersion":"12","generation":3,
             "labels":{"app":"web"},"finalizers":["f/x"],"annotations":{"a":"b"},
             "creationTimestamp":"2026-11-26T00:00:00Z",
             "ownerReferences":[{"apiVersion":"v1","kind":"X","name":"o","uid":"u0","controller":true}],
             "managedFields":[{"manager":"m","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]}""";
    static final String TEMPLATE = """
            {"metadata":{"labels":{"app":"web","tier":"fe"},"annotations":{"a":"b"}},
             "spec":{"containers":[{"name":"web","image":"nginx","args":["-g","daemon off;"],
               "ports":[{"containerPort":80,"protocol":"TCP"}],
               "env":[{"name":"A","value":"1"},{"name":"B","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],
               "resources":{"requests":{"cpu":"100m"},"limits":{"memory":"128Mi"}},
               "readinessProbe":{"httpGet":{"path":"/","port":80},"periodSeconds":5}}],
              "tolerations":[{"key":"k","operator":"Exists"}],"nodeSelector":{"disk":"ssd"},
              "volumes":[{"name":"v","configMap":{"name":"c","items":[{"key":"k","path":"p"}]}}]}}""";
    static final String SELECTOR = """
            {"matchLabels":{"app":"web"},"matchExpressions":[{"key":"tier","operator":"In","values":["fe","be"]}]}""";

    static <T> T read(String json, Class<T> type) {
        return JSON.unmarshal(json, type);
    }

    static Deployment deployment() {
        return read("""
                {"apiVersion":"apps/v1","kind":"Deployment",%s,
                 "spec":{"replicas":10,"selector":%s,
                  "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%%","maxUnavailable":1}},
                  "template":%s},
                 "status":{"observedGeneration":3,"replicas":10,"collisionCount":1,"conditions":[
                   {"type":"Available","status":"True","reason":"R","message":"m",
                    "lastUpdateTime":"2026-11-26T00:00:00Z","lastTransitionTime":"2026-11-26T00:00:00Z"}]},
                 "futureField":{"x":[1,2]}}""".formatted(META, SELECTOR, TEMPLATE), Deployment.class);
    }

    @Test
    void typedCopiesShareNothingChangeable() {
        Deployment d = deployment();
        ReplicaSet rs = read("""
                {"apiVersion":"apps/v1","kind":"ReplicaSet",%s,"spec":{"replicas":2,"selector":%s,"template":%s},
                 "status":{"replicas":2,"conditions":[{"type":"ReplicaFailure","status":"True"}]}}"""
                .formatted(META, SELECTOR, TEMPLATE), ReplicaSet.class);
        StatefulSet sts = read("""
                {"apiVersion":"apps/v1","kind":"StatefulSet",%s,"spec":{"replicas":2,"selector":%s,"template":%s,
                 "volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],
                  "resources":{"requests":{"storage":"1Gi"}}}}]},"status":{"replicas":2}}"""
                .formatted(META, SELECTOR, TEMPLATE), StatefulSet.class);
        DaemonSet ds = read("""
                {"apiVersion":"apps/v1","kind":"DaemonSet",%s,"spec":{"selector":%s,"template":%s,
                 "updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":1}}},
                 "status":{"numberReady":1}}""".formatted(META, SELECTOR, TEMPLATE), DaemonSet.class);
        Job job = read("""
                {"apiVersion":"batch/v1","kind":"Job",%s,"spec":{"completions":3,"selector":%s,"template":%s,
                 "podFailurePolicy":{"rules":[{"action":"Ignore","onPodConditions":[{"type":"DisruptionTarget"}]}]}},
                 "status":{"active":1,"uncountedTerminatedPods":{"succeeded":["a"]}}}"""
                .formatted(META, SELECTOR, TEMPLATE), Job.class);
        CronJob cj = read("""
                {"apiVersion":"batch/v1","kind":"CronJob",%s,"spec":{"schedule":"* * * * *",
                 "jobTemplate":{"metadata":{"labels":{"a":"b"}},"spec":{"template":%s}}},
                 "status":{"active":[{"kind":"Job","name":"j","uid":"u"}],"lastScheduleTime":"2026-11-26T00:00:00Z"}}"""
                .formatted(META, TEMPLATE), CronJob.class);
        Pod pod = read("""
                {"apiVersion":"v1","kind":"Pod",%s,"spec":%s,
                 "status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}],
                  "containerStatuses":[{"name":"web","ready":true,"state":{"running":{"startedAt":"2026-11-26T00:00:00Z"}}}]}}"""
                .formatted(META, read(TEMPLATE, PodTemplateSpec.class).getSpec() == null ? "{}"
                        : JSON.asJson(read(TEMPLATE, PodTemplateSpec.class).getSpec())), Pod.class);
        PersistentVolumeClaim pvc = sts.getSpec().getVolumeClaimTemplates().get(0);
        EndpointSlice slice = read("""
                {"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice",%s,"addressType":"IPv4",
                 "endpoints":[{"addresses":["10.0.0.1"],"conditions":{"ready":true},"targetRef":{"kind":"Pod","name":"p"},
                  "hints":{"forZones":[{"name":"z"}]}}],"ports":[{"name":"http","port":80,"protocol":"TCP"}]}"""
                .formatted(META), EndpointSlice.class);
        Endpoints ep = read("""
                {"apiVersion":"v1","kind":"Endpoints",%s,"subsets":[{"addresses":[{"ip":"10.0.0.1",
                 "targetRef":{"kind":"Pod","name":"p"}}],"ports":[{"port":80}]}]}""".formatted(META), Endpoints.class);
        ConfigMap cm = read("""
                {"apiVersion":"v1","kind":"ConfigMap",%s,"data":{"ca.crt":"x"},"binaryData":{"b":"eA=="}}"""
                .formatted(META), ConfigMap.class);

        check(d, DeepCopy.of(d));
        check(d.getStatus().getConditions().get(0), DeepCopy.of(d.getStatus().getConditions().get(0)));
        check(d.getSpec().getSelector(), DeepCopy.of(d.getSpec().getSelector()));
        check(d.getSpec().getTemplate(), DeepCopy.of(d.getSpec().getTemplate()));
        check(d.getSpec().getTemplate().getSpec(), DeepCopy.of(d.getSpec().getTemplate().getSpec()));
        check(d.getMetadata(), DeepCopy.of(d.getMetadata()));
        check(rs, DeepCopy.of(rs));
        check(sts, DeepCopy.of(sts));
        check(ds, DeepCopy.of(ds));
        check(job, DeepCopy.of(job));
        check(job.getSpec(), DeepCopy.of(job.getSpec()));
        check(cj, DeepCopy.of(cj));
        check(pod, DeepCopy.of(pod));
        check(pod.getStatus(), DeepCopy.of(pod.getStatus()));
        check(pvc, DeepCopy.of(pvc));
        check(slice, DeepCopy.of(slice));
        check(ep, DeepCopy.of(ep));
        check(cm, DeepCopy.of(cm));
        assertThat(DeepCopy.of((Deployment) null)).isNull();
        assertThat(DeepCopy.of((Object) null)).isNull();
    }

    @Test
    void nodesTheirStatusAndLeasesAreCopiedByBuilder() {
        Node node = read("""
                {"apiVersion":"v1","kind":"Node",%s,"spec":{"podCIDR":"10.0.0.0/24","podCIDRs":["10.0.0.0/24"],
                 "taints":[{"key":"k","effect":"NoSchedule","timeAdded":"2026-11-26T00:00:00Z"}]},
                 "status":{"capacity":{"cpu":"2","pods":"110"},"allocatable":{"cpu":"2"},
                  "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady",
                   "lastHeartbeatTime":"2026-11-26T00:00:00Z","lastTransitionTime":"2026-11-26T00:00:00Z"}],
                  "addresses":[{"type":"InternalIP","address":"10.0.0.1"}],
                  "daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},
                  "nodeInfo":{"kubeletVersion":"v1.34.4","architecture":"amd64"},
                  "images":[{"names":["nginx:1"],"sizeBytes":1000}],
                  "volumesAttached":[{"name":"v","devicePath":"/dev/x"}]}}""".formatted(META), Node.class);
        Lease lease = read("""
                {"apiVersion":"coordination.k8s.io/v1","kind":"Lease",%s,"spec":{"holderIdentity":"node-1",
                 "leaseDurationSeconds":40,"renewTime":"2026-11-26T00:00:00.123456Z",
                 "acquireTime":"2026-11-26T00:00:00.000000Z","leaseTransitions":1}}""".formatted(META), Lease.class);
        check(node, DeepCopy.of(node));
        check(node.getStatus(), DeepCopy.of(node.getStatus()));
        check(lease, DeepCopy.of(lease));
        // by builder, not through JSON: immutable values are the original's own, not read back
        assertThat(DeepCopy.of(node).getStatus().getNodeInfo().getKubeletVersion())
                .isSameAs(node.getStatus().getNodeInfo().getKubeletVersion());
        assertThat(DeepCopy.of(lease).getSpec().getRenewTime()).isSameAs(lease.getSpec().getRenewTime());
        // the node lifecycle controller's health data hold them as Objects too
        assertThat(DeepCopy.of((Object) node)).isInstanceOf(Node.class).isNotSameAs(node).isEqualTo(node);
        assertThat(DeepCopy.of((Object) lease)).isInstanceOf(Lease.class).isNotSameAs(lease).isEqualTo(lease);
        assertThat(DeepCopy.of((Node) null)).isNull();
        assertThat(DeepCopy.of((Lease) null)).isNull();
    }

    @Test
    void revisionsDataIsCopiedToo() {
        ControllerRevision rev = read("""
                {"apiVersion":"apps/v1","kind":"ControllerRevision",%s,"revision":2,
                 "data":{"spec":{"template":%s,"$patch":"replace"}}}""".formatted(META, TEMPLATE), ControllerRevision.class);
        check(rev, DeepCopy.of(rev));
        // as qkcm writes them (ControllerHistory): raw JSON text, immutable
        ControllerRevision written = new io.fabric8.kubernetes.api.model.apps.ControllerRevisionBuilder(rev)
                .withData(new com.fasterxml.jackson.databind.util.RawValue("{\"spec\":{}}")).build();
        ControllerRevision copy = DeepCopy.of(written);
        assertThat(JSON.asJson(copy)).isEqualTo(JSON.asJson(written)).contains("\"data\":{\"spec\":{}}");
    }

    @Test
    void anyObjectIsCopiedWhateverItsStaticType() {
        Object d = deployment();
        Object copy = DeepCopy.of(d);
        assertThat(copy).isInstanceOf(Deployment.class);
        check(d, copy);
        // a type without an overload: the round trip through the API serialization
        Service svc = read("""
                {"apiVersion":"v1","kind":"Service",%s,"spec":{"selector":{"app":"web"},
                 "ports":[{"name":"http","port":80,"targetPort":"http"}]}}""".formatted(META), Service.class);
        check(svc, DeepCopy.of(svc));
    }

    @Test
    void cachedObjectsSharedEmptyMapsAreNotShared() {
        // what the informers hold: decoded from a watch event, its empty maps the one shared empty map
        String event = "{\"type\":\"ADDED\",\"object\":" + JSON.asJson(deployment()) + "}";
        Deployment cached = (Deployment) JSON.unmarshal(event, io.fabric8.kubernetes.api.model.WatchEvent.class).getObject();
        assertThat(cached.getSpec().getStrategy().getAdditionalProperties()).isSameAs(Collections.emptyMap());
        Deployment copy = DeepCopy.of(cached);
        copy.getSpec().getStrategy().getAdditionalProperties().put("x", "y");
        assertThat(cached.getSpec().getStrategy().getAdditionalProperties()).isEmpty();
    }

    static void check(Object original, Object copy) {
        assertThat(copy).isNotSameAs(original).isEqualTo(original);
        assertThat(JSON.asJson(copy)).isEqualTo(JSON.asJson(original));
        Set<Object> reachable = Collections.newSetFromMap(new IdentityHashMap<>());
        walk(original, reachable::add);
        List<String> shared = new ArrayList<>();
        walk(copy, o -> {
            if (reachable.contains(o) && o != Collections.emptyMap() && o != Collections.emptyList()) {
                shared.add(o.getClass().getName());
            }
        });
        assertThat(shared).as("changeable objects shared by %s and its copy", original.getClass().getSimpleName())
                .isEmpty();
    }

    /**
     * Visits every changeable object reachable from {@code o}: model objects, lists and maps. Strings,
     * boxed values, java.time values (immutable), Quantities (never changed in place) and the values of
     * additionalProperties (fields the model does not know, never changed) are not visited.
     */
    static void walk(Object o, Consumer<Object> visit) {
        if (o == null || o instanceof String || o instanceof Number || o instanceof Boolean || o instanceof Quantity
                || o instanceof Enum<?> || o instanceof java.time.temporal.TemporalAccessor) {
            return;
        }
        visit.accept(o);
        if (o instanceof Collection<?> c) {
            c.forEach(e -> walk(e, visit));
            return;
        }
        if (o instanceof Map<?, ?> m) {
            m.values().forEach(v -> walk(v, visit));
            return;
        }
        assertThat(o.getClass().getName()).as("a model object").startsWith("io.fabric8.kubernetes.api.model");
        for (Class<?> c = o.getClass(); c != Object.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers())) {
                    continue;
                }
                f.setAccessible(true);
                try {
                    Object v = f.get(o);
                    if (f.getName().equals("additionalProperties")) {
                        if (v != null) {
                            visit.accept(v);
                        }
                    } else {
                        walk(v, visit);
                    }
                } catch (IllegalAccessException e) {
                    throw new AssertionError(e);
                }
            }
        }
    }
}
