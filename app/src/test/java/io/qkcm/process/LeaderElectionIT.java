package io.qkcm.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.nio.file.Files;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.testing.AuditLog;
import io.qkcm.testing.Identities;
import io.qkcm.testing.QkcmProcess;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.StallingProxy;

/**
 * Leader election between real qkcm processes against one real API server that audits every
 * request, each process with its own ServiceAccount so the audit log says who wrote what. Short
 * durations (4s lease, 3s renew deadline, 1s retry) keep failover quick.
 */
class LeaderElectionIT {

    private static final String LEASE_NS = "kube-system";
    private static final Duration LEASE = Duration.ofSeconds(4);
    private static final Duration RETRY = Duration.ofSeconds(1);
    /** client-go and fabric8 both wait retryPeriod plus up to 1.2 x retryPeriod of jitter between tries. */
    private static final Duration JITTER = Duration.ofMillis(1200);
    /** Request latency and scheduling on a loaded 2-core machine. */
    private static final Duration MARGIN = Duration.ofMillis(1500);
    private static final Duration STARTUP = Duration.ofSeconds(60);

    private static RealApiServer server;
    private static AuditLog audit;
    private static Identities identities;
    private static KubernetesClient admin;

    private final List<QkcmProcess> processes = new ArrayList<>();
    private String lease;

    @BeforeAll
    static void apiServer() {
        server = RealApiServer.audited();
        audit = new AuditLog(server.auditLog().orElseThrow());
        identities = new Identities(server);
        admin = server.newClient();
    }

    @AfterEach
    void stopProcesses() {
        processes.forEach(QkcmProcess::close);
    }

    private void lease(TestInfo test) {
        String method = test.getTestMethod().orElseThrow().getName().toLowerCase().replaceAll("[^a-z0-9]", "");
        lease = "it-" + method.substring(0, Math.min(20, method.length())) + "-"
                + Long.toString(System.nanoTime() % 100000, 36);
    }

    /** A qkcm process named {@code name} (its HOSTNAME, so its identity is name_uuid) as ServiceAccount name. */
    private QkcmProcess start(String name, String... extraArgs) {
        Path kubeconfig = identities.kubeconfigFor(name);
        List<String> args = new ArrayList<>(List.of("--kubeconfig=" + kubeconfig,
                "--leader-elect-resource-name=" + lease,
                "--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s",
                "--leader-elect-retry-period=1s", "--secure-port=0", "--bind-address=127.0.0.1"));
        args.addAll(List.of(extraArgs));
        QkcmProcess p = QkcmProcess.java(name, Map.of("HOSTNAME", name), args);
        processes.add(p);
        return p;
    }

    private Lease currentLease() {
        return admin.leases().inNamespace(LEASE_NS).withName(lease).get();
    }

    private String holder() {
        Lease l = currentLease();
        return l == null || l.getSpec() == null ? null : l.getSpec().getHolderIdentity();
    }

