package io.qkcm.controller.endpointslicemirroring;

import io.qkcm.runtime.informers.Indexes;

import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnAddFilter;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.qkcm.runtime.josdk.KeyReconciler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.workqueue.RateLimiter;
import io.qkcm.controller.endpointslicemirroring.metrics.MirroringMetrics;
import io.qkcm.controller.util.endpointslice.StaleInformerCacheException;
import io.qkcm.endpointslice.util.EndpointSliceTracker;
import io.qkcm.runtime.informers.MetaNamespaceKey;

/**
 * endpointslice-mirroring-controller (upstream pkg/controller/endpointslicemirroring): mirrors the
 * Endpoints of Services without a selector (custom Endpoints) into EndpointSlices managed by
 * {@value MirroringUtil#CONTROLLER_NAME}. Keyed by the Endpoints' "namespace/name".
 */
@Ignore // runs in its own Operator (io.qkcm.runtime.josdk), not quarkus-operator-sdk's default one
public final class EndpointSliceMirroringController extends KeyReconciler<Endpoints> {

    public static final String NAME = "endpointslice-mirroring-controller";
    /** Upstream's event source component (differs from the controller and client names). */
    static final String EVENT_SOURCE = "endpoint-slice-mirroring-controller";
    static final String QUEUE = "endpoint_slice_mirroring";
    /** Retries before an Endpoints resource is dropped from the queue (1s doubling to 100s). */
    static final int MAX_RETRIES = 15;
    static final Duration DEFAULT_SYNC_BACKOFF = Duration.ofSeconds(1);
    static final Duration MAX_SYNC_BACKOFF = Duration.ofSeconds(100);

    private final SharedIndexInformer<Endpoints> endpointsInformer;
    private final SharedIndexInformer<EndpointSlice> endpointSliceInformer;
    private final SharedIndexInformer<Service> serviceInformer;
    private final KubernetesClient client;
    private final EndpointSliceTracker endpointSliceTracker = new EndpointSliceTracker();
    private final Reconciler reconciler;
    private final MirroringMetrics metrics;
    private final Duration endpointUpdatesBatchPeriod;

    /**
     * {@code workers}: --mirroring-concurrent-service-endpoint-syncs; {@code maxEndpointsPerSubset}:
     * --mirroring-max-endpoints-per-subset; {@code batchPeriod}: --mirroring-endpointslice-updates-batch-period.
     */
    public EndpointSliceMirroringController(ControllerContext context, int workers, int maxEndpointsPerSubset,
            Duration batchPeriod) {
        // a much larger base backoff than the default controller limiter (1s vs 5ms): a sync can mean
        // many EndpointSlice writes, so retries must not hammer the API server
        super(context, Endpoints.class, QUEUE, workers,
                RateLimiter.maxOf(RateLimiter.<String>exponential(DEFAULT_SYNC_BACKOFF, MAX_SYNC_BACKOFF),
                        RateLimiter.<String>bucket(10, 100)));
        this.endpointUpdatesBatchPeriod = batchPeriod;
        this.metrics = new MirroringMetrics(context.metrics());
        this.client = context.client();
        this.reconciler = new Reconciler(client, endpointSliceTracker,
                context.recorderFor(EVENT_SOURCE), maxEndpointsPerSubset, metrics);

        this.endpointsInformer = context.informers().informerFor(Endpoints.class);
        this.endpointSliceInformer = context.informers().informerFor(EndpointSlice.class);
        this.serviceInformer = context.informers().informerFor(Service.class);

        endpointsInformer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Endpoints endpoints) {
                if (!shouldMirror(endpoints)) {
                    return;
                }
                queueEndpoints(endpoints);
            }

            @Override
            public void onUpdate(Endpoints oldEndpoints, Endpoints newEndpoints) {
                if (!shouldMirror(newEndpoints) && !shouldMirror(oldEndpoints)) {
                    return;
                }
                queueEndpoints(newEndpoints);
            }

