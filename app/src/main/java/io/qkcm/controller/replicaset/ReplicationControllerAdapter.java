package io.qkcm.controller.replicaset;

import io.qkcm.runtime.informers.Indexes;

import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.ReplicationController;
import io.fabric8.kubernetes.api.model.ReplicationControllerCondition;
import io.fabric8.kubernetes.api.model.ReplicationControllerSpec;
import io.fabric8.kubernetes.api.model.ReplicationControllerStatus;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetCondition;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetSpec;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.qkcm.runtime.informers.SharedInformers;
import io.qkcm.runtime.clients.ProtobufWrites;

/**
 * ReplicationControllers seen as ReplicaSets, as upstream's pkg/controller/replication conversion
 * layer: the map selector becomes matchLabels, status converts field by field (RCs have no
 * terminatingReplicas), and events are recorded on the ReplicationController.
 */
final class ReplicationControllerAdapter implements ReplicaSetSource {

    private final SharedIndexInformer<ReplicationController> informer;
    private final KubernetesClient client;

    ReplicationControllerAdapter(SharedInformers informers, KubernetesClient client) {
        this.informer = informers.informerFor(ReplicationController.class);
        this.client = client;
    }

    @Override
    public String apiVersion() {
        return "v1";
    }

    @Override
    public String kind() {
        return "ReplicationController";
    }

    @Override
    public SharedIndexInformer<?> informer() {
        return informer;
    }

    @Override
    public void addEventHandler(ResourceEventHandler<ReplicaSet> handler) {
        informer.addEventHandler(new ResourceEventHandler<ReplicationController>() {
            @Override
            public void onAdd(ReplicationController obj) {
                handler.onAdd(toReplicaSet(obj));
            }

            @Override
            public void onUpdate(ReplicationController oldObj, ReplicationController newObj) {
                handler.onUpdate(toReplicaSet(oldObj), toReplicaSet(newObj));
            }

            @Override
            public void onDelete(ReplicationController obj, boolean deletedFinalStateUnknown) {
                handler.onDelete(toReplicaSet(obj), deletedFinalStateUnknown);
            }
        });
    }

    @Override
    public ReplicaSet getCached(String namespace, String name) {
        ReplicationController rc = informer.getIndexer().getByKey(Cache.namespaceKeyFunc(namespace, name));
        return rc == null ? null : toReplicaSet(rc);
    }

    @Override
    public List<ReplicaSet> listCached(String namespace) {
        List<ReplicaSet> out = new ArrayList<>();
        for (ReplicationController rc : Indexes.byIndex(informer, Cache.NAMESPACE_INDEX, namespace)) {
            out.add(toReplicaSet(rc));
        }
        return out;
    }

    /** Upstream's controllerUID indexer only understands ReplicaSets, so for RCs it never matches. */
    @Override
    public List<ReplicaSet> listByControllerUid(String uid) {
        return List.of();
    }

    @Override
    public ReplicaSet getLive(String namespace, String name) {
        ReplicationController rc = client.replicationControllers().inNamespace(namespace).withName(name).get();
        return rc == null ? null : toReplicaSet(rc);
    }

    @Override
    public ReplicaSet updateStatus(ReplicaSet rs) {
        ReplicationController rc = toReplicationController(rs);
        return toReplicaSet(ProtobufWrites.updateStatus(client, rc));
    }

    @Override
    public HasMetadata eventObject(ReplicaSet rs) {
        return toReplicationController(rs);
    }

    @Override
    public boolean hasTerminatingReplicas() {
        return false;
    }

    static ReplicaSet toReplicaSet(ReplicationController rc) {
        ReplicaSet rs = new ReplicaSet();
        rs.setMetadata(rc.getMetadata());
        ReplicaSetSpec spec = new ReplicaSetSpec();
        ReplicationControllerSpec in = rc.getSpec() == null ? new ReplicationControllerSpec() : rc.getSpec();
        spec.setReplicas(in.getReplicas());
        spec.setMinReadySeconds(in.getMinReadySeconds());
        if (in.getSelector() != null) {
            LabelSelector selector = new LabelSelector();
            selector.setMatchLabels(in.getSelector());
            spec.setSelector(selector);
        }
        spec.setTemplate(in.getTemplate() == null ? new PodTemplateSpec() : in.getTemplate());
        rs.setSpec(spec);
        ReplicaSetStatus status = new ReplicaSetStatus();
        ReplicationControllerStatus s = rc.getStatus();
        if (s != null) {
            status.setReplicas(s.getReplicas());
            status.setFullyLabeledReplicas(s.getFullyLabeledReplicas());
            status.setReadyReplicas(s.getReadyReplicas());
            status.setAvailableReplicas(s.getAvailableReplicas());
            status.setObservedGeneration(s.getObservedGeneration());
            if (s.getConditions() != null) {
                List<ReplicaSetCondition> conditions = new ArrayList<>();
                for (ReplicationControllerCondition c : s.getConditions()) {
                    ReplicaSetCondition out = new ReplicaSetCondition();
                    out.setType(c.getType());
                    out.setStatus(c.getStatus());
                    out.setLastTransitionTime(c.getLastTransitionTime());
                    out.setReason(c.getReason());
                    out.setMessage(c.getMessage());
                    conditions.add(out);
                }
                status.setConditions(conditions);
            }
        }
        rs.setStatus(status);
        return rs;
    }

    static ReplicationController toReplicationController(ReplicaSet rs) {
        ReplicationController rc = new ReplicationController();
        rc.setMetadata(rs.getMetadata());
        ReplicationControllerSpec spec = new ReplicationControllerSpec();
        ReplicaSetSpec in = rs.getSpec();
        spec.setReplicas(in.getReplicas());
        spec.setMinReadySeconds(in.getMinReadySeconds());
        if (in.getSelector() != null) {
            spec.setSelector(in.getSelector().getMatchLabels());
        }
        spec.setTemplate(in.getTemplate());
        rc.setSpec(spec);
        ReplicationControllerStatus status = new ReplicationControllerStatus();
        ReplicaSetStatus s = rs.getStatus();
        if (s != null) {
            status.setReplicas(s.getReplicas() == null ? 0 : s.getReplicas());
            status.setFullyLabeledReplicas(s.getFullyLabeledReplicas());
            status.setReadyReplicas(s.getReadyReplicas());
            status.setAvailableReplicas(s.getAvailableReplicas());
            status.setObservedGeneration(s.getObservedGeneration());
            if (s.getConditions() != null) {
                List<ReplicationControllerCondition> conditions = new ArrayList<>();
                for (ReplicaSetCondition c : s.getConditions()) {
                    ReplicationControllerCondition out = new ReplicationControllerCondition();
                    out.setType(c.getType());
                    out.setStatus(c.getStatus());
                    out.setLastTransitionTime(c.getLastTransitionTime());
                    out.setReason(c.getReason());
                    out.setMessage(c.getMessage());
                    conditions.add(out);
                }
                status.setConditions(conditions);
            }
        }
        rc.setStatus(status);
        return rc;
    }
}
