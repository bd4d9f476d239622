package io.qkcm.controller.job;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.controller.Controller;
import io.qkcm.controller.ControllerContext;
import io.qkcm.controller.WorkQueueMetrics;
import io.qkcm.controller.events.EventBroadcaster;
import io.qkcm.runtime.clients.KubeClients;
import io.qkcm.runtime.informers.SharedInformers;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.TestOperators;
import io.vertx.core.Vertx;

/**
 * A Job controller built as the manager builds it (own clients, shared informers, event broadcaster)
 * outside the Quarkus application, so a test can kill it and start another, as a restart would.
 */
final class JobControllerInstance implements AutoCloseable {

    final KubeClients clients;
    final SharedInformers informers;
    final EventBroadcaster events;
    final ScheduledExecutorService delayer;
    final JobController controller;
    final Controller running;
    private boolean closed;

    JobControllerInstance(Vertx vertx) {
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
        ControllerContext context = new ControllerContext(JobController.NAME, clients.forComponent(JobController.NAME),
                informers, events.recorder(JobController.NAME), options, delayer, WorkQueueMetrics.NONE, events::recorder,
                TestOperators.create());
        controller = new JobController(context);
        running = context.operate(controller);
    }

    JobControllerInstance start() throws InterruptedException {
        informers.start();
        informers.waitForSync(informers.all());
        running.start();
        return this;
    }

    /** Stops everything at once, requests in flight included: the process died. */
    void kill() {
        if (closed) {
            return;
        }
        closed = true;
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
