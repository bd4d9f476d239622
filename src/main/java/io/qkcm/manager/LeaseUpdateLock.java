package io.qkcm.manager;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaderElectionRecord;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;

/**
 * fabric8's Lease lock, writing the Lease as client-go's LeaseLock does: a full update of the object
 * last read (optimistic concurrency on its resourceVersion, other metadata kept) instead of fabric8's
 * JSON merge patch. This matters beyond style: upstream's bootstrap RBAC for kube-controller-manager
 * (Role system::leader-locking-kube-controller-manager, ClusterRole system:kube-controller-manager)
 * grants get/create/update on leases, not patch, so a patching lock is refused on a real cluster.
 */
final class LeaseUpdateLock extends LeaseLock {

    private final String namespace;
    private final String name;
    private Lease current;

    LeaseUpdateLock(String namespace, String name, String identity) {
        super(namespace, name, identity);
        this.namespace = namespace;
        this.name = name;
    }

    @Override
    public synchronized LeaderElectionRecord get(KubernetesClient client) {
        current = client.leases().inNamespace(namespace).withName(name).get();
        return current == null ? null : toRecord(current);
    }

    @Override
    public synchronized void create(KubernetesClient client, LeaderElectionRecord record) {
        current = client.resource(toResource(record, getObjectMeta(null))).create();
    }

    @Override
    public synchronized void update(KubernetesClient client, LeaderElectionRecord record) {
        if (current == null) {
            throw new IllegalStateException("get or create must be called first");
        }
        Lease desired = toResource(record, getObjectMeta(current.getMetadata().getResourceVersion()));
        current = client.resource(new LeaseBuilder(current).withSpec(desired.getSpec()).build()).update();
    }
}
