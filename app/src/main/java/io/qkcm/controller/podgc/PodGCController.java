package io.qkcm.controller.podgc;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.ExecutorService;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.GenericFilter;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.workqueue.WorkQueue;
import io.qkcm.controller.podgc.metrics.PodGCMetrics;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * pod-garbage-collector-controller (upstream pkg/controller/podgc): every {@code gcCheckPeriod} (20 s)
 * once the pod and node caches have synced, one pass of {@link PodGC}: terminated pods above
 * {@code --terminated-pod-gc-threshold}, terminating pods on out-of-service nodes, orphaned pods
 * (their node quarantined 40 s in the delaying queue {@code orphaned_pods_nodes}, then fetched fresh)
 * and unscheduled terminating pods are force deleted.
 *
 * <p>Upstream has no work queue for the pass ({@code wait.UntilWithContext(gc, gcCheckPeriod)}). As a
 * JOSDK reconciler, the pass is the sync of one fixed key, {@value #PASS_KEY}, that no pod can have (pods
 * are namespaced; the key has no namespace): the Operator's start queues it, and each pass queues the
 * next one {@code gcCheckPeriod} after it ends ({@code addAfter}), as {@code wait.Until} waits the period
 * after each run. Pod events queue nothing (the primary filter rejects them all). The key is never in
 * the pod cache, so each pass reaches the reconciler as JOSDK's sync of a deleted primary. JOSDK forgets
 * a deleted primary's state, and an event received meanwhile, when that sync ends: the next pass is
 * therefore queued only from the end of a pass (never while one runs), and a pass never fails out of
 * {@link #sync}. {@code orphaned_pods_nodes} stays upstream's delaying queue, drained inside the pass.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class PodGCController extends KeyReconciler<Pod> {

    public static final String NAME = "pod-garbage-collector-controller";
    /** Upstream's gcCheckPeriod. */
    public static final Duration GC_CHECK_PERIOD = Duration.ofSeconds(20);
    /** Upstream's quarantineTime: how long a missing node may take to show up in the cache. */
    public static final Duration QUARANTINE_TIME = Duration.ofSeconds(40);
    /** The key of the periodic pass. */
    static final String PASS_KEY = "pod-gc-pass";

    private final SharedIndexInformer<Pod> pods;
    private final SharedIndexInformer<Node> nodes;
    private final Duration gcCheckPeriod;
    private final PodGC gc;
    private final WorkQueue<String> nodeQueue;
    private final ExecutorService apiCalls;

    /**
     * Upstream's NewPodGCInternal: period and quarantine given (for tests; upstream's integration tests
     * shorten them the same way).
     */
    public PodGCController(ControllerContext context, int terminatedPodThreshold, Duration gcCheckPeriod,
            Duration quarantineTime) {
        super(context, Pod.class, "pod-garbage-collector", 1);
        this.pods = context.informers().informerFor(Pod.class);
        this.nodes = context.informers().informerFor(Node.class);
        this.gcCheckPeriod = gcCheckPeriod;
        this.nodeQueue = context.newQueue("orphaned_pods_nodes");
        // upstream deletes each pod of a batch in its own goroutine; the client's QPS limit bounds them
        this.apiCalls = context.newApiCallPool(NAME, 32);
        var nodeStore = nodes.getStore();
        this.gc = new PodGC(new RealApi(context.client()), nodeStore::getByKey, terminatedPodThreshold, quarantineTime,
                nodeQueue, new PodGCMetrics(context.metrics()), apiCalls,
                context.options().featureGates().enabled("PodObservedGenerationTracking"), Instant::now);
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(pods, nodes);
    }

    /** No pod event queues anything: the pass runs on its own period. */
    @Override
    protected GenericFilter<? super Pod> primaryFilter() {
        return pod -> false;
    }

    @Override
    public void onStart() {
        log.info("Starting GC controller");
        queue.add(PASS_KEY);
    }

    @Override
    public void onShutdown() {
        log.info("Shutting down GC controller");
        nodeQueue.shutDown();
        apiCalls.shutdownNow();
    }

    @Override
    protected void sync(String key) throws InterruptedException {
        if (!PASS_KEY.equals(key)) {
            return;
        }
        try {
            gc.gc(pods.getStore().list(), nodes.getStore().list());
        } catch (RuntimeException e) {
            log.errorf("pod GC pass failed: %s", shortMessage(e));
        } finally {
            // wait.Until: the next pass a period after this one ended
            queue.addAfter(PASS_KEY, gcCheckPeriod);
        }
    }

    /** The node quarantine queue (tests). */
    WorkQueue<String> nodeQueue() {
        return nodeQueue;
    }

    /** Upstream's calls through the controller's client. */
    private static final class RealApi implements PodGC.Api {
        private final KubernetesClient client;

        RealApi(KubernetesClient client) {
            this.client = client;
        }

        @Override
        public void patchPodStatus(String namespace, String name, String patch) {
            try {
                client.pods().inNamespace(namespace).withName(name).subresource("status")
                        .patch(PatchContext.of(PatchType.STRATEGIC_MERGE), patch);
            } catch (KubernetesClientException e) {
                throw new KubernetesClientException(String.format("failed to patch status \"%s\" for pod \"%s\"/\"%s\": %s",
                        patch, namespace, name, e.getMessage()), e.getCode(), e.getStatus());
            }
        }

        @Override
        public void deletePod(String namespace, String name) {
            // metav1.NewDeleteOptions(0); a pod already gone is an error, as upstream's Delete returns NotFound
            if (client.pods().inNamespace(namespace).withName(name).withGracePeriod(0).delete().isEmpty()) {
                throw new KubernetesClientException("pods \"" + name + "\" not found", 404, null);
            }
        }

        @Override
        public boolean nodeExists(String name) {
            // fabric8's get answers null for NotFound and throws the other errors
            return client.nodes().withName(name).get() != null;
        }
    }
}
