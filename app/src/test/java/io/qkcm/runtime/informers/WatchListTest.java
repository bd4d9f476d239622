package io.qkcm.runtime.informers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.lang.reflect.Field;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.internal.AbstractWatchManager;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.impl.ListerWatcher;
import io.qkcm.testing.AuditLog;
import io.qkcm.testing.RealApiServer;

/**
 * Informers start with a streaming list (one WATCH with sendInitialEvents), as client-go's reflector in
 * v1.34, against a real API server whose audit log shows the requests: no LIST, one initial stream,
 * and reconnects that resume from a resourceVersion without a second stream. Also pins the fabric8
 * internals this relies on.
 */
class WatchListTest {

    private static KubernetesClient client(RealApiServer server, String userAgent) {
        Config config = Config.fromKubeconfig(server.kubeconfigYaml());
        config.setUserAgent(userAgent);
        return new KubernetesClientBuilder().withConfig(config).withKubernetesSerialization(io.qkcm.runtime.Json.api())
                .build();
    }

    private static KubernetesClient noWatchReconnects(KubernetesClient client) {
        return client.newClient(new io.fabric8.kubernetes.client.RequestConfigBuilder(client.getConfiguration()
                .getRequestConfig()).withWatchReconnectLimit(0).build()).adapt(KubernetesClient.class);
    }

    private static String namespace(KubernetesClient client, String prefix) {
        String ns = prefix + "-" + Long.toString(System.nanoTime(), 36);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
        return ns;
    }

    private static void configMap(KubernetesClient client, String ns, String name) {
        client.configMaps().inNamespace(ns)
                .resource(new ConfigMapBuilder().withNewMetadata().withName(name).endMetadata().addToData("k", name).build())
                .create();
    }

    private static List<AuditLog.Entry> configMapRequests(RealApiServer server, String userAgent, Instant since) {
        // watches as they start (a watch still open has no ResponseComplete yet), everything else as it completes
        AuditLog audit = new AuditLog(server.auditLog().orElseThrow());
        return java.util.stream.Stream.concat(audit.started().stream().filter(e -> e.verb().equals("watch")),
                        audit.entries().stream().filter(e -> !e.verb().equals("watch")))
                .filter(e -> userAgent.equals(e.userAgent()) && "configmaps".equals(e.resource()) && !e.time().isBefore(since))
                .toList();
    }

