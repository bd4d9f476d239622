package io.qkcm.manager.serving;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The counters whose upstream name does not end in {@code _total}. Micrometer's Prometheus registry (the
 * simpleclient one on the classpath, whose naming convention and Counter family both force the suffix) always
 * writes a counter as {@code <name>_total}; /metrics rewrites the {@code # HELP}, {@code # TYPE} and sample
 * lines of exactly these families back to upstream's name, {@code # TYPE} still saying {@code counter} as
 * component-base's text output does. Every other counter keeps its {@code _total}.
 */
public final class UpstreamCounterNames {

    /** Upstream's names (each verified in v1.34's source), without the suffix Micrometer adds. */
    public static final List<String> WITHOUT_TOTAL = List.of(
            // pkg/controller/volume/persistentvolume/metrics: volumeOperationErrorsMetric
            "volume_operation_total_errors",
            // k8s.io/endpointslice/metrics: EndpointSliceChanges, EndpointSliceSyncs
            "endpoint_slice_controller_changes",
            "endpoint_slice_controller_syncs",
            // pkg/controller/endpointslicemirroring/metrics: EndpointSliceChanges
            "endpoint_slice_mirroring_controller_changes",
            // pkg/controller/volume/attachdetach/metrics: ForceDetachMetricCounter
            "attach_detach_controller_attachdetach_controller_forced_detaches");

    private static final Map<String, String> RENAMES = WITHOUT_TOTAL.stream()
            .collect(Collectors.toUnmodifiableMap(n -> n + "_total", n -> n));

    private UpstreamCounterNames() {
    }

    /** The Prometheus text format 0.0.4 output with the listed counters under upstream's names. */
    public static String rename(String exposition) {
        StringBuilder out = new StringBuilder(exposition.length());
        int start = 0;
        int length = exposition.length();
        while (start < length) {
            int end = exposition.indexOf('\n', start);
            end = end < 0 ? length : end + 1;
            appendLine(out, exposition, start, end);
            start = end;
        }
        return out.toString();
    }

    private static void appendLine(StringBuilder out, String text, int start, int end) {
        int nameStart = start;
        if (text.startsWith("# HELP ", start) || text.startsWith("# TYPE ", start)) {
            nameStart = start + 7;
        } else if (text.startsWith("#", start)) {
            out.append(text, start, end);
            return;
        }
        int nameEnd = nameStart;
        while (nameEnd < end && text.charAt(nameEnd) != '{' && text.charAt(nameEnd) != ' '
                && text.charAt(nameEnd) != '\n') {
            nameEnd++;
        }
        String upstream = RENAMES.get(text.substring(nameStart, nameEnd));
        if (upstream == null) {
            out.append(text, start, end);
            return;
        }
        out.append(text, start, nameStart).append(upstream).append(text, nameEnd, end);
    }
}
