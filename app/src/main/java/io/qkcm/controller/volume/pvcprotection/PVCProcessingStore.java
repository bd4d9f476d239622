package io.qkcm.controller.volume.pvcprotection;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Upstream's pvcProcessingStore: the PVC keys the main worker took off the queue, grouped by namespace,
 * and the namespaces in the order they first got a PVC (upstream's unnamed namespace queue). A namespace
 * worker takes one namespace with all its PVCs at a time, so PVCs deleted together share one live pod
 * list.
 */
final class PVCProcessingStore {

    record PVCData(String key, String name) {
    }

    record Batch(String namespace, List<PVCData> pvcs) {
    }

    // insertion order is the namespace queue's order: a namespace is queued when its list is created
    private final LinkedHashMap<String, List<PVCData>> byNamespace = new LinkedHashMap<>();
    private boolean shutDown;

    synchronized void addOrUpdate(String namespace, String key, String name) {
        if (shutDown) {
            return;
        }
        byNamespace.computeIfAbsent(namespace, ns -> new ArrayList<>()).add(new PVCData(key, name));
        notifyAll();
    }

    /** Upstream's flushNextPVCsByNamespace: blocks for the next namespace; null once shut down. */
    synchronized Batch flushNext() throws InterruptedException {
        while (byNamespace.isEmpty() && !shutDown) {
            wait();
        }
        if (shutDown) {
            return null;
        }
        Iterator<Map.Entry<String, List<PVCData>>> it = byNamespace.entrySet().iterator();
        Map.Entry<String, List<PVCData>> next = it.next();
        it.remove();
        return new Batch(next.getKey(), next.getValue());
    }

    synchronized void shutDown() {
        shutDown = true;
        notifyAll();
    }

    /** Namespaces waiting for a worker (tests). */
    synchronized int waitingNamespaces() {
        return byNamespace.size();
    }
}
