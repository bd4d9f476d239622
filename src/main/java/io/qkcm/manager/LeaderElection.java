package io.qkcm.manager;

import io.qkcm.runtime.options.ControllerManagerOptions;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElector;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.qkcm.controller.events.EventRecorder;

/**
 * Upstream's leader election: a Lease (default kube-system/kube-controller-manager), identity
 * {@code <hostname>_<uuid>}, 15s/10s/2s. Losing the lease after having held it is fatal, as upstream
 * ("leaderelection lost"): the manager exits non-zero and a restart re-joins as a standby.
 *
 * <p>Built on fabric8's {@link LeaderElector} (7.4.0), whose behaviour differs from client-go's in
 * ways handled here:
 * <ul>
 * <li>its callbacks run synchronously on the elector thread while it holds the elector's monitor
 * (client-go runs OnStartedLeading in its own goroutine): ours hand off to a callback thread;</li>
 * <li>onStopLeading fires when a renewal finds another holder, when the renew deadline passes, and
 * when the elector's future is cancelled while leading (after releasing the lease if
 * releaseOnCancel); it does not fire for a standby. Cancelling via {@link #stop} is not a loss;</li>
 * <li>an unexpected (non-KubernetesClientException) error while campaigning ends its loop for good,
 * where client-go keeps retrying: a standby whose elector died starts a new one;</li>
 * <li>expiry is judged by the record's renewTime (the clocks of both replicas), not by the time the
 * standby observed the record, as client-go does.</li>
 * </ul>
 */
public final class LeaderElection {

    private static final Logger LOG = Logger.getLogger(LeaderElection.class);

