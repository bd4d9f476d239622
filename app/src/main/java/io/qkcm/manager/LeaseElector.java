package io.qkcm.manager;

import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpecBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.runtime.clients.ProtobufWrites;

/**
 * client-go's leader elector (tools/leaderelection) on a Lease, replacing fabric8's LeaderElector,
 * whose two differences broke the one-leader guarantee under a faulty network (chaos run, issue 19):
 * <ul>
 * <li><b>The renew deadline is a deadline.</b> A leader whose renewals have not succeeded within
 * --leader-elect-renew-deadline stops, even while a renewal request hangs: every request runs on a
 * request thread and is abandoned (interrupted) when the deadline passes, as client-go cancels its
 * context. fabric8's elector waited for the hung request and kept leading past the deadline.</li>
 * <li><b>Expiry is judged by the standby's own clock</b>: a lease is free once its record has not
 * changed for leaseDurationSeconds since this process <i>observed</i> it (client-go's observedTime).
 * fabric8 compared the record's renewTime, written with the leader's clock, to its own.</li>
 * </ul>
 * Requests are client-go's LeaseLock's: get, create, and a full update carrying the resourceVersion
 * last read or written (the bootstrap RBAC grants no patch). A leader renews optimistically from the
 * record it last wrote while that is less than a lease duration old; on failure it falls back to a
 * read (client-go's slow path). They go in protobuf ({@code ProtobufWrites}), as the elector's clientset
 * in kube-controller-manager sends them with --kube-api-content-type; in JSON, the start's first request
 * also defined Jackson's lambdas for Status and Lease, tens of milliseconds before the first write.
 */
final class LeaseElector {

    private static final Logger LOG = Logger.getLogger(LeaseElector.class);
    /** wait.JitterUntil's factor in client-go's acquire loop. */
    static final double JITTER_FACTOR = 1.2;

    interface Callbacks {
        /** The lease was taken; runs on the elector's thread, must not block. */
        void startedLeading();

        /** A held lease was lost (renew deadline passed, or another holder); not called on {@link #stop}. */
        void stoppedLeading();

        /** The observed holder changed (empty when released). */
        void newLeader(String identity);

        /** The leader renewed through the slow path (client-go's slowpathExercised): read, then update. */
        default void slowPathExercised() {
        }
    }

