package io.qkcm.controller.volume.persistentvolume;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;

/**
 * Upstream's pkg/controller/volume/persistentvolume/metrics and the two series of pkg/volume/util/metrics.go
 * the binder feeds:
 * <ul>
 * <li>the pv_collector gauges {@code pv_collector_total_pv_count{plugin_name, volume_mode}},
 * {@code pv_collector_bound_pv_count{storage_class}}, {@code pv_collector_unbound_pv_count{storage_class}},
 * {@code pv_collector_bound_pvc_count{namespace, storage_class, volume_attributes_class}} and
 * {@code pv_collector_unbound_pvc_count{...}}, counted over the controller's own volume and claim stores.
 * Upstream's collector counts at each scrape; here the rows are recounted from the stores, at most once a
 * {@link #REFRESH_MILLIS}, after they changed;</li>
 * <li>{@code volume_operation_total_seconds{plugin_name, operation_name}} (provision and delete, end to end:
 * from the operation's first start until the claim is bound / the volume object is gone) and
 * {@code volume_operation_total_errors{plugin_name, operation_name}};</li>
 * <li>{@code storage_operation_duration_seconds{volume_plugin, operation_name, status, migrated}} of the
 * in-tree plugins' volume_provision and volume_delete calls;</li>
 * <li>{@code retroactive_storageclass_total} and {@code retroactive_storageclass_errors_total}.</li>
 * </ul>
 * Micrometer's Prometheus names end every counter in {@code _total}; /metrics takes it off the errors
 * counter again (manager.serving's UpstreamCounterNames).
 */
final class BinderMetrics {

    static final long REFRESH_MILLIS = 1000;
    static final String TOTAL_PV = "pv_collector.total.pv.count";
    static final String BOUND_PV = "pv_collector.bound.pv.count";
    static final String UNBOUND_PV = "pv_collector.unbound.pv.count";
    static final String BOUND_PVC = "pv_collector.bound.pvc.count";
    static final String UNBOUND_PVC = "pv_collector.unbound.pvc.count";
    static final String OPERATION_SECONDS = "volume.operation.total.seconds";
    static final String OPERATION_ERRORS = "volume.operation.total.errors";
    static final String STORAGE_OPERATION_SECONDS = "storage.operation.duration.seconds";
    static final String RETROACTIVE = "retroactive.storageclass";
    static final String RETROACTIVE_ERRORS = "retroactive.storageclass.errors";
    static final String NOT_AVAILABLE = "N/A";
    private static final double[] BUCKETS = { .1, .25, .5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600 };

    private record Started(String pluginName, String operation, long startNanos) {
    }

    private final MeterRegistry registry;
    private final LongSupplier nanoTime;
    private final MultiGauge totalPV;
    private final MultiGauge boundPV;
    private final MultiGauge unboundPV;
    private final MultiGauge boundPVC;
    private final MultiGauge unboundPVC;
    private final Counter retroactive;
    private final Counter retroactiveErrors;
    /** OperationStartTimeCache. */
    private final Map<String, Started> started = new ConcurrentHashMap<>();
    private volatile boolean dirty = true;

    BinderMetrics(MeterRegistry registry, LongSupplier nanoTime) {
        this.registry = registry;
        this.nanoTime = nanoTime;
        this.totalPV = MultiGauge.builder(TOTAL_PV).description("Gauge measuring total number of persistent volumes")
                .register(registry);
        this.boundPV = MultiGauge.builder(BOUND_PV).description("Gauge measuring number of persistent volume currently bound")
                .register(registry);
        this.unboundPV = MultiGauge.builder(UNBOUND_PV)
                .description("Gauge measuring number of persistent volume currently unbound").register(registry);
        this.boundPVC = MultiGauge.builder(BOUND_PVC)
                .description("Gauge measuring number of persistent volume claim currently bound").register(registry);
        this.unboundPVC = MultiGauge.builder(UNBOUND_PVC)
                .description("Gauge measuring number of persistent volume claim currently unbound").register(registry);
        this.retroactive = Counter.builder(RETROACTIVE)
                .description("Total number of retroactive StorageClass assignments to persistent volume claim")
                .register(registry);
        this.retroactiveErrors = Counter.builder(RETROACTIVE_ERRORS)
                .description("Total number of failed retroactive StorageClass assignments to persistent volume claim")
                .register(registry);
    }

    // ---- pv_collector ----

    /** The stores changed: the next refresh recounts. */
    void storesChanged() {
        dirty = true;
    }

