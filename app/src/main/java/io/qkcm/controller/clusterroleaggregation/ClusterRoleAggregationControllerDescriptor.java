package io.qkcm.controller.clusterroleaggregation;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * clusterrole-aggregation-controller's descriptor and start function (upstream's
 * {@code newClusterRoleAggregrationControllerDescriptor} and {@code startClusterRoleAggregationController}
 * in cmd/kube-controller-manager/app/rbac.go): on by default, its own client, 5 workers.
 */
public final class ClusterRoleAggregationControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(ClusterRoleAggregationController.NAME)
            .withAliases("clusterrole-aggregation")
            .startedBy(ClusterRoleAggregationControllerDescriptor::start);

    private ClusterRoleAggregationControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new ClusterRoleAggregationController(context));
    }
}
