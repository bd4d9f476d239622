package io.qkcm.runtime.josdk;

import io.qkcm.runtime.workqueue.WorkqueueMetrics;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.runtime.events.EventBroadcaster;
import io.qkcm.runtime.clients.KubeClients;
import io.qkcm.runtime.informers.SharedInformers;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;
import io.qkcm.testing.RealApiServer;
import io.vertx.core.Vertx;

/** The plumbing a controller gets from the manager, built against the real API server, for runtime tests. */
final class StandaloneRuntime implements AutoCloseable {

    final Vertx vertx = Vertx.vertx();
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final KubeClients clients;
    final SharedInformers informers;
    final EventBroadcaster events;
    final ScheduledExecutorService delayer = Executors.newSingleThreadScheduledExecutor();
    final WorkqueueMetrics metrics = new WorkqueueMetrics(registry);
    final Operators operators;
    final ControllerManagerOptions options;

    StandaloneRuntime() {
        Map<String, String> config = new HashMap<>();
        config.put("qkcm.kubeconfig", RealApiServer.get().kubeconfig().toString());
        options = new ControllerManagerOptions(Flags.upstream(), name -> Optional.ofNullable(config.get(name)));
        clients = new KubeClients(options, registry, vertx);
        informers = new SharedInformers(clients.forComponent("shared-informers"), options.minResyncPeriod());
        events = new EventBroadcaster(clients.forComponent("event-broadcaster"));
        operators = new Operators(new io.javaoperatorsdk.operator.api.config.BaseConfigurationService(), metrics,
                Duration.ofSeconds(5));
    }

    ControllerContext context(String controller) {
        return new ControllerContext(controller, clients.forController(controller), informers,
                events.recorder(controller), options, delayer, events::recorder, operators);
    }

    @Override
    public void close() {
        informers.stop();
        events.shutdown(Duration.ZERO);
        delayer.shutdownNow();
        clients.close();
        vertx.close();
    }
}
