package io.qkcm.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.AuditLog;
import io.qkcm.testing.Identities;
import io.qkcm.testing.QkcmProcess;
import io.qkcm.testing.RealApiServer;

/**
 * With every implemented controller running, over the whole run (start-up, a Deployment rolled out and
 * deleted with its ReplicaSet and pods collected, a discovery resync of the garbage collector after it),
 * the process never has two watches open on one resource type: every type is watched either by the
 * shared informers (upstream's SharedInformerFactory, which JOSDK's event sources and the garbage
 * collector's monitors run on) or, for the types no controller caches, by the process's metadata
 * informers (upstream's metadatainformer factory, client "metadata-informers"), never by both. A custom
 * resource, which both the garbage collector and the quota controller monitor, is watched once, by the
 * metadata informers. Watches are streaming lists (sendInitialEvents, no LIST). A re-watch after a
 * watch closed is no second watch.
 */
class OneInformerPerTypeIT {

    private static final String SHARED = "/shared-informers";
    private static final String GC = "/generic-garbage-collector";
    private static final String METADATA = "/metadata-informers";
    private static final String CR_GROUP = "oneinformer.qkcm.io";
    /** The API server logs a watch's end (ResponseComplete) a little after the client may have re-watched. */
    private static final Duration CLOSE_SKEW = Duration.ofSeconds(1);

