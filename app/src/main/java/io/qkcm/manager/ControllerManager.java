package io.qkcm.manager;

import io.qkcm.runtime.Version;
import io.qkcm.runtime.shadow.ShadowMatcher;
import io.qkcm.runtime.shadow.ShadowMode;

import io.qkcm.runtime.clients.KubeClients;
import io.qkcm.runtime.informers.SharedInformers;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;
import io.qkcm.runtime.options.Tuning;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BooleanSupplier;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;

import org.eclipse.microprofile.config.Config;
import org.jboss.logging.Logger;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;
import io.qkcm.runtime.workqueue.WorkqueueMetrics;
import io.qkcm.runtime.events.EventBroadcaster;
import io.qkcm.manager.serving.SecureServing;
import io.qkcm.runtime.josdk.Operators;
import io.quarkiverse.operatorsdk.runtime.QuarkusConfigurationService;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;

/**
 * The controller manager process: resolves options and the controller selection, builds the selected
 * controllers on the shared informers, starts the informers at once (standbys keep warm caches) and
 * the controllers' workers when this replica leads. Stops cleanly on shutdown.
 */
@ApplicationScoped
public class ControllerManager {

    private static final Logger LOG = Logger.getLogger(ControllerManager.class);

    /** The manager label of running_managed_controllers, as upstream's. */
    public static final String MANAGER = "kube-controller-manager";

    @Inject
    Config config;
    @Inject
    MeterRegistry registry;
    @Inject
    Vertx vertx;
    @Inject
    SecureServing serving;
    @Inject
    Instance<ControllerImplementation> implementations;
    @Inject
    HealthChecks health;
    /** quarkus-operator-sdk's JOSDK configuration: the base of every controller's Operator. */
    @Inject
    QuarkusConfigurationService josdk;

    @Inject
    ProcessExit exit;
    /** qkcm.tuning.*: read once here, passed down with the options. */
    @Inject
    Tuning tuning;

    private ControllerManagerOptions options;
    private KubeClients clients;
    private SharedInformers informers;
    /** The manager's own events (leader election); each controller has its own broadcaster. */
    private EventBroadcaster events;
    private final List<EventBroadcaster> controllerEvents = new ArrayList<>();
    private volatile LeaderElection leaderElection;
    /** How long the start waits for the campaign's first answer before it builds the controllers regardless. */
    static final Duration FIRST_ANSWER_WAIT = Duration.ofSeconds(1);
    private ScheduledExecutorService delayer;
    private ControllerSelection selection;
    // copy-on-write: a lease lost while start() is still building controllers (the campaign starts
    // first) iterates it from the callback thread without the monitor, which exit must not wait for
    private final List<Controller> controllers = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Map<String, Boolean> started = new ConcurrentHashMap<>();
    private final Map<String, ControllerContext> contexts = new ConcurrentHashMap<>();
    private volatile boolean running;
    private volatile boolean leaseLost;
    private ShadowMode shadowMode;

    void onStart(@Observes StartupEvent event) {
        if (!config.getOptionalValue("qkcm.manager.enabled", Boolean.class).orElse(true)) {
            LOG.info("qkcm.manager.enabled=false: not starting controllers");
            return;
        }
        try {
            start();
        } catch (RuntimeException e) {
            if (LaunchMode.current() == LaunchMode.DEVELOPMENT) {
                // Dev mode: fail the start as any Quarkus application's does (the error page, and the next
                // change reloads), leaving nothing of this start behind in the dev-mode JVM.
                LOG.errorf("cannot start the controller manager: %s", e.getMessage());
                abandonStart();
                throw e;
            }
            // one line on stderr, as a bad command line; the log has the same line
            System.err.println("Error: " + e.getMessage());
            LOG.errorf("cannot start the controller manager: %s", e.getMessage());
            LOG.debug("startup failure", e);
            Quarkus.asyncExit(1);
        }
    }

