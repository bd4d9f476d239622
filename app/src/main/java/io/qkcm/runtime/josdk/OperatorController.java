package io.qkcm.runtime.josdk;

import io.qkcm.runtime.workqueue.WorkqueueMetrics;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.Cloner;
import io.javaoperatorsdk.operator.api.config.ConfigurationService;
import io.javaoperatorsdk.operator.api.config.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.config.ResolvedControllerConfiguration;
import io.javaoperatorsdk.operator.api.config.informer.InformerConfiguration;
import io.javaoperatorsdk.operator.processing.event.rate.LinearRateLimiter;
import io.javaoperatorsdk.operator.processing.retry.GenericRetry;
import io.qkcm.runtime.informers.SharedInformers;

/**
 * One upstream controller as a JOSDK {@link Operator} of its own, holding its reconcilers (one per
 * upstream work queue). An Operator per controller because JOSDK 5.2 has one reconcile executor and one
 * KubernetesClient per Operator, and upstream gives each controller its own worker count
 * ({@code --concurrent-*-syncs}) and its own client (user agent, QPS, credentials).
 *
 * <p>The Operator's configuration is the quarkus-operator-sdk one, overridden: the controller's client
 * wrapped so JOSDK's informers are views of the shared ones, a fixed pool of the controller's workers,
 * the workqueue metrics (with {@link TombstoneRedelivery}: no add of a key is lost while its absent primary
 * is synced), no leader election (the manager's Lease decides when {@link #start} runs), no
 * server-side apply and no tracking annotations, the client left open on stop (the manager owns it), and
 * no copy of the primary before each reconcile.
 */
public final class OperatorController implements Controller {

    private static final Logger LOG = Logger.getLogger(OperatorController.class);

    /**
     * JOSDK copies the primary before each reconcile (its default cloner: a JSON round trip, 3.6% of the
     * CPU at QPS 1000). A KeyReconciler reads its objects from the shared caches and copies what it
     * changes, as upstream's syncs copy their listers' objects, and never asks JOSDK to patch the primary:
     * it gets the cached object itself. Pinned by KeyReconcilerTest.
     */
    static final Cloner CACHED_PRIMARY = new Cloner() {
        @Override
        public <R extends HasMetadata> R clone(R object) {
            return object;
        }
    };

    private final String name;
    private final Operator operator;
    private final ThreadPoolExecutor workers;
    private final int workerCount;
    private final List<KeyReconciler<?>> reconcilers;
    private volatile boolean started;
    private volatile boolean failed;

    OperatorController(String name, ConfigurationService base, KubernetesClient client, SharedInformers informers,
            WorkqueueMetrics metrics, Duration terminationTimeout, List<KeyReconciler<?>> reconcilers) {
        this.name = name;
        this.reconcilers = List.copyOf(reconcilers);
        this.workerCount = reconcilers.stream().mapToInt(KeyReconciler::workers).sum();
        AtomicInteger n = new AtomicInteger();
        this.workers = new ThreadPoolExecutor(workerCount, workerCount, 0, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, name + "-worker-" + n.getAndIncrement());
                    t.setDaemon(true);
                    return t;
                });
        KubernetesClient josdkClient = SharedInformerClient.wrap(client, informers);
        ConfigurationService configuration = ConfigurationService.newOverriddenConfigurationService(base, o -> o
                .withKubernetesClient(josdkClient)
                .withConcurrentReconciliationThreads(workerCount)
                .withExecutorService(workers)
                .withMetrics(new TombstoneRedelivery(metrics, this.reconcilers))
                .withLeaderElectionConfiguration(null)
                .withCloseClientOnStop(false)
                .withResourceCloner(CACHED_PRIMARY)
                .withStopOnInformerErrorDuringStartup(false)
                .withCacheSyncTimeout(Duration.ofDays(365))
                .withReconciliationTerminationTimeout(terminationTimeout)
                .withUseSSAToPatchPrimaryResource(false)
                .withSSABasedCreateUpdateMatchForDependentResources(false)
                .withPreviousAnnotationForDependentResources(false)
                .checkingCRDAndValidateLocalModel(false));
        this.operator = new Operator(configuration);
        for (KeyReconciler<?> r : reconcilers) {
            register(operator, configuration, r);
        }
    }

    private static <P extends HasMetadata> void register(Operator operator, ConfigurationService configuration,
            KeyReconciler<P> reconciler) {
        operator.register(reconciler, controllerConfiguration(configuration, reconciler));
    }

    /**
     * What each reconciler is told: named as its upstream queue; every event triggers it (deleted
     * primaries included); not generation-aware; no JOSDK retry and no JOSDK rate limit (the queue
     * does both as client-go); no periodic reconciliation (upstream's resync comes from the shared
     * informers); no finalizer is ever added (the reconciler is no Cleaner).
     */
    static <P extends HasMetadata> ControllerConfiguration<P> controllerConfiguration(ConfigurationService configuration,
            KeyReconciler<P> reconciler) {
        InformerConfiguration<P> informer = InformerConfiguration.builder(reconciler.primaryType())
                .withWatchAllNamespaces().withGenericFilter(reconciler.primaryFilter())
                .withOnAddFilter(reconciler.primaryAddFilter())
                .withOnUpdateFilter(reconciler.primaryUpdateFilter()).buildForController();
        return new ResolvedControllerConfiguration<>(reconciler.queueName(), false,
                reconciler.getClass().getCanonicalName(), GenericRetry.noRetry(), LinearRateLimiter.deactivatedRateLimiter(), null, null,
                null, reconciler.queueName(), configuration, informer, true, null);
    }

    @Override
    public String name() {
        return name;
    }

    public List<KeyReconciler<?>> reconcilers() {
        return reconcilers;
    }

    /** The reconcile workers of this controller (upstream's --concurrent-*-syncs). */
    public int workerCount() {
        return workerCount;
    }

    /**
     * Starts the Operator on a thread of its own: its start waits for the caches the controller reads
     * (as upstream's WaitForNamedCacheSync), and the manager starts controllers without waiting.
     */
    @Override
    public synchronized void start() {
        if (started) {
            return;
        }
        started = true;
        Thread t = new Thread(() -> {
            try {
                operator.start();
                reconcilers.forEach(KeyReconciler::onStart);
                LOG.infof("Starting %s with %d workers", name, workerCount);
            } catch (RuntimeException e) {
                failed = true;
                LOG.errorf("%s failed to start: %s", name, e.toString());
                LOG.debug("start failure", e);
            }
        }, "start-" + name);
        t.setDaemon(true);
        t.start();
    }

    /**
     * Stops handing out work and gives reconciles in flight {@code timeout} (at most the Operator's
     * termination timeout, which bounds JOSDK's own wait); past it they are interrupted. Zero interrupts
     * them at once.
     */
    @Override
    public void shutdown(Duration timeout) {
        if (timeout.isZero()) {
            workers.shutdownNow();
        } else {
            // JOSDK's stop shuts the pool down and waits for it; this bounds that wait by the caller's timeout
            Thread deadline = new Thread(() -> {
                try {
                    if (!workers.awaitTermination(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                        LOG.debugf("%s: syncs still running after %s, interrupting them", name, timeout);
                        workers.shutdownNow();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "stop-deadline-" + name);
            deadline.setDaemon(true);
            deadline.start();
        }
        operator.stop();
        workers.shutdownNow();
        reconcilers.forEach(KeyReconciler::onShutdown);
    }

    @Override
    public boolean healthy() {
        return !started || (!failed && !workers.isShutdown());
    }

    /** The JOSDK Operator (for tests and the Dev UI). */
    public Operator operator() {
        return operator;
    }
}
