package io.qkcm.controller.volume.selinuxwarning;

import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;

/**
 * Upstream's selinux_warning_controller_selinux_volume_conflict: a gauge of value 1 per conflicting ordered
 * pair of pods sharing a volume (labels property, pod1_namespace, pod1_name, pod1_value, pod2_namespace,
 * pod2_name, pod2_value). Upstream's collector reads the cache at each scrape; here the rows are replaced
 * from the cache after each change of it.
 */
final class SELinuxWarningMetrics {

    static final String NAME = "selinux.warning.controller.selinux.volume.conflict";

    private final MultiGauge conflicts;

    SELinuxWarningMetrics(MeterRegistry registry) {
        this.conflicts = MultiGauge.builder(NAME).description("Conflict between two Pods using the same volume")
                .register(registry);
    }

    void update(List<VolumeCache.Conflict> all) {
        conflicts.register(all.stream().distinct().map(c -> MultiGauge.Row.of(Tags.of(
                "property", c.propertyName(),
                "pod1_namespace", c.pod().namespace(), "pod1_name", c.pod().name(), "pod1_value", c.propertyValue(),
                "pod2_namespace", c.otherPod().namespace(), "pod2_name", c.otherPod().name(),
                "pod2_value", c.otherPropertyValue()), 1.0)).toList(), true);
    }
}