    synchronized void start() {
        options = new ControllerManagerOptions(Flags.upstream(), name -> config.getOptionalValue(name, String.class), tuning);
        Optional<String> invalid = options.validate();
        if (invalid.isPresent()) {
            throw new IllegalArgumentException(invalid.get());
        }
        ControllerCatalog catalog = ControllerCatalog.upstream();
        for (ControllerImplementation impl : implementations) {
            catalog.implement(impl.name(), impl::create);
        }
        if (options.leaderElect()) {
            LeaderElection.validate(options).ifPresent(error -> {
                throw new IllegalArgumentException(error);
            });
        }
        List<String> requested = options.list("controllers");
        Optional<String> unknown = ControllerSelection.validate(catalog, requested);
        if (unknown.isPresent()) {
            throw new IllegalArgumentException(unknown.get());
        }
        selection = ControllerSelection.resolve(catalog, requested, options.featureGates());
        LOG.infof("qkcm %s (drop-in for kube-controller-manager %s) on Java %s (%s)", Version.QKCM, Version.KUBERNETES,
                Runtime.version(), System.getProperty("java.home"));
        if (!selection.notImplemented().isEmpty()) {
            LOG.warnf("controllers enabled but not implemented by qkcm, NOT running: %s",
                    String.join(", ", selection.notImplemented()));
        }
        selection.running().stream().filter(ControllerDescriptor::isPartial).forEach(k -> LOG.warnf(
                "controller %s is implemented only in part by qkcm: %s", k.name(), k.partial().orElseThrow()));
        selection.skipped().forEach(s -> LOG.infof("skipping %s: %s", s.name(), s.reason()));

        // upstream serves /healthz and /metrics before building controllers and starting informers
        serving.start(options, health::forPath);
        clients = new KubeClients(options, registry, vertx);
        if (options.bool("shadow")) {
            startShadow();
        }
        // built-in types in protobuf, as upstream's clients (JSON for the kinds this build does not decode)
        io.qkcm.runtime.protobuf.ProtobufWire.contentType(options.string("kube-api-content-type"));
        io.qkcm.runtime.protobuf.ProtobufWire.sharedStrings(options.tuning().sharedStrings());
        io.qkcm.runtime.protobuf.ProtobufWire.watchesOverWebSocket(
                options.tuning().protobufWatch() == io.qkcm.runtime.options.Tuning.ProtobufWatch.WEBSOCKET);
        events = new EventBroadcaster(clients.forComponent("event-broadcaster"));
        // As upstream, the campaign starts once /healthz is served, before the informers and the controllers
        // are built and started (upstream builds them after winning): the Lease, the first write, does not wait
        // for them. A lease won meanwhile starts the controllers once this method has returned (both are
        // synchronized).
        if (options.leaderElect()) {
            campaign();
            // the Lease's first request (the start's first write when this replica wins) before the informers and
            // controllers are built beside it on the same cores; upstream builds them only after winning
            leaderElection.awaitFirstAttempt(FIRST_ANSWER_WAIT);
        }
        // upstream's two process-wide factories: typed informers, and metadata informers (its own client)
        informers = new SharedInformers(clients.forComponent("shared-informers"), options.minResyncPeriod(),
                options.featureGates().enabled("WatchListClient"), clients.forComponent("metadata-informers"));
        delayer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "workqueue-delayer");
            t.setDaemon(true);
            return t;
        });
        Operators operators = new Operators(josdk, new WorkqueueMetrics(registry),
                options.duration("shutdown-grace-period"));
        for (ControllerDescriptor k : selection.running()) {
            // As upstream, a controller's events go through its own client, so they share its QPS budget.
            // A controller that requires special handling (serviceaccount-token-controller, which mints the
            // tokens the others authenticate with) uses the manager's own credentials, as upstream's
            // rootClientBuilder, never a ServiceAccount's.
            var client = k.requiresSpecialHandling() ? clients.forComponent(k.clientName())
                    : clients.forController(k.clientName());
            EventBroadcaster broadcaster = new EventBroadcaster(client);
            controllerEvents.add(broadcaster);
            ControllerContext context = new ControllerContext(k.name(), client, informers,
                    broadcaster.recorder(k.name()), options, delayer, broadcaster::recorder, operators);
            Controller c = k.start().orElseThrow().start(context);
            if (c == null) {
                // upstream's "started=false": the controller disabled itself (it logged why)
                LOG.infof("Skipping %s: disabled by its configuration", k.name());
                continue;
            }
            controllers.add(c);
            contexts.put(c.name(), context);
            started.put(c.name(), false);
            runningControllerGauge(registry, c.name(), () -> Boolean.TRUE.equals(started.get(c.name())));
        }
        if (shadowMode != null) {
            shadowMode.watch(informers);
        }
        // Standby replicas fill their caches too, so a takeover starts from warm informers.
        informers.start();
        health.addReadiness(HealthChecks.INFORMERS_SYNCED,
                () -> informers.all().stream().allMatch(i -> i.hasSynced()));
        running = true;
        if (!options.leaderElect()) {
            startControllers();
        }
    }

    /**
     * Shadow mode (--shadow): every client's writes become dry runs reported to the matcher, upstream's
     * writes are read from the informers' events (by field manager), and /shadow serves the comparison.
     */
    private void startShadow() {
        shadowMode = ShadowMode.start(clients, options.duration("shadow-match-window"),
                options.string("shadow-upstream-manager"), registry);
        serving.shadow(shadowMode.matcher());
        // shadow mode's Lease and upstream's: each side's own bookkeeping, not compared
        String leaseNamespace = options.string("leader-elect-resource-namespace");
        String leaseName = options.string("leader-elect-resource-name");
        shadowMode.matcher().leaderElectionLease(leaseNamespace, leaseName);
        shadowMode.matcher().leaderElectionLease(leaseNamespace, leaseName + LeaderElection.SHADOW_LEASE_SUFFIX);
        // what both managers do once at their start is compared once qkcm's controllers have started too
        shadowMode.matcher().holdWhileStarting(() -> started.isEmpty() || started.containsValue(false)
                || informers == null || !informers.all().stream().allMatch(i -> i.hasSynced()));
        LOG.infof("shadow mode: every write is sent as a dry run and compared with %s's (window %s)%s",
                options.string("shadow-upstream-manager"), options.string("shadow-match-window"),
                options.leaderElect() ? "; leader election on Lease " + options.string("leader-elect-resource-namespace")
                        + "/" + options.string("leader-elect-resource-name") + LeaderElection.SHADOW_LEASE_SUFFIX : "");
    }

    /** Shadow mode's matcher, when --shadow. */
    public Optional<ShadowMatcher> shadow() {
        return Optional.ofNullable(shadowMode).map(ShadowMode::matcher);
    }

    private void stopShadow() {
        if (shadowMode != null) {
            shadowMode.close();
        }
    }

    private void campaign() {
        leaderElection = new LeaderElection(clients.forComponent("leader-election"), options,
                events.recorder(MANAGER), registry);
        LeaderElection election = leaderElection;
        health.addLiveness("leaderElection", election::healthy);
        leaderElection.start(this::startControllers, this::lostLease);
    }

    /** Undoes a start that failed part-way: the port, the clients, the informers, the controllers' threads. */
    private synchronized void abandonStart() {
        running = false;
        for (Controller c : controllers) {
            try {
                c.shutdown(Duration.ZERO);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                LOG.debugf("stopping %s: %s", c.name(), e);
            }
        }
        if (leaderElection != null) {
            leaderElection.stop();
        }
        controllerEvents.forEach(b -> b.shutdown(Duration.ZERO));
        if (events != null) {
            events.shutdown(Duration.ZERO);
        }
        if (informers != null) {
            informers.stop();
        }
        if (delayer != null) {
            delayer.shutdownNow();
        }
        if (clients != null) {
            clients.close();
        }
        stopShadow();
        serving.stop();
    }

    /** {@code running_managed_controllers{manager,name}}: 1 while the controller runs. */
    static void runningControllerGauge(MeterRegistry registry, String controller, BooleanSupplier running) {
        Gauge.builder("running.managed.controllers", running, r -> r.getAsBoolean() ? 1 : 0)
                .description("Indicates where instances of a controller are currently running")
                .tags("manager", MANAGER, "name", controller)
                .strongReference(true) // the supplier is referenced by nothing else
                .register(registry);
    }

    /**
     * Upstream exits at once ("leaderelection lost", {@code klog.FlushAndExit(..., 1)}) so another replica's
     * controllers are the only ones writing. qkcm first fences its clients (no write is sent from the moment
     * the loss is known: syncs in flight fail their next request), logs, and halts without the shutdown
     * sequence, which would wait for them. The controllers are stopped only if the exit returns (a test's
     * replacement of {@link ProcessExit}).
     */
    private void lostLease() {
        leaseLost = true;
        clients.fenceWrites();
        LOG.error("leaderelection lost, exiting with code 1");
        exit.exit(1);
        synchronized (this) { // after a start still in progress (runs on the elector's thread, not the start's)
            stopControllersAfterLoss();
        }
    }

    private void stopControllersAfterLoss() {
        for (Controller c : controllers) {
            try {
                c.shutdown(Duration.ZERO);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                LOG.debugf("stopping %s: %s", c.name(), e);
            }
            started.put(c.name(), false);
        }
    }

    private synchronized void startControllers() {
        if (!running || leaseLost) {
            return;
        }
        for (Controller c : controllers) {
            if (leaseLost) {
                return;
            }
            c.start();
            started.put(c.name(), true);
            // upstream's AddHealthChecker: a controller's check exists once it has been started
            health.addLiveness(c.name(), c::healthy);
            LOG.infof("Started controller %s", c.name());
        }
        LOG.infof("Started %d controllers: %s", controllers.size(),
                String.join(", ", controllers.stream().map(Controller::name).toList()));
    }

    void onStop(@Observes ShutdownEvent event) {
        synchronized (this) {
            if (!running) {
                serving.stop(); // a failed start may have bound the port already
                return;
            }
            running = false;
        }
        LOG.infof("shutting down: draining controllers (at most %s)", options.string("shutdown-grace-period"));
        stopControllers();
        if (leaderElection != null) {
            leaderElection.stop();
        }
        controllerEvents.forEach(b -> b.shutdown(Duration.ofMillis(500)));
        if (events != null) {
            events.shutdown(Duration.ofSeconds(2));
        }
        informers.stop();
        delayer.shutdownNow();
        clients.close();
        stopShadow();
        serving.stop();
    }

    /**
     * Every controller stops taking work at once, then syncs in flight get until the end of
     * qkcm.shutdown-grace-period (shared by all controllers) to finish.
     */
    private void stopControllers() {
        Duration grace = options.duration("shutdown-grace-period");
        List<Thread> stoppers = new ArrayList<>();
        for (Controller c : controllers) {
            Thread t = new Thread(() -> {
                try {
                    c.shutdown(grace);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (RuntimeException e) {
                    LOG.warnf("stopping %s: %s", c.name(), e);
                }
                started.put(c.name(), false);
            }, "stop-" + c.name());
            t.setDaemon(true);
            t.start();
            stoppers.add(t);
        }
        long deadline = System.nanoTime() + grace.toNanos() + TimeUnit.SECONDS.toNanos(1);
        for (Thread t : stoppers) {
            try {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** The liveness checks (/healthz), by name, in upstream's order. */
    public Map<String, BooleanSupplier> healthChecks() {
        return health.liveness();
    }

    public ControllerManagerOptions options() {
        return options;
    }

    public SharedInformers informers() {
        return informers;
    }

    public List<Controller> controllers() {
        return List.copyOf(controllers);
    }

    public ControllerSelection selection() {
        return selection;
    }

    public Optional<LeaderElection> leaderElection() {
        return Optional.ofNullable(leaderElection);
    }

    public boolean running() {
        return running;
    }

    /** The names of {@code controller}'s work queues (the {@code name} label of its workqueue_* metrics). */
    public List<String> queues(String controller) {
        ControllerContext context = contexts.get(controller);
        return context == null ? List.of() : context.queues();
    }

    /** Whether {@code controller}'s workers have been started (running_managed_controllers). */
    public boolean started(String controller) {
        return Boolean.TRUE.equals(started.get(controller));
    }
}
