package io.qkcm.manager;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;

import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;
import org.eclipse.microprofile.health.Readiness;

import io.smallrye.health.SmallRyeHealthReporter;
import io.smallrye.health.api.HealthRegistry;

/**
 * The manager's health checks as smallrye-health checks: liveness checks under upstream's names
 * ({@code leaderElection}, then one per controller as it starts — upstream's AddHealthChecker), and
 * the readiness check {@code informers-synced}. {@code /healthz} and {@code /livez} on the secure port
 * render the liveness checks in upstream's text format, {@code /readyz} adds readiness; Quarkus'
 * {@code /q/health} (dev mode and tests) shows the same checks as JSON.
 *
 * <p>The order of the lines is the registration order, as upstream's; the status of each comes from
 * one smallrye report per request. Extension-provided checks are off
 * ({@code quarkus.health.extensions.enabled=false}): upstream's endpoints list only its own checks.
 */
@ApplicationScoped
public class HealthChecks {

    public static final String INFORMERS_SYNCED = "informers-synced";

    @Inject
    @Liveness
    HealthRegistry liveness;
    @Inject
    @Readiness
    HealthRegistry readiness;
    @Inject
    SmallRyeHealthReporter reporter;

    private final List<String> livenessNames = new CopyOnWriteArrayList<>();
    private final List<String> readinessNames = new CopyOnWriteArrayList<>();

    /** Registers a liveness check (shown on /healthz, /livez and /readyz). */
    public void addLiveness(String name, BooleanSupplier check) {
        liveness.register(name, () -> HealthCheckResponse.named(name).status(safe(check)).build());
        if (!livenessNames.contains(name)) {
            livenessNames.add(name);
        }
    }

    /** Registers a readiness-only check (shown on /readyz). */
    public void addReadiness(String name, BooleanSupplier check) {
        readiness.register(name, () -> HealthCheckResponse.named(name).status(safe(check)).build());
        if (!readinessNames.contains(name)) {
            readinessNames.add(name);
        }
    }

    /** Removes every check (a stopped manager). */
    public void clear() {
        livenessNames.forEach(liveness::remove);
        readinessNames.forEach(readiness::remove);
        livenessNames.clear();
        readinessNames.clear();
    }

    /** The checks of {@code path} ({@code /healthz}, {@code /livez}, {@code /readyz}), in order, from one report. */
    public Map<String, BooleanSupplier> forPath(String path) {
        Map<String, BooleanSupplier> checks = new LinkedHashMap<>();
        Map<String, Boolean> live = statuses(reporter.getLiveness().getPayload());
        for (String name : livenessNames) {
            checks.put(name, () -> Boolean.TRUE.equals(live.get(name)));
        }
        if ("/readyz".equals(path)) {
            Map<String, Boolean> ready = statuses(reporter.getReadiness().getPayload());
            for (String name : readinessNames) {
                checks.put(name, () -> Boolean.TRUE.equals(ready.get(name)));
            }
        }
        return checks;
    }

    /** The liveness checks by name (for tests). */
    public Map<String, BooleanSupplier> liveness() {
        return forPath("/healthz");
    }

    private static Map<String, Boolean> statuses(JsonObject payload) {
        Map<String, Boolean> out = new LinkedHashMap<>();
        for (JsonValue v : payload.getJsonArray("checks")) {
            JsonObject check = v.asJsonObject();
            out.put(check.getString("name"), "UP".equals(check.getString("status")));
        }
        return out;
    }

    private static boolean safe(BooleanSupplier check) {
        try {
            return check.getAsBoolean();
        } catch (RuntimeException e) {
            return false;
        }
    }
}