            @Override
            public void onDelete(Endpoints endpoints, boolean deletedFinalStateUnknown) {
                if (!shouldMirror(endpoints)) {
                    return;
                }
                queueEndpoints(endpoints);
            }
        });
        endpointSliceInformer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(EndpointSlice slice) {
                if (MirroringUtil.managedByController(slice) && endpointSliceTracker.shouldSync(slice)) {
                    queueEndpointsForEndpointSlice(slice);
                }
            }

            @Override
            public void onUpdate(EndpointSlice oldSlice, EndpointSlice newSlice) {
                // labels do not bump the generation; users may change the service-name label
                String svcName = serviceNameLabel(newSlice);
                String prevSvcName = serviceNameLabel(oldSlice);
                if (!svcName.equals(prevSvcName)) {
                    log.infof("LabelServiceName changed on EndpointSlice %s/%s: %s -> %s",
                            newSlice.getMetadata().getNamespace(), newSlice.getMetadata().getName(), prevSvcName,
                            svcName);
                    queueEndpointsForEndpointSlice(newSlice);
                    queueEndpointsForEndpointSlice(oldSlice);
                    return;
                }
                if (MirroringUtil.managedByChanged(oldSlice, newSlice) || (MirroringUtil.managedByController(newSlice)
                        && endpointSliceTracker.shouldSync(newSlice))) {
                    queueEndpointsForEndpointSlice(newSlice);
                }
            }

            @Override
            public void onDelete(EndpointSlice slice, boolean deletedFinalStateUnknown) {
                if (MirroringUtil.managedByController(slice) && endpointSliceTracker.has(slice)) {
                    // false when the deletion was not ours: the Endpoints needs another sync
                    if (!endpointSliceTracker.handleDeletion(slice)) {
                        queueEndpointsForEndpointSlice(slice);
                    }
                }
            }
        });
        serviceInformer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Service svc) {
                if (!hasSelector(svc)) {
                    queueEndpoints(svc);
                }
            }

            @Override
            public void onUpdate(Service oldSvc, Service newSvc) {
                if (hasSelector(newSvc) != hasSelector(oldSvc)) {
                    queueEndpoints(newSvc);
                }
            }

            @Override
            public void onDelete(Service svc, boolean deletedFinalStateUnknown) {
                if (!hasSelector(svc)) {
                    queueEndpoints(svc);
                }
            }
        });
    }

    /** Upstream's Endpoints handlers queue only Endpoints to mirror (kept above): JOSDK's add/update events are off. */
    @Override
    protected OnAddFilter<? super Endpoints> primaryAddFilter() {
        return ep -> false;
    }

    @Override
    protected OnUpdateFilter<? super Endpoints> primaryUpdateFilter() {
        return (newEp, oldEp) -> false;
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(endpointsInformer, endpointSliceInformer, serviceInformer);
    }

    /** The slices this controller wrote, per Endpoints (tests mark a creation of unknown outcome in it). */
    EndpointSliceTracker endpointSliceTracker() {
        return endpointSliceTracker;
    }

    @Override
    protected void sync(String key) {
        long start = System.nanoTime();
        try {
            syncEndpoints(key);
        } finally {
            long elapsed = System.nanoTime() - start;
            metrics.endpointsSyncDuration.record((elapsed / 1_000_000) / 1000.0);
        }
    }

    private void syncEndpoints(String key) {
        MetaNamespaceKey parts = MetaNamespaceKey.split(key);
        String namespace = parts.namespace();
        String name = parts.name();

        Endpoints endpoints = endpointsInformer.getStore().getByKey(key);
        if (endpoints == null) {
            log.debugf("Endpoints %s not found, cleaning up any mirrored EndpointSlices", key);
            endpointSliceTracker.deleteService(namespace, name);
            deleteMirroredSlices(namespace, name);
            return;
        }
        if (!shouldMirror(endpoints)) {
            log.debugf("Endpoints %s should not be mirrored, cleaning up any mirrored EndpointSlices", key);
            endpointSliceTracker.deleteService(namespace, name);
            deleteMirroredSlices(namespace, name);
            return;
        }
        Service svc = serviceInformer.getStore().getByKey(key);
        if (svc == null) {
            log.debugf("Service %s not found, cleaning up any mirrored EndpointSlices", key);
            endpointSliceTracker.deleteService(namespace, name);
            deleteMirroredSlices(namespace, name);
            return;
        }
        if (hasSelector(svc)) {
            log.debugf("Service %s now has selector, cleaning up any mirrored EndpointSlices", key);
            endpointSliceTracker.deleteService(namespace, name);
            deleteMirroredSlices(namespace, name);
            return;
        }

        List<EndpointSlice> endpointSlices = endpointSlicesMirroredForService(namespace, name);
        if (endpointSliceTracker.createUncertain(namespace, name)) {
            // Not in upstream: after a slice creation whose answer was lost, wait until the cache shows
            // the slices the API server has (a consistent list) rather than create the lost one again
            List<EndpointSlice> listed = client.discovery().v1().endpointSlices().inNamespace(namespace)
                    .withLabel(MirroringUtil.LABEL_SERVICE_NAME, name)
                    .withLabel(MirroringUtil.LABEL_MANAGED_BY, MirroringUtil.CONTROLLER_NAME).list().getItems();
            endpointSliceTracker.settleUncertainCreate(namespace, name, listed);
        }
        if (endpointSliceTracker.staleSlices(svc, endpointSlices)) {
            throw new StaleInformerCacheException("EndpointSlice informer cache is out of date");
        }
        reconciler.reconcile(endpoints, endpointSlices);
    }

    /** Upstream's maxRetries: Endpoints failing more often are dropped from the queue. */
    @Override
    protected int maxRetries() {
        return MAX_RETRIES;
    }

    @Override
    protected void logRetry(String key, int requeues, Exception e) {
        log.infof("Error mirroring EndpointSlices for Endpoints %s, retrying: %s", key, e.getMessage());
    }

    @Override
    protected void logDropped(String key, Exception e) {
        log.infof("Retry budget exceeded, dropping Endpoints %s out of the queue: %s", key, e.getMessage());
        log.error("Unhandled error mirroring EndpointSlices for Endpoints " + key, e);
    }

    /** Not nil, not labelled skip-mirror and not a leader-election lock. */
    static boolean shouldMirror(Endpoints endpoints) {
        return endpoints != null && !MirroringUtil.skipMirror(endpoints.getMetadata().getLabels())
                && !MirroringUtil.hasLeaderElection(endpoints.getMetadata().getAnnotations());
    }

    /**
     * Go's {@code Spec.Selector != nil}. The API server never returns an empty non-nil selector (empty
     * maps are dropped in storage), and fabric8 reads an absent selector as an empty map, so empty is nil.
     */
    static boolean hasSelector(Service svc) {
        Map<String, String> selector = svc.getSpec() == null ? null : svc.getSpec().getSelector();
        return selector != null && !selector.isEmpty();
    }

    private void queueEndpoints(io.fabric8.kubernetes.api.model.HasMetadata obj) {
        queue.add(obj.getMetadata().getNamespace() + "/" + obj.getMetadata().getName());
    }

    private void queueEndpointsForEndpointSlice(EndpointSlice slice) {
        String key = MirroringUtil.endpointsControllerKey(slice);
        if (key == null) {
            log.errorf("Couldn't get key for EndpointSlice %s/%s: EndpointSlice missing %s label",
                    slice.getMetadata().getNamespace(), slice.getMetadata().getName(),
                    MirroringUtil.LABEL_SERVICE_NAME);
            return;
        }
        queue.addAfter(key, endpointUpdatesBatchPeriod);
    }

    private void deleteMirroredSlices(String namespace, String name) {
        List<EndpointSlice> endpointSlices = endpointSlicesMirroredForService(namespace, name);
        endpointSliceTracker.deleteService(namespace, name);
        reconciler.deleteEndpoints(namespace, name, endpointSlices);
    }

    /** The cached slices this controller mirrored for Endpoints {@code namespace/name}. */
    private List<EndpointSlice> endpointSlicesMirroredForService(String namespace, String name) {
        List<EndpointSlice> out = new ArrayList<>();
        for (EndpointSlice s : Indexes.byIndex(endpointSliceInformer, Cache.NAMESPACE_INDEX, namespace)) {
            Map<String, String> labels = s.getMetadata().getLabels();
            if (labels != null && name.equals(labels.get(MirroringUtil.LABEL_SERVICE_NAME))
                    && MirroringUtil.CONTROLLER_NAME.equals(labels.get(MirroringUtil.LABEL_MANAGED_BY))) {
                out.add(s);
            }
        }
        return out;
    }

    private static String serviceNameLabel(EndpointSlice slice) {
        Map<String, String> labels = slice.getMetadata().getLabels();
        String v = labels == null ? null : labels.get(MirroringUtil.LABEL_SERVICE_NAME);
        return v == null ? "" : v;
    }
}