    private final KubernetesClient client;
    private final ControllerManagerOptions options;
    private final EventRecorder events;
    private final String identity;
    private final String namespace;
    private final String name;
    private final AtomicBoolean leading = new AtomicBoolean();
    private final AtomicBoolean lost = new AtomicBoolean();
    private final ExecutorService callbacks = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "leader-election-callbacks");
        t.setDaemon(true);
        return t;
    });
    private volatile CompletableFuture<?> running;
    private volatile boolean stopping;
    private Runnable onStartedLeading;
    private Runnable onLost;

    public LeaderElection(KubernetesClient client, ControllerManagerOptions options, EventRecorder events,
            MeterRegistry registry) {
        this.client = client;
        this.options = options;
        this.events = events;
        this.identity = hostname() + "_" + UUID.randomUUID();
        this.namespace = options.string("leader-elect-resource-namespace");
        this.name = options.string("leader-elect-resource-name");
        Gauge.builder("leader.election.master.status", leading, l -> l.get() ? 1 : 0)
                .description("Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.")
                .tag("name", name).register(registry);
    }

    /** Upstream's leader election option checks, as one line; empty when the options are usable. */
    public static Optional<String> validate(ControllerManagerOptions options) {
        String lock = options.string("leader-elect-resource-lock");
        if (!lock.equals("leases")) {
            return Optional.of("--leader-elect-resource-lock: only \"leases\" is supported, got \"" + lock + "\"");
        }
        Duration lease = options.duration("leader-elect-lease-duration");
        Duration renew = options.duration("leader-elect-renew-deadline");
        Duration retry = options.duration("leader-elect-retry-period");
        if (lease.isNegative() || lease.isZero() || renew.isNegative() || renew.isZero() || retry.isNegative() || retry.isZero()) {
            return Optional.of("--leader-elect-lease-duration, --leader-elect-renew-deadline and "
                    + "--leader-elect-retry-period must be greater than zero");
        }
        if (lease.compareTo(renew) <= 0) {
            return Optional.of("--leader-elect-lease-duration (" + options.string("leader-elect-lease-duration")
                    + ") must be greater than --leader-elect-renew-deadline ("
                    + options.string("leader-elect-renew-deadline") + ")");
        }
        // fabric8's LeaderElector needs renewDeadline > retryPeriod * (1 + 1.2); client-go only > retryPeriod * 1.2
        if (renew.toMillis() <= retry.toMillis() + (long) Math.ceil(retry.toMillis() * 1.2)) {
            return Optional.of("--leader-elect-renew-deadline (" + options.string("leader-elect-renew-deadline")
                    + ") must be greater than 2.2 x --leader-elect-retry-period ("
                    + options.string("leader-elect-retry-period") + ")");
        }
        if (options.string("leader-elect-resource-name").isEmpty()
                || options.string("leader-elect-resource-namespace").isEmpty()) {
            return Optional.of("--leader-elect-resource-name and --leader-elect-resource-namespace must not be empty");
        }
        return Optional.empty();
    }

    public String identity() {
        return identity;
    }

    public boolean leading() {
        return leading.get();
    }

    /** The Lease as the API server has it now (empty when it does not exist or cannot be read). */
    public Optional<Lease> lease() {
        try {
            return Optional.ofNullable(client.leases().inNamespace(namespace).withName(name).get());
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /** {@code <namespace>/<name>} of the Lease. */
    public String leaseName() {
        return namespace + "/" + name;
    }

    /** The leaderElection health check: failing once a held lease was lost. */
    public boolean healthy() {
        return !lost.get();
    }

    /**
     * Starts campaigning. {@code onStartedLeading} runs once the lease is taken; {@code onLost} when a
     * held lease is lost (not when {@link #stop} gives it up). Both run on a callback thread, in order.
     */
    public synchronized void start(Runnable onStartedLeading, Runnable onLost) {
        Optional<String> invalid = validate(options);
        if (invalid.isPresent()) {
            throw new IllegalArgumentException(invalid.get());
        }
        this.onStartedLeading = onStartedLeading;
        this.onLost = onLost;
        LOG.infof("attempting to acquire leader lease %s/%s... (identity %s)", namespace, name, identity);
        campaign();
    }

    private synchronized void campaign() {
        if (stopping) {
            return;
        }
        LeaderCallbacks cb = new LeaderCallbacks(
                () -> dispatch(this::startedLeading),
                () -> dispatch(this::stoppedLeading),
                newLeader -> {
                    if (newLeader != null && !newLeader.isEmpty() && !newLeader.equals(identity)) {
                        LOG.infof("new leader elected: %s", newLeader);
                    }
                });
        LeaderElector elector = client.leaderElector().withConfig(new LeaderElectionConfigBuilder()
                .withName(name)
                .withLock(new LeaseUpdateLock(namespace, name, identity,
                        options.duration("leader-elect-lease-duration")))
                .withLeaseDuration(options.duration("leader-elect-lease-duration"))
                .withRenewDeadline(options.duration("leader-elect-renew-deadline"))
                .withRetryPeriod(options.duration("leader-elect-retry-period"))
                .withReleaseOnCancel(options.bool("leader-elect-release-on-cancel"))
                .withLeaderCallbacks(cb)
                .build()).build();
        CompletableFuture<?> future = elector.start();
        running = future;
        future.whenComplete((v, t) -> dispatch(() -> electorEnded(t)));
    }

    private void dispatch(Runnable r) {
        try {
            callbacks.execute(r);
        } catch (RejectedExecutionException e) {
            // stopped: nothing left to do
        }
    }

    private void startedLeading() {
        if (stopping || lost.get() || !leading.compareAndSet(false, true)) {
            return;
        }
        LOG.infof("successfully acquired lease %s/%s", namespace, name);
        recordEvent("became leader");
        onStartedLeading.run();
    }

    private void stoppedLeading() {
        boolean wasLeading = leading.getAndSet(false);
        if (!wasLeading || stopping) {
            return;
        }
        lost.set(true);
        LOG.errorf("leaderelection lost: lease %s/%s is no longer held by %s", namespace, name, identity);
        onLost.run();
    }

    /** The elector's future completed: cancelled by {@link #stop}, after a loss, or by an unexpected error. */
    private void electorEnded(Throwable error) {
        if (stopping || lost.get()) {
            return;
        }
        if (leading.get()) {
            // renewal ended without onStopLeading (it always fires when leading; be safe)
            stoppedLeading();
            return;
        }
        // fabric8 gives up campaigning on an unexpected error; client-go would keep retrying
        LOG.warnf("leader election for %s/%s stopped unexpectedly (%s); campaigning again", namespace, name,
                error == null ? "no error" : error.toString());
        CompletableFuture.delayedExecutor(options.duration("leader-elect-retry-period").toMillis(),
                TimeUnit.MILLISECONDS).execute(this::campaign);
    }

    /** client-go's LeaseLock.RecordEvent: "<identity> <what>", reason LeaderElection, on the Lease. */
    private void recordEvent(String what) {
        Lease subject;
        try {
            subject = client.leases().inNamespace(namespace).withName(name).get();
        } catch (RuntimeException e) {
            subject = null;
        }
        if (subject == null) {
            subject = new LeaseBuilder().withNewMetadata().withNamespace(namespace).withName(name).endMetadata()
                    .build();
        }
        subject.setApiVersion("coordination.k8s.io/v1");
        subject.setKind("Lease");
        events.event(subject, EventRecorder.NORMAL, "LeaderElection", identity + " " + what);
    }

    /**
     * Stops campaigning (a clean shutdown, not a loss). fabric8 releases the lease synchronously in
     * this call when leading and qkcm.leader-elect-release-on-cancel is true: holderIdentity becomes
     * empty so a standby takes over at its next retry instead of after the lease duration.
     */
    public void stop() {
        stopping = true;
        CompletableFuture<?> r = running;
        boolean wasLeading = leading.get();
        if (r != null) {
            r.cancel(true);
        }
        if (wasLeading) {
            recordEvent("stopped leading");
            LOG.infof(options.bool("leader-elect-release-on-cancel") ? "gave up lease %s/%s (released)"
                    : "gave up lease %s/%s (not released: leader-elect-release-on-cancel=false)", namespace, name);
        }
        leading.set(false);
        callbacks.shutdown();
    }

    private static String hostname() {
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isBlank()) {
            return env;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "localhost";
        }
    }
}
