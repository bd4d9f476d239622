package io.qkcm.controller.replicaset;

import io.qkcm.runtime.informers.Indexes;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.runtime.informers.SharedInformers;
import io.qkcm.runtime.clients.ProtobufWrites;

/**
 * Where the replica set controller reads and writes its owners, seen as apps/v1 ReplicaSets. For
 * ReplicaSets this is the shared informer and the ReplicaSet API; {@link ReplicationControllerAdapter}
 * presents ReplicationControllers the same way (upstream's conversion layer in
 * pkg/controller/replication).
 */
interface ReplicaSetSource {

    String apiVersion();

    String kind();

    SharedIndexInformer<?> informer();

    /** Registers handlers that receive owners converted to ReplicaSets. */
    void addEventHandler(ResourceEventHandler<ReplicaSet> handler);

    /** From the cache; null if absent. Never mutate the result. */
    ReplicaSet getCached(String namespace, String name);

    List<ReplicaSet> listCached(String namespace);

    /** The cached owners whose controller has this UID (upstream's controllerUID index). */
    List<ReplicaSet> listByControllerUid(String uid);

    /** An uncached read. */
    ReplicaSet getLive(String namespace, String name);

    /** PUT of the status subresource; returns the written object. */
    ReplicaSet updateStatus(ReplicaSet rs);

    /** The object events are recorded on (the ReplicationController itself for RCs). */
    HasMetadata eventObject(ReplicaSet rs);

    /** Whether status.terminatingReplicas exists on this kind. */
    boolean hasTerminatingReplicas();

    /** The ReplicaSet API. */
    static ReplicaSetSource replicaSets(SharedInformers informers, KubernetesClient client) {
        return new ReplicaSets(informers.informerFor(ReplicaSet.class), client);
    }

    final class ReplicaSets implements ReplicaSetSource {
        static final String CONTROLLER_UID_INDEX = "controllerUID";

        private final SharedIndexInformer<ReplicaSet> informer;
        private final KubernetesClient client;

        ReplicaSets(SharedIndexInformer<ReplicaSet> informer, KubernetesClient client) {
            this.informer = informer;
            this.client = client;
            synchronized (informer) {
                if (!informer.getIndexer().getIndexers().containsKey(CONTROLLER_UID_INDEX)) {
                    informer.addIndexers(Map.of(CONTROLLER_UID_INDEX, rs -> {
                        OwnerReference ref = ControllerRefManager.controllerOf(rs);
                        return ref == null ? List.of() : List.of(ref.getUid());
                    }));
                }
            }
        }

        @Override
        public String apiVersion() {
            return "apps/v1";
        }

        @Override
        public String kind() {
            return "ReplicaSet";
        }

        @Override
        public SharedIndexInformer<?> informer() {
            return informer;
        }

        @Override
        public void addEventHandler(ResourceEventHandler<ReplicaSet> handler) {
            informer.addEventHandler(handler);
        }

        @Override
        public ReplicaSet getCached(String namespace, String name) {
            return informer.getIndexer().getByKey(Cache.namespaceKeyFunc(namespace, name));
        }

        @Override
        public List<ReplicaSet> listCached(String namespace) {
            return new ArrayList<>(Indexes.byIndex(informer, Cache.NAMESPACE_INDEX, namespace));
        }

        @Override
        public List<ReplicaSet> listByControllerUid(String uid) {
            return new ArrayList<>(Indexes.byIndex(informer, CONTROLLER_UID_INDEX, uid));
        }

        @Override
        public ReplicaSet getLive(String namespace, String name) {
            return client.apps().replicaSets().inNamespace(namespace).withName(name).get();
        }

        @Override
        public ReplicaSet updateStatus(ReplicaSet rs) {
            return ProtobufWrites.updateStatus(client, rs);
        }

        @Override
        public HasMetadata eventObject(ReplicaSet rs) {
            return rs;
        }

        @Override
        public boolean hasTerminatingReplicas() {
            return true;
        }
    }

    static ReplicaSet copy(ReplicaSet rs) {
        return io.qkcm.runtime.DeepCopy.of(rs);
    }
}
