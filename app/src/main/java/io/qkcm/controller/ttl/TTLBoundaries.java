package io.qkcm.controller.ttl;

import java.util.List;

/**
 * The desired TTL by cluster size (upstream's ttlBoundaries and the counting in addNode/deleteNode):
 * the step moves up once the node count exceeds the step's sizeMax and down once it falls below its
 * sizeMin, one step per node, so the overlapping ranges give hysteresis (a cluster of 95 nodes has TTL
 * 15 s on its way down from 101, 0 on its way up).
 */
final class TTLBoundaries {

    /** Upstream's ttlBoundary. */
    record Boundary(int sizeMin, int sizeMax, int ttlSeconds) {
    }

    static final List<Boundary> BOUNDARIES = List.of(
            new Boundary(0, 100, 0),
            new Boundary(90, 500, 15),
            new Boundary(450, 1000, 30),
            new Boundary(900, 2000, 60),
            new Boundary(1800, Integer.MAX_VALUE, 300));

    private int nodeCount;
    private int desiredTTLSeconds;
    private int boundaryStep;

    TTLBoundaries() {
    }

    /** A state as upstream's tests set it up. */
    TTLBoundaries(int nodeCount, int desiredTTLSeconds, int boundaryStep) {
        this.nodeCount = nodeCount;
        this.desiredTTLSeconds = desiredTTLSeconds;
        this.boundaryStep = boundaryStep;
    }

    /** A node was added (upstream's addNode). */
    synchronized void nodeAdded() {
        nodeCount++;
        if (nodeCount > BOUNDARIES.get(boundaryStep).sizeMax()) {
            boundaryStep++;
            desiredTTLSeconds = BOUNDARIES.get(boundaryStep).ttlSeconds();
        }
    }

    /** A node was deleted (upstream's deleteNode). */
    synchronized void nodeDeleted() {
        nodeCount--;
        if (nodeCount < BOUNDARIES.get(boundaryStep).sizeMin()) {
            boundaryStep--;
            desiredTTLSeconds = BOUNDARIES.get(boundaryStep).ttlSeconds();
        }
    }

    /** Upstream's getDesiredTTLSeconds. */
    synchronized int desiredTTLSeconds() {
        return desiredTTLSeconds;
    }

    synchronized int nodeCount() {
        return nodeCount;
    }
}
