package io.qkcm.controller.replicaset;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.qkcm.controller.Controller;
import io.qkcm.testing.TestOperators;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.controller.ControllerContext;
import io.qkcm.controller.WorkQueueMetrics;
import io.qkcm.controller.events.EventBroadcaster;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;
import io.qkcm.runtime.clients.KubeClients;
import io.qkcm.runtime.informers.SharedInformers;
import io.qkcm.testing.RealApiServer;
import io.vertx.core.Vertx;

/**
 * A ReplicaSet controller built the way the manager builds it (own clients with the default
 * QPS 20 / burst 30, own shared informers, own event broadcaster), but outside the Quarkus
 * application, so a test can kill it and start another one, as a controller manager restart would.
 */
final class ControllerInstance implements AutoCloseable {

    final KubeClients clients;
    final SharedInformers informers;
    final EventBroadcaster events;
    final ScheduledExecutorService delayer;
    final ReplicaSetController<ReplicaSet> controller;
    final Controller running;
    private boolean closed;

    ControllerInstance(Vertx vertx) {
        Map<String, String> config = new HashMap<>();
        config.put("qkcm.kubeconfig", RealApiServer.get().kubeconfig().toString());
        ControllerManagerOptions options = new ControllerManagerOptions(Flags.upstream(),
                name -> Optional.ofNullable(config.get(name)));
        clients = new KubeClients(options, new SimpleMeterRegistry(), vertx);
        informers = new SharedInformers(clients.forComponent("shared-informers"), options.minResyncPeriod());
        events = new EventBroadcaster(clients.forComponent("event-broadcaster"));
        delayer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "test-workqueue-delayer");
            t.setDaemon(true);
            return t;
        });
        ControllerContext context = new ControllerContext(ReplicaSetController.NAME,
                clients.forComponent(ReplicaSetController.NAME), informers, events.recorder(ReplicaSetController.NAME),
                options, delayer, WorkQueueMetrics.NONE, events::recorder, TestOperators.create());
        controller = ReplicaSetController.replicaSets(context);
        running = context.operate(controller);
    }

    /** Starts the informers only; the workers are started by {@link #start}. */
    ControllerInstance startInformers() throws InterruptedException {
        informers.start();
        informers.waitForSync(informers.all());
        return this;
    }

    ControllerInstance start() throws InterruptedException {
        startInformers();
        running.start();
        return this;
    }

    void stopPodInformer() {
        informers.informerFor(Pod.class).stop();
    }

    /** Stops everything at once, requests in flight included: the process died. */
    void kill() {
        if (closed) {
            return;
        }
        closed = true;
        // connections first, so requests still waiting for a QPS token die with the process
        clients.close();
        informers.stop();
        try {
            running.shutdown(Duration.ZERO);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        events.shutdown(Duration.ZERO);
        delayer.shutdownNow();
    }

    @Override
    public void close() {
        kill();
    }
}
