package io.qkcm.controller.nodelifecycle;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.core.JsonProcessingException;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.PodStatusPatch;
import io.qkcm.runtime.Json;

/**
 * Upstream's node taint writes (pkg/controller AddOrUpdateTaintOnNode, RemoveTaintOffNode, PatchNodeTaints
 * and util/node SwapNodeControllerTaint): read the node (the cache first, as upstream reads the API
 * server's cache first, then a fresh GET after a conflict), change its taints, and send them as a
 * strategic merge patch carrying the read resourceVersion, so that a concurrent change of the taints
 * conflicts instead of being overwritten; retried on conflict up to 5 times (UpdateTaintBackoff).
 */
final class NodeTaints {

    private static final Logger LOG = Logger.getLogger(NodeTaints.class);
    private static final int STEPS = 5;
    private static final long BACKOFF_MILLIS = 100;

    static final Taint UNREACHABLE_NO_EXECUTE = new TaintBuilder().withKey(NodeLifecycleController.TAINT_UNREACHABLE)
            .withEffect("NoExecute").build();
    static final Taint NOT_READY_NO_EXECUTE = new TaintBuilder().withKey(NodeLifecycleController.TAINT_NOT_READY)
            .withEffect("NoExecute").build();

    private final KubernetesClient client;
    private final Function<String, Node> cached;

    NodeTaints(KubernetesClient client, Function<String, Node> cached) {
        this.client = client;
        this.cached = cached;
    }

    /** taintutils.TaintExists: a taint of the same key and effect. */
    static boolean taintExists(List<Taint> taints, Taint find) {
        if (taints == null) {
            return false;
        }
        return taints.stream().anyMatch(t -> matches(t, find));
    }

    static boolean taintExists(Node node, Taint find) {
        return node.getSpec() != null && taintExists(node.getSpec().getTaints(), find);
    }

    private static boolean matches(Taint a, Taint b) {
        return Objects.equals(a.getKey(), b.getKey()) && Objects.equals(a.getEffect(), b.getEffect());
    }

    /**
     * SwapNodeControllerTaint: adds {@code toAdd} stamped with {@code now}, then removes {@code toRemove};
     * false (logged) when either write failed.
     */
    boolean swapNodeControllerTaint(List<Taint> toAdd, List<Taint> toRemove, Node node, Instant now) {
        List<Taint> stamped = toAdd.stream()
                .map(t -> new TaintBuilder(t).withTimeAdded(PodStatusPatch.metaTime(now)).build()).toList();
        try {
            addOrUpdateTaintOnNode(node.getMetadata().getName(), stamped);
        } catch (RuntimeException | InterruptedException e) {
            interruptedAgain(e);
            LOG.errorf("unable to taint %s unresponsive Node %s: %s", keys(stamped), node.getMetadata().getName(),
                    ApiErrors.message(e));
            return false;
        }
        LOG.debugf("Added taint to node %s: %s", node.getMetadata().getName(), keys(stamped));
        try {
            removeTaintOffNode(node.getMetadata().getName(), node, toRemove);
        } catch (RuntimeException | InterruptedException e) {
            interruptedAgain(e);
            LOG.errorf("unable to remove %s unneeded taint from unresponsive Node %s: %s", keys(toRemove),
                    node.getMetadata().getName(), ApiErrors.message(e));
            return false;
        }
        LOG.debugf("Made sure that node %s has no taint %s", node.getMetadata().getName(), keys(toRemove));
        return true;
    }

    /** AddOrUpdateTaintOnNode: a taint of the same key and effect is replaced unless it is equal. */
    void addOrUpdateTaintOnNode(String nodeName, List<Taint> taints) throws InterruptedException {
        if (taints.isEmpty()) {
            return;
        }
        retryOnConflict(nodeName, old -> {
            List<Taint> current = taintsOf(old);
            boolean updated = false;
            for (Taint taint : taints) {
                List<Taint> next = new ArrayList<>();
                boolean replaced = false;
                boolean equal = false;
                for (Taint t : current) {
                    if (matches(taint, t)) {
                        if (semanticEqual(taint, t)) {
                            equal = true;
                            next.add(t);
                        } else {
                            next.add(taint);
                            replaced = true;
                        }
                    } else {
                        next.add(t);
                    }
                }
                if (equal) {
                    continue;
                }
                if (!replaced) {
                    next.add(taint);
                }
                current = next;
                updated = true;
            }
            return updated ? current : null;
        });
    }

