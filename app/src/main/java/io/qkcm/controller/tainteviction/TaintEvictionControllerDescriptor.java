package io.qkcm.controller.tainteviction;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * taint-eviction-controller's descriptor and start function (upstream's
 * {@code newTaintEvictionControllerDescriptor} and {@code startTaintEvictionController} in
 * cmd/kube-controller-manager/app/core.go): no alias, the node-controller's client (upstream reuses its
 * cluster role), gated by SeparateTaintEvictionController (on by default in v1.34). Its events name
 * {@code taint-eviction-controller} as their source.
 */
public final class TaintEvictionControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(TaintEvictionController.NAME)
            .withClientName("node-controller")
            .requiringFeatureGates("SeparateTaintEvictionController")
            .startedBy(TaintEvictionControllerDescriptor::start);

    private TaintEvictionControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new TaintEvictionController(context));
    }
}
