package io.qkcm.manager;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaderElectionRecord;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;

/**
 * fabric8's Lease lock, writing the Lease as client-go's LeaseLock does: a full update of the object
 * last read (optimistic concurrency on its resourceVersion, other metadata kept) instead of fabric8's
 * JSON merge patch. This matters beyond style: upstream's bootstrap RBAC for kube-controller-manager
 * (Role system::leader-locking-kube-controller-manager, ClusterRole system:kube-controller-manager)
 * grants get/create/update on leases, not patch, so a patching lock is refused on a real cluster.
 *
 * <p>Like client-go's elector, a leader renews optimistically: while its last write is less than a
 * lease duration old, it renews from that write without reading the Lease first (one request per
 * renewal instead of two). Should that update conflict, it falls back to reading the Lease and, if it
 * still holds it, renews from what it read.
 */
final class LeaseUpdateLock extends LeaseLock {

    private final String namespace;
    private final String name;
    private final String identity;
    private final long leaseDurationNanos;
    private Lease current;
    /** When {@link #current} was last written by this process successfully (System.nanoTime), or null. */
    private Long lastWrite;

    LeaseUpdateLock(String namespace, String name, String identity, java.time.Duration leaseDuration) {
        super(namespace, name, identity);
        this.namespace = namespace;
        this.name = name;
        this.identity = identity;
        this.leaseDurationNanos = leaseDuration.toNanos();
    }

    @Override
    public synchronized LeaderElectionRecord get(KubernetesClient client) {
        if (holdingFreshLease()) {
            return toRecord(current);
        }
        return read(client);
    }

    private LeaderElectionRecord read(KubernetesClient client) {
        lastWrite = null;
        current = client.leases().inNamespace(namespace).withName(name).get();
        return current == null ? null : toRecord(current);
    }

    /** client-go's IsLeader() && isLeaseValid(now), judged from this process' own last write. */
    private boolean holdingFreshLease() {
        return current != null && lastWrite != null && System.nanoTime() - lastWrite < leaseDurationNanos
                && current.getSpec() != null && identity.equals(current.getSpec().getHolderIdentity());
    }

    @Override
    public synchronized void create(KubernetesClient client, LeaderElectionRecord record) {
        lastWrite = null;
        current = client.resource(toResource(record, getObjectMeta(null))).create();
        lastWrite = System.nanoTime();
    }

    @Override
    public synchronized void update(KubernetesClient client, LeaderElectionRecord record) {
        if (current == null) {
            throw new IllegalStateException("get or create must be called first");
        }
        boolean optimistic = lastWrite != null;
        try {
            write(client, record);
        } catch (KubernetesClientException e) {
            if (!optimistic || e.getCode() != 409) {
                lastWrite = null;
                throw e;
            }
            // someone else wrote the Lease since our last renewal: re-read, and renew only if it is still ours
            LeaderElectionRecord observed = read(client);
            if (observed == null || !identity.equals(observed.getHolderIdentity())) {
                throw e;
            }
            write(client, record);
        }
    }

    private void write(KubernetesClient client, LeaderElectionRecord record) {
        lastWrite = null;
        Lease desired = toResource(record, getObjectMeta(current.getMetadata().getResourceVersion()));
        current = client.resource(new LeaseBuilder(current).withSpec(desired.getSpec()).build()).update();
        lastWrite = System.nanoTime();
    }
}
