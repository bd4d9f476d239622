package io.qkcm.runtime;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.time.Duration;
import java.util.List;
import java.util.Set;

import org.jboss.logging.Logger;

/**
 * A whole-heap collection when none has run for a period: what Go's runtime does for upstream's
 * kube-controller-manager (sysmon forces a GC cycle when none ran for two minutes, {@code forcegcperiod}),
 * and what lets the JVM give memory back.
 * <p>
 * With the serial collector the old generation only shrinks after a full collection (to
 * {@code -XX:MaxHeapFreeRatio}), and a full collection only runs when the old generation is full: the
 * replaced versions of cached objects pile up there, committed and resident, until then. In the memory
 * scaling run the old generation sat at 256 MiB, 99% used, over about half as much live data
 * (bench/results/2026-11-25-perf/scale). A Go process never holds that much garbage for long: its heap
 * goal is twice the live heap, and a collection runs at least every two minutes.
 * <p>
 * {@code qkcm.tuning.periodic-gc} sets the period (default 120 s, as Go; 0 turns it off). Only
 * collectors of the old generation count as a collection here; a young collection does not reclaim
 * what the old one holds.
 * <p>
 * Unlike Go's, the forced collection is skipped when the old generation grew by less than a fifth of what
 * the last old-generation collection left in it (and by less than 4 MiB): a full collection then could
 * not give memory back (bin/qkcm keeps {@code -XX:MaxHeapFreeRatio=20} free), and it costs ~0.2 s of CPU
 * with a few thousand pods cached, which in an idle cluster was a third of qkcm's idle CPU
 * (bench/results/2026-11-25-memory/ab).
 */
public final class PeriodicCollection {

    private static final Logger LOG = Logger.getLogger(PeriodicCollection.class);
    /**
     * Runs it in the qkcm process ({@code qkcm.tuning.periodic-gc}), from Quarkus' start to its shutdown; not in
     * dev mode and tests, which are not the process whose memory is measured.
     */
    @jakarta.enterprise.context.ApplicationScoped
    static final class InProcess {
        private PeriodicCollection running;

        void onStart(@jakarta.enterprise.event.Observes io.quarkus.runtime.StartupEvent event,
                io.qkcm.runtime.options.Tuning tuning) {
            if (io.quarkus.runtime.LaunchMode.current() == io.quarkus.runtime.LaunchMode.NORMAL) {
                running = start(tuning.periodicGc());
            }
        }

        void onStop(@jakarta.enterprise.event.Observes io.quarkus.runtime.ShutdownEvent event) {
            if (running != null) {
                running.stop();
            }
        }
    }

    /** The MXBean names of the collectors that collect the old generation (serial, parallel, G1). */
    private static final Set<String> OLD_GENERATION = Set.of(
            "MarkSweepCompact", "PS MarkSweep", "G1 Old Generation", "G1 Concurrent GC");

    /** A forced collection needs the old generation to have grown by this much, or by a fifth of what its last collection left. */
    static final long MIN_GROWTH_BYTES = 4L << 20;

    /** The old generation's use now and right after its last collection (bytes; -1 when unknown). */
    interface OldGeneration {
        long used();

        long usedAfterLastCollection();
    }

    private final Duration period;
    private final List<GarbageCollectorMXBean> oldCollectors;
    private final OldGeneration oldGeneration;
    private volatile Thread thread;
    private long lastCount;
    private long forced;
    private long skipped;

    PeriodicCollection(Duration period, List<GarbageCollectorMXBean> collectors, OldGeneration oldGeneration) {
        this.period = period;
        this.oldCollectors = collectors.stream().filter(c -> OLD_GENERATION.contains(c.getName())).toList();
        this.oldGeneration = oldGeneration;
        this.lastCount = oldCollections();
    }

    /** The heap pool of the old generation (serial "Tenured Gen", parallel "PS Old Gen", G1 "G1 Old Gen"). */
    static OldGeneration oldGenerationPool(List<MemoryPoolMXBean> pools) {
        for (MemoryPoolMXBean pool : pools) {
            String name = pool.getName();
            if (pool.getType() == MemoryType.HEAP && (name.contains("Tenured") || name.contains("Old Gen"))) {
                return new OldGeneration() {
                    @Override
                    public long used() {
                        MemoryUsage u = pool.getUsage();
                        return u == null ? -1 : u.getUsed();
                    }

                    @Override
                    public long usedAfterLastCollection() {
                        MemoryUsage u = pool.getCollectionUsage();
                        return u == null ? -1 : u.getUsed();
                    }
                };
            }
        }
        return null;
    }

    /** Whether a full collection could give anything back: the old generation grew enough since its last one. */
    static boolean grewEnough(OldGeneration old) {
        if (old == null) {
            return true;
        }
        long now = old.used();
        long after = old.usedAfterLastCollection();
        if (now < 0 || after <= 0) {
            // unknown, or no collection of it yet: as Go
            return true;
        }
        long growth = now - after;
        return growth >= MIN_GROWTH_BYTES || growth >= after / 5;
    }

    /** Starts the periodic collection every {@code period}; returns null when it is off (zero) or nothing to watch. */
    public static PeriodicCollection start(Duration period) {
        if (period.isZero() || period.isNegative()) {
            return null;
        }
        PeriodicCollection pc = new PeriodicCollection(period, ManagementFactory.getGarbageCollectorMXBeans(),
                oldGenerationPool(ManagementFactory.getMemoryPoolMXBeans()));
        if (pc.oldCollectors.isEmpty()) {
            // an unknown collector (ZGC, Shenandoah, Epsilon): they have their own ways or none
            return null;
        }
        pc.start();
        return pc;
    }

    void start() {
        Thread t = new Thread(this::run, "periodic-gc");
        t.setDaemon(true);
        thread = t;
        t.start();
    }

    public void stop() {
        Thread t = thread;
        thread = null;
        if (t != null) {
            t.interrupt();
        }
    }

    private void run() {
        while (thread == Thread.currentThread()) {
            try {
                Thread.sleep(period.toMillis());
            } catch (InterruptedException e) {
                return;
            }
            tick();
        }
    }

    /**
     * One check: when no old-generation collection ran since the last check and the old generation grew
     * enough since its last collection, one is forced. Returns true when it forced one.
     */
    boolean tick() {
        long count = oldCollections();
        boolean force = count == lastCount;
        if (force && !grewEnough(oldGeneration)) {
            skipped++;
            force = false;
        }
        if (force) {
            long start = System.nanoTime();
            System.gc();
            forced++;
            LOG.debugf("forced a collection after %s without one (%d ms)", period,
                    (System.nanoTime() - start) / 1_000_000);
            count = oldCollections();
        }
        lastCount = count;
        return force;
    }

    long oldCollections() {
        long sum = 0;
        for (GarbageCollectorMXBean c : oldCollectors) {
            sum += Math.max(0, c.getCollectionCount());
        }
        return sum;
    }

    long forced() {
        return forced;
    }

    long skipped() {
        return skipped;
    }
}
