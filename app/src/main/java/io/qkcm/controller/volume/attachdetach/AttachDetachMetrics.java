package io.qkcm.controller.volume.attachdetach;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.Tags;

/**
 * Upstream's attachdetach/metrics and the operation hook of pkg/volume/util/metrics.go as this controller
 * emits them:
 * <ul>
 * <li>{@code attachdetach_controller_total_volumes{plugin_name,state}}: the desired state's volumes to
 * attach and the actual state's attached volumes (with a spec) by fully qualified plugin name;
 * <li>{@code storage_count_attachable_volumes_in_use{node,volume_plugin}}: the volumes of scheduled pods
 * that a plugin of the controller supports, by node and plugin;
 * <li>{@code attach_detach_controller_attachdetach_controller_forced_detaches{reason}}: forced detaches,
 * reason {@code timeout} or {@code out-of-service};
 * <li>{@code storage_operation_duration_seconds{volume_plugin,operation_name,status,migrated}}: the attach,
 * detach and per-node verify operations.
 * </ul>
 * Upstream's collector computes the two gauges at each scrape; here {@link #update} replaces their rows
 * from the same states and caches (the controller calls it at most once a second from its reconciler loop).
 * Upstream's forced-detach counter has no {@code _total} suffix; Micrometer writes one, which /metrics takes
 * off again (manager.serving's UpstreamCounterNames).
 */
final class AttachDetachMetrics {

    static final String TOTAL_VOLUMES = "attachdetach.controller.total.volumes";
    static final String IN_USE = "storage.count.attachable.volumes.in.use";
    static final String FORCED_DETACHES = "attach.detach.controller.attachdetach.controller.forced.detaches";
    /** A timer: Prometheus shows it as storage_operation_duration_seconds. */
    static final String OPERATION_DURATION = "storage.operation.duration";
    static final String FORCE_DETACH_REASON_TIMEOUT = "timeout";
    static final String FORCE_DETACH_REASON_OUT_OF_SERVICE = "out-of-service";
    static final String STATUS_SUCCESS = "success";
    static final String STATUS_FAIL_UNKNOWN = "fail-unknown";
    private static final Duration[] BUCKETS = java.util.stream.DoubleStream
            .of(.1, .25, .5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600)
            .mapToObj(s -> Duration.ofMillis((long) (s * 1000))).toArray(Duration[]::new);

    private final MeterRegistry registry;
    private final MultiGauge totalVolumes;
    private final MultiGauge inUse;

    AttachDetachMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.totalVolumes = MultiGauge.builder(TOTAL_VOLUMES).description("Number of volumes in A/D Controller")
                .register(registry);
        this.inUse = MultiGauge.builder(IN_USE).description("Measure number of volumes in use").register(registry);
    }

    /** RecordForcedDetachMetric. */
    void recordForcedDetach(String reason) {
        Counter.builder(FORCED_DETACHES).description("Number of times the A/D Controller performed a forced detach")
                .tag("reason", reason).register(registry).increment();
    }

    /** OperationCompleteHook: the seconds since {@code requestNanos} (System.nanoTime). */
    void operationComplete(String plugin, String operationName, boolean failed, boolean migrated, long requestNanos) {
        Timer.builder(OPERATION_DURATION).description("Storage operation duration")
                .tag("volume_plugin", plugin).tag("operation_name", operationName)
                .tag("status", failed ? STATUS_FAIL_UNKNOWN : STATUS_SUCCESS).tag("migrated", Boolean.toString(migrated))
                .serviceLevelObjectives(BUCKETS).register(registry)
                .record(System.nanoTime() - requestNanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    /** The collector's pass: the two gauges' rows from the states and the pods' volumes. */
    void update(DesiredStateOfWorld dsw, ActualStateOfWorld asw, Map<String, Map<String, Long>> inUseByNode,
            VolumePlugins plugins) {
        Map<List<String>, Long> total = new TreeMap<>((a, b) -> String.join("\0", a).compareTo(String.join("\0", b)));
        for (DesiredStateOfWorld.VolumeToAttach v : dsw.getVolumesToAttach()) {
            count(total, "desired_state_of_world", v.volumeSpec(), plugins);
        }
        for (ActualStateOfWorld.Attached v : asw.getAttachedVolumes()) {
            count(total, "actual_state_of_world", v.volumeSpec(), plugins);
        }
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        total.forEach((k, n) -> rows.add(MultiGauge.Row.of(Tags.of("plugin_name", k.get(1), "state", k.get(0)), n)));
        totalVolumes.register(rows, true);
        List<MultiGauge.Row<?>> inUseRows = new ArrayList<>();
        inUseByNode.forEach((node, perPlugin) -> perPlugin.forEach((plugin, n) -> inUseRows
                .add(MultiGauge.Row.of(Tags.of("node", node, "volume_plugin", plugin), n))));
        inUse.register(inUseRows, true);
    }

    /** FindPluginBySpec succeeds (a spec some plugin supports): counted under its fully qualified name. */
    private static void count(Map<List<String>, Long> total, String state, VolumeSpec spec, VolumePlugins plugins) {
        String plugin = plugins.pluginNameBySpec(spec);
        if (plugin != null) {
            total.merge(List.of(state, VolumePlugins.fullQualifiedPluginName(plugin, spec)), 1L, Long::sum);
        }
    }
}
