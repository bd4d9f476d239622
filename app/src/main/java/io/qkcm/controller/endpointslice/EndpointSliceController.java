package io.qkcm.controller.endpointslice;

import io.qkcm.runtime.informers.Indexes;

import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.runtime.josdk.KeyReconciler;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.controller.LabelSelectors;
import io.qkcm.runtime.workqueue.RateLimiter;
import io.qkcm.runtime.workqueue.WorkQueue;
import io.qkcm.runtime.workqueue.WorkqueueMetrics;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.controller.util.endpointslice.StaleInformerCacheException;
import io.qkcm.endpointslice.AggregateException;
import io.qkcm.endpointslice.EndpointSliceWriter;
import io.qkcm.endpointslice.Reconciler;
import io.qkcm.endpointslice.ReconcilerUtils;
import io.qkcm.endpointslice.metrics.EndpointSliceMetrics;
import io.qkcm.endpointslice.topologycache.TopologyCache;
import io.qkcm.endpointslice.util.EndpointSliceTracker;
import io.qkcm.endpointslice.util.ServicePodHandler;
import io.qkcm.endpointslice.util.TriggerTimeTracker;
import io.qkcm.runtime.informers.MetaNamespaceKey;

/**
 * endpointslice-controller (upstream pkg/controller/endpointslice): EndpointSlices for every Service
 * with a selector, built by the {@link Reconciler} from the pods it selects. Keyed by "namespace/name"
 * of the Service. The slices are owned by their Service, so the garbage collector removes them with it;
 * this controller only forgets the Service's state when it is gone.
 */
@Ignore // runs in its own Operator (io.qkcm.runtime.josdk), not quarkus-operator-sdk's default one
public final class EndpointSliceController extends KeyReconciler<Service> {

    public static final String NAME = "endpointslice-controller";
    /** The managed-by label value of the slices this controller owns. */
    public static final String CONTROLLER_NAME = "endpointslice-controller.k8s.io";
    /** upstream's event source component (not the controller name). */
    static final String EVENT_SOURCE = "endpoint-slice-controller";

    /** Retries before a Service is dropped from the queue (1s doubling to 1000s). */
    static final int MAX_RETRIES = 15;
    /** Minimum delay of a sync triggered by an EndpointSlice change, to batch such changes. */
    static final Duration ENDPOINT_SLICE_CHANGE_MIN_SYNC_DELAY = Duration.ofSeconds(1);
    static final Duration DEFAULT_SYNC_BACKOFF = Duration.ofSeconds(1);
    static final Duration MAX_SYNC_BACKOFF = Duration.ofSeconds(1000);
    static final String TOPOLOGY_QUEUE_ITEM_KEY = "topologyQueueItemKey";

    private final SharedIndexInformer<Service> services;
    private final SharedIndexInformer<Pod> pods;
    private final SharedIndexInformer<Node> nodes;
    private final SharedIndexInformer<EndpointSlice> endpointSlices;
    private final KubernetesClient client;
    private final EndpointSliceTracker endpointSliceTracker = new EndpointSliceTracker();
    private final TriggerTimeTracker triggerTimeTracker = new TriggerTimeTracker();
    private final TopologyCache topologyCache;
    private final Reconciler reconciler;
    private final EventRecorder recorder;
    private final EndpointSliceMetrics metrics;
    private final Duration endpointUpdatesBatchPeriod;
    private final WorkQueue<String> topologyQueue;
    private Thread topologyWorker;

    /**
     * {@code workers}: --concurrent-service-endpoint-syncs; {@code batchPeriod}:
     * --endpointslice-updates-batch-period; {@code maxEndpointsPerSlice}: --max-endpoints-per-slice.
     */
    public EndpointSliceController(ControllerContext context, int workers, Duration batchPeriod,
            int maxEndpointsPerSlice) {
        this(context, workers, batchPeriod, maxEndpointsPerSlice, UnaryOperator.identity());
    }

