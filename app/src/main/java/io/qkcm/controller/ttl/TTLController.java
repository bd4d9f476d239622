package io.qkcm.controller.ttl;

import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnAddFilter;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.qkcm.runtime.Json;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * ttl-controller (upstream pkg/controller/ttl): every node carries the annotation
 * {@value #OBJECT_TTL_ANNOTATION_KEY}, the seconds a kubelet may cache the Secrets and ConfigMaps its
 * pods use, chosen by cluster size ({@link TTLBoundaries}). A node whose annotation is missing, not a
 * number or not the desired value gets a strategic merge patch of that one annotation.
 *
 * <p>Upstream's node handler counts the nodes and queues each added or updated node after counting
 * (a node whose add moves the cluster to another step is synced with the new TTL; the others follow
 * on their next update, which kubelets' status updates bring). JOSDK's own adds and updates are off so
 * that the count comes first; deletes queue nothing upstream and find nothing to do here.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class TTLController extends KeyReconciler<Node> {

    public static final String NAME = "ttl-controller";
    static final String QUEUE = "ttlcontroller";
    /** Upstream's v1.ObjectTTLAnnotationKey. */
    static final String OBJECT_TTL_ANNOTATION_KEY = "node.alpha.kubernetes.io/ttl";
    /** Upstream starts 5 workers (startTTLController). */
    static final int WORKERS = 5;

    private final SharedIndexInformer<Node> nodes;
    private final TTLBoundaries boundaries;

    public TTLController(ControllerContext context) {
        this(context, new TTLBoundaries());
    }

    TTLController(ControllerContext context, TTLBoundaries boundaries) {
        super(context, Node.class, QUEUE, WORKERS);
        this.boundaries = boundaries;
        this.nodes = context.informers().informerFor(Node.class);
        nodes.addEventHandler(ResourceEventHandlerFuncs.<Node>of(
                node -> {
                    boundaries.nodeAdded();
                    queue.add(key(node));
                },
                (oldNode, newNode) -> queue.add(key(newNode)),
                node -> boundaries.nodeDeleted()));
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(nodes);
    }

    @Override
    protected OnAddFilter<? super Node> primaryAddFilter() {
        return node -> false;
    }

    @Override
    protected OnUpdateFilter<? super Node> primaryUpdateFilter() {
        return (newNode, oldNode) -> false;
    }

    @Override
    public void onStart() {
        log.info("Starting TTL controller");
    }

    @Override
    public void onShutdown() {
        log.info("Shutting down TTL controller");
    }

    /** Upstream's updateNodeIfNeeded. */
    @Override
    protected void sync(String name) {
        Node node = nodes.getStore().getByKey(name);
        if (node == null) {
            return;
        }
        int desiredTTL = boundaries.desiredTTLSeconds();
        Long currentTTL = intFromAnnotation(node, OBJECT_TTL_ANNOTATION_KEY);
        if (currentTTL != null && currentTTL == desiredTTL) {
            return;
        }
        patchNodeWithAnnotation(name, OBJECT_TTL_ANNOTATION_KEY, desiredTTL);
    }

    /** Upstream's patchNodeWithAnnotation: the two-way merge patch of setting one annotation. */
    private void patchNodeWithAnnotation(String name, String annotationKey, int value) {
        try {
            context.client().nodes().withName(name).patch(PatchContext.of(PatchType.STRATEGIC_MERGE),
                    annotationPatch(annotationKey, value));
        } catch (KubernetesClientException e) {
            log.debugf("Failed to change ttl annotation for node: node %s err %s", name, shortMessage(e));
            throw e;
        }
        log.debugf("Changed ttl annotation: node %s TTL %ds", name, value);
    }

    /**
     * The patch upstream's CreateTwoWayMergePatch yields for a node whose annotation differs from
     * {@code value}: {@code {"metadata":{"annotations":{key:"value"}}}}, nothing else.
     */
    static String annotationPatch(String annotationKey, int value) {
        return Json.api().asJson(Map.of("metadata", Map.of("annotations", Map.of(annotationKey, Integer.toString(value)))));
    }

    /**
     * Upstream's getIntFromAnnotation: the annotation as Go's Atoi reads it (a sign allowed, 64 bits), or
     * null when absent or not a number (logged).
     */
    Long intFromAnnotation(Node node, String annotationKey) {
        Map<String, String> annotations = node.getMetadata().getAnnotations();
        if (annotations == null || !annotations.containsKey(annotationKey)) {
            return null;
        }
        String value = annotations.get(annotationKey);
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            log.infof("Could not convert the value with annotation key for the node: annotationValue %s annotationKey %s node %s",
                    value, annotationKey, node.getMetadata().getName());
            return null;
        }
    }

    /** The cluster-size state (tests). */
    TTLBoundaries boundaries() {
        return boundaries;
    }
}
