package io.qkcm.testing;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.workqueue.WorkqueueMetrics;
import io.qkcm.runtime.events.EventBroadcaster;
import io.qkcm.runtime.clients.KubeClients;
import io.qkcm.runtime.informers.SharedInformers;
import io.qkcm.runtime.josdk.KeyReconciler;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;
import io.vertx.core.Vertx;

/**
 * One controller built the way the manager builds it (own clients with the default QPS 20 / burst 30,
 * own shared informers, own event broadcaster, own workqueue delayer), against {@link RealApiServer},
 * but outside the Quarkus application: a test can kill it and start another one, as a controller
 * manager restart would. The test's profile turns the application's manager off.
 *
 * @param <C> the controller (the {@link KeyReconciler} that is operated)
 */
public final class ControllerHarness<C extends KeyReconciler<?>> implements AutoCloseable {

    public final ControllerManagerOptions options;
    public final KubeClients clients;
    private final KubeClients informerClients;
    public final SharedInformers informers;
    public final EventBroadcaster events;
    public final ScheduledExecutorService delayer;
    public final ControllerContext context;
    public final C controller;
    public final Controller running;
    private boolean closed;

    /** The controller named {@code name} (its context, client and event source), with upstream's default flags. */
    public static <C extends KeyReconciler<?>> ControllerHarness<C> create(Vertx vertx, String name,
            Function<ControllerContext, C> build) {
        return create(vertx, name, Map.of(), build);
    }

    /**
     * The controller named {@code name}, with {@code config} ({@code qkcm.<flag>} properties, as the
     * application reads them) on top of upstream's defaults.
     */
    public static <C extends KeyReconciler<?>> ControllerHarness<C> create(Vertx vertx, String name,
            Map<String, String> config, Function<ControllerContext, C> build) {
        return create(vertx, name, name, config, build);
    }

    /**
     * As {@link #create(Vertx, String, Map, Function)}, with the API client of component {@code clientName}
     * (its user agent and rate limits) where the controller's client is not named after the controller.
     */
    public static <C extends KeyReconciler<?>> ControllerHarness<C> create(Vertx vertx, String name, String clientName,
            Map<String, String> config, Function<ControllerContext, C> build) {
        return new ControllerHarness<>(vertx, name, clientName, config, null, build, null);
    }

    /**
     * As {@link #create(Vertx, String, String, Map, Function)}, with {@code companions} of the controller run in
     * its Operator beside it (a controller whose upstream queue is two reconcilers here).
     */
    public static <C extends KeyReconciler<?>> ControllerHarness<C> create(Vertx vertx, String name, String clientName,
            Map<String, String> config, Function<ControllerContext, C> build,
            Function<C, java.util.List<KeyReconciler<?>>> companions) {
        return new ControllerHarness<>(vertx, name, clientName, config, null, build, companions);
    }

    /**
     * The controller named {@code name}, its shared informers connecting to the API server with
     * {@code informerKubeconfig} (through a {@link StallingProxy}, say) and its writes directly: a test
     * can hold the cache back while the controller acts.
     */
    public static <C extends KeyReconciler<?>> ControllerHarness<C> withInformersVia(Vertx vertx, String name,
            java.nio.file.Path informerKubeconfig, Function<ControllerContext, C> build) {
        return new ControllerHarness<>(vertx, name, name, Map.of(), informerKubeconfig, build, null);
    }

    private ControllerHarness(Vertx vertx, String name, String clientName, Map<String, String> config,
            java.nio.file.Path informerKubeconfig, Function<ControllerContext, C> build,
            Function<C, java.util.List<KeyReconciler<?>>> companions) {
        Map<String, String> all = new HashMap<>(config);
        // a test may point the controller at another API server of its own
        all.putIfAbsent("qkcm.kubeconfig", RealApiServer.get().kubeconfig().toString());
        options = new ControllerManagerOptions(Flags.upstream(), flag -> Optional.ofNullable(all.get(flag)));
        clients = new KubeClients(options, new SimpleMeterRegistry(), vertx);
        if (informerKubeconfig == null) {
            informerClients = null;
            informers = new SharedInformers(clients.forComponent("shared-informers"), options.minResyncPeriod());
        } else {
            Map<String, String> via = new HashMap<>(all);
            via.put("qkcm.kubeconfig", informerKubeconfig.toString());
            ControllerManagerOptions viaOptions = new ControllerManagerOptions(Flags.upstream(),
                    flag -> Optional.ofNullable(via.get(flag)));
            informerClients = new KubeClients(viaOptions, new SimpleMeterRegistry(), vertx);
            informers = new SharedInformers(informerClients.forComponent("shared-informers"), options.minResyncPeriod());
        }
        events = new EventBroadcaster(clients.forComponent("event-broadcaster"));
        delayer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "test-workqueue-delayer");
            t.setDaemon(true);
            return t;
        });
        context = new ControllerContext(name, clients.forComponent(clientName), informers, events.recorder(name), options,
                delayer, events::recorder, TestOperators.create());
        controller = build.apply(context);
        java.util.List<KeyReconciler<?>> operated = new java.util.ArrayList<>();
        operated.add(controller);
        if (companions != null) {
            operated.addAll(companions.apply(controller));
        }
        running = context.operate(operated.toArray(KeyReconciler<?>[]::new));
    }

    /** Starts the informers and waits for their caches; the workers are started by {@link #start}. */
    public ControllerHarness<C> startInformers() throws InterruptedException {
        informers.start();
        informers.waitForSync(informers.all());
        return this;
    }

    /** Starts the informers, waits for their caches, then starts the workers. */
    public ControllerHarness<C> start() throws InterruptedException {
        startInformers();
        running.start();
        return this;
    }

    /** Stops everything at once, requests in flight included: the process died. */
    public void kill() {
        if (closed) {
            return;
        }
        closed = true;
        // connections first, so requests still waiting for a QPS token die with the process
        clients.close();
        if (informerClients != null) {
            informerClients.close();
        }
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