    @Test
    void oneStreamingWatchPerResourceTypeForTheWholeRun() {
        RealApiServer server = RealApiServer.audited();
        AuditLog audit = new AuditLog(server.auditLog().orElseThrow());
        String name = "one-informer-" + Long.toString(System.nanoTime() % 100000, 36);
        String user = Identities.user(name);
        Instant began = Instant.now();
        String plural = "widgets" + Long.toString(System.nanoTime() % 100000, 36);
        try (KubernetesClient client = server.newClient()) {
            // a custom resource type: the garbage collector and the quota controller monitor it
            client.apiextensions().v1().customResourceDefinitions().resource(new CustomResourceDefinitionBuilder()
                    .withNewMetadata().withName(plural + "." + CR_GROUP).endMetadata().withNewSpec().withGroup(CR_GROUP)
                    .withScope("Namespaced").withNewNames().withPlural(plural).withKind("Widget").endNames()
                    .addNewVersion().withName("v1").withServed(true).withStorage(true).withNewSchema()
                    .withNewOpenAPIV3Schema().withType("object").withXKubernetesPreserveUnknownFields(true)
                    .endOpenAPIV3Schema().endSchema().endVersion().endSpec().build()).create();
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                var crd = client.apiextensions().v1().customResourceDefinitions().withName(plural + "." + CR_GROUP).get();
                return crd.getStatus() != null && crd.getStatus().getConditions().stream()
                        .anyMatch(c -> c.getType().equals("Established") && c.getStatus().equals("True"));
            });
            try {
                run(server, audit, name, user, began, plural);
            } finally {
                client.apiextensions().v1().customResourceDefinitions().withName(plural + "." + CR_GROUP).delete();
            }
        }
    }

    private void run(RealApiServer server, AuditLog audit, String name, String user, Instant began, String plural) {
        try (KubernetesClient client = server.newClient();
                QkcmProcess qkcm = QkcmProcess.java(name, Map.of("HOSTNAME", name),
                        List.of("--kubeconfig=" + new Identities(server).kubeconfigFor(name), "--controllers=*",
                                "--leader-elect=false", "--secure-port=0"))) {
            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
                assertThat(qkcm.alive()).as("qkcm runs; stdout:%n%s", QkcmProcess.tail(qkcm.stdout())).isTrue();
                assertThat(qkcm.stdout()).contains("Started ").contains(" controllers: ");
            });
            // every controller's Operator has started (its caches synced) when its workers log
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(qkcm.stdout())
                    .contains("Starting replicaset-controller with").contains("Starting deployment-controller with"));

            // a workload: the controllers create a ReplicaSet and its pods; deleting the Deployment, the
            // garbage collector collects them through its monitors
            String ns = "one-informer-" + Long.toString(System.nanoTime(), 36);
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                    .create();
            client.apps().deployments().inNamespace(ns).resource(new DeploymentBuilder().withNewMetadata().withName("web")
                    .endMetadata().withNewSpec().withReplicas(2).withNewSelector().addToMatchLabels("app", "web")
                    .endSelector().withNewTemplate().withNewMetadata().addToLabels("app", "web").endMetadata()
                    .withNewSpec().addNewContainer().withName("c").withImage("busybox").endContainer().endSpec()
                    .endTemplate().endSpec().build()).create();
            await().atMost(Duration.ofSeconds(60)).until(() -> client.pods().inNamespace(ns).list().getItems().size() == 2
                    && client.apps().replicaSets().inNamespace(ns).list().getItems().size() == 1);
            client.apps().deployments().inNamespace(ns).withName("web")
                    .withPropagationPolicy(DeletionPropagation.BACKGROUND).delete();
            await().atMost(Duration.ofSeconds(90)).until(() -> client.pods().inNamespace(ns).list().getItems().isEmpty()
                    && client.apps().replicaSets().inNamespace(ns).list().getItems().isEmpty());
            Instant collected = Instant.now();
            // a discovery resync of the garbage collector after that (every 30s): its monitors are synced
            // again, which is when a type could be handed to a second informer
            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1)).until(() -> audit.entries(e ->
                    e.user().equals(user) && e.userAgent().endsWith(GC) && e.uri().equals("/apis")
                            && e.time().isAfter(collected)).size() >= 1);
            assertThat(qkcm.alive()).isTrue();

            List<AuditLog.Entry> lists = audit.entries(e -> e.user().equals(user) && e.verb().equals("list")
                    && !e.time().isBefore(began));
            List<AuditLog.Entry> watches = audit.started().stream()
                    .filter(e -> e.user().equals(user) && e.verb().equals("watch") && !e.time().isBefore(began))
                    .toList();
            List<AuditLog.Entry> closed = audit.entries(e -> e.user().equals(user) && e.verb().equals("watch")
                    && !e.time().isBefore(began));

            assertThat(watches).as("watches by a client other than the shared informers' or the metadata informers'")
                    .allSatisfy(e -> assertThat(e.userAgent()).matches(".*(" + SHARED + "|" + METADATA + ")$"));
            Map<String, Long> shared = perResource(watches, SHARED);
            Map<String, Long> metadata = perResource(watches, METADATA);
            // what the controllers read, at least, comes from the shared informers
            assertThat(shared.keySet()).contains("pods", "replicasets", "replicationcontrollers", "deployments",
                    "namespaces", "services", "endpoints", "endpointslices", "nodes");
            assertThat(metadata).as("the metadata informers watch the other types").isNotEmpty();
            assertThat(metadata).as("the custom resource, monitored by the garbage collector and the quota controller")
                    .containsKey(plural);
            assertThat(metadata.keySet()).as("types watched by the metadata informers as well as the shared informers")
                    .doesNotContainAnyElementsOf(shared.keySet());

            // never two watches open on one type at a time, all through the run
            Map<String, Integer> mostOpen = mostOpenAtOnce(watches, closed);
            assertThat(mostOpen).as("most watches open at once per type (watches %s, ended %s)", watches, closed)
                    .isNotEmpty().allSatisfy((type, n) -> assertThat(n).as(type).isEqualTo(1));

            // as upstream's informers in v1.34: a streaming list (one watch with sendInitialEvents), no LIST
            assertThat(lists.stream().filter(e -> e.userAgent().endsWith(SHARED) || e.userAgent().endsWith(METADATA)))
                    .as("LISTs by the informers").isEmpty();
            assertThat(watches.stream().filter(e -> e.uri().contains("sendInitialEvents=true")).map(AuditLog.Entry::resource)
                    .collect(Collectors.toSet())).as("types whose informer started with a streaming list")
                    .containsAll(shared.keySet()).containsAll(metadata.keySet());
        }
    }

    private static Map<String, Long> perResource(List<AuditLog.Entry> entries, String component) {
        return entries.stream().filter(e -> e.userAgent().endsWith(component))
                .collect(Collectors.groupingBy(AuditLog.Entry::resource, TreeMap::new, Collectors.counting()));
    }

    /**
     * Per resource, the most watches open at one time: at each watch's start, the watches started before
     * it less those that ended before it (within {@link #CLOSE_SKEW}: the server logs the end of a
     * watch when it has torn it down, which may come after the client's re-watch).
     */
    static Map<String, Integer> mostOpenAtOnce(List<AuditLog.Entry> started, List<AuditLog.Entry> ended) {
        Map<String, Integer> most = new TreeMap<>();
        Map<String, List<AuditLog.Entry>> startsByType = started.stream()
                .collect(Collectors.groupingBy(AuditLog.Entry::resource));
        for (Map.Entry<String, List<AuditLog.Entry>> e : startsByType.entrySet()) {
            List<AuditLog.Entry> starts = new ArrayList<>(e.getValue());
            starts.sort((a, b) -> a.time().compareTo(b.time()));
            List<AuditLog.Entry> ends = ended.stream().filter(x -> x.resource().equals(e.getKey())).toList();
            int max = 0;
            for (int i = 0; i < starts.size(); i++) {
                Instant at = starts.get(i).time();
                long endedBefore = ends.stream().filter(x -> x.time().isBefore(at.plus(CLOSE_SKEW))).count();
                max = Math.max(max, (int) (i + 1 - endedBefore));
            }
            most.put(e.getKey(), max);
        }
        return most;
    }
}
