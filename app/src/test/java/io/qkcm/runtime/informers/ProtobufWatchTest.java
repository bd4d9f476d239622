package io.qkcm.runtime.informers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import com.sun.net.httpserver.HttpServer;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.internal.AbstractWatchManager;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.impl.ListerWatcher;
import io.qkcm.runtime.Json;
import io.qkcm.runtime.protobuf.KubernetesProtobuf;
import io.qkcm.runtime.protobuf.ProtobufWire;
import io.qkcm.testing.AuditLog;
import io.qkcm.testing.RealApiServer;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;

/**
 * Informers read built-in kinds in protobuf, as kube-controller-manager's (--kube-api-content-type): against a
 * real API server the caches hold what a JSON read gives, through the streaming list, a LIST and a watch's
 * reconnects (ours, the server's) and its 410 Gone, over both watch transports (WebSocket, streaming GET); an
 * event this build cannot decode makes the kind JSON and loses no event; the JSON content type turns it off.
 * Also pins the fabric8 internals the protobuf watches reach.
 */
class ProtobufWatchTest {

    @BeforeEach
    @AfterEach
    void protobufAgain() {
        ProtobufWire.reset();
    }

    private static KubernetesClient client(RealApiServer server, String userAgent) {
        return client(server, userAgent, null);
    }

    private static KubernetesClient client(RealApiServer server, String userAgent, Integer watchReconnectIntervalMillis) {
        Config config = Config.fromKubeconfig(server.kubeconfigYaml());
        config.setUserAgent(userAgent);
        if (watchReconnectIntervalMillis != null) {
            config.setWatchReconnectInterval(watchReconnectIntervalMillis);
        }
        return new KubernetesClientBuilder().withConfig(config).withKubernetesSerialization(Json.api()).build();
    }

    private static String namespace(KubernetesClient client, String prefix) {
        String ns = prefix + "-" + Long.toString(System.nanoTime(), 36);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
        return ns;
    }

    private static Pod pod(String ns, String name) {
        return new PodBuilder().withNewMetadata().withName(name).withNamespace(ns).addToLabels("app", "p")
                .addToAnnotations("a", "b").endMetadata()
                .withNewSpec().addNewContainer().withName("c").withImage("registry.k8s.io/pause:3.10")
                .withNewResources().addToRequests("cpu", new io.fabric8.kubernetes.api.model.Quantity("100m")).endResources()
                .endContainer().withTerminationGracePeriodSeconds(0L).endSpec().build();
    }

    /** An object as a cache holds it: without managedFields. */
    private static String forCache(Object o) {
        io.fabric8.kubernetes.api.model.HasMetadata copy = (io.fabric8.kubernetes.api.model.HasMetadata) Json.api()
                .unmarshal(Json.api().asJson(o), o.getClass());
        copy.getMetadata().setManagedFields(null);
        return Json.api().asJson(copy);
    }

    @Test
    void fabric8InternalsTheWatchReachesAreThere() {
        // eventReceived, updateResourceVersion, watchEnded, resetReconnectAttempts, isForceClosed, onStatus,
        // cannotReconnect, reconnect, latestRequestState and WatchRequestState's started, closed, ended and
        // reconnected: a fabric8 without them would make every watch JSON
        assertThat(ProtobufWatchEvents.AVAILABLE).isTrue();
    }

