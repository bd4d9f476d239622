package io.qkcm.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.time.Duration;

import org.junit.jupiter.api.Test;

/** The forced collection runs only after a period without an old-generation collection (Go's forcegcperiod). */
class PeriodicCollectionTest {

    private final PeriodicCollection pc = new PeriodicCollection(Duration.ofMinutes(2),
            ManagementFactory.getGarbageCollectorMXBeans());

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
    void periodIsGosByDefaultAndZeroTurnsItOff() {
        assertThat(PeriodicCollection.configuredPeriod(null)).isEqualTo(Duration.ofMinutes(2));
        assertThat(PeriodicCollection.configuredPeriod(" 30 ")).isEqualTo(Duration.ofSeconds(30));
        assertThat(PeriodicCollection.configuredPeriod("0")).isEqualTo(Duration.ZERO);
    }
}
