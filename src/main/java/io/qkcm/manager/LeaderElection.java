package io.qkcm.manager;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
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
 */
public final class LeaderElection {

    private static final Logger LOG = Logger.getLogger(LeaderElection.class);

    private final KubernetesClient client;
    private final ControllerManagerOptions options;
    private final EventRecorder events;
    private final String identity;
    private final AtomicBoolean leading = new AtomicBoolean();
    private final AtomicBoolean lost = new AtomicBoolean();
    private volatile LeaderElector elector;
    private volatile CompletableFuture<?> running;

    public LeaderElection(KubernetesClient client, ControllerManagerOptions options, EventRecorder events,
            MeterRegistry registry) {
        this.client = client;
        this.options = options;
        this.events = events;
        this.identity = hostname() + "_" + UUID.randomUUID();
        Gauge.builder("leader.election.master.status", leading, l -> l.get() ? 1 : 0)
                .description("Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.")
                .tag("name", options.string("leader-elect-resource-name")).register(registry);
    }

    public String identity() {
        return identity;
    }

    public boolean leading() {
        return leading.get();
    }

    /** The leaderElection health check: failing once a held lease was lost. */
    public boolean healthy() {
        return !lost.get();
    }

    /**
     * Starts campaigning. {@code onStartedLeading} runs once the lease is taken; {@code onLost} when a
     * held lease is lost (not when {@link #stop} releases it).
     */
    public void start(Runnable onStartedLeading, Runnable onLost) {
        String lock = options.string("leader-elect-resource-lock");
        if (!lock.equals("leases")) {
            throw new IllegalArgumentException("resourceLock value must be \"leases\", got \"" + lock + "\"");
        }
        String namespace = options.string("leader-elect-resource-namespace");
        String name = options.string("leader-elect-resource-name");
        LOG.infof("attempting to acquire leader lease %s/%s... (identity %s)", namespace, name, identity);
        LeaderCallbacks callbacks = new LeaderCallbacks(
                () -> {
                    leading.set(true);
                    LOG.infof("successfully acquired lease %s/%s", namespace, name);
                    Lease lease = new LeaseBuilder().withNewMetadata().withNamespace(namespace).withName(name)
                            .endMetadata().build();
                    Lease current = client.leases().inNamespace(namespace).withName(name).get();
                    events.event(current != null ? current : lease, EventRecorder.NORMAL, "LeaderElection",
                            identity + " became leader");
                    onStartedLeading.run();
                },
                () -> {
                    boolean wasLeading = leading.getAndSet(false);
                    if (wasLeading && !stopping) {
                        lost.set(true);
                        LOG.error("leaderelection lost");
                        onLost.run();
                    }
                },
                newLeader -> LOG.infof("new leader elected: %s", newLeader));
        elector = client.leaderElector().withConfig(new LeaderElectionConfigBuilder()
                .withName(name)
                .withLock(new LeaseLock(namespace, name, identity))
                .withLeaseDuration(options.duration("leader-elect-lease-duration"))
                .withRenewDeadline(options.duration("leader-elect-renew-deadline"))
                .withRetryPeriod(options.duration("leader-elect-retry-period"))
                .withReleaseOnCancel(options.bool("leader-elect-release-on-cancel"))
                .withLeaderCallbacks(callbacks)
                .build()).build();
        running = elector.start();
    }

    private volatile boolean stopping;

    /** Stops campaigning; releases the lease if configured (qkcm.leader-elect-release-on-cancel). */
    public void stop() {
        stopping = true;
        CompletableFuture<?> r = running;
        if (r != null) {
            r.cancel(true);
        }
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