    /** {@code writer} wraps the slice writes (tests lose their answers). */
    EndpointSliceController(ControllerContext context, int workers, Duration batchPeriod, int maxEndpointsPerSlice,
            UnaryOperator<EndpointSliceWriter> writer) {
        // Upstream's own limiter: like the default one but with a 1s base backoff, as a sync may rewrite
        // many slices.
        super(context, Service.class, "endpoint_slice", workers,
                RateLimiter.maxOf(RateLimiter.exponential(DEFAULT_SYNC_BACKOFF, MAX_SYNC_BACKOFF),
                        RateLimiter.bucket(10, 100)));
        this.recorder = context.recorderFor(EVENT_SOURCE);
        this.client = context.client();
        this.metrics = new EndpointSliceMetrics(context.metrics());
        this.endpointUpdatesBatchPeriod = batchPeriod;
        // upstream's topology queue is unnamed, so it has no metrics
        this.topologyQueue = new WorkQueue<>("", RateLimiter.controllerDefault(), context.delayer(), WorkqueueMetrics.NONE);

        this.services = context.informers().informerFor(Service.class);
        this.pods = context.informers().informerFor(Pod.class);
        this.nodes = context.informers().informerFor(Node.class);
        this.endpointSlices = context.informers().informerFor(EndpointSlice.class);

        var gates = context.options().featureGates();
        this.topologyCache = gates.enabled("TopologyAwareHints") ? new TopologyCache() : null;
        this.reconciler = new Reconciler(writer.apply(EndpointSliceWriter.of(client)), this::node, maxEndpointsPerSlice,
                endpointSliceTracker, topologyCache, recorder, CONTROLLER_NAME,
                gates.enabled("ServiceTrafficDistribution"), gates.enabled("PreferSameTrafficDistribution"), metrics);

        // Service adds, updates and deletes reach the reconciler as JOSDK's primary events (upstream's
        // handler queues all three)
        pods.addEventHandler(new ServicePodHandler(services, queue::addAfter, endpointUpdatesBatchPeriod));
        endpointSlices.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(EndpointSlice slice) {
                if (reconciler.managedByController(slice) && endpointSliceTracker.shouldSync(slice)) {
                    queueServiceForEndpointSlice(slice);
                }
            }

            @Override
            public void onUpdate(EndpointSlice prev, EndpointSlice slice) {
                onEndpointSliceUpdate(prev, slice);
            }

            @Override
            public void onDelete(EndpointSlice slice, boolean deletedFinalStateUnknown) {
                if (reconciler.managedByController(slice) && endpointSliceTracker.has(slice)) {
                    // a deletion we did not expect: put the slice back
                    if (!endpointSliceTracker.handleDeletion(slice)) {
                        queueServiceForEndpointSlice(slice);
                    }
                }
            }
        });
        if (topologyCache != null) {
            nodes.addEventHandler(new ResourceEventHandler<>() {
                @Override
                public void onAdd(Node node) {
                    topologyQueue.add(TOPOLOGY_QUEUE_ITEM_KEY);
                }

                @Override
                public void onUpdate(Node oldNode, Node node) {
                    // the zone label may be added after the Node is created
                    if (isNodeReady(oldNode) != isNodeReady(node) || !Objects.equals(zone(oldNode), zone(node))) {
                        topologyQueue.add(TOPOLOGY_QUEUE_ITEM_KEY);
                    }
                }

                @Override
                public void onDelete(Node node, boolean deletedFinalStateUnknown) {
                    topologyQueue.add(TOPOLOGY_QUEUE_ITEM_KEY);
                }
            });
        }
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(pods, services, endpointSlices, nodes);
    }

    /** Upstream's Run also starts the topology queue's worker. */
    @Override
    public synchronized void onStart() {
        if (topologyWorker == null) {
            topologyWorker = new Thread(this::runTopologyWorker, NAME + "-topology-worker");
            topologyWorker.setDaemon(true);
            topologyWorker.start();
        }
    }

    @Override
    public void onShutdown() {
        topologyQueue.shutDown();
    }

    private void runTopologyWorker() {
        try {
            context.informers().waitForSync(informers());
            while (true) {
                String key = topologyQueue.get();
                if (key == null) {
                    return;
                }
                try {
                    checkNodeTopologyDistribution();
                } catch (RuntimeException e) {
                    log.errorf("%s: error checking node topology distribution: %s", NAME, e.getMessage());
                } finally {
                    topologyQueue.done(key);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Refreshes the zones' CPU in the topology cache, then resyncs Services now overloaded. */
    void checkNodeTopologyDistribution() {
        if (topologyCache == null) {
            return;
        }
        topologyCache.setNodes(new ArrayList<>(nodes.getStore().list()));
        for (String key : topologyCache.overloadedServices()) {
            log.debugf("Queuing Service %s after Node change due to overloading", key);
            queue.add(key);
        }
    }

    @Override
    protected void sync(String key) throws Exception {
        syncService(key);
        metrics.sync("success");
    }

    /** Upstream's maxRetries: a Service failing more often is dropped from the queue. */
    @Override
    protected int maxRetries() {
        return MAX_RETRIES;
    }

    /** Upstream's handleErr counts every failed sync, stale caches apart, before retrying. */
    @Override
    protected boolean handleErrorFirst(String key, Exception e) {
        metrics.sync(isStale(e) ? "stale" : "error");
        return false;
    }

    @Override
    protected void logRetry(String key, int requeues, Exception e) {
        if (isStale(e)) {
            log.debugf("%s: %s: %s, retrying", NAME, key, e.getMessage());
        } else {
            log.infof("Error syncing endpoint slices for service %s, retrying: %s", key, e.getMessage());
        }
    }

    @Override
    protected void logDropped(String key, Exception e) {
        log.warnf("Retry budget exceeded, dropping service %s out of the queue: %s", key, e.getMessage());
    }

    private static boolean isStale(Exception e) {
        return StaleInformerCacheException.isStale(e) || (e instanceof AggregateException a && a.isStale());
    }

    void syncService(String key) {
        MetaNamespaceKey parts = MetaNamespaceKey.split(key);
        String namespace = parts.namespace();
        String name = parts.name();

        Service service = services.getStore().getByKey(key);
        if (service == null) {
            // gone: its slices go with it through the garbage collector (they are owned by the Service)
            triggerTimeTracker.deleteService(namespace, name);
            reconciler.deleteService(namespace, name);
            endpointSliceTracker.deleteService(namespace, name);
            return;
        }
        if ("ExternalName".equals(service.getSpec().getType())) {
            // ExternalName Services get no endpoints from this controller
            return;
        }
        Map<String, String> selector = service.getSpec().getSelector();
        if (selector == null || selector.isEmpty()) {
            // Without a selector slices come from elsewhere (the API, or the mirroring controller). An
            // empty selector is nil on the wire (omitempty), so upstream never sees it either.
            return;
        }

        LabelSelectors.Selector podSelector = LabelSelectors.fromSet(selector);
        List<Pod> selected = new ArrayList<>();
        for (Pod pod : Indexes.byIndex(pods, Cache.NAMESPACE_INDEX, namespace)) {
            if (podSelector.matches(labels(pod.getMetadata().getLabels()))) {
                selected.add(pod);
            }
        }

        List<EndpointSlice> slices = new ArrayList<>();
        for (EndpointSlice slice : Indexes.byIndex(endpointSlices, Cache.NAMESPACE_INDEX, namespace)) {
            Map<String, String> l = labels(slice.getMetadata().getLabels());
            // slices being deleted are left out, so they cannot wedge the controller
            if (name.equals(l.get(ReconcilerUtils.LABEL_SERVICE_NAME))
                    && CONTROLLER_NAME.equals(l.get(ReconcilerUtils.LABEL_MANAGED_BY))
                    && slice.getMetadata().getDeletionTimestamp() == null) {
                slices.add(slice);
            }
        }

        if (endpointSliceTracker.createUncertain(namespace, name)) {
            settleUncertainCreate(namespace, name);
        }
        if (endpointSliceTracker.staleSlices(service, slices)) {
            throw new StaleInformerCacheException("EndpointSlice informer cache is out of date");
        }

        // computed even when nothing changes, so the tracker's state moves on
        Instant lastChangeTriggerTime = triggerTimeTracker.computeEndpointLastChangeTriggerTime(namespace, service,
                selected);

        try {
            reconciler.reconcile(service, selected, slices, lastChangeTriggerTime);
        } catch (RuntimeException e) {
            recorder.eventf(service, EventRecorder.WARNING, "FailedToUpdateEndpointSlices",
                    "Error updating Endpoint Slices for Service %s/%s: %s", namespace, name, e.getMessage());
            throw e;
        }
    }

    /**
     * Not in upstream: after a slice creation whose answer was lost, the Service's slices as the API
     * server has them (a consistent list), so that the sync waits until the cache shows each of them
     * rather than creating the lost slice a second time. A failed list fails the sync (retried).
     */
    private void settleUncertainCreate(String namespace, String name) {
        List<EndpointSlice> listed = client.discovery().v1().endpointSlices().inNamespace(namespace)
                .withLabel(ReconcilerUtils.LABEL_SERVICE_NAME, name).withLabel(ReconcilerUtils.LABEL_MANAGED_BY, CONTROLLER_NAME)
                .list().getItems();
        endpointSliceTracker.settleUncertainCreate(namespace, name, listed);
        log.debugf("%s: %s/%s: settled a slice creation of unknown outcome against %d listed slices", NAME, namespace,
                name, listed.size());
    }

    private void onEndpointSliceUpdate(EndpointSlice prev, EndpointSlice slice) {
        // users may change the service-name label (it does not bump the generation): sync both Services
        String svcName = labels(slice.getMetadata().getLabels()).get(ReconcilerUtils.LABEL_SERVICE_NAME);
        String prevSvcName = labels(prev.getMetadata().getLabels()).get(ReconcilerUtils.LABEL_SERVICE_NAME);
        if (!Objects.equals(svcName, prevSvcName)) {
            log.infof("label %s changed from %s to %s on EndpointSlice %s/%s", ReconcilerUtils.LABEL_SERVICE_NAME,
                    prevSvcName, svcName, slice.getMetadata().getNamespace(), slice.getMetadata().getName());
            queueServiceForEndpointSlice(slice);
            queueServiceForEndpointSlice(prev);
            return;
        }
        if (reconciler.managedByChanged(prev, slice)
                || (reconciler.managedByController(slice) && endpointSliceTracker.shouldSync(slice))) {
            queueServiceForEndpointSlice(slice);
        }
    }

    private void queueServiceForEndpointSlice(EndpointSlice slice) {
        String key;
        try {
            key = ReconcilerUtils.serviceControllerKey(slice);
        } catch (IllegalArgumentException e) {
            log.errorf("Couldn't get key for EndpointSlice %s/%s: %s", slice.getMetadata().getNamespace(),
                    slice.getMetadata().getName(), e.getMessage());
            return;
        }
        Duration delay = ENDPOINT_SLICE_CHANGE_MIN_SYNC_DELAY;
        if (endpointUpdatesBatchPeriod.compareTo(delay) > 0) {
            delay = endpointUpdatesBatchPeriod;
        }
        queue.addAfter(key, delay);
    }

    private Node node(String name) {
        return name == null || name.isEmpty() ? null : nodes.getStore().getByKey(name);
    }

    private static String key(Service svc) {
        return svc.getMetadata().getNamespace() + "/" + svc.getMetadata().getName();
    }

    private static Map<String, String> labels(Map<String, String> labels) {
        return labels == null ? Map.of() : labels;
    }

    private static String zone(Node node) {
        return labels(node.getMetadata().getLabels()).get(ReconcilerUtils.LABEL_TOPOLOGY_ZONE);
    }

    static boolean isNodeReady(Node node) {
        if (node.getStatus() == null || node.getStatus().getConditions() == null) {
            return false;
        }
        for (NodeCondition c : node.getStatus().getConditions()) {
            if ("Ready".equals(c.getType())) {
                return "True".equals(c.getStatus());
            }
        }
        return false;
    }
}