    @Test
    void sharedInformerSyncsFromOneStreamAndResumesWithoutAnother() throws Exception {
        RealApiServer server = RealApiServer.audited();
        String ua = "watch-list-test/shared-" + System.nanoTime();
        Instant t0 = Instant.now().minusSeconds(1);
        long streams = WatchListListerWatcher.STREAMS.sum();
        try (KubernetesClient client = client(server, ua)) {
            String ns = namespace(client, "watch-list");
            configMap(client, ns, "a");
            configMap(client, ns, "b");

            SharedInformers informers = new SharedInformers(client, Duration.ofHours(12));
            SharedIndexInformer<ConfigMap> informer = informers.informerFor(ConfigMap.class);
            informers.start();
            try {
                informers.whenSynced(ConfigMap.class).toCompletableFuture().get(30, TimeUnit.SECONDS);
                assertThat(informer.getStore().getByKey(ns + "/a")).isNotNull();
                assertThat(informer.getStore().getByKey(ns + "/b").getData()).containsEntry("k", "b");
                assertThat(WatchListListerWatcher.STREAMS.sum()).isGreaterThan(streams);

                // the stream goes on as the informer's watch
                configMap(client, ns, "c");
                client.configMaps().inNamespace(ns).withName("a").delete();
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    assertThat(informer.getStore().getByKey(ns + "/c")).isNotNull();
                    assertThat(informer.getStore().getByKey(ns + "/a")).isNull();
                });
            } finally {
                informers.stop();
            }
            List<AuditLog.Entry> requests = configMapRequests(server, ua, t0);
            assertThat(requests).filteredOn(e -> e.verb().equals("list")).isEmpty();
            assertThat(requests).filteredOn(e -> e.verb().equals("watch")).singleElement()
                    .satisfies(e -> assertThat(e.uri()).contains("sendInitialEvents=true")
                            .contains("resourceVersionMatch=NotOlderThan").contains("allowWatchBookmarks=true"));
        }
    }

    @Test
    void objectsWrittenBetweenTheBookmarkAndTheWatchAreReplayedAndReconnectsResumeFromAResourceVersion() throws Exception {
        RealApiServer server = RealApiServer.audited();
        String ua = "watch-list-test/handover-" + System.nanoTime();
        Instant t0 = Instant.now().minusSeconds(1);
        try (KubernetesClient client = client(server, ua)) {
            String ns = namespace(client, "watch-list-handover");
            configMap(client, ns, "listed");
            // the informers' ListerWatcher is fabric8's operation object itself (SharedInformers casts it)
            Object operation = client.configMaps().inNamespace(ns);
            assertThat(operation).isInstanceOf(ListerWatcher.class);
            Object streaming = noWatchReconnects(client).configMaps().inNamespace(ns);
            @SuppressWarnings("unchecked")
            WatchListListerWatcher<ConfigMap, KubernetesResourceList<ConfigMap>> lw = new WatchListListerWatcher<>(
                    (ListerWatcher<ConfigMap, KubernetesResourceList<ConfigMap>>) operation,
                    (ListerWatcher<ConfigMap, KubernetesResourceList<ConfigMap>>) streaming);

            ListOptions first = new ListOptions();
            first.setResourceVersion("0");
            KubernetesResourceList<ConfigMap> list = lw.submitList(first).get(30, TimeUnit.SECONDS);
            assertThat(list.getItems()).extracting(c -> c.getMetadata().getName()).containsExactly("listed");
            String listRv = list.getMetadata().getResourceVersion();
            assertThat(listRv).isNotBlank();

            // written after the initial-events-end bookmark, before the watch is asked for
            configMap(client, ns, "between");
            Thread.sleep(500);

            List<String> seen = new CopyOnWriteArrayList<>();
            Watcher<ConfigMap> recorder = new RecordingWatcher<>(seen);
            ListOptions watch = new ListOptions();
            watch.setResourceVersion(listRv);
            AbstractWatchManager<ConfigMap> manager = lw.submitWatch(watch, recorder).get(30, TimeUnit.SECONDS);
            try {
                await().atMost(Duration.ofSeconds(10)).until(() -> seen.contains("ADDED between"));

                // pin: fabric8 keeps (and on reconnect re-sends) the very ListOptions it was given, which
                // is how the stream's options lose sendInitialEvents after the bookmark
                Field options = AbstractWatchManager.class.getDeclaredField("listOptions");
                options.setAccessible(true);
                ListOptions kept = (ListOptions) options.get(manager);
                assertThat(kept.getSendInitialEvents()).isNull();
                assertThat(kept.getResourceVersionMatch()).isNull();

                // fabric8 reconnects by itself when the request ends (as at the watch timeout)
                manager.closeRequest();
                await().atMost(Duration.ofSeconds(10)).until(() -> configMapRequests(server, ua, t0).stream()
                        .filter(e -> e.verb().equals("watch")).count() >= 2);
                configMap(client, ns, "after-reconnect");
                await().atMost(Duration.ofSeconds(30)).until(() -> seen.contains("ADDED after-reconnect"));
                assertThat(seen).containsExactly("ADDED between", "ADDED after-reconnect");
            } finally {
                manager.close();
            }
            List<AuditLog.Entry> watches = configMapRequests(server, ua, t0).stream()
                    .filter(e -> e.verb().equals("watch")).toList();
            assertThat(watches.get(0).uri()).contains("sendInitialEvents=true");
            assertThat(watches.subList(1, watches.size())).allSatisfy(e -> assertThat(e.uri())
                    .doesNotContain("sendInitialEvents").doesNotContain("resourceVersionMatch").contains("resourceVersion="));
            assertThat(configMapRequests(server, ua, t0)).filteredOn(e -> e.verb().equals("list")).isEmpty();
        }
    }

    @Test
    void aStreamThatDropsBeforeItsBookmarkIsClosedNotStreamedAgain() throws Exception {
        // pin: with watchReconnectLimit=0 and a watcher not "reconnecting", fabric8 ends the watch with an
        // exception when its request ends instead of re-sending it (a re-sent stream would add to the first)
        RealApiServer server = RealApiServer.audited();
        String ua = "watch-list-test/drop-" + System.nanoTime();
        Instant t0 = Instant.now().minusSeconds(1);
        try (KubernetesClient client = client(server, ua)) {
            String ns = namespace(client, "watch-list-drop");
            java.util.concurrent.CompletableFuture<WatcherException> closed = new java.util.concurrent.CompletableFuture<>();
            Watcher<ConfigMap> notReconnecting = new Watcher<>() {
                @Override
                public void eventReceived(Action action, ConfigMap resource) {
                }

                @Override
                public void onClose(WatcherException cause) {
                    closed.complete(cause);
                }

                @Override
                public boolean reconnecting() {
                    return false;
                }
            };
            @SuppressWarnings("unchecked")
            ListerWatcher<ConfigMap, KubernetesResourceList<ConfigMap>> streaming =
                    (ListerWatcher<ConfigMap, KubernetesResourceList<ConfigMap>>) (Object) noWatchReconnects(client)
                            .configMaps().inNamespace(ns);
            ListOptions options = new ListOptions();
            options.setSendInitialEvents(true);
            options.setResourceVersionMatch("NotOlderThan");
            options.setAllowWatchBookmarks(true);
            AbstractWatchManager<ConfigMap> manager = streaming.submitWatch(options, notReconnecting).get(30, TimeUnit.SECONDS);
            try {
                manager.closeRequest();
                assertThat(closed.get(30, TimeUnit.SECONDS)).isNotNull();
                Thread.sleep(2000);
            } finally {
                manager.close();
            }
            assertThat(configMapRequests(server, ua, t0)).filteredOn(e -> e.verb().equals("watch")).hasSize(1);
        }
    }

    @Test
    void metadataInformerSyncsFromOneStream() throws Exception {
        RealApiServer server = RealApiServer.audited();
        String ua = "watch-list-test/metadata-" + System.nanoTime();
        Instant t0 = Instant.now().minusSeconds(1);
        long streams = MetadataInformers.STREAMS.sum();
        try (KubernetesClient client = client(server, ua)) {
            String ns = namespace(client, "watch-list-metadata");
            configMap(client, ns, "a");
            MetadataInformers informers = new MetadataInformers(new MetadataClient(client));
            try {
                MetadataInformers.MetadataInformer informer = informers.informerFor(new GroupVersionResource("", "v1", "configmaps"),
                        "ConfigMap");
                informer.start();
                await().atMost(Duration.ofSeconds(30)).until(informer::hasSynced);
                assertThat(informer.get(ns + "/a")).isNotNull();
                assertThat(MetadataInformers.STREAMS.sum()).isGreaterThan(streams);
                configMap(client, ns, "b");
                await().atMost(Duration.ofSeconds(30)).until(() -> informer.get(ns + "/b") != null);
            } finally {
                informers.shutdown();
            }
            List<AuditLog.Entry> requests = configMapRequests(server, ua, t0);
            assertThat(requests).filteredOn(e -> e.verb().equals("list")).isEmpty();
            assertThat(requests).filteredOn(e -> e.verb().equals("watch")).first()
                    .satisfies(e -> assertThat(e.uri()).contains("sendInitialEvents=true"));
        }
    }

    @Test
    void withTheWatchListClientGateOffInformersListThenWatch() throws Exception {
        // what --feature-gates=WatchListClient=false gives the manager's informers and the garbage collector's
        RealApiServer server = RealApiServer.audited();
        String ua = "watch-list-test/gate-off-" + System.nanoTime();
        Instant t0 = Instant.now().minusSeconds(1);
        try (KubernetesClient client = client(server, ua)) {
            String ns = namespace(client, "watch-list-off");
            configMap(client, ns, "a");
            SharedInformers informers = new SharedInformers(client, Duration.ofHours(12), false);
            SharedIndexInformer<ConfigMap> informer = informers.informerFor(ConfigMap.class);
            MetadataInformers metadata = new MetadataInformers(new MetadataClient(client), false);
            try {
                informers.start();
                MetadataInformers.MetadataInformer mi = metadata.informerFor(new GroupVersionResource("", "v1", "configmaps"),
                        "ConfigMap");
                mi.start();
                informers.whenSynced(ConfigMap.class).toCompletableFuture().get(30, TimeUnit.SECONDS);
                await().atMost(Duration.ofSeconds(30)).until(mi::hasSynced);
                assertThat(informer.getStore().getByKey(ns + "/a")).isNotNull();
                assertThat(mi.get(ns + "/a")).isNotNull();
                await().atMost(Duration.ofSeconds(10)).until(() -> configMapRequests(server, ua, t0).stream()
                        .filter(e -> e.verb().equals("watch")).count() == 2);
            } finally {
                informers.stop();
                metadata.shutdown();
            }
            List<AuditLog.Entry> requests = configMapRequests(server, ua, t0);
            assertThat(requests).filteredOn(e -> e.verb().equals("list")).hasSize(2);
            assertThat(requests).allSatisfy(e -> assertThat(e.uri()).doesNotContain("sendInitialEvents"));
        }
    }

    @Test
    void aServerWithoutWatchListIsListedInstead() throws Exception {
        RealApiServer server = RealApiServer.withFlags(List.of("--feature-gates=WatchList=false"));
        long streams = WatchListListerWatcher.STREAMS.sum();
        long metadataStreams = MetadataInformers.STREAMS.sum();
        try (KubernetesClient client = client(server, "watch-list-test/fallback")) {
            String ns = namespace(client, "watch-list-fallback");
            configMap(client, ns, "a");

            SharedInformers informers = new SharedInformers(client, Duration.ofHours(12));
            SharedIndexInformer<ConfigMap> informer = informers.informerFor(ConfigMap.class);
            MetadataInformers metadata = new MetadataInformers(new MetadataClient(client));
            try {
                informers.start();
                MetadataInformers.MetadataInformer mi = metadata.informerFor(new GroupVersionResource("", "v1", "configmaps"),
                        "ConfigMap");
                mi.start();
                informers.whenSynced(ConfigMap.class).toCompletableFuture().get(30, TimeUnit.SECONDS);
                await().atMost(Duration.ofSeconds(30)).until(mi::hasSynced);
                assertThat(informer.getStore().getByKey(ns + "/a")).isNotNull();
                assertThat(mi.get(ns + "/a")).isNotNull();
                configMap(client, ns, "b");
                await().atMost(Duration.ofSeconds(30)).until(() -> informer.getStore().getByKey(ns + "/b") != null
                        && mi.get(ns + "/b") != null);
                // synced by LIST + WATCH: no stream completed
                assertThat(WatchListListerWatcher.STREAMS.sum()).isEqualTo(streams);
                assertThat(MetadataInformers.STREAMS.sum()).isEqualTo(metadataStreams);
            } finally {
                informers.stop();
                metadata.shutdown();
            }
        }
    }
}
