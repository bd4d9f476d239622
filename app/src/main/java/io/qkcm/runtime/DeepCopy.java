package io.qkcm.runtime;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.EndpointsBuilder;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.NodeStatusBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.apps.ControllerRevision;
import io.fabric8.kubernetes.api.model.apps.ControllerRevisionBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.fabric8.kubernetes.api.model.apps.DeploymentConditionBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.CronJobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobSpec;
import io.fabric8.kubernetes.api.model.batch.v1.JobSpecBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;

/**
 * Upstream's generated {@code DeepCopy()}: a copy of an API object that can be changed without touching
 * the original (an informer's cached object is read-only by contract, as a lister's in client-go).
 * <p>
 * Copies are made with fabric8's builders, which rebuild every nested model object, list and map (the
 * cached objects' shared empty maps included): ~7× cheaper than a JSON round trip, measured on
 * Deployments (bench/results/2026-11-26-copies). What a builder copy shares with its original: Strings
 * and boxed values (immutable), Quantities (never changed in place by qkcm) and the values inside
 * {@code additionalProperties} (fields the model does not know: never changed by qkcm); {@code DeepCopyTest}
 * walks every other reachable object of each typed copy. {@link #of(Object)} takes any model object: the
 * types above by their builder, anything else by a round trip through the API serialization, which
 * shares nothing at all.
 */
public final class DeepCopy {

    private DeepCopy() {
    }

    public static Deployment of(Deployment o) {
        return o == null ? null : new DeploymentBuilder(o).build();
    }

    public static DeploymentCondition of(DeploymentCondition o) {
        return o == null ? null : new DeploymentConditionBuilder(o).build();
    }

    public static ReplicaSet of(ReplicaSet o) {
        return o == null ? null : new ReplicaSetBuilder(o).build();
    }

    public static StatefulSet of(StatefulSet o) {
        return o == null ? null : new StatefulSetBuilder(o).build();
    }

    public static DaemonSet of(DaemonSet o) {
        return o == null ? null : new DaemonSetBuilder(o).build();
    }

    /** Its {@code data} (raw JSON: maps, lists and scalars, which the builder would share) is copied too. */
    public static ControllerRevision of(ControllerRevision o) {
        if (o == null) {
            return null;
        }
        ControllerRevision copy = new ControllerRevisionBuilder(o).build();
        copy.setData(jsonValue(o.getData()));
        return copy;
    }

    /** A copy of a JSON value: maps, lists and trees rebuilt, scalars and raw text (immutable) kept, anything else by {@link #of(Object)}. */
    private static Object jsonValue(Object v) {
        if (v instanceof java.util.Map<?, ?> m) {
            java.util.Map<Object, Object> copy = new java.util.LinkedHashMap<>(m.size() * 2);
            m.forEach((k, e) -> copy.put(k, jsonValue(e)));
            return copy;
        }
        if (v instanceof java.util.List<?> l) {
            java.util.List<Object> copy = new java.util.ArrayList<>(l.size());
            l.forEach(e -> copy.add(jsonValue(e)));
            return copy;
        }
        if (v == null || v instanceof String || v instanceof Number || v instanceof Boolean
                || v instanceof com.fasterxml.jackson.databind.util.RawValue) {
            // RawValue: raw JSON text qkcm writes into a revision (ControllerHistory), immutable
            return v;
        }
        if (v instanceof com.fasterxml.jackson.databind.JsonNode n) {
            return n.deepCopy();
        }
        return of(v);
    }

    public static CronJob of(CronJob o) {
        return o == null ? null : new CronJobBuilder(o).build();
    }

    public static Job of(Job o) {
        return o == null ? null : new JobBuilder(o).build();
    }

    public static JobSpec of(JobSpec o) {
        return o == null ? null : new JobSpecBuilder(o).build();
    }

    public static Pod of(Pod o) {
        return o == null ? null : new PodBuilder(o).build();
    }

    public static PodSpec of(PodSpec o) {
        return o == null ? null : new PodSpecBuilder(o).build();
    }

    public static PodStatus of(PodStatus o) {
        return o == null ? null : new PodStatusBuilder(o).build();
    }

    public static PodTemplateSpec of(PodTemplateSpec o) {
        return o == null ? null : new PodTemplateSpecBuilder(o).build();
    }

    public static PersistentVolumeClaim of(PersistentVolumeClaim o) {
        return o == null ? null : new PersistentVolumeClaimBuilder(o).build();
    }

    public static EndpointSlice of(EndpointSlice o) {
        return o == null ? null : new EndpointSliceBuilder(o).build();
    }

    public static Endpoints of(Endpoints o) {
        return o == null ? null : new EndpointsBuilder(o).build();
    }

    public static ConfigMap of(ConfigMap o) {
        return o == null ? null : new ConfigMapBuilder(o).build();
    }

    public static ObjectMeta of(ObjectMeta o) {
        return o == null ? null : new ObjectMetaBuilder(o).build();
    }

    public static LabelSelector of(LabelSelector o) {
        return o == null ? null : new LabelSelectorBuilder(o).build();
    }

    /**
     * The node lifecycle controller copies each node, its health data's status and Lease on every health pass
     * (every node, every 5 s) and a status for every pod bound to a node: through JSON, 73 of that controller's
     * 101 samples in the QPS-1000 profile were Jackson; a kwok Node's copy takes about 3 µs of CPU by builder
     * against 22 through JSON under C1 (bench/copy, bench/results/2026-11-28-defaults/copy).
     */
    public static Node of(Node o) {
        return o == null ? null : new NodeBuilder(o).build();
    }

    public static NodeStatus of(NodeStatus o) {
        return o == null ? null : new NodeStatusBuilder(o).build();
    }

    /** Renew and acquire times are {@link java.time.ZonedDateTime}s: immutable, shared. */
    public static Lease of(Lease o) {
        return o == null ? null : new LeaseBuilder(o).build();
    }

    /**
     * Any model object: by its builder when it is one of the types above (whatever the static type at the
     * call), else through the API serialization (Jackson writes it and reads it back: slower, and correct for
     * every model class).
     */
    @SuppressWarnings("unchecked")
    public static <T> T of(T o) {
        if (o == null) {
            return null;
        }
        Object copy;
        if (o instanceof Pod x) {
            copy = of(x);
        } else if (o instanceof ReplicaSet x) {
            copy = of(x);
        } else if (o instanceof Deployment x) {
            copy = of(x);
        } else if (o instanceof StatefulSet x) {
            copy = of(x);
        } else if (o instanceof DaemonSet x) {
            copy = of(x);
        } else if (o instanceof Job x) {
            copy = of(x);
        } else if (o instanceof CronJob x) {
            copy = of(x);
        } else if (o instanceof ControllerRevision x) {
            copy = of(x);
        } else if (o instanceof EndpointSlice x) {
            copy = of(x);
        } else if (o instanceof Endpoints x) {
            copy = of(x);
        } else if (o instanceof PersistentVolumeClaim x) {
            copy = of(x);
        } else if (o instanceof ConfigMap x) {
            copy = of(x);
        } else if (o instanceof PodTemplateSpec x) {
            copy = of(x);
        } else if (o instanceof Node x) {
            copy = of(x);
        } else if (o instanceof NodeStatus x) {
            copy = of(x);
        } else if (o instanceof Lease x) {
            copy = of(x);
        } else {
            copy = Json.api().clone(o);
        }
        return (T) copy;
    }
}
