package io.qkcm.controller.volume.persistentvolume;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/**
 * The pv_collector rows are recounted lazily: a change made while a recount reads the stores must not be
 * lost until some later change (it was, once, under load: the mark was cleared after the stores were read).
 */
class BinderMetricsTest {

    private static PersistentVolume volume(String name, String cls) {
        return new PersistentVolumeBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec()
                .withStorageClassName(cls).withNewHostPath().withPath("/tmp/" + name).endHostPath().endSpec()
                .withNewStatus().withPhase("Available").endStatus().build();
    }

    @Test
    void aChangeDuringARecountIsCountedByTheNext() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        BinderMetrics metrics = new BinderMetrics(registry, System::nanoTime);
        List<PersistentVolume> before = List.of(volume("a", "fast"));
        List<PersistentVolume> after = List.of(volume("a", "fast"), volume("b", "fast"));

        // a writer stores volume b and marks the stores changed while the recount reads them
        metrics.refresh(() -> {
            metrics.storesChanged();
            return before;
        }, List::of);
        assertThat(registry.find(BinderMetrics.UNBOUND_PV).tag("storage_class", "fast").gauge().value()).isEqualTo(1.0);

        metrics.refresh(() -> after, List::of);
        assertThat(registry.find(BinderMetrics.UNBOUND_PV).tag("storage_class", "fast").gauge().value()).isEqualTo(2.0);

        // nothing changed since: no recount (the stores are not read)
        metrics.refresh(() -> {
            throw new AssertionError("read without a change");
        }, List::of);
    }
}
