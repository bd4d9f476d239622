package io.qkcm.controller.volume.ephemeral.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Upstream's ephemeral_volume_controller_* metrics (pkg/controller/volume/ephemeral/metrics):
 * create_total (PVC creation requests) and create_failures_total (those that failed). Micrometer adds
 * {@code _total}; upstream's help text is the same for both.
 */
public final class EphemeralVolumeMetrics {

    private final Counter createAttempts;
    private final Counter createFailures;

    public EphemeralVolumeMetrics(MeterRegistry registry) {
        this.createAttempts = Counter.builder("ephemeral.volume.controller.create")
                .description("Number of PersistentVolumeClaim creation requests").register(registry);
        this.createFailures = Counter.builder("ephemeral.volume.controller.create.failures")
                .description("Number of PersistentVolumeClaim creation requests").register(registry);
    }

    public void createAttempted() {
        createAttempts.increment();
    }

    public void createFailed() {
        createFailures.increment();
    }

    public double createAttempts() {
        return createAttempts.count();
    }

    public double createFailures() {
        return createFailures.count();
    }
}