    @ParameterizedTest(name = "over a WebSocket: {0}")
    @ValueSource(booleans = { true, false })
    void sharedInformersCacheWhatJsonReadsAndFollowUpdatesAndDeletes(boolean webSocket) throws Exception {
        ProtobufWire.watchesOverWebSocket(webSocket);
        RealApiServer server = RealApiServer.get();
        try (KubernetesClient client = client(server, "protobuf-watch-test/informer")) {
            String ns = namespace(client, "protobuf-informer");
            client.pods().inNamespace(ns).resource(pod(ns, "listed")).create();
            configMap(client, ns, "listed");
            long decoded = ProtobufWatchEvents.DECODED.sum();
            long messages = ProtobufWebSocketWatchManager.MESSAGES.sum();
            long frames = ProtobufWatchManager.FRAMES.sum();

            SharedInformers informers = new SharedInformers(client, Duration.ofHours(12));
            SharedIndexInformer<Pod> informer = informers.informerFor(Pod.class);
            SharedIndexInformer<ConfigMap> configMaps = informers.informerFor(ConfigMap.class);
            SharedIndexInformer<Service> services = informers.informerFor(Service.class);
            informers.start();
            try {
                informers.whenSynced(Pod.class).toCompletableFuture().get(30, TimeUnit.SECONDS);
                informers.whenSynced(ConfigMap.class).toCompletableFuture().get(30, TimeUnit.SECONDS);
                informers.whenSynced(Service.class).toCompletableFuture().get(30, TimeUnit.SECONDS);
                // the streaming lists' initial events came in protobuf, over the transport chosen
                assertThat(ProtobufWatchEvents.DECODED.sum()).isGreaterThan(decoded);
                if (webSocket) {
                    assertThat(ProtobufWebSocketWatchManager.MESSAGES.sum()).isGreaterThan(messages);
                    assertThat(ProtobufWatchManager.FRAMES.sum()).isEqualTo(frames);
                } else {
                    assertThat(ProtobufWatchManager.FRAMES.sum()).isGreaterThan(frames);
                    assertThat(ProtobufWebSocketWatchManager.MESSAGES.sum()).isEqualTo(messages);
                }
                Pod listed = client.pods().inNamespace(ns).withName("listed").get();
                assertThat(forCache(informer.getStore().getByKey(ns + "/listed"))).isEqualTo(forCache(listed));
                assertThat(forCache(configMaps.getStore().getByKey(ns + "/listed")))
                        .isEqualTo(forCache(client.configMaps().inNamespace(ns).withName("listed").get()));

                client.pods().inNamespace(ns).resource(pod(ns, "watched")).create();
                Pod updated = client.pods().inNamespace(ns).withName("watched")
                        .edit(p -> new PodBuilder(p).editMetadata().addToLabels("round", "2").endMetadata().build());
                client.pods().inNamespace(ns).withName("listed").withGracePeriod(0).delete();
                client.configMaps().inNamespace(ns).withName("listed").delete();
                Service service = client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata()
                        .withName("s").endMetadata().withNewSpec().addNewPort().withPort(80).endPort().endSpec().build())
                        .create();
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    assertThat(informer.getStore().getByKey(ns + "/listed")).isNull();
                    Pod cached = informer.getStore().getByKey(ns + "/watched");
                    assertThat(cached).isNotNull();
                    assertThat(forCache(cached)).isEqualTo(forCache(updated));
                    assertThat(configMaps.getStore().getByKey(ns + "/listed")).isNull();
                    assertThat(services.getStore().getByKey(ns + "/s")).isNotNull();
                });
                assertThat(forCache(services.getStore().getByKey(ns + "/s"))).isEqualTo(forCache(service));
                assertThat(informer.getStore().getByKey(ns + "/watched").getMetadata().getManagedFields()).isNullOrEmpty();
            } finally {
                informers.stop();
            }
        }
    }

    @Test
    void withTheWatchListGateOffTheListIsProtobufToo() throws Exception {
        RealApiServer server = RealApiServer.get();
        try (KubernetesClient client = client(server, "protobuf-watch-test/list")) {
            String ns = namespace(client, "protobuf-list");
            client.configMaps().inNamespace(ns)
                    .resource(new ConfigMapBuilder().withNewMetadata().withName("a").endMetadata().addToData("k", "v").build())
                    .create();
            long lists = ProtobufListerWatcher.LISTS.sum();
            long decoded = ProtobufWatchEvents.DECODED.sum();
            SharedInformers informers = new SharedInformers(client, Duration.ofHours(12), false);
            SharedIndexInformer<ConfigMap> informer = informers.informerFor(ConfigMap.class);
            informers.start();
            try {
                informers.whenSynced(ConfigMap.class).toCompletableFuture().get(30, TimeUnit.SECONDS);
                assertThat(ProtobufListerWatcher.LISTS.sum()).isGreaterThan(lists);
                assertThat(informer.getStore().getByKey(ns + "/a").getData()).containsEntry("k", "v");
                client.configMaps().inNamespace(ns)
                        .resource(new ConfigMapBuilder().withNewMetadata().withName("b").endMetadata().build()).create();
                await().atMost(Duration.ofSeconds(30)).until(() -> informer.getStore().getByKey(ns + "/b") != null);
                assertThat(ProtobufWatchEvents.DECODED.sum()).isGreaterThan(decoded);
            } finally {
                informers.stop();
            }
        }
    }

    @ParameterizedTest(name = "over a WebSocket: {0}")
    @ValueSource(booleans = { true, false })
    void aWatchReconnectsFromItsLastResourceVersionInProtobuf(boolean webSocket) throws Exception {
        ProtobufWire.watchesOverWebSocket(webSocket);
        RealApiServer server = RealApiServer.audited();
        String ua = "protobuf-watch-test/reconnect-" + System.nanoTime();
        Instant t0 = Instant.now().minusSeconds(1);
        try (KubernetesClient client = client(server, ua)) {
            String ns = namespace(client, "protobuf-reconnect");
            ProtobufListerWatcher<ConfigMap, KubernetesResourceList<ConfigMap>> lw = configMaps(client, ns);
            String rv = lw.submitList(new ListOptions()).get(30, TimeUnit.SECONDS).getMetadata().getResourceVersion();
            List<String> seen = new CopyOnWriteArrayList<>();
            ListOptions options = new ListOptions();
            options.setResourceVersion(rv);
            AbstractWatchManager<ConfigMap> manager = lw.submitWatch(options, recorder(seen)).get(30, TimeUnit.SECONDS);
            assertThat(manager).isInstanceOf(webSocket ? ProtobufWebSocketWatchManager.class : ProtobufWatchManager.class);
            try {
                configMap(client, ns, "before");
                await().atMost(Duration.ofSeconds(10)).until(() -> seen.contains("ADDED before"));
                // as the Reflector's periodic close: fabric8 reconnects by itself
                manager.closeRequest();
                await().atMost(Duration.ofSeconds(10)).until(() -> watches(server, ua, t0).size() >= 2);
                configMap(client, ns, "after");
                await().atMost(Duration.ofSeconds(30)).until(() -> seen.contains("ADDED after"));
                assertThat(seen).containsExactly("ADDED before", "ADDED after");
            } finally {
                manager.close();
            }
            List<AuditLog.Entry> watches = watches(server, ua, t0);
            assertThat(watches.get(1).uri()).contains("resourceVersion=").doesNotContain("resourceVersion=" + rv + "&");
        }
    }

    /**
     * The API server ends each watch after timeoutSeconds: the watch goes on from the last event, losing none, and
     * at once, as client-go's reflector after a clean end (a watcher dropped mid-burst in the benchmark too).
     * fabric8 would wait its reconnect interval, a minute on this client: the third watch within seconds shows it
     * did not.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = { "websocket", "stream", "json" })
    void aWatchTheServerEndsCleanlyIsOpenedAgainAtOnce(String transport) throws Exception {
        boolean webSocket = transport.equals("websocket");
        ProtobufWire.watchesOverWebSocket(webSocket);
        if (transport.equals("json")) {
            // JSON lines over the same streaming GET (fabric8's own JSON watches wait their reconnect interval)
            ProtobufWire.contentType("application/json");
        }
        long jsonLines = ProtobufWatchManager.JSON_LINES.sum();
        RealApiServer server = RealApiServer.audited();
        String ua = "protobuf-watch-test/rewatch-" + System.nanoTime();
        Instant t0 = Instant.now().minusSeconds(1);
        try (KubernetesClient client = client(server, ua, 60_000)) {
            String ns = namespace(client, "protobuf-rewatch");
            ProtobufListerWatcher<ConfigMap, KubernetesResourceList<ConfigMap>> lw = configMaps(client, ns);
            String rv = lw.submitList(new ListOptions()).get(30, TimeUnit.SECONDS).getMetadata().getResourceVersion();
            List<String> seen = new CopyOnWriteArrayList<>();
            ListOptions options = new ListOptions();
            options.setResourceVersion(rv);
            options.setTimeoutSeconds(1L);
            long rewatches = ProtobufWatchEvents.REWATCHES.sum();
            long messages = ProtobufWebSocketWatchManager.MESSAGES.sum();
            AbstractWatchManager<ConfigMap> manager = lw.submitWatch(options, recorder(seen)).get(30, TimeUnit.SECONDS);
            try {
                configMap(client, ns, "first");
                await().atMost(Duration.ofSeconds(10)).until(() -> seen.contains("ADDED first"));
                await().atMost(Duration.ofSeconds(20)).until(() -> watches(server, ua, t0).size() >= 3);
                configMap(client, ns, "second");
                await().atMost(Duration.ofSeconds(10)).until(() -> seen.contains("ADDED second"));
                assertThat(seen).containsExactly("ADDED first", "ADDED second");
            } finally {
                manager.close();
            }
            assertThat(ProtobufWatchEvents.REWATCHES.sum() - rewatches).isGreaterThanOrEqualTo(2);
            assertThat(ProtobufWebSocketWatchManager.MESSAGES.sum() > messages).isEqualTo(webSocket);
            assertThat(ProtobufWatchManager.JSON_LINES.sum() > jsonLines).isEqualTo(transport.equals("json"));
            List<AuditLog.Entry> watches = watches(server, ua, t0);
            assertThat(watches).allSatisfy(w -> assertThat(w.uri()).contains("timeoutSeconds=1"));
            assertThat(watches.get(watches.size() - 1).uri()).doesNotContain("resourceVersion=" + rv + "&");
        }
    }

    /**
     * A watch from a resourceVersion the server no longer has: its 410 Gone ERROR event, decoded from protobuf,
     * closes the watch with the error the Reflector relists on. A server of its own, whose watches come from
     * etcd (no watch cache: a fresh one still holds every revision since the start) and whose etcd is compacted
     * every 2 s.
     */
    @ParameterizedTest(name = "over a WebSocket: {0}")
    @ValueSource(booleans = { true, false })
    void goneClosesTheWatchForTheReflectorToRelist(boolean webSocket) throws Exception {
        ProtobufWire.watchesOverWebSocket(webSocket);
        RealApiServer server = RealApiServer.withFlags(List.of("--watch-cache=false", "--etcd-compaction-interval=2s"));
        try (KubernetesClient client = client(server, "protobuf-watch-test/gone")) {
            String ns = namespace(client, "protobuf-gone");
            ProtobufListerWatcher<ConfigMap, KubernetesResourceList<ConfigMap>> lw = configMaps(client, ns);
            String first = client.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata()
                    .withName("first").endMetadata().build()).create().getMetadata().getResourceVersion();
            // the compactor compacts to the revision it saw one interval before
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(1)).until(() -> {
                configMap(client, ns, "c-" + System.nanoTime());
                return compacted(lw, first);
            });
            CompletableFuture<WatcherException> closed = new CompletableFuture<>();
            List<String> seen = new CopyOnWriteArrayList<>();
            ListOptions options = new ListOptions();
            options.setResourceVersion(first);
            long decoded = ProtobufWatchEvents.DECODED.sum();
            long messages = ProtobufWebSocketWatchManager.MESSAGES.sum();
            AbstractWatchManager<ConfigMap> manager = lw.submitWatch(options, new Watcher<>() {
                @Override
                public void eventReceived(Action action, ConfigMap resource) {
                    seen.add(action + " " + resource.getMetadata().getName());
                }

                @Override
                public void onClose(WatcherException cause) {
                    closed.complete(cause);
                }

                @Override
                public boolean reconnecting() {
                    return true;
                }
            }).get(30, TimeUnit.SECONDS);
            try {
                WatcherException cause = closed.get(30, TimeUnit.SECONDS);
                assertThat(cause.isHttpGone()).as("%s", cause).isTrue();
                assertThat(seen).isEmpty();
                // the ERROR event came in protobuf, over the transport chosen
                assertThat(ProtobufWatchEvents.DECODED.sum()).isGreaterThan(decoded);
                assertThat(ProtobufWebSocketWatchManager.MESSAGES.sum() > messages).isEqualTo(webSocket);
                // the request ends (a WebSocket once the server has answered the close)
                await().atMost(Duration.ofSeconds(10)).until(() -> !manager.isWatching());
            } finally {
                manager.close();
            }
        }
    }

    /** Whether a JSON watch from {@code rv} is refused as expired. */
    private static boolean compacted(ProtobufListerWatcher<ConfigMap, KubernetesResourceList<ConfigMap>> lw, String rv)
            throws Exception {
        CompletableFuture<Boolean> gone = new CompletableFuture<>();
        ListOptions options = new ListOptions();
        options.setResourceVersion(rv);
        options.setTimeoutSeconds(1L);
        ProtobufWire.contentType("application/json");
        AbstractWatchManager<ConfigMap> probe;
        try {
            probe = lw.submitWatch(options, new Watcher<>() {
                @Override
                public void eventReceived(Action action, ConfigMap resource) {
                    gone.complete(false);
                }

                @Override
                public void onClose(WatcherException cause) {
                    gone.complete(cause.isHttpGone());
                }
            }).get(30, TimeUnit.SECONDS);
        } finally {
            ProtobufWire.contentType(KubernetesProtobuf.MEDIA_TYPE);
        }
        try {
            return gone.get(5, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            return false;
        } finally {
            probe.close();
        }
    }

    @SuppressWarnings("unchecked")
    private static ProtobufListerWatcher<ConfigMap, KubernetesResourceList<ConfigMap>> configMaps(KubernetesClient client, String ns) {
        ListerWatcher<ConfigMap, KubernetesResourceList<ConfigMap>> operation =
                (ListerWatcher<ConfigMap, KubernetesResourceList<ConfigMap>>) (Object) client.configMaps().inNamespace(ns);
        assertThat(ProtobufListerWatcher.applies(operation)).isTrue();
        return new ProtobufListerWatcher<>(operation);
    }

    @Test
    void theJsonContentTypeReadsJson() throws Exception {
        RealApiServer server = RealApiServer.get();
        ProtobufWire.contentType("application/json");
        try (KubernetesClient client = client(server, "protobuf-watch-test/json")) {
            String ns = namespace(client, "protobuf-json");
            configMap(client, ns, "a");
            long decoded = ProtobufWatchEvents.DECODED.sum();
            long lists = ProtobufListerWatcher.LISTS.sum();
            SharedInformers informers = new SharedInformers(client, Duration.ofHours(12));
            SharedIndexInformer<ConfigMap> informer = informers.informerFor(ConfigMap.class);
            informers.start();
            try {
                informers.whenSynced(ConfigMap.class).toCompletableFuture().get(30, TimeUnit.SECONDS);
                long jsonLines = ProtobufWatchManager.JSON_LINES.sum();
                configMap(client, ns, "b");
                await().atMost(Duration.ofSeconds(30)).until(() -> informer.getStore().getByKey(ns + "/b") != null);
                assertThat(informer.getStore().getByKey(ns + "/a")).isNotNull();
                // watched as JSON lines over the streaming GET
                assertThat(ProtobufWatchManager.JSON_LINES.sum()).isGreaterThan(jsonLines);
            } finally {
                informers.stop();
            }
            assertThat(ProtobufWatchEvents.DECODED.sum()).isEqualTo(decoded);
            assertThat(ProtobufListerWatcher.LISTS.sum()).isEqualTo(lists);
        }
    }

    /**
     * A JSON watch over the streaming GET reads lines whose characters (two, three and four bytes in UTF-8) are
     * split across the response's chunks, and the line after them, without an error or a reconnect.
     */
    @Test
    void aJsonWatchReadsCharactersSplitAcrossChunks() throws Exception {
        ProtobufWire.contentType("application/json");
        try (KubernetesClient client = client(RealApiServer.get(), "protobuf-watch-test/json-utf8")) {
            String ns = namespace(client, "protobuf-json-utf8");
            ProtobufListerWatcher<ConfigMap, KubernetesResourceList<ConfigMap>> lw = configMaps(client, ns);
            String rv = lw.submitList(new ListOptions()).get(30, TimeUnit.SECONDS).getMetadata().getResourceVersion();
            List<String> seen = new CopyOnWriteArrayList<>();
            java.util.Map<String, String> data = new java.util.concurrent.ConcurrentHashMap<>();
            ListOptions options = new ListOptions();
            options.setResourceVersion(rv);
            long lines = ProtobufWatchManager.JSON_LINES.sum();
            AbstractWatchManager<ConfigMap> manager = lw.submitWatch(options, new RecordingWatcher<>(seen) {
                @Override
                public void eventReceived(Action action, ConfigMap resource) {
                    super.eventReceived(action, resource);
                    data.put(resource.getMetadata().getName(), resource.getData().get("k"));
                }
            }).get(30, TimeUnit.SECONDS);
            try {
                String text = "grüße € 😀 ".repeat(4000);
                client.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata().withName("b")
                        .endMetadata().addToData("k", text).build()).create();
                configMap(client, ns, "c");
                await().atMost(Duration.ofSeconds(30)).until(() -> seen.size() >= 2);
                assertThat(seen).containsExactly("ADDED b", "ADDED c");
                assertThat(data.get("b")).isEqualTo(text);
                assertThat(ProtobufWatchManager.JSON_LINES.sum() - lines).isGreaterThanOrEqualTo(2);
            } finally {
                manager.close();
            }
        }
    }

    /**
     * A server whose second frame has a field this build does not know (a newer API server): the kind becomes
     * JSON, the watch reconnects in JSON from the last event delivered, and the undecoded event is read there.
     */
    @Test
    void aFrameThatDoesNotDecodeMakesTheKindJsonWithoutLosingTheEvent() throws Exception {
        ProtobufWire.watchesOverWebSocket(false);
        List<String> requests = new CopyOnWriteArrayList<>();
        CountDownLatch done = new CountDownLatch(1);
        HttpServer fake = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        fake.createContext("/", exchange -> {
            String accept = exchange.getRequestHeaders().getFirst("Accept");
            String query = exchange.getRequestURI().getRawQuery();
            requests.add(accept + " " + query);
            if (accept != null && accept.startsWith(KubernetesProtobuf.MEDIA_TYPE)) {
                exchange.getResponseHeaders().add("Content-Type", KubernetesProtobuf.WATCH_MEDIA_TYPE);
                exchange.sendResponseHeaders(200, 0);
                OutputStream out = exchange.getResponseBody();
                out.write(framed(watchEvent("ADDED", configMap("a", "5"), false)));
                out.write(framed(watchEvent("ADDED", configMap("b", "6"), true)));
                out.flush();
                awaitQuietly(done);
                exchange.close();
            } else {
                exchange.getResponseHeaders().add("Content-Type", "application/json");
                exchange.sendResponseHeaders(200, 0);
                OutputStream out = exchange.getResponseBody();
                String line = "{\"type\":\"ADDED\",\"object\":" + Json.api().asJson(configMap("b", "6")) + "}\n";
                out.write(line.getBytes(StandardCharsets.UTF_8));
                out.flush();
                awaitQuietly(done);
                exchange.close();
            }
        });
        fake.setExecutor(java.util.concurrent.Executors.newCachedThreadPool()); // a watch holds its thread
        fake.start();
        Config config = new ConfigBuilder(Config.empty()).withMasterUrl("http://127.0.0.1:" + fake.getAddress().getPort())
                .withWatchReconnectInterval(50).build();
        try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).withKubernetesSerialization(Json.api())
                .build()) {
            @SuppressWarnings("unchecked")
            ListerWatcher<ConfigMap, KubernetesResourceList<ConfigMap>> operation =
                    (ListerWatcher<ConfigMap, KubernetesResourceList<ConfigMap>>) (Object) client.configMaps().inNamespace("ns");
            ProtobufListerWatcher<ConfigMap, KubernetesResourceList<ConfigMap>> lw = new ProtobufListerWatcher<>(operation);
            List<String> seen = new CopyOnWriteArrayList<>();
            ListOptions options = new ListOptions();
            options.setResourceVersion("4");
            AbstractWatchManager<ConfigMap> manager = lw.submitWatch(options, recorder(seen)).get(30, TimeUnit.SECONDS);
            try {
                await().atMost(Duration.ofSeconds(30)).until(() -> seen.contains("ADDED b"));
                assertThat(seen).containsExactly("ADDED a", "ADDED b");
                assertThat(ProtobufWire.whyJson(ConfigMap.class)).contains("meta.v1.WatchEvent");
                assertThat(requests).hasSize(2);
                assertThat(requests.get(0)).startsWith(KubernetesProtobuf.MEDIA_TYPE).contains("resourceVersion=4");
                // the reconnect asks in JSON from the last event delivered
                assertThat(requests.get(1)).startsWith("application/json").contains("resourceVersion=5");
            } finally {
                done.countDown();
                manager.close();
                fake.stop(0);
            }
        }
    }

    /**
     * The same over a WebSocket: the second binary message has a field this build does not know. The kind becomes
     * JSON, the WebSocket is closed and reopened asking for JSON from the last event delivered, and the event is
     * read there, as a text message.
     */
    @Test
    void aWebSocketMessageThatDoesNotDecodeMakesTheKindJsonWithoutLosingTheEvent() throws Exception {
        ProtobufWire.watchesOverWebSocket(true);
        List<String> upgrades = new CopyOnWriteArrayList<>();
        Vertx vertx = Vertx.vertx();
        try {
            // a request handler that upgrades, not webSocketHandler: once a Quarkus application has started in this JVM
            // (an earlier @QuarkusTest), vertx.disableWebsockets is set and Vert.x servers created after it hand
            // upgrades to the request handler only (CI saw the handshake hang for 10 s, then a GET)
            io.vertx.core.http.HttpServer fake = vertx.createHttpServer().requestHandler(req -> req.toWebSocket().onSuccess(ws -> {
                String accept = ws.headers().get("Accept");
                upgrades.add(accept + " " + ws.query() + " origin=" + ws.headers().get("Origin"));
                try {
                    if (accept != null && accept.startsWith(KubernetesProtobuf.MEDIA_TYPE)) {
                        ws.writeBinaryMessage(Buffer.buffer(watchEvent("ADDED", configMap("a", "5"), false)));
                        ws.writeBinaryMessage(Buffer.buffer(watchEvent("ADDED", configMap("b", "6"), true)));
                    } else {
                        ws.writeTextMessage("{\"type\":\"ADDED\",\"object\":" + Json.api().asJson(configMap("b", "6")) + "}");
                    }
                } catch (IOException e) {
                    ws.close();
                }
            })).listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            Config config = new ConfigBuilder(Config.empty()).withMasterUrl("http://127.0.0.1:" + fake.actualPort())
                    .withWatchReconnectInterval(50).build();
            try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config)
                    .withKubernetesSerialization(Json.api()).build()) {
                ProtobufListerWatcher<ConfigMap, KubernetesResourceList<ConfigMap>> lw = configMaps(client, "ns");
                List<String> seen = new CopyOnWriteArrayList<>();
                ListOptions options = new ListOptions();
                options.setResourceVersion("4");
                long messages = ProtobufWebSocketWatchManager.MESSAGES.sum();
                AbstractWatchManager<ConfigMap> manager = lw.submitWatch(options, recorder(seen)).get(30, TimeUnit.SECONDS);
                try {
                    assertThat(manager).isInstanceOf(ProtobufWebSocketWatchManager.class);
                    await().atMost(Duration.ofSeconds(30)).until(() -> seen.contains("ADDED b"));
                    assertThat(seen).containsExactly("ADDED a", "ADDED b");
                    assertThat(ProtobufWebSocketWatchManager.MESSAGES.sum() - messages).isEqualTo(2);
                    assertThat(ProtobufWire.whyJson(ConfigMap.class)).contains("meta.v1.WatchEvent");
                    assertThat(upgrades).hasSize(2);
                    // the API server refuses an upgrade without an Origin (golang.org/x/net/websocket)
                    assertThat(upgrades).allSatisfy(u -> assertThat(u).doesNotContain("origin=null"));
                    assertThat(upgrades.get(0)).startsWith(KubernetesProtobuf.MEDIA_TYPE).contains("resourceVersion=4");
                    // the reconnect asks in JSON from the last event delivered
                    assertThat(upgrades.get(1)).startsWith("application/json").contains("resourceVersion=5");
                    // what submitWatch judged is the first handshake, not the reconnect's: a fast server's first
                    // connection can have ended by the time the caller looks
                    ProtobufWebSocketWatchManager<?, ?> ws = (ProtobufWebSocketWatchManager<?, ?>) manager;
                    assertThat(ws.firstHandshake()).isCompleted().isNotSameAs(ws.getWebsocketFuture());
                    assertThat(ws.firstHandshake().isCompletedExceptionally()).isFalse();
                } finally {
                    manager.close();
                }
            }
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static ConfigMap configMap(String name, String rv) {
        return new ConfigMapBuilder().withNewMetadata().withName(name).withNamespace("ns").withResourceVersion(rv)
                .endMetadata().addToData("k", name).build();
    }

    /** A meta.v1.WatchEvent: type (1), object (2: a RawExtension whose raw (1) is the object's envelope). */
    private static byte[] watchEvent(String type, ConfigMap object, boolean withUnknownField) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(field(1, type.getBytes(StandardCharsets.UTF_8)));
        out.write(field(2, field(1, KubernetesProtobuf.encode(object))));
        if (withUnknownField) {
            out.write(field(9, "newer".getBytes(StandardCharsets.UTF_8)));
        }
        return out.toByteArray();
    }

    private static byte[] field(int number, byte[] value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(number << 3 | 2);
        for (int v = value.length; ; v >>>= 7) {
            if ((v & ~0x7f) == 0) {
                out.write(v);
                break;
            }
            out.write(v & 0x7f | 0x80);
        }
        out.writeBytes(value);
        return out.toByteArray();
    }

    private static byte[] framed(byte[] frame) {
        return ByteBuffer.allocate(4 + frame.length).putInt(frame.length).put(frame).array();
    }

    private static void configMap(KubernetesClient client, String ns, String name) {
        client.configMaps().inNamespace(ns)
                .resource(new ConfigMapBuilder().withNewMetadata().withName(name).endMetadata().addToData("k", name).build())
                .create();
    }

    private static List<AuditLog.Entry> watches(RealApiServer server, String ua, Instant since) {
        return new AuditLog(server.auditLog().orElseThrow()).started().stream()
                .filter(e -> e.verb().equals("watch") && ua.equals(e.userAgent()) && !e.time().isBefore(since)).toList();
    }

    private static Watcher<ConfigMap> recorder(List<String> seen) {
        return new RecordingWatcher<>(seen);
    }
}