    /**
     * Recounts the rows from the stores if they changed since the last count. The mark is cleared before
     * the stores are read, and writers mark after they wrote: a change is either in this count or marks
     * the next (reading first and clearing after lost a change made in between until the next one).
     */
    synchronized void refresh(java.util.function.Supplier<List<PersistentVolume>> volumeStore,
            java.util.function.Supplier<List<PersistentVolumeClaim>> claimStore) {
        if (!dirty) {
            return;
        }
        dirty = false;
        List<PersistentVolume> volumes = volumeStore.get();
        List<PersistentVolumeClaim> claims = claimStore.get();
        Map<List<String>, Integer> total = new HashMap<>();
        Map<String, Integer> bound = new HashMap<>();
        Map<String, Integer> unbound = new HashMap<>();
        for (PersistentVolume pv : volumes) {
            String mode = pv.getSpec().getVolumeMode() == null ? "" : pv.getSpec().getVolumeMode();
            total.merge(List.of(pluginName(pv), mode), 1, Integer::sum);
            String cls = StorageHelpers.nonNull(pv.getSpec().getStorageClassName());
            ("Bound".equals(StorageHelpers.volumePhase(pv)) ? bound : unbound).merge(cls, 1, Integer::sum);
        }
        Map<List<String>, Integer> boundClaims = new HashMap<>();
        Map<List<String>, Integer> unboundClaims = new HashMap<>();
        for (PersistentVolumeClaim pvc : claims) {
            List<String> dims = List.of(pvc.getMetadata().getNamespace(), StorageHelpers.claimClass(pvc),
                    StorageHelpers.nonNull(pvc.getSpec().getVolumeAttributesClassName()));
            ("Bound".equals(StorageHelpers.claimPhase(pvc)) ? boundClaims : unboundClaims).merge(dims, 1, Integer::sum);
        }
        totalPV.register(rows(total, "plugin_name", "volume_mode"), true);
        boundPV.register(classRows(bound), true);
        unboundPV.register(classRows(unbound), true);
        boundPVC.register(rows(boundClaims, "namespace", "storage_class", "volume_attributes_class"), true);
        unboundPVC.register(rows(unboundClaims, "namespace", "storage_class", "volume_attributes_class"), true);
    }

    private static List<MultiGauge.Row<?>> classRows(Map<String, Integer> counts) {
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        counts.forEach((cls, n) -> rows.add(MultiGauge.Row.of(Tags.of("storage_class", cls), n)));
        return rows;
    }

    private static List<MultiGauge.Row<?>> rows(Map<List<String>, Integer> counts, String... labels) {
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        counts.forEach((values, n) -> {
            Tags tags = Tags.empty();
            for (int i = 0; i < labels.length; i++) {
                tags = tags.and(labels[i], values.get(i));
            }
            rows.add(MultiGauge.Row.of(tags, n));
        });
        return rows;
    }

    /** getPVPluginName: the in-tree plugin of the volume (with its CSI driver for kubernetes.io/csi), or N/A. */
    static String pluginName(PersistentVolume pv) {
        String plugin = InTreePlugins.pluginBySpec(pv);
        return plugin == null ? NOT_AVAILABLE : plugin;
    }

    // ---- operations ----

    /** OperationStartTimeCache.AddIfNotExist. */
    void operationStarted(String key, String pluginName, String operation) {
        started.putIfAbsent(key, new Started(pluginName, operation, nanoTime.getAsLong()));
    }

    /** OperationStartTimeCache.Delete. */
    void forgetOperation(String key) {
        started.remove(key);
    }

    /** RecordMetric: an error counts in volume_operation_total_errors; success records the latency and forgets. */
    void recordOperation(String key, boolean failed) {
        Started s = started.get(key);
        if (s == null) {
            return;
        }
        if (failed) {
            volumeOperationError(s.pluginName(), s.operation());
            return;
        }
        double seconds = (nanoTime.getAsLong() - s.startNanos()) / 1e9;
        DistributionSummary.builder(OPERATION_SECONDS).description("Storage operation end to end duration in seconds")
                .tag("plugin_name", s.pluginName()).tag("operation_name", s.operation()).serviceLevelObjectives(BUCKETS)
                .register(registry).record(seconds);
        started.remove(key, s);
    }

    /** RecordVolumeOperationErrorMetric. */
    void volumeOperationError(String pluginName, String operation) {
        Counter.builder(OPERATION_ERRORS).description("Total volume operation errors")
                .tag("plugin_name", pluginName == null || pluginName.isEmpty() ? NOT_AVAILABLE : pluginName)
                .tag("operation_name", operation).register(registry).increment();
    }

    /** OperationCompleteHook: storage_operation_duration_seconds of one plugin call. */
    void storageOperation(String pluginName, String operation, boolean failed, double seconds) {
        DistributionSummary.builder(STORAGE_OPERATION_SECONDS).description("Storage operation duration")
                .tag("volume_plugin", pluginName).tag("operation_name", operation)
                .tag("status", failed ? "fail-unknown" : "success").tag("migrated", "false").serviceLevelObjectives(BUCKETS)
                .register(registry).record(seconds);
    }

    /** RecordRetroactiveStorageClassMetric. */
    void retroactiveStorageClass(boolean success) {
        retroactive.increment();
        if (!success) {
            retroactiveErrors.increment();
        }
    }

    long nanoTime() {
        return nanoTime.getAsLong();
    }
}