    /**
     * RemoveTaintOffNode: removes every taint of the same key and effect; when {@code node} is given and
     * carries none of them, no request is made.
     */
    void removeTaintOffNode(String nodeName, Node node, List<Taint> taints) throws InterruptedException {
        if (taints.isEmpty()) {
            return;
        }
        if (node != null && taints.stream().noneMatch(t -> taintExists(node, t))) {
            return;
        }
        retryOnConflict(nodeName, old -> {
            List<Taint> current = taintsOf(old);
            boolean updated = false;
            for (Taint taint : taints) {
                if (taintExists(current, taint)) {
                    current = current.stream().filter(t -> !matches(t, taint)).toList();
                    updated = true;
                }
            }
            return updated ? current : null;
        });
    }

    /** Reads the node (cache first), asks {@code change} for its new taints (null: nothing to do), patches. */
    private void retryOnConflict(String nodeName, Function<Node, List<Taint>> change) throws InterruptedException {
        boolean firstTry = true;
        for (int step = 1;; step++) {
            Node old = firstTry ? cached.apply(nodeName) : null;
            firstTry = false;
            if (old == null) {
                old = client.nodes().withName(nodeName).get();
                if (old == null) {
                    throw new KubernetesClientException("nodes \"" + nodeName + "\" not found", 404, null);
                }
            }
            List<Taint> taints = change.apply(old);
            if (taints == null) {
                return;
            }
            try {
                patchNodeTaints(nodeName, old, taints);
                return;
            } catch (KubernetesClientException e) {
                if (!ApiErrors.isConflict(e) || step >= STEPS) {
                    throw e;
                }
            }
            // wait.Backoff{Duration: 100ms, Jitter: 1.0}
            Thread.sleep(BACKOFF_MILLIS + ThreadLocalRandom.current().nextLong(BACKOFF_MILLIS + 1));
        }
    }

    /**
     * PatchNodeTaints: the strategic merge patch from the node without its resourceVersion to the node with
     * the new taints: {@code metadata.resourceVersion} (the precondition) and the whole taint list (taints
     * have no merge key), or null when none remain.
     */
    private void patchNodeTaints(String nodeName, Node old, List<Taint> taints) {
        Map<String, Object> spec = new TreeMap<>();
        spec.put("taints", taints.isEmpty() ? null : taints.stream().map(NodeTaints::goJson).toList());
        Map<String, Object> patch = new TreeMap<>();
        patch.put("metadata", Map.of("resourceVersion", old.getMetadata().getResourceVersion()));
        patch.put("spec", spec);
        String body;
        try {
            body = Json.mapper().writeValueAsString(patch);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        client.nodes().withName(nodeName).patch(PatchContext.of(PatchType.STRATEGIC_MERGE), body);
    }

    /** A taint as Go marshals it (fields in order of the patch's sorted map, empty ones omitted). */
    private static Map<String, Object> goJson(Taint t) {
        Map<String, Object> m = new TreeMap<>();
        m.put("key", t.getKey());
        if (t.getValue() != null && !t.getValue().isEmpty()) {
            m.put("value", t.getValue());
        }
        if (t.getEffect() != null && !t.getEffect().isEmpty()) {
            m.put("effect", t.getEffect());
        }
        if (t.getTimeAdded() != null && !t.getTimeAdded().isEmpty()) {
            m.put("timeAdded", t.getTimeAdded());
        }
        return m;
    }

    /** helper.Semantic.DeepEqual of two taints (times compared as instants). */
    private static boolean semanticEqual(Taint a, Taint b) {
        return Objects.equals(a.getKey(), b.getKey()) && Objects.equals(a.getEffect(), b.getEffect())
                && Objects.equals(emptyToNull(a.getValue()), emptyToNull(b.getValue()))
                && Objects.equals(instant(a.getTimeAdded()), instant(b.getTimeAdded()));
    }

    private static Instant instant(String t) {
        return t == null || t.isEmpty() ? null : Instant.parse(t);
    }

    private static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    private static List<Taint> taintsOf(Node node) {
        return node.getSpec() == null || node.getSpec().getTaints() == null ? List.of() : node.getSpec().getTaints();
    }

    private static List<String> keys(List<Taint> taints) {
        return taints.stream().map(t -> t.getKey() + ":" + t.getEffect()).toList();
    }

    private static void interruptedAgain(Exception e) {
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        }
    }
}
