package io.qkcm.endpointslice.util;

import java.time.Duration;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.function.BiConsumer;

/**
 * The pod event handling the endpoints and endpointslice controllers share (upstream's addPod,
 * updatePod, deletePod): the Services a pod belongs to — or, on an update, those whose endpoints the
 * change affects — are queued after the updates batch period, so changes within it are synced once.
 */
public final class ServicePodHandler implements ResourceEventHandler<Pod> {

    private final SharedIndexInformer<Service> services;
    /** The controller queue's AddAfter. */
    private final BiConsumer<String, Duration> addAfter;
    private final Duration batchPeriod;

    public ServicePodHandler(SharedIndexInformer<Service> services, BiConsumer<String, Duration> addAfter,
            Duration batchPeriod) {
        this.services = services;
        this.addAfter = addAfter;
        this.batchPeriod = batchPeriod;
    }

    @Override
    public void onAdd(Pod pod) {
        queueServicesOf(pod);
    }

    @Override
    public void onUpdate(Pod oldPod, Pod pod) {
        for (String key : EndpointSliceUtil.servicesToUpdateOnPodChange(services, oldPod, pod)) {
            addAfter.accept(key, batchPeriod);
        }
    }

    @Override
    public void onDelete(Pod pod, boolean deletedFinalStateUnknown) {
        queueServicesOf(pod);
    }

    private void queueServicesOf(Pod pod) {
        for (String key : EndpointSliceUtil.podServiceMemberships(services, pod)) {
            addAfter.accept(key, batchPeriod);
        }
    }
}
