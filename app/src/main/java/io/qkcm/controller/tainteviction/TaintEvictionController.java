package io.qkcm.controller.tainteviction;

import io.qkcm.controller.PodIndexes;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.qkcm.controller.tainteviction.metrics.TaintEvictionMetrics;
import io.qkcm.runtime.informers.Indexes;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;
import io.qkcm.runtime.workqueue.WorkQueue;

/**
 * taint-eviction-controller (upstream pkg/controller/tainteviction, the taint manager): a pod bound to a
 * node with NoExecute taints it does not all tolerate is deleted at once; one that tolerates them all for
 * a while is deleted when the shortest tolerationSeconds of the tolerations used has passed (a timer in
 * {@link TimedWorkerQueue}); the timer is cancelled, with a {@code TaintManagerEviction} "Cancelling
 * deletion" event, when the taints go, the pod is updated to tolerate them forever, or it is deleted.
 * The deletion itself ({@link PodEviction}) patches the {@code DisruptionTarget} condition first.
 *
 * <p>Upstream's two queues: node updates ({@value #NODE_QUEUE}, this reconciler: JOSDK's primary events,
 * updates only when the NoExecute taints changed) and pod updates ({@value #POD_QUEUE}, a work queue of
 * (pod, node) items fed by upstream's pod handler, with its own {@value #UPDATE_WORKER_SIZE} workers).
 * Upstream hashes both onto the same worker by node name, so a pod is never handled while its node is;
 * here a lock per hash of the node name gives the same exclusion.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class TaintEvictionController extends KeyReconciler<Node> {

    public static final String NAME = "taint-eviction-controller";
    static final String NODE_QUEUE = "noexec_taint_node";
    static final String POD_QUEUE = "noexec_taint_pod";
    /** Upstream's UpdateWorkerSize: the workers of each queue, and the shards of node names. */
    static final int UPDATE_WORKER_SIZE = 8;
    /** Threads the fired evictions run on (upstream: a goroutine each; the client's QPS bounds them). */
    private static final int EVICTION_THREADS = 32;

    /** Upstream's podUpdateItem. */
    record PodUpdateItem(String name, String namespace, String nodeName) {
    }

    private final SharedIndexInformer<Node> nodes;
    private final SharedIndexInformer<Pod> pods;
    private final WorkQueue<PodUpdateItem> podUpdateQueue;
    private final TimedWorkerQueue.Clock clock;
    private final ExecutorService evictions;
    private final PodEviction eviction;
    private final TimedWorkerQueue taintEvictionQueue;
    /** Upstream's taintedNodes: node name → its NoExecute taints (never empty), guarded by itself. */
    private final Map<String, List<Taint>> taintedNodes = new HashMap<>();
    private final Object[] shards = new Object[UPDATE_WORKER_SIZE];
    private final List<Thread> podWorkers = new ArrayList<>();

    /** With the wall clock (upstream's New). */
    public TaintEvictionController(ControllerContext context) {
        this(context, TimedWorkerQueue.Clock.system(context.delayer()));
    }

    /** With {@code clock} for the eviction timers and their times (tests move it). */
    TaintEvictionController(ControllerContext context, TimedWorkerQueue.Clock clock) {
        super(context, Node.class, NODE_QUEUE, UPDATE_WORKER_SIZE);
        this.clock = clock;
        this.nodes = context.informers().informerFor(Node.class);
        this.pods = context.informers().informerFor(Pod.class);
        PodIndexes.addPodNodeNameIndexer(pods);
        for (int i = 0; i < shards.length; i++) {
            shards[i] = new Object();
        }
        this.podUpdateQueue = context.newQueue(POD_QUEUE);
        this.evictions = context.newApiCallPool(NAME, EVICTION_THREADS);
        this.eviction = new PodEviction(context.client(), context.events(), new TaintEvictionMetrics(context.metrics()),
                clock, context.controllerName(), context.options().featureGates().enabled("PodObservedGenerationTracking"));
        this.taintEvictionQueue = new TimedWorkerQueue(eviction::evict, clock, evictions);
        pods.addEventHandler(ResourceEventHandlerFuncs.<Pod>of(
                pod -> podUpdated(null, pod),
                this::podUpdated,
                pod -> podUpdated(pod, null)));
        // node adds, deletes and taint changes reach the reconciler as JOSDK's primary events
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(pods, nodes);
    }

    /** Upstream's NodeUpdated: an update queues the node only when its NoExecute taints changed. */
    @Override
    protected OnUpdateFilter<? super Node> primaryUpdateFilter() {
        return (newNode, oldNode) -> !Tolerations.noExecuteTaints(taints(oldNode))
                .equals(Tolerations.noExecuteTaints(taints(newNode)));
    }

    @Override
    public synchronized void onStart() {
        log.infof("Starting: controller %s", NAME);
        if (!podWorkers.isEmpty()) {
            return;
        }
        for (int i = 0; i < UPDATE_WORKER_SIZE; i++) {
            Thread t = new Thread(this::runPodWorker, NAME + "-pod-update-worker-" + i);
            t.setDaemon(true);
            podWorkers.add(t);
            t.start();
        }
    }

    @Override
    public synchronized void onShutdown() {
        log.infof("Shutting down controller: controller %s", NAME);
        podUpdateQueue.shutDown();
        taintEvictionQueue.shutDown();
        evictions.shutdownNow();
    }

    /** Upstream's PodUpdated: an update queues the pod only when its tolerations or node changed. */
    void podUpdated(Pod oldPod, Pod newPod) {
        String name = "";
        String namespace = "";
        String nodeName = "";
        List<Toleration> oldTolerations = List.of();
        List<Toleration> newTolerations = List.of();
        if (oldPod != null) {
            name = oldPod.getMetadata().getName();
            namespace = oldPod.getMetadata().getNamespace();
            nodeName = nodeName(oldPod);
            oldTolerations = tolerations(oldPod);
        }
        if (newPod != null) {
            name = newPod.getMetadata().getName();
            namespace = newPod.getMetadata().getNamespace();
            nodeName = nodeName(newPod);
            newTolerations = tolerations(newPod);
        }
        if (oldPod != null && newPod != null && oldTolerations.equals(newTolerations)
                && nodeName(oldPod).equals(nodeName(newPod))) {
            return;
        }
        podUpdateQueue.add(new PodUpdateItem(name, namespace, nodeName));
    }

    /** Upstream's handleNodeUpdate, the sync of {@value #NODE_QUEUE}. */
    @Override
    protected void sync(String nodeName) {
        synchronized (shard(nodeName)) {
            handleNodeUpdate(nodeName);
        }
    }

    private void handleNodeUpdate(String nodeName) {
        Node node = nodes.getStore().getByKey(nodeName);
        if (node == null) {
            log.tracef("Noticed node deletion: node %s", nodeName);
            synchronized (taintedNodes) {
                taintedNodes.remove(nodeName);
            }
            return;
        }
        log.tracef("Noticed node update: node %s", nodeName);
        List<Taint> taints = Tolerations.noExecuteTaints(taints(node));
        synchronized (taintedNodes) {
            log.tracef("Updating known taints on node: node %s taints %s", nodeName, taints);
            if (taints.isEmpty()) {
                taintedNodes.remove(nodeName);
            } else {
                taintedNodes.put(nodeName, taints);
            }
        }
        // taintedNodes is updated before the pods are listed: a pod the cache does not show yet is
        // handled by its own update, which reads taintedNodes
        List<Pod> podsOnNode = Indexes.byIndex(pods, PodIndexes.POD_NODE_NAME_INDEX, nodeName);
        if (podsOnNode.isEmpty()) {
            return;
        }
        if (taints.isEmpty()) {
            log.tracef("All taints were removed from the node. Cancelling all evictions...: node %s", nodeName);
            for (Pod pod : podsOnNode) {
                cancelWorkWithEvent(pod.getMetadata().getNamespace(), pod.getMetadata().getName());
            }
            return;
        }
        Instant now = clock.now();
        for (Pod pod : podsOnNode) {
            processPodOnNode(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), nodeName, tolerations(pod),
                    taints, now);
        }
    }

    /** Upstream's handlePodUpdate. */
    void handlePodUpdate(PodUpdateItem item) {
        synchronized (shard(item.nodeName())) {
            Pod pod = pods.getStore().getByKey(item.namespace() + "/" + item.name());
            if (pod == null) {
                log.tracef("Noticed pod deletion: pod %s/%s", item.namespace(), item.name());
                cancelWorkWithEvent(item.namespace(), item.name());
                return;
            }
            // the item of the pod's current node is the one to act on
            if (!nodeName(pod).equals(item.nodeName())) {
                return;
            }
            log.tracef("Noticed pod update: pod %s/%s", item.namespace(), item.name());
            String nodeName = nodeName(pod);
            if (nodeName.isEmpty()) {
                return;
            }
            List<Taint> taints;
            synchronized (taintedNodes) {
                taints = taintedNodes.get(nodeName);
            }
            // the node was deleted or untainted: its update cancelled what needed cancelling
            if (taints == null) {
                return;
            }
            processPodOnNode(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), nodeName, tolerations(pod),
                    taints, clock.now());
        }
    }

    /** Upstream's processPodOnNode. */
    private void processPodOnNode(String namespace, String name, String nodeName, List<Toleration> tolerations,
            List<Taint> taints, Instant now) {
        if (taints.isEmpty()) {
            cancelWorkWithEvent(namespace, name);
        }
        Tolerations.Match match = Tolerations.matchingTolerations(taints, tolerations);
        if (!match.allTolerated()) {
            log.debugf("Not all taints are tolerated after update for pod on node: pod %s/%s node %s", namespace, name,
                    nodeName);
            // any scheduled deletion is cancelled: the pod goes now
            cancelWorkWithEvent(namespace, name);
            taintEvictionQueue.addWork(namespace, name, now, now);
            return;
        }
        Duration minTolerationTime = Tolerations.minTolerationTime(match.used());
        if (minTolerationTime.isNegative()) {
            log.tracef("Current tolerations for pod tolerate forever, cancelling any scheduled deletion: pod %s/%s",
                    namespace, name);
            cancelWorkWithEvent(namespace, name);
            return;
        }
        Instant startTime = now;
        Instant triggerTime = startTime.plus(minTolerationTime);
        TimedWorkerQueue.TimedWorker scheduled = taintEvictionQueue.getWorkerUnsafe(TimedWorkerQueue.key(namespace, name));
        if (scheduled != null) {
            startTime = scheduled.createdAt();
            // a deletion already due no later than this one stays (a lengthened toleration does not help)
            if (startTime.plus(minTolerationTime).isBefore(triggerTime)) {
                return;
            }
            cancelWorkWithEvent(namespace, name);
        }
        taintEvictionQueue.addWork(namespace, name, startTime, triggerTime);
    }

    /** Upstream's cancelWorkWithEvent: the event only when a scheduled deletion was cancelled. */
    private void cancelWorkWithEvent(String namespace, String name) {
        if (taintEvictionQueue.cancelWork(TimedWorkerQueue.key(namespace, name))) {
            eviction.emitCancelPodDeletionEvent(namespace, name);
        }
    }

    private void runPodWorker() {
        try {
            context.informers().waitForSync(informers());
            while (true) {
                PodUpdateItem item = podUpdateQueue.get();
                if (item == null) {
                    return;
                }
                try {
                    handlePodUpdate(item);
                } catch (RuntimeException e) {
                    // upstream's pod queue has no retries: the pod's next update comes back here
                    log.errorf("could not handle pod %s/%s: %s", item.namespace(), item.name(), shortMessage(e));
                } finally {
                    podUpdateQueue.done(item);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The scheduled deletions (tests). */
    TimedWorkerQueue taintEvictionQueue() {
        return taintEvictionQueue;
    }

    /** The NoExecute taints known for {@code nodeName}, or null (tests). */
    List<Taint> taintedNode(String nodeName) {
        synchronized (taintedNodes) {
            return taintedNodes.get(nodeName);
        }
    }

    /** The lock of the node name's shard: upstream's hash(nodeName, UpdateWorkerSize), FNV-1a 32. */
    private Object shard(String nodeName) {
        int hash = 0x811c9dc5;
        for (byte b : nodeName.getBytes(StandardCharsets.UTF_8)) {
            hash ^= b & 0xff;
            hash *= 0x01000193;
        }
        return shards[(int) (Integer.toUnsignedLong(hash) % UPDATE_WORKER_SIZE)];
    }


    private static List<Taint> taints(Node node) {
        return node.getSpec() == null || node.getSpec().getTaints() == null ? List.of() : node.getSpec().getTaints();
    }

    /** A pod's tolerations; nil and empty are the same, as Semantic.DeepEqual has them. */
    private static List<Toleration> tolerations(Pod pod) {
        return pod.getSpec() == null || pod.getSpec().getTolerations() == null ? List.of() : pod.getSpec().getTolerations();
    }

    private static String nodeName(Pod pod) {
        return pod.getSpec() == null ? "" : Objects.requireNonNullElse(pod.getSpec().getNodeName(), "");
    }
}
