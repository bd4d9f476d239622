package io.qkcm.manager;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.TreeSet;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerDescriptor;
import io.qkcm.devui.runtime.QkcmDevUiState;
import io.qkcm.runtime.josdk.OperatorController;
import io.quarkus.runtime.LaunchMode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * qkcm's page for a developer changing a controller, served in dev mode (and tests) only, on Quarkus'
 * HTTP server: {@code /q/qkcm} (a self-refreshing page) and {@code /q/qkcm/state} (its JSON): the
 * controllers and their state, their work queues (the workqueue_* metrics: depth, adds, retries, work
 * in flight), the leader Lease and whether this replica holds it, the shared informers and whether they
 * have synced.
 *
 * <p>The same state feeds qkcm's Dev UI card (/q/dev-ui, "qkcm" on the extensions page): Quarkus 3.30's
 * Dev UI takes pages only from extensions' build steps, so the card comes from the small extension in
 * {@code devui/}, whose JSON-RPC service reads this bean through {@link QkcmDevUiState}. In production Quarkus' HTTP server is off ({@code %prod.quarkus.http.host-enabled=false}) and this
 * page is not even routed.
 */
@ApplicationScoped
public class DevConsole implements QkcmDevUiState {

    private static final Logger LOG = Logger.getLogger(DevConsole.class);

    public static final String PATH = "/q/qkcm";

    @Inject
    ControllerManager manager;
    @Inject
    MeterRegistry registry;
    @ConfigProperty(name = "qkcm.dev-console.enabled", defaultValue = "true")
    boolean enabled;

    void routes(@Observes Router router) {
        if (LaunchMode.current() == LaunchMode.NORMAL || !enabled) {
            return;
        }
        String page = resource("dev-console/qkcm.html");
        router.get(PATH).handler(rc -> rc.response().putHeader("content-type", "text/html; charset=utf-8")
                .putHeader("cache-control", "no-store").end(page));
        // blocking: the Lease is read from the API server
        router.get(PATH + "/state").blockingHandler(this::state, false);
        LOG.infof("qkcm dev console: %s (JSON: %s/state)", PATH, PATH);
    }

    private void state(RoutingContext rc) {
        JsonObject body;
        try {
            body = state();
        } catch (RuntimeException e) {
            body = new JsonObject().put("error", e.toString());
        }
        rc.response().putHeader("content-type", "application/json").putHeader("cache-control", "no-store")
                .end(body.encodePrettily());
    }

    /** The state shown by the Dev UI card (the qkcm-devui extension's contract). */
    @Override
    public JsonObject devUiState() {
        return state();
    }

    /** The state shown by the page. */
    public JsonObject state() {
        JsonObject out = new JsonObject().put("running", manager.running());
        if (!manager.running() || manager.selection() == null) {
            return out.put("controllers", new JsonArray()).put("queues", new JsonArray())
                    .put("informers", new JsonArray());
        }
        out.put("leaderElection", leader());
        boolean leading = manager.leaderElection().map(LeaderElection::leading).orElse(true);

        JsonArray controllers = new JsonArray();
        TreeSet<String> claimed = new TreeSet<>();
        for (Controller c : manager.controllers()) {
            ControllerDescriptor known = manager.selection().running().stream().filter(k -> k.name().equals(c.name()))
                    .findFirst().orElse(null);
            boolean started = manager.started(c.name());
            boolean healthy = c.healthy();
            JsonObject o = new JsonObject().put("name", c.name())
                    .put("state", !healthy ? "failed" : started ? "running" : leading ? "starting" : "standby")
                    .put("healthy", healthy);
            if (known != null && known.partial().isPresent()) {
                o.put("partial", known.partial().get());
            }
            if (c instanceof OperatorController op) {
                o.put("workers", op.workerCount());
            }
            JsonArray queues = new JsonArray();
            for (String q : manager.queues(c.name())) {
                queues.add(queue(q));
                claimed.add(q);
            }
            controllers.add(o.put("queues", queues));
        }
        out.put("controllers", controllers);
        out.put("notImplemented", new JsonArray(manager.selection().notImplemented()));
        JsonArray skipped = new JsonArray();
        manager.selection().skipped().forEach(s -> skipped.add(new JsonObject().put("name", s.name())
                .put("reason", s.reason())));
        out.put("skipped", skipped);

        // queues no controller claims (none expected; shown rather than hidden)
        TreeSet<String> all = new TreeSet<>();
        registry.find("workqueue.depth").meters().forEach(m -> all.add(m.getId().getTag("name")));
        all.removeAll(claimed);
        JsonArray other = new JsonArray();
        all.forEach(q -> other.add(queue(q)));
        out.put("otherQueues", other);

        JsonArray informers = new JsonArray();
        for (SharedIndexInformer<?> i : manager.informers().all()) {
            Class<?> type = i.getApiTypeClass();
            informers.add(new JsonObject().put("type", apiVersionKind(type))
                    .put("synced", i.hasSynced()).put("watching", i.isWatching())
                    .put("items", i.getStore().list().size())
                    .put("resourceVersion", i.lastSyncResourceVersion()));
        }
        out.put("informers", informers);
        out.put("informersSynced", manager.informers().all().stream().allMatch(SharedIndexInformer::hasSynced));
        return out;
    }

    private JsonObject leader() {
        Optional<LeaderElection> election = manager.leaderElection();
        if (election.isEmpty()) {
            return new JsonObject().put("enabled", false).put("leading", true);
        }
        LeaderElection le = election.get();
        JsonObject o = new JsonObject().put("enabled", true).put("lease", le.leaseName())
                .put("identity", le.identity()).put("leading", le.leading());
        Optional<Lease> lease = le.lease();
        lease.ifPresent(l -> {
            var spec = l.getSpec();
            if (spec != null) {
                o.put("holder", spec.getHolderIdentity()).put("renewTime", String.valueOf(spec.getRenewTime()))
                        .put("transitions", spec.getLeaseTransitions());
            }
        });
        return o;
    }

    private JsonObject queue(String name) {
        return new JsonObject().put("name", name)
                .put("depth", (long) gauge("workqueue.depth", name))
                .put("adds", (long) counter("workqueue.adds", name))
                .put("retries", (long) counter("workqueue.retries", name))
                .put("unfinishedWorkSeconds", gauge("workqueue.unfinished.work.seconds", name))
                .put("longestRunningProcessorSeconds", gauge("workqueue.longest.running.processor.seconds", name));
    }

    private double gauge(String meter, String queue) {
        Gauge g = registry.find(meter).tag("name", queue).gauge();
        return g == null ? 0 : g.value();
    }

    private double counter(String meter, String queue) {
        Counter c = registry.find(meter).tag("name", queue).counter();
        return c == null ? 0 : c.count();
    }

    private static String apiVersionKind(Class<?> type) {
        if (HasMetadata.class.isAssignableFrom(type)) {
            @SuppressWarnings("unchecked")
            Class<? extends HasMetadata> t = (Class<? extends HasMetadata>) type;
            return HasMetadata.getApiVersion(t) + " " + HasMetadata.getKind(t);
        }
        return type.getSimpleName();
    }

    private static String resource(String path) {
        try (InputStream in = DevConsole.class.getClassLoader().getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + path);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