    private final KubernetesClient client;
    private final String namespace;
    private final String name;
    private final String identity;
    private final Duration leaseDuration;
    private final Duration renewDeadline;
    private final Duration retryPeriod;
    private final Callbacks callbacks;
    private final LongSupplier nanoClock;
    /** Counted down when the first tryAcquireOrRenew has answered or given up ({@link #awaitFirstAttempt}). */
    private final CountDownLatch firstAttempt = new CountDownLatch(1);
    private final ExecutorService requests = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "leader-election-request");
        t.setDaemon(true);
        return t;
    });
    /** Identifies the attempt allowed to commit what it observed; an abandoned one is not. */
    private final AtomicLong attempts = new AtomicLong();
    /** The request of the latest attempt: a release waits for it, so it does not race a renewal in flight. */
    private volatile Future<Boolean> inFlight;

    // client-go's LeaseLock.lease and LeaderElector.observedRecord/observedTime/reportedLeader
    private Lease lease;
    private LeaseSpec observedRecord;
    private long observedTime;
    private String reportedLeader;

    private volatile boolean cancelled;
    private volatile boolean leading;
    private Thread loop;

    LeaseElector(KubernetesClient client, String namespace, String name, String identity, Duration leaseDuration,
            Duration renewDeadline, Duration retryPeriod, Callbacks callbacks) {
        this(client, namespace, name, identity, leaseDuration, renewDeadline, retryPeriod, callbacks, System::nanoTime);
    }

    LeaseElector(KubernetesClient client, String namespace, String name, String identity, Duration leaseDuration,
            Duration renewDeadline, Duration retryPeriod, Callbacks callbacks, LongSupplier nanoClock) {
        this.client = client;
        this.namespace = namespace;
        this.name = name;
        this.identity = identity;
        this.leaseDuration = leaseDuration;
        this.renewDeadline = renewDeadline;
        this.retryPeriod = retryPeriod;
        this.callbacks = callbacks;
        this.nanoClock = nanoClock;
    }

    synchronized void start() {
        loop = new Thread(this::run, "leader-election");
        loop.setDaemon(true);
        loop.start();
    }

    boolean leading() {
        return leading;
    }

    /** The Lease as last read or written by this elector (client-go records its events on it). */
    synchronized Lease lastLease() {
        return lease;
    }

    private void run() {
        try {
            if (!acquire()) {
                return;
            }
            leading = true;
            callbacks.startedLeading();
            renew();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            boolean wasLeading = leading;
            leading = false;
            if (wasLeading && !cancelled) {
                callbacks.stoppedLeading();
            }
        }
    }

    /** Tries every retryPeriod (jittered) until the lease is taken; false when cancelled. */
    private boolean acquire() throws InterruptedException {
        while (!cancelled) {
            // client-go bounds each request by the leader election client's timeout, the renew deadline
            boolean acquired = attempt(renewDeadline.toNanos());
            reportTransition();
            if (acquired) {
                return true;
            }
            long jittered = retryPeriod.toNanos()
                    + (long) (ThreadLocalRandom.current().nextDouble() * JITTER_FACTOR * retryPeriod.toNanos());
            TimeUnit.NANOSECONDS.sleep(jittered);
        }
        return false;
    }

    /**
     * Renews every retryPeriod; returns when a renewal cycle did not succeed within the renew deadline
     * (lost) or when cancelled.
     */
    private void renew() throws InterruptedException {
        while (!cancelled) {
            long deadline = nanoClock.getAsLong() + renewDeadline.toNanos();
            boolean renewed = false;
            while (!cancelled) {
                long remaining = deadline - nanoClock.getAsLong();
                if (remaining <= 0) {
                    break;
                }
                if (attempt(remaining)) {
                    renewed = true;
                    break;
                }
                remaining = deadline - nanoClock.getAsLong();
                if (remaining <= 0) {
                    break;
                }
                TimeUnit.NANOSECONDS.sleep(Math.min(retryPeriod.toNanos(), remaining));
            }
            reportTransition();
            if (cancelled) {
                return;
            }
            if (!renewed) {
                LOG.errorf("failed to renew lease %s/%s: timed out waiting for the condition", namespace, name);
                return;
            }
            TimeUnit.NANOSECONDS.sleep(retryPeriod.toNanos());
        }
    }

    /**
     * Waits until the first tryAcquireOrRenew has answered (or given up), at most {@code max}: the manager builds its
     * informers and controllers after it, so the start's first write, the Lease's, has the machine to itself.
     */
    boolean awaitFirstAttempt(Duration max) throws InterruptedException {
        return firstAttempt.await(max.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** One tryAcquireOrRenew, abandoned when it has not answered within {@code timeoutNanos}. */
    private boolean attempt(long timeoutNanos) throws InterruptedException {
        try {
            return attemptOnce(timeoutNanos);
        } finally {
            firstAttempt.countDown();
        }
    }

    private boolean attemptOnce(long timeoutNanos) throws InterruptedException {
        long id = attempts.incrementAndGet();
        Future<Boolean> f = requests.submit(() -> tryAcquireOrRenew(id));
        inFlight = f;
        try {
            return f.get(timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            attempts.incrementAndGet(); // whatever it still observes is not committed
            f.cancel(true);
            LOG.warnf("lease %s/%s: request did not answer within %d ms, abandoned", namespace, name,
                    TimeUnit.NANOSECONDS.toMillis(timeoutNanos));
            return false;
        } catch (ExecutionException e) {
            LOG.errorf("lease %s/%s: %s", namespace, name, e.getCause());
            return false;
        } catch (InterruptedException e) {
            // stopped (SIGTERM): the request is left to finish and commit what it wrote, so a release that
            // follows starts from the Lease the server holds instead of conflicting with its own renewal
            throw e;
        }
    }

    /** client-go's tryAcquireOrRenew; runs on a request thread. */
    private boolean tryAcquireOrRenew(long id) {
        ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC).truncatedTo(ChronoUnit.MICROS);

        // 1. the leader renews optimistically from the record it observed last
        LeaseSpec observed;
        Lease base;
        synchronized (this) {
            observed = observedRecord;
            base = lease;
        }
        if (isLeader(observed) && leaseValid() && base != null) {
            LeaseSpec renewal = desired(now).withAcquireTime(observed.getAcquireTime())
                    .withLeaseTransitions(observed.getLeaseTransitions()).build();
            try {
                Lease written = update(base, renewal);
                return commit(id, written, renewal);
            } catch (RuntimeException e) {
                if (!current(id)) {
                    return false;
                }
                LOG.errorf("failed to update lease %s/%s optimistically (%s), falling back to slow path", namespace,
                        name, e.getMessage());
            }
        }

        // 2. read the record, or create it
        Lease read;
        try {
            read = ProtobufWrites.get(client, Lease.class, namespace, name);
        } catch (RuntimeException e) {
            if (current(id)) {
                LOG.errorf("error retrieving lease %s/%s: %s", namespace, name, e.getMessage());
            }
            return false;
        }
        if (read == null) {
            LeaseSpec created = desired(now).withLeaseTransitions(0).build();
            try {
                Lease written = ProtobufWrites.create(client, new LeaseBuilder().withNewMetadata().withNamespace(namespace)
                        .withName(name).endMetadata().withSpec(created).build());
                return commit(id, written, created);
            } catch (RuntimeException e) {
                if (current(id)) {
                    LOG.errorf("error initially creating lease %s/%s: %s", namespace, name, e.getMessage());
                }
                return false;
            }
        }

        // 3. a record: who holds it, and since when (by this process' clock) has it not changed
        LeaseSpec record = read.getSpec() == null ? new LeaseSpec() : read.getSpec();
        boolean leader;
        synchronized (this) {
            if (!current(id)) {
                return false;
            }
            lease = read;
            if (!sameRecord(observedRecord, record)) {
                observedRecord = record;
                observedTime = nanoClock.getAsLong();
            }
            int seconds = record.getLeaseDurationSeconds() == null ? 0 : record.getLeaseDurationSeconds();
            boolean expired = observedTime + TimeUnit.SECONDS.toNanos(seconds) < nanoClock.getAsLong();
            leader = isLeader(observedRecord);
            String holder = record.getHolderIdentity();
            if (holder != null && !holder.isEmpty() && !expired && !leader) {
                LOG.debugf("lease %s/%s is held by %s and has not yet expired", namespace, name, holder);
                return false;
            }
        }

        // 4. take or renew it
        int transitions = record.getLeaseTransitions() == null ? 0 : record.getLeaseTransitions();
        if (leader) {
            callbacks.slowPathExercised();
        }
        LeaseSpec taken = leader
                ? desired(now).withAcquireTime(record.getAcquireTime()).withLeaseTransitions(transitions).build()
                : desired(now).withLeaseTransitions(transitions + 1).build();
        try {
            Lease written = update(read, taken);
            return commit(id, written, taken);
        } catch (RuntimeException e) {
            if (current(id)) {
                LOG.errorf("failed to update lease %s/%s: %s", namespace, name, e.getMessage());
            }
            return false;
        }
    }

    /** The record this process writes at {@code now}: itself as holder, the configured lease duration. */
    private LeaseSpecBuilder desired(ZonedDateTime now) {
        return new LeaseSpecBuilder().withHolderIdentity(identity)
                .withLeaseDurationSeconds((int) leaseDuration.toSeconds()).withRenewTime(now).withAcquireTime(now);
    }

    /**
     * Gives the lease up if held (client-go's release on cancel): holder empty, a 1-second lease, so a
     * standby takes it at its next try. Bounded by the renew deadline.
     */
    private boolean release() {
        long deadline = nanoClock.getAsLong() + renewDeadline.toNanos();
        Future<Boolean> pending = inFlight;
        if (pending != null) {
            try {
                pending.get(renewDeadline.toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            } catch (ExecutionException | TimeoutException | CancellationException e) {
                // its outcome is unknown: the conflict path below reads the Lease again
            }
        }
        LeaseSpec observed;
        Lease base;
        synchronized (this) {
            observed = observedRecord;
            base = lease;
        }
        if (!isLeader(observed) || base == null) {
            return true;
        }
        ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC).truncatedTo(ChronoUnit.MICROS);
        LeaseSpec released = new LeaseSpecBuilder().withHolderIdentity("").withLeaseDurationSeconds(1)
                .withRenewTime(now).withAcquireTime(now).withLeaseTransitions(observed.getLeaseTransitions()).build();
        Future<Lease> f = requests.submit(() -> {
            try {
                return update(base, released);
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409) {
                    throw e;
                }
                // a renewal whose answer was lost moved the Lease on: release it from what the server holds,
                // only while this process still holds it
                Lease read = ProtobufWrites.get(client, Lease.class, namespace, name);
                if (read == null || read.getSpec() == null || !identity.equals(read.getSpec().getHolderIdentity())) {
                    return read;
                }
                return update(read, new LeaseSpecBuilder(released)
                        .withLeaseTransitions(read.getSpec().getLeaseTransitions()).build());
            }
        });
        try {
            Lease written = f.get(Math.max(1, deadline - nanoClock.getAsLong()), TimeUnit.NANOSECONDS);
            synchronized (this) {
                lease = written;
                observedRecord = released;
                observedTime = nanoClock.getAsLong();
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            f.cancel(true);
        } catch (ExecutionException | TimeoutException e) {
            f.cancel(true);
            LOG.errorf("failed to release lease %s/%s: %s", namespace, name,
                    e instanceof ExecutionException ? e.getCause() : "timed out");
        }
        return false;
    }

    /**
     * Stops campaigning; waits for the elector's thread (at most a renew deadline), then releases a
     * held lease when {@code release} is set. Not a loss: stoppedLeading is not called.
     */
    void stop(boolean release) {
        cancelled = true;
        Thread t;
        synchronized (this) {
            t = loop;
        }
        boolean wasLeading = leading;
        if (t != null) {
            t.interrupt();
            try {
                t.join(renewDeadline.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (release && wasLeading) {
            release();
        }
        requests.shutdownNow();
    }

    private Lease update(Lease base, LeaseSpec spec) {
        return ProtobufWrites.update(client, new LeaseBuilder(base).withSpec(spec).build());
    }

    private boolean commit(long id, Lease written, LeaseSpec record) {
        synchronized (this) {
            if (!current(id)) {
                return false;
            }
            lease = written;
            observedRecord = record;
            observedTime = nanoClock.getAsLong();
            return true;
        }
    }

    private boolean current(long id) {
        return attempts.get() == id;
    }

    private boolean isLeader(LeaseSpec record) {
        return record != null && identity.equals(record.getHolderIdentity());
    }

    /** client-go's isLeaseValid: observed less than a lease duration (this process' setting) ago. */
    private synchronized boolean leaseValid() {
        return observedTime + leaseDuration.toNanos() > nanoClock.getAsLong();
    }

    /** client-go compares the raw record: the five fields of the Lease's spec it writes. */
    static boolean sameRecord(LeaseSpec a, LeaseSpec b) {
        if (a == null || b == null) {
            return a == b;
        }
        return Objects.equals(a.getHolderIdentity(), b.getHolderIdentity())
                && Objects.equals(a.getLeaseDurationSeconds(), b.getLeaseDurationSeconds())
                && sameInstant(a.getAcquireTime(), b.getAcquireTime())
                && sameInstant(a.getRenewTime(), b.getRenewTime())
                && Objects.equals(a.getLeaseTransitions(), b.getLeaseTransitions())
                && Objects.equals(a.getStrategy(), b.getStrategy())
                && Objects.equals(a.getPreferredHolder(), b.getPreferredHolder());
    }

    private static boolean sameInstant(ZonedDateTime a, ZonedDateTime b) {
        return a == null || b == null ? a == b : a.toInstant().equals(b.toInstant());
    }

    private void reportTransition() {
        String holder;
        synchronized (this) {
            holder = observedRecord == null ? null : observedRecord.getHolderIdentity();
        }
        if (holder == null || holder.equals(reportedLeader)) {
            return;
        }
        reportedLeader = holder;
        callbacks.newLeader(holder);
    }
}
