package io.qkcm.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.time.Duration;

import org.junit.jupiter.api.Test;

/** The forced collection runs only after a period without an old-generation collection (Go's forcegcperiod). */
class PeriodicCollectionTest {

    /** An old generation whose growth the test sets. */
    private static final class Old implements PeriodicCollection.OldGeneration {
        long used;
        long after;

        @Override
        public long used() {
            return used;
        }

        @Override
        public long usedAfterLastCollection() {
            return after;
        }
    }

    private final Old old = new Old();
    private final PeriodicCollection pc = new PeriodicCollection(Duration.ofMinutes(2),
            ManagementFactory.getGarbageCollectorMXBeans(), null);

    @Test
    void forcesACollectionOnlyWhenNoneRanSinceTheLastCheck() {
        assertThat(pc.tick()).as("none since it was made").isTrue();
        long after = pc.oldCollections();
        assertThat(after).as("the forced collection is an old-generation one").isPositive();
        assertThat(pc.tick()).as("none since: forced again").isTrue();
        assertThat(pc.oldCollections()).isGreaterThan(after);
        // a collection the JVM ran by itself (here: asked for) counts: no forced one at the next check
        System.gc();
        assertThat(pc.tick()).isFalse();
        assertThat(pc.forced()).isEqualTo(2);
    }

    @Test
    void skipsTheCollectionWhenTheOldGenerationHardlyGrew() {
        PeriodicCollection withOld = new PeriodicCollection(Duration.ofMinutes(2),
                ManagementFactory.getGarbageCollectorMXBeans(), old);
        // 40 MiB left by the last collection, 2 MiB more since: nothing a collection could give back
        old.after = 40L << 20;
        old.used = 42L << 20;
        assertThat(withOld.tick()).isFalse();
        assertThat(withOld.skipped()).isEqualTo(1);
        // 4 MiB more: forced
        old.used = 44L << 20;
        assertThat(withOld.tick()).isTrue();
        // a large old generation: 4 MiB is the smaller bar
        old.after = 200L << 20;
        old.used = 205L << 20;
        assertThat(PeriodicCollection.grewEnough(old)).isTrue();
        old.after = 10L << 20;
        old.used = 13L << 20;
        assertThat(PeriodicCollection.grewEnough(old)).as("3 of 10 MiB is a fifth").isTrue();
        old.after = 30L << 20;
        old.used = 33L << 20;
        assertThat(PeriodicCollection.grewEnough(old)).as("3 of 30 MiB").isFalse();
        // unknown or never collected: as Go
        old.after = 0;
        assertThat(PeriodicCollection.grewEnough(old)).isTrue();
        assertThat(PeriodicCollection.grewEnough(null)).isTrue();
    }

    @Test
    void findsTheOldGenerationOfThisJvmsCollector() {
        PeriodicCollection.OldGeneration pool = PeriodicCollection.oldGenerationPool(ManagementFactory.getMemoryPoolMXBeans());
        assertThat(pool).isNotNull();
        System.gc();
        assertThat(pool.usedAfterLastCollection()).isPositive();
        assertThat(pool.used()).isGreaterThanOrEqualTo(pool.usedAfterLastCollection());
    }

    @Test
    void zeroTurnsItOff() {
        // qkcm.tuning.periodic-gc=0 (its parsing and Go's default: TuningTest)
        assertThat(PeriodicCollection.start(Duration.ZERO)).isNull();
        PeriodicCollection started = PeriodicCollection.start(Duration.ofMinutes(2));
        try {
            // the test JVM's collector is one it knows (serial, parallel or G1)
            assertThat(started).isNotNull();
        } finally {
            if (started != null) {
                started.stop();
            }
        }
    }
}
