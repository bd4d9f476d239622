package io.qkcm.controller.nodelifecycle;

import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.qkcm.runtime.DeepCopy;

/**
 * Upstream's nodeHealthData and nodeHealthMap: per node, the last status and Lease seen, the local time
 * they were last seen to change ({@code probeTimestamp}: the controller's own clock, never the kubelet's
 * timestamps, so clock skew across the cluster does not matter) and when its Ready condition last
 * changed. Readers get copies, so what they change is theirs until they {@link Map#put} it back.
 */
final class NodeHealth {

    /** nodeHealthData. */
    static final class Data {
        Instant probeTimestamp;
        Instant readyTransitionTimestamp;
        NodeStatus status;
        Lease lease;

        Data(NodeStatus status, Instant probeTimestamp, Instant readyTransitionTimestamp, Lease lease) {
            this.status = status;
            this.probeTimestamp = probeTimestamp;
            this.readyTransitionTimestamp = readyTransitionTimestamp;
            this.lease = lease;
        }

        Data copy() {
            return new Data(DeepCopy.of(status), probeTimestamp, readyTransitionTimestamp, DeepCopy.of(lease));
        }
    }

    private final Map<String, Data> byNode = new ConcurrentHashMap<>();

    /** getDeepCopy: a copy of the node's data, or null. */
    Data get(String nodeName) {
        Data d = byNode.get(nodeName);
        return d == null ? null : d.copy();
    }

    /** set; a null clears the entry (Go keeps a nil pointer, which reads as missing too). */
    void set(String nodeName, Data data) {
        if (data == null) {
            byNode.remove(nodeName);
        } else {
            byNode.put(nodeName, data);
        }
    }
}
