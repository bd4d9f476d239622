package io.qkcm.manager;

import io.qkcm.runtime.options.ControllerManagerOptions;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.qkcm.runtime.events.EventRecorder;

/**
 * Upstream's leader election: a Lease (default kube-system/kube-controller-manager), identity
 * {@code <hostname>_<uuid>}, 15s/10s/2s. Losing the lease after having held it is fatal, as upstream
 * ("leaderelection lost"): the manager exits non-zero and a restart re-joins as a standby.
 *
 * <p>The election itself is {@link LeaseElector}, client-go's algorithm (fabric8's LeaderElector kept
 * leading past its renew deadline while a renewal hung, and judged expiry by the leader's clock).
 * {@code onStartedLeading} runs on a callback thread, as client-go runs OnStartedLeading in a goroutine of
 * its own; a loss is handled at once on the elector's thread, as client-go's OnStoppedLeading runs when
 * the renew loop returns, never queued behind a start that is still starting controllers. Cancelling via
 * {@link #stop} is not a loss.
 */
public final class LeaderElection {

    private static final Logger LOG = Logger.getLogger(LeaderElection.class);

    /** Appended to --leader-elect-resource-name in shadow mode. */
    static final String SHADOW_LEASE_SUFFIX = "-shadow";

    private final KubernetesClient client;
    private final ControllerManagerOptions options;
    private final EventRecorder events;
    private final MeterRegistry registry;
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
    private volatile LeaseElector elector;
    private volatile boolean stopping;
    private Runnable onStartedLeading;
    private Runnable onLost;

    public LeaderElection(KubernetesClient client, ControllerManagerOptions options, EventRecorder events,
            MeterRegistry registry) {
        this.client = client;
        this.options = options;
        this.events = events;
        this.registry = registry;
        this.identity = hostname() + "_" + UUID.randomUUID();
        this.namespace = options.string("leader-elect-resource-namespace");
        // shadow mode never takes upstream's Lease: it elects among shadow replicas on a Lease of its own
        this.name = options.string("leader-elect-resource-name") + (options.bool("shadow") ? SHADOW_LEASE_SUFFIX : "");
        Gauge.builder("leader.election.master.status", leading, l -> l.get() ? 1 : 0)
                .description("Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.")
                .tag("name", name).register(registry);
    }

    /**
     * client-go's {@code leader_election_slowpath_total{name}}: registered at its first use, as a Go
     * counter vector shows no series before its first increment.
     */
    private io.micrometer.core.instrument.Counter slowPath() {
        return io.micrometer.core.instrument.Counter.builder("leader.election.slowpath")
                .description("Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.")
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
        // client-go's NewLeaderElector: renewDeadline > JitterFactor (1.2) x retryPeriod
        if (renew.toNanos() <= (long) (LeaseElector.JITTER_FACTOR * retry.toNanos())) {
            return Optional.of("--leader-elect-renew-deadline (" + options.string("leader-elect-renew-deadline")
                    + ") must be greater than 1.2 x --leader-elect-retry-period ("
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

    /**
     * Waits, at most {@code max}, until the campaign's first request has been answered (or the campaign stopped
     * early); false on timeout.
     */
    public boolean awaitFirstAttempt(Duration max) {
        LeaseElector e = elector;
        if (e == null) {
            return true;
        }
        try {
            return e.awaitFirstAttempt(max);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            return false;
        }
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
     * held lease is lost (not when {@link #stop} gives it up). {@code onStartedLeading} runs on a callback
     * thread, {@code onLost} at once on the elector's, even while {@code onStartedLeading} still runs.
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
        elector = new LeaseElector(client, namespace, name, identity, options.duration("leader-elect-lease-duration"),
                options.duration("leader-elect-renew-deadline"), options.duration("leader-elect-retry-period"),
                new LeaseElector.Callbacks() {
                    @Override
                    public void startedLeading() {
                        LeaderElection.this.startedLeading();
                    }

                    @Override
                    public void stoppedLeading() {
                        LeaderElection.this.stoppedLeading();
                    }

                    @Override
                    public void slowPathExercised() {
                        slowPath().increment();
                    }

                    @Override
                    public void newLeader(String holder) {
                        if (!holder.isEmpty() && !holder.equals(identity)) {
                            LOG.infof("new leader elected: %s", holder);
                        }
                    }
                });
        elector.start();
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
        dispatch(() -> {
            if (!stopping && !lost.get()) {
                onStartedLeading.run();
            }
        });
    }

    private void stoppedLeading() {
        boolean wasLeading = leading.getAndSet(false);
        if (!wasLeading || stopping) {
            return;
        }
        lost.set(true);
        recordEvent("stopped leading");
        LOG.errorf("leaderelection lost: lease %s/%s is no longer held by %s", namespace, name, identity);
        onLost.run();
    }

    /** client-go's LeaseLock.RecordEvent: "<identity> <what>", reason LeaderElection, on the Lease. */
    private void recordEvent(String what) {
        // on the Lease last read or written, without a request (one could hang: the network may be why
        // leadership is being lost)
        LeaseElector e = elector;
        Lease subject = e == null ? null : e.lastLease();
        if (subject == null) {
            subject = new LeaseBuilder().withNewMetadata().withNamespace(namespace).withName(name).endMetadata()
                    .build();
        }
        subject.setApiVersion("coordination.k8s.io/v1");
        subject.setKind("Lease");
        events.event(subject, EventRecorder.NORMAL, "LeaderElection", identity + " " + what);
    }

    /**
     * Stops campaigning (a clean shutdown, not a loss). The elector releases the lease synchronously in
     * this call when leading and qkcm.leader-elect-release-on-cancel is true: holderIdentity becomes
     * empty so a standby takes over at its next retry instead of after the lease duration.
     */
    public void stop() {
        stopping = true;
        LeaseElector e = elector;
        boolean wasLeading = leading.get();
        if (e != null) {
            e.stop(options.bool("leader-elect-release-on-cancel"));
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
