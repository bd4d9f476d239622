package io.qkcm.controller.garbagecollector;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import io.qkcm.runtime.informers.ObjectMetadata.OwnerRef;

/**
 * A vertex of the dependency graph (upstream graph.go). Identity equality: the work queues hold
 * nodes, as upstream's hold *node pointers. A virtual node stands for an owner referenced but not yet
 * observed by any monitor.
 */
final class Node {

    final ObjectRef identity;
    private final Set<Node> dependents;
    private volatile boolean deletingDependents;
    private volatile boolean beingDeleted;
    private volatile boolean virtual;
    /** Written only by the graph builder; read by workers. */
    volatile List<OwnerRef> owners;

    Node(ObjectRef identity, List<OwnerRef> owners, boolean virtual, boolean beingDeleted, boolean deletingDependents) {
        this.identity = identity;
        this.owners = owners;
        this.virtual = virtual;
        this.beingDeleted = beingDeleted;
        this.deletingDependents = deletingDependents;
        this.dependents = new LinkedHashSet<>();
    }

    /** A copy with another identity and the same dependents, flags and owners. */
    Node cloneWithIdentity(ObjectRef newIdentity) {
        Node c = new Node(newIdentity, owners, virtual, beingDeleted, deletingDependents);
        synchronized (this) {
            c.dependents.addAll(dependents);
        }
        return c;
    }

    void markBeingDeleted() {
        beingDeleted = true;
    }

    boolean isBeingDeleted() {
        return beingDeleted;
    }

    void markObserved() {
        virtual = false;
    }

    boolean isObserved() {
        return !virtual;
    }

    boolean isVirtual() {
        return virtual;
    }

    void markDeletingDependents() {
        deletingDependents = true;
    }

    boolean isDeletingDependents() {
        return deletingDependents;
    }

    synchronized void addDependent(Node dependent) {
        dependents.add(dependent);
    }

    synchronized void deleteDependent(Node dependent) {
        dependents.remove(dependent);
    }

    synchronized int dependentsLength() {
        return dependents.size();
    }

    synchronized List<Node> getDependents() {
        return new ArrayList<>(dependents);
    }

    /** Dependents whose reference to this node has blockOwnerDeletion=true. */
    List<Node> blockingDependents() {
        List<Node> ret = new ArrayList<>();
        for (Node dep : getDependents()) {
            for (OwnerRef owner : dep.owners) {
                if (owner.uid().equals(identity.uid()) && owner.blocksOwnerDeletion()) {
                    ret.add(dep);
                }
            }
        }
        return ret;
    }

    @Override
    public String toString() {
        return identity + (virtual ? " (virtual)" : "");
    }
}
