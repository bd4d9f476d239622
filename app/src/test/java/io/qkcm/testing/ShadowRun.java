package io.qkcm.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.manager.ControllerCatalog;
import io.qkcm.runtime.clients.KubeClients;
import io.qkcm.runtime.events.EventBroadcaster;
import io.qkcm.runtime.informers.SharedInformers;
import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;
import io.qkcm.runtime.shadow.ShadowMatcher;
import io.qkcm.runtime.shadow.ShadowMode;
import io.vertx.core.Vertx;

/**
 * qkcm's controllers in shadow mode (as the process wires them with --shadow: every client's writes dry
 * runs, upstream's writes read from the shared informers) on the audited API server
 * ({@link RealApiServer#audited()}), optionally beside upstream's kube-controller-manager v1.34.4 (the
 * reference binary) running the given controllers as the cluster's real writer.
 */
public final class ShadowRun implements AutoCloseable {

    /** One qkcm controller to run: its name, its client's name and its start function. */
    public record Start(String name, String clientName, ControllerDescriptor.Starter starter) {
    }

    /** A controller as the catalog starts it. */
    public static Start of(String name) {
        ControllerDescriptor d = ControllerCatalog.upstream().byName(name).orElseThrow();
        return new Start(d.name(), d.clientName(), d.start().orElseThrow());
    }

    public final RealApiServer server = RealApiServer.audited();
    public final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    public final ShadowMode shadow;
    public final SharedInformers informers;
    private final KubeClients clients;
    private final List<Controller> controllers = new ArrayList<>();
    private final List<EventBroadcaster> broadcasters = new ArrayList<>();
    private final ScheduledExecutorService delayer;
    private Process upstream;
    private Path upstreamLog;

    private ShadowRun(Vertx vertx, Duration window, List<Start> starts) {
        Map<String, String> all = new HashMap<>();
        all.put("qkcm.kubeconfig", server.kubeconfig().toString());
        all.put("qkcm.shadow", "true");
        ControllerManagerOptions options = new ControllerManagerOptions(Flags.upstream(), f -> Optional.ofNullable(all.get(f)));
        clients = new KubeClients(options, registry, vertx);
        shadow = ShadowMode.start(clients, window, options.string("shadow-upstream-manager"), registry);
        informers = new SharedInformers(clients.forComponent("shared-informers"), options.minResyncPeriod());
        delayer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "shadow-test-delayer");
            t.setDaemon(true);
            return t;
        });
        for (Start s : starts) {
            KubernetesClient client = clients.forController(s.clientName());
            EventBroadcaster broadcaster = new EventBroadcaster(client);
            broadcasters.add(broadcaster);
            ControllerContext context = new ControllerContext(s.name(), client, informers, broadcaster.recorder(s.name()),
                    options, delayer, broadcaster::recorder, TestOperators.create());
            Controller c = s.starter().start(context);
            if (c != null) {
                controllers.add(c);
            }
        }
        shadow.watch(informers);
    }

    /**
     * Starts upstream's kube-controller-manager with {@code upstreamControllers} (its --controllers; none when
     * null), then qkcm's {@code qkcm} controllers in shadow mode, once both have synced their caches.
     */
    public static ShadowRun start(Vertx vertx, Duration window, String upstreamControllers, List<Start> qkcm)
            throws Exception {
        ShadowRun run = new ShadowRun(vertx, window, qkcm);
        try {
            if (upstreamControllers != null) {
                run.startUpstream(upstreamControllers);
            }
            run.informers.start();
            run.informers.waitForSync(run.informers.all());
            run.controllers.forEach(Controller::start);
            return run;
        } catch (Exception | Error e) {
            run.close();
            throw e;
        }
    }

    private void startUpstream(String controllers) throws IOException, InterruptedException {
        upstreamLog = Files.createTempFile("shadow-upstream-kcm", ".log");
        upstream = new ProcessBuilder(System.getProperty("user.home") + "/.kubeapitest/k8s/1.34.4-linux-amd64/kube-controller-manager",
                "--kubeconfig=" + server.kubeconfig(), "--controllers=" + controllers, "--leader-elect=false",
                "--secure-port=0", "--concurrent-gc-syncs=5").redirectErrorStream(true).redirectOutput(upstreamLog.toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        // upstream's controllers run once its caches are synced: its log says so per controller
        while (!Files.readString(upstreamLog).contains("Caches are synced")) {
            if (!upstream.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException("upstream kube-controller-manager did not start:\n" + Files.readString(upstreamLog));
            }
            Thread.sleep(100);
        }
    }

    /**
     * Stops upstream's kube-controller-manager (SIGSTOP) until {@link #resumeUpstream}: a test decides which side
     * acts first. It runs without leader election, so a pause cannot cost it a Lease.
     */
    public void pauseUpstream() throws IOException, InterruptedException {
        signalUpstream("-STOP");
    }

    /** Lets upstream's kube-controller-manager go on (SIGCONT). */
    public void resumeUpstream() throws IOException, InterruptedException {
        signalUpstream("-CONT");
    }

    private void signalUpstream(String signal) throws IOException, InterruptedException {
        if (upstream == null) {
            throw new IllegalStateException("no upstream kube-controller-manager in this run");
        }
        int rc = new ProcessBuilder("kill", signal, Long.toString(upstream.pid())).inheritIO().start().waitFor();
        if (rc != 0) {
            throw new IllegalStateException("kill " + signal + " " + upstream.pid() + " exited " + rc);
        }
    }

    public ShadowMatcher matcher() {
        return shadow.matcher();
    }

    public AuditLog audit() {
        return new AuditLog(server.auditLog().orElseThrow());
    }

    public Optional<Path> upstreamLog() {
        return Optional.ofNullable(upstreamLog);
    }

    @Override
    public void close() {
        for (Controller c : controllers) {
            try {
                c.shutdown(Duration.ZERO);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                // stopping anyway
            }
        }
        broadcasters.forEach(b -> b.shutdown(Duration.ZERO));
        informers.stop();
        delayer.shutdownNow();
        clients.close();
        shadow.close();
        // shadow mode is process-wide; the tests after this one write protobuf again, as the process does
        io.qkcm.runtime.protobuf.ProtobufWire.writesInProtobuf(true);
        if (upstream != null) {
            upstream.destroy();
            try {
                if (!upstream.waitFor(10, TimeUnit.SECONDS)) {
                    upstream.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                upstream.destroyForcibly();
            }
        }
    }
}
