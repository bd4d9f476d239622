package io.qkcm.manager;

import java.time.Duration;
import java.util.Optional;

import org.eclipse.microprofile.config.ConfigProvider;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.controller.podgc.PodGCController;
import io.qkcm.runtime.options.GoDuration;

/**
 * pod-garbage-collector-controller with upstream's gcCheckPeriod (20s) and quarantineTime (40s), which
 * upstream does not expose as flags. Tests shorten them, as upstream's integration tests do through
 * NewPodGCInternal, with the internal config properties {@code qkcm.internal.pod-gc.gc-check-period}
 * and {@code qkcm.internal.pod-gc.quarantine-time} (Go durations); they are no flags and not in --help.
 */
final class PodGCSettings {

    static final String GC_CHECK_PERIOD = "qkcm.internal.pod-gc.gc-check-period";
    static final String QUARANTINE_TIME = "qkcm.internal.pod-gc.quarantine-time";

    private PodGCSettings() {
    }

    static Controller podGC(ControllerContext c) {
        Duration period = internal(GC_CHECK_PERIOD).orElse(PodGCController.GC_CHECK_PERIOD);
        Duration quarantine = internal(QUARANTINE_TIME).orElse(PodGCController.QUARANTINE_TIME);
        return c.operate(new PodGCController(c, c.options().integer("terminated-pod-gc-threshold"), period, quarantine));
    }

    private static Optional<Duration> internal(String property) {
        return ConfigProvider.getConfig().getOptionalValue(property, String.class).map(GoDuration::parse);
    }
}