    private void awaitLeader(QkcmProcess p) {
        await().atMost(STARTUP).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            assertThat(p.alive()).as("%s is running; stdout:%n%s", p, QkcmProcess.tail(p.stdout())).isTrue();
            assertThat(holder()).startsWith(p.name() + "_");
        });
    }

    private void awaitStandby(QkcmProcess p) {
        await().atMost(STARTUP).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            assertThat(p.alive()).as("%s is running; stdout:%n%s", p, QkcmProcess.tail(p.stdout())).isTrue();
            // it looked at the lease (and found it held): it is up, and its requests are attributable
            assertThat(audit.by(Identities.user(p.name()))).as("requests by %s", p)
                    .anyMatch(e -> e.resource().equals("leases") && e.name().equals(lease) && e.verb().equals("get"));
            assertThat(p.stdout()).contains("new leader elected");
        });
    }

    private List<AuditLog.Entry> writesBy(QkcmProcess p) {
        return audit.entries(e -> e.user().equals(Identities.user(p.name())) && e.isWrite());
    }

    private List<Event> leaderEvents() {
        return admin.v1().events().inNamespace(LEASE_NS).list().getItems().stream()
                .filter(e -> "Lease".equals(e.getInvolvedObject().getKind())
                        && lease.equals(e.getInvolvedObject().getName()))
                .toList();
    }

    @Test
    void onlyTheLeaderWrites(TestInfo test) {
        lease(test);
        String ns = "it-standby-" + Long.toString(System.nanoTime() % 100000, 36);
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                .create();
        QkcmProcess a = start("standby-a");
        awaitLeader(a);
        QkcmProcess b = start("standby-b");
        awaitStandby(b);

        // work a controller would do: only the leader may act on it
        admin.apps().replicaSets().inNamespace(ns).resource(new ReplicaSetBuilder().withNewMetadata()
                .withName("probe").endMetadata().withNewSpec().withReplicas(1).withNewSelector()
                .addToMatchLabels("app", "probe").endSelector().withNewTemplate().withNewMetadata()
                .addToLabels("app", "probe").endMetadata().withNewSpec().addNewContainer().withName("c")
                .withImage("busybox").endContainer().endSpec().endTemplate().endSpec().build()).create();

        Instant windowStart = Instant.now();
        await().during(Duration.ofSeconds(6)).atMost(Duration.ofSeconds(8)).pollInterval(Duration.ofMillis(500))
                .untilAsserted(() -> {
                    assertThat(writesBy(b)).as("writes by the standby").isEmpty();
                    assertThat(holder()).startsWith("standby-a_");
                    assertThat(b.alive()).isTrue();
                });
        // the audit attribution works: the leader's renewals in the same window are there
        assertThat(writesBy(a)).filteredOn(e -> e.resource().equals("leases") && e.time().isAfter(windowStart))
                .hasSizeGreaterThanOrEqualTo(3);
        // and, as client-go's elector, the leader renews from its own last write without reading first
        assertThat(audit.entries(e -> e.user().equals(Identities.user(a.name())) && e.resource().equals("leases")
                && e.verb().equals("get") && e.time().isAfter(windowStart))).as("lease reads by the leader").isEmpty();

        // someone else touches the Lease: the optimistic renewal conflicts, the leader re-reads and keeps it
        int transitions = currentLease().getSpec().getLeaseTransitions();
        admin.leases().inNamespace(LEASE_NS).withName(lease).edit(l -> {
            l.getMetadata().setLabels(java.util.Map.of("touched", "yes"));
            return l;
        });
        Instant touched = Instant.now();
        await().atMost(Duration.ofSeconds(6)).untilAsserted(() -> {
            List<AuditLog.Entry> updates = audit.entries(e -> e.user().equals(Identities.user(a.name()))
                    && e.resource().equals("leases") && e.verb().equals("update") && e.time().isAfter(touched));
            assertThat(updates).as("optimistic renewal refused").anyMatch(e -> e.code() == 409);
            AuditLog.Entry conflict = updates.stream().filter(e -> e.code() == 409).findFirst().orElseThrow();
            assertThat(updates).as("renewed after re-reading")
                    .anyMatch(e -> e.code() == 200 && !e.time().isBefore(conflict.time()));
        });
        assertThat(holder()).startsWith("standby-a_");
        assertThat(currentLease().getSpec().getLeaseTransitions()).isEqualTo(transitions);
        assertThat(currentLease().getMetadata().getLabels()).containsEntry("touched", "yes");
        assertThat(a.alive()).isTrue();
        // upstream's event on the Lease
        assertThat(leaderEvents()).anySatisfy(e -> {
            assertThat(e.getReason()).isEqualTo("LeaderElection");
            assertThat(e.getMessage()).matches("standby-a_[0-9a-f-]{36} became leader");
            assertThat(e.getSource().getComponent()).isEqualTo("kube-controller-manager");
            assertThat(e.getType()).isEqualTo("Normal");
        });
        assertThat(a.stdout()).contains("successfully acquired lease");
        assertThat(b.stdout()).doesNotContain("successfully acquired lease").doesNotContain("Started controller");
    }

    @Test
    void killedLeaderIsReplacedWithinLeaseDurationPlusRetry(TestInfo test) {
        lease(test);
        QkcmProcess a = start("kill-a");
        awaitLeader(a);
        QkcmProcess b = start("kill-b");
        awaitStandby(b);
        int transitions = currentLease().getSpec().getLeaseTransitions();

        long killed = System.nanoTime();
        a.kill9();
        AtomicLong tookOver = new AtomicLong();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> {
            String h = holder();
            if (h != null && h.startsWith("kill-b_")) {
                tookOver.set(System.nanoTime());
                return true;
            }
            return false;
        });
        Duration takeover = Duration.ofNanos(tookOver.get() - killed);
        // the lease was renewed at most one retry period before the kill, so it cannot expire sooner
        assertThat(takeover).isGreaterThanOrEqualTo(LEASE.minus(RETRY).minusMillis(500));
        assertThat(takeover).isLessThanOrEqualTo(LEASE.plus(RETRY).plus(JITTER).plus(MARGIN));
        assertThat(currentLease().getSpec().getLeaseTransitions()).isEqualTo(transitions + 1);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(leaderEvents())
                .anySatisfy(e -> assertThat(e.getMessage()).matches("kill-b_[0-9a-f-]{36} became leader")));
        assertThat(b.stdout()).contains("successfully acquired lease");
        assertThat(b.alive()).isTrue();
    }

    @Test
    void sigtermReleasesTheLeaseAndExitsZero(TestInfo test) {
        lease(test);
        // a long lease: only a released lease lets the standby in quickly
        QkcmProcess a = start("term-a", "--leader-elect-lease-duration=20s", "--leader-elect-renew-deadline=15s");
        awaitLeader(a);
        QkcmProcess b = start("term-b", "--leader-elect-lease-duration=20s", "--leader-elect-renew-deadline=15s");
        awaitStandby(b);

        long terminated = System.nanoTime();
        a.sigterm();
        assertThat(a.waitFor(Duration.ofSeconds(30))).as(a.stdout()).isZero();
        String afterExit = holder();
        assertThat(afterExit).satisfiesAnyOf(h -> assertThat(h).isNullOrEmpty(), h -> assertThat(h).startsWith("term-b_"));
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                .untilAsserted(() -> assertThat(holder()).startsWith("term-b_"));
        assertThat(Duration.ofNanos(System.nanoTime() - terminated)).isLessThan(Duration.ofSeconds(10));
        assertThat(a.stdout()).contains("shutting down", "gave up lease").doesNotContain("leaderelection lost");
        assertThat(leaderEvents()).anySatisfy(e -> assertThat(e.getMessage()).matches("term-a_[0-9a-f-]{36} stopped leading"));
    }

    @Test
    void sigtermWithoutReleaseOnCancelKeepsTheLease(TestInfo test) {
        lease(test);
        QkcmProcess a = start("keep-a", "--leader-elect-release-on-cancel=false",
                "--leader-elect-lease-duration=20s", "--leader-elect-renew-deadline=15s");
        awaitLeader(a);
        String identity = holder();
        a.sigterm();
        assertThat(a.waitFor(Duration.ofSeconds(30))).as(a.stdout()).isZero();
        assertThat(holder()).isEqualTo(identity);
    }

    @Test
    void sigtermOnAStandbyExitsZeroAndLeavesTheLeaderAlone(TestInfo test) {
        lease(test);
        QkcmProcess a = start("sbterm-a");
        awaitLeader(a);
        String identity = holder();
        QkcmProcess b = start("sbterm-b");
        awaitStandby(b);
        b.sigterm();
        assertThat(b.waitFor(Duration.ofSeconds(30))).as(b.stdout()).isZero();
        assertThat(holder()).isEqualTo(identity);
        assertThat(writesBy(b)).isEmpty();
    }

    @Test
    void leaseTakenByAnotherHolderExitsNonZero(TestInfo test) {
        lease(test);
        QkcmProcess a = start("stolen-a");
        awaitLeader(a);
        ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
        // a plain update (optimistic concurrency): retried if it races with a renewal
        await().atMost(Duration.ofSeconds(10)).ignoreException(KubernetesClientException.class).until(() -> {
            Lease l = currentLease();
            l.getSpec().setHolderIdentity("thief");
            l.getSpec().setLeaseDurationSeconds(3600);
            l.getSpec().setAcquireTime(now);
            l.getSpec().setRenewTime(now);
            admin.resource(l).update();
            return true;
        });
        assertThat(a.waitFor(Duration.ofSeconds(20))).as(a.stdout()).isEqualTo(1);
        assertThat(a.stdout()).contains("leaderelection lost");
        // it neither released nor re-took the thief's lease on the way out
        assertThat(holder()).isEqualTo("thief");
    }

    @Test
    void leaseThatCannotBeRenewedExitsNonZero(TestInfo test) {
        lease(test);
        QkcmProcess a = start("revoked-a");
        awaitLeader(a);
        long revoked = System.nanoTime();
        admin.rbac().clusterRoleBindings().withName(Identities.binding("revoked-a")).delete();
        assertThat(a.waitFor(Duration.ofSeconds(30))).as(a.stdout()).isEqualTo(1);
        // gives up after the renew deadline (3s) of failed renewals
        assertThat(Duration.ofNanos(System.nanoTime() - revoked)).isGreaterThanOrEqualTo(Duration.ofSeconds(2))
                .isLessThan(Duration.ofSeconds(3).plus(RETRY).plus(JITTER).plus(MARGIN).plusSeconds(2));
        assertThat(a.stdout()).contains("leaderelection lost");
    }

    /**
     * The one-leader guarantee when the leader's renewals hang (a network that drops packets without
     * resetting): client-go gives up at the renew deadline whatever its requests are doing, so the
     * leader has exited before a standby, waiting a lease duration from when it last saw the record
     * change, takes over. Lease 6s, renew deadline 3s, retry 1s: a 2s margin, as upstream's defaults
     * (15s/10s/2s) keep 3s. (fabric8's elector waited for the hung request and led on.)
     */
    @Test
    void leaderWhoseRenewalsHangExitsBeforeAStandbyTakesOver(TestInfo test) throws Exception {
        lease(test);
        String[] timing = {"--leader-elect-lease-duration=6s", "--leader-elect-renew-deadline=3s",
                "--leader-elect-retry-period=1s"};
        try (StallingProxy proxy = new StallingProxy(java.net.URI.create(admin.getConfiguration().getMasterUrl()))) {
            Path viaProxy = identities.kubeconfigFor("hang-a");
            Files.writeString(viaProxy, Files.readString(viaProxy)
                    .replace("server: " + admin.getConfiguration().getMasterUrl(), "server: " + proxy.url()));
            List<String> args = new ArrayList<>(List.of("--kubeconfig=" + viaProxy, "--leader-elect-resource-name=" + lease,
                    "--secure-port=0", "--bind-address=127.0.0.1"));
            args.addAll(List.of(timing));
            QkcmProcess a = QkcmProcess.java("hang-a", Map.of("HOSTNAME", "hang-a"), args);
            processes.add(a);
            CompletableFuture<Instant> aExited = a.exitTime();
            awaitLeader(a);
            QkcmProcess b = start("hang-b", timing);
            awaitStandby(b);

            proxy.stall();
            Instant stalled = Instant.now();
            await().atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofMillis(100))
                    .untilAsserted(() -> assertThat(holder()).startsWith("hang-b_"));
            AuditLog.Entry takeover = audit.entries(e -> e.user().equals(Identities.user("hang-b"))
                    && e.resource().equals("leases") && e.name().equals(lease) && e.isWrite() && e.code() < 300
                    && e.time().isAfter(stalled)).get(0);
            // the stall never ended: a left on its own, and before b's write that made it the leader
            assertThat(aExited).as("a exited while its renewals hung; stdout:%n%s", QkcmProcess.tail(a.stdout()))
                    .isDone();
            assertThat(aExited.get()).as("a's exit vs b's takeover (%s)", takeover).isBefore(takeover.time());
            assertThat(a.waitFor(Duration.ofSeconds(1))).isEqualTo(1);
            assertThat(a.stdout()).contains("leaderelection lost");
        }
    }

    /**
     * Expiry is judged by the standby's own clock, from when it saw the record change, never by the
     * renewTime the holder wrote (client-go's observedTime): a holder whose clock is an hour behind
     * keeps its lease while it renews, and loses it a lease duration after it stops.
     */
    @Test
    void standbyJudgesExpiryByWhenItSawTheRecordChangeNotByTheHoldersClock(TestInfo test) throws Exception {
        lease(test);
        ZonedDateTime skewed = ZonedDateTime.now(ZoneOffset.UTC).minusHours(1);
        admin.leases().inNamespace(LEASE_NS).resource(new LeaseBuilder().withNewMetadata().withName(lease)
                .withNamespace(LEASE_NS).endMetadata().withNewSpec().withHolderIdentity("skewed-holder")
                .withLeaseDurationSeconds(4).withAcquireTime(skewed).withRenewTime(skewed).withLeaseTransitions(0)
                .endSpec().build()).create();
        AtomicBoolean renewing = new AtomicBoolean(true);
        Thread holder = new Thread(() -> {
            long n = 0;
            while (renewing.get()) {
                long seconds = ++n;
                try {
                    io.qkcm.testing.Conflicts.retry(() -> admin.leases().inNamespace(LEASE_NS).withName(lease)
                            .edit(l -> {
                                l.getSpec().setRenewTime(skewed.plusSeconds(seconds));
                                return l;
                            }));
                    Thread.sleep(1000);
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    // the next renewal
                }
            }
        }, "skewed-holder");
        holder.start();
        try {
            QkcmProcess b = start("skew-b");
            awaitStandby(b);
            // three lease durations of a renewed record: not taken
            await().during(Duration.ofSeconds(12)).atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(200))
                    .untilAsserted(() -> assertThat(holder()).isEqualTo("skewed-holder"));
            assertThat(b.stdout()).doesNotContain("successfully acquired lease");
        } finally {
            renewing.set(false);
            holder.interrupt();
            holder.join();
        }
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                .untilAsserted(() -> assertThat(holder()).startsWith("skew-b_"));
    }

    @Test
    void withoutLeaderElectionItRunsAtOnceAndTouchesNoLease(TestInfo test) {
        lease(test);
        QkcmProcess a = start("nole-a", "--leader-elect=false");
        await().atMost(STARTUP).untilAsserted(() -> {
            assertThat(a.alive()).as(a.stdout()).isTrue();
            assertThat(a.stdout()).containsPattern("Started \\d+ controllers");
        });
        assertThat(audit.by(Identities.user("nole-a"))).noneMatch(e -> e.resource().equals("leases"));
        assertThat(currentLease()).isNull();
        a.sigterm();
        assertThat(a.waitFor(Duration.ofSeconds(30))).isZero();
    }
}
