package io.qkcm.controller.clusterroleaggregation;

import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.GenericFilter;
import io.qkcm.controller.ApiErrors;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * clusterrole-aggregation-controller (upstream pkg/controller/clusterroleaggregation): the rules of a
 * ClusterRole with an aggregationRule are those of the ClusterRoles its selectors pick
 * ({@link Aggregation}), written by server-side apply (field manager
 * {@code clusterrole-aggregation-controller}, forced) only when they differ; an API server refusing
 * apply (415) gets an update instead, as upstream.
 *
 * <p>Upstream's handler queues every aggregating ClusterRole on any add, update or delete of any
 * ClusterRole (it does not know which roles select which), so JOSDK's own primary events are filtered
 * out and that handler does the queueing.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class ClusterRoleAggregationController extends KeyReconciler<ClusterRole> {

    public static final String NAME = "clusterrole-aggregation-controller";
    public static final String QUEUE = "ClusterRoleAggregator";
    static final String FIELD_MANAGER = "clusterrole-aggregation-controller";
    /** Upstream's start function runs it with 5 workers; there is no flag. */
    static final int WORKERS = 5;

    private final SharedIndexInformer<ClusterRole> clusterRoles;

    public ClusterRoleAggregationController(ControllerContext context) {
        super(context, ClusterRole.class, QUEUE, WORKERS);
        this.clusterRoles = context.informers().informerFor(ClusterRole.class);
        clusterRoles.addEventHandler(ResourceEventHandlerFuncs.<ClusterRole>of(r -> enqueue(), (o, r) -> enqueue(),
                r -> enqueue()));
    }

    /** Upstream's enqueue: every ClusterRole that aggregates, whichever role changed. */
    private void enqueue() {
        for (ClusterRole role : clusterRoles.getStore().list()) {
            if (role.getAggregationRule() != null) {
                queue.add(KeyReconciler.key(role));
            }
        }
    }

    @Override
    protected GenericFilter<? super ClusterRole> primaryFilter() {
        return role -> false;
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(clusterRoles);
    }

    @Override
    public void onStart() {
        log.info("Starting ClusterRoleAggregator controller");
    }

    @Override
    public void onShutdown() {
        log.info("Shutting down ClusterRoleAggregator controller");
    }

    /** Upstream's syncClusterRole. */
    @Override
    protected void sync(String key) {
        ClusterRole shared = clusterRoles.getStore().getByKey(key);
        if (shared == null || shared.getAggregationRule() == null) {
            return;
        }
        List<PolicyRule> rules = Aggregation.aggregatedRules(shared, clusterRoles.getStore().list());
        if (Aggregation.semanticallyEqual(rules, shared.getRules())) {
            return;
        }
        try {
            apply(shared.getMetadata().getName(), rules);
        } catch (RuntimeException e) {
            // an API server without server-side apply: upstream's fallback to an update
            if (ApiErrors.code(e) != 415) {
                throw e;
            }
            update(shared, rules);
        }
    }

    private void apply(String name, List<PolicyRule> rules) {
        PatchContext apply = new PatchContext.Builder().withPatchType(PatchType.SERVER_SIDE_APPLY)
                .withFieldManager(FIELD_MANAGER).withForce(true).build();
        context.client().rbac().clusterRoles().withName(name).patch(apply, Aggregation.applyBody(name, rules));
    }

    private void update(ClusterRole shared, List<PolicyRule> rules) {
        ClusterRole copy = DeepCopy.of(shared);
        List<PolicyRule> copied = new ArrayList<>();
        for (PolicyRule rule : rules) {
            copied.add(DeepCopy.of(rule));
        }
        copy.setRules(copied);
        context.client().rbac().clusterRoles().resource(copy).update();
    }
}
