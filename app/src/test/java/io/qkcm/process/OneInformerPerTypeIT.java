package io.qkcm.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import io.qkcm.testing.AuditLog;
import io.qkcm.testing.Identities;
import io.qkcm.testing.QkcmProcess;
import io.qkcm.testing.RealApiServer;

/**
 * With every implemented controller running as a JOSDK Operator of its own, the process still opens
 * exactly one watch per resource type (a streaming list: sendInitialEvents, no LIST), all from the shared informers (upstream's
 * SharedInformerFactory): JOSDK's event sources run on views of them. The garbage collector's
 * metadata-only informers are counted apart, as upstream's metadata informers are.
 */
class OneInformerPerTypeIT {

    private static final String SHARED = "/shared-informers";
    private static final String GC = "/generic-garbage-collector";

    @Test
    void oneStreamingWatchPerResourceTypeForTheWholeProcess() {
        RealApiServer server = RealApiServer.audited();
        AuditLog audit = new AuditLog(server.auditLog().orElseThrow());
        String name = "one-informer-" + Long.toString(System.nanoTime() % 100000, 36);
        String user = Identities.user(name);
        Instant began = Instant.now();
        try (QkcmProcess qkcm = QkcmProcess.java(name, Map.of("HOSTNAME", name),
                List.of("--kubeconfig=" + new Identities(server).kubeconfigFor(name), "--controllers=*",
                        "--leader-elect=false", "--secure-port=0"))) {
            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
                assertThat(qkcm.alive()).as("qkcm runs; stdout:%n%s", QkcmProcess.tail(qkcm.stdout())).isTrue();
                assertThat(qkcm.stdout()).contains("Started ").contains(" controllers: ");
            });
            // every controller's Operator has started (its caches synced) when its workers log
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(qkcm.stdout())
                    .contains("Starting replicaset-controller with").contains("Starting deployment-controller with"));

            // the garbage collector starts its metadata informers after its discovery: wait for their watches
            await().atMost(Duration.ofSeconds(60)).until(() -> audit.started().stream().anyMatch(e -> e.user().equals(user)
                    && e.verb().equals("watch") && e.userAgent().endsWith(GC) && !e.time().isBefore(began)));
            List<AuditLog.Entry> lists = audit.entries(e -> e.user().equals(user) && e.verb().equals("list")
                    && !e.time().isBefore(began));
            List<AuditLog.Entry> watches = audit.started().stream()
                    .filter(e -> e.user().equals(user) && e.verb().equals("watch") && !e.time().isBefore(began))
                    .toList();

            // typed informers: only the shared-informers client lists and watches
            assertThat(lists.stream().filter(e -> !e.userAgent().endsWith(GC)))
                    .as("lists by a client other than the shared informers'")
                    .allSatisfy(e -> assertThat(e.userAgent()).endsWith(SHARED));
            assertThat(watches.stream().filter(e -> !e.userAgent().endsWith(GC)))
                    .as("watches by a client other than the shared informers'")
                    .allSatisfy(e -> assertThat(e.userAgent()).endsWith(SHARED));

            Map<String, Long> watchesPerType = perResource(watches, SHARED);
            Map<String, Long> listsPerType = perResource(lists, SHARED);
            assertThat(watchesPerType).as("one watch per type").isNotEmpty().allSatisfy((type, n) -> assertThat(n)
                    .as(type).isEqualTo(1L));
            // as upstream's informers in v1.34: a streaming list (one watch with sendInitialEvents), no LIST
            assertThat(listsPerType).as("LISTs by the shared informers").isEmpty();
            assertThat(watches.stream().filter(e -> e.userAgent().endsWith(SHARED)))
                    .allSatisfy(e -> assertThat(e.uri()).contains("sendInitialEvents=true"));
            // what the controllers read, at least: the primaries and secondaries of the JOSDK controllers
            assertThat(watchesPerType.keySet()).contains("pods", "replicasets", "replicationcontrollers",
                    "deployments", "namespaces", "services", "endpoints", "endpointslices", "nodes");

            // the garbage collector's metadata informers: one watch per type too, counted apart
            Map<String, Long> gcWatches = perResource(watches, GC);
            assertThat(gcWatches).isNotEmpty().allSatisfy((type, n) -> assertThat(n).as("gc " + type).isEqualTo(1L));
            assertThat(lists.stream().filter(e -> e.userAgent().endsWith(GC))).as("LISTs by the garbage collector").isEmpty();
        }
    }

    private static Map<String, Long> perResource(List<AuditLog.Entry> entries, String component) {
        return entries.stream().filter(e -> e.userAgent().endsWith(component))
                .collect(Collectors.groupingBy(AuditLog.Entry::resource, TreeMap::new, Collectors.counting()));
    }
}
