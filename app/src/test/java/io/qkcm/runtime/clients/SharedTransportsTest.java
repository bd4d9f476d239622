package io.qkcm.runtime.clients;

import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;
import io.qkcm.runtime.options.Tuning;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.testing.RealApiServer;
import io.vertx.core.Vertx;

/**
 * The manager's clients share one HTTP/2 connection per TLS configuration, as client-go's do:
 * concurrent requests and watches of several controllers' clients are streams over it.
 */
class SharedTransportsTest {

    private static RealApiServer server;
    private static Vertx vertx;

    @BeforeAll
    static void start() {
        server = RealApiServer.get();
        vertx = Vertx.vertx();
    }

    @AfterAll
    static void stop() {
        vertx.close();
    }

    private static KubeClients clients() {
        Map<String, String> config = Map.of("qkcm.kubeconfig", server.kubeconfig().toString());
        return new KubeClients(new ControllerManagerOptions(Flags.upstream(), name -> Optional.ofNullable(config.get(name))),
                new SimpleMeterRegistry(), vertx);
    }

    /** The manager's clients (HTTP/1.1 by default) share one pool: connections are bounded by concurrency, not by clients. */
    @Test
    void clientsShareOnePool() throws Exception {
        try (KubeClients clients = clients()) {
            exercise(List.of(clients.forComponent("shared-informers"), clients.forComponent("leader-election"),
                    clients.forController("replicaset-controller"), clients.forController("deployment-controller")));
            assertThat(clients.transports().transports()).isEqualTo(1);
            Map<String, Long> opened = clients.transports().connectionsOpened();
            assertThat(opened).containsOnlyKeys("http/1.1");
            // BoringSSL where netty-tcnative loads (AES-GCM first); with the JDK's TLS, ChaCha20-Poly1305 where
            // the JIT has no C2 (bin/qkcm), AES-GCM where it has (this test's JVM, usually)
            boolean boringSsl = clients.transports().boringSsl();
            assertThat(clients.transports().tlsEnginesUsed()).containsOnlyKeys(boringSsl ? "BoringSSL" : "JDK");
            assertThat(clients.transports().cipherSuitesNegotiated().keySet()).singleElement().satisfies(suite ->
                    assertThat(suite).startsWith(!boringSsl && SharedTransports.preferChaCha20(java.util.Optional.empty(), SharedTransports.jitHasC2()) ? "TLS_CHACHA20_POLY1305" : "TLS_AES_"));
            // a new controller's client reuses the pool's idle connections: no new connection, no handshake
            KubernetesClient late = clients.forController("endpoint-controller");
            for (int i = 0; i < 5; i++) {
                assertThat(late.namespaces().withName("default").get()).isNotNull();
            }
            assertThat(clients.transports().connectionsOpened()).isEqualTo(opened);
            assertThat(clients.transports().transports()).isEqualTo(1);
        }
    }

    /** ChaCha20-Poly1305 suites come first, then every other default suite in the JDK's order. */
    @Test
    void chacha20ComesFirstAndNothingIsDropped() throws Exception {
        javax.net.ssl.SSLContext context = javax.net.ssl.SSLContext.getInstance("TLS");
        context.init(null, null, null);
        List<String> defaults = List.of(context.getDefaultSSLParameters().getCipherSuites());
        assertThat(SharedTransports.cipherSuites(context, false)).as("Netty's defaults").isNull();
        List<String> ordered = SharedTransports.cipherSuites(context, true);
        assertThat(ordered).containsExactlyInAnyOrderElementsOf(defaults);
        assertThat(ordered.get(0)).isEqualTo("TLS_CHACHA20_POLY1305_SHA256");
        int lastChacha = 0;
        for (int i = 0; i < ordered.size(); i++) {
            if (ordered.get(i).contains("CHACHA20")) {
                lastChacha = i;
            }
        }
        assertThat(ordered.subList(lastChacha + 1, ordered.size()))
                .isEqualTo(defaults.stream().filter(s -> !s.contains("CHACHA20")).toList());
    }

    /** ChaCha20-Poly1305 first without C2 (its AES-GCM has no intrinsics), AES-GCM first with it; the property decides. */
    @Test
    void chacha20PreferenceFollowsTheJit() {
        assertThat(SharedTransports.preferChaCha20(java.util.Optional.empty(), false)).isTrue();
        assertThat(SharedTransports.preferChaCha20(java.util.Optional.empty(), true)).isFalse();
        assertThat(SharedTransports.preferChaCha20(java.util.Optional.of(true), true)).isTrue();
        assertThat(SharedTransports.preferChaCha20(java.util.Optional.of(false), false)).isFalse();
    }

    /** With the JDK's TLS, the real API server (Go's TLS) takes the suite the client lists first: ChaCha20-Poly1305 or AES-GCM. */
    @Test
    void apiServerTakesChaCha20WhenOfferedFirst() throws Exception {
        for (boolean chacha : List.of(true, false)) {
            SharedTransports transports = new SharedTransports(vertx, false, chacha, false);
            Config config = transports.prepare(new ConfigBuilder(server.newClient().getConfiguration()).build());
            try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).withHttpClientFactory(transports).build()) {
                assertThat(client.namespaces().withName("default").get()).isNotNull();
            }
            assertThat(transports.cipherSuitesNegotiated().keySet()).singleElement().satisfies(suite ->
                    assertThat(suite).startsWith(chacha ? "TLS_CHACHA20_POLY1305" : "TLS_AES_"));
            assertThat(transports.tlsEnginesUsed()).containsOnlyKeys("JDK");
        }
    }

    /** netty-tcnative ships BoringSSL for this platform: where it is shipped, it must load (else a silent fallback). */
    @Test
    void boringSslLoadsWhereItIsShipped() {
        boolean shipped = System.getProperty("os.name").toLowerCase(java.util.Locale.ROOT).startsWith("linux")
                && List.of("amd64", "x86_64", "aarch64").contains(System.getProperty("os.arch"));
        assumeTrue(shipped, "netty-tcnative is shipped for linux-x86_64 and linux-aarch_64 only");
        assertThat(io.netty.handler.ssl.OpenSsl.unavailabilityCause()).isNull();
        assertThat(BoringSslEngine.enabled(true)).isTrue();
        assertThat(BoringSslEngine.enabled(false)).isFalse();
    }

    /**
     * In BoringSSL, over HTTP/1.1 and over HTTP/2 (ALPN), the API server authenticates the client by the
     * kubeconfig's certificate (a SelfSubjectReview names the certificate's subject), as with the JDK's TLS.
     */
    @Test
    void boringSslAuthenticatesWithTheClientCertificate() throws Exception {
        assumeTrue(BoringSslEngine.enabled(true), "netty-tcnative does not load here");
        for (boolean h2 : List.of(false, true)) {
            for (boolean boringSsl : List.of(true, false)) {
                SharedTransports transports = new SharedTransports(vertx, h2, false, boringSsl);
                Config config = transports.prepare(new ConfigBuilder(server.newClient().getConfiguration()).build());
                String expected = certificateCommonName(config);
                try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).withHttpClientFactory(transports).build()) {
                    assertThat(selfSubjectReviewUser(client)).as("h2=%s boringSsl=%s", h2, boringSsl).isEqualTo(expected);
                }
                assertThat(transports.tlsEnginesUsed()).containsOnlyKeys(boringSsl ? "BoringSSL" : "JDK");
                assertThat(transports.connectionsOpened()).containsOnlyKeys(h2 ? "h2" : "http/1.1");
            }
        }
    }

    /** A server whose certificate is not signed by the kubeconfig's CA is refused, by either TLS engine. */
    @Test
    void serverNotSignedByTheKubeconfigsCaIsRefused() {
        for (boolean boringSsl : engines()) {
            SharedTransports transports = new SharedTransports(vertx, false, false, boringSsl);
            Config config = transports.prepare(new ConfigBuilder(server.newClient().getConfiguration())
                    .withCaCertFile(null).withCaCertData(UNTRUSTED_CA).withRequestRetryBackoffLimit(0).build());
            try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).withHttpClientFactory(transports).build()) {
                assertThatThrownBy(() -> client.namespaces().withName("default").get()).as("boringSsl=%s", boringSsl)
                        .satisfies(e -> assertThat(causes(e)).anyMatch(c -> c instanceof javax.net.ssl.SSLHandshakeException)
                                .anyMatch(c -> String.valueOf(c.getMessage()).contains("PKIX path building failed")));
            }
            assertThat(transports.connectionsOpened()).as("no connection was handed to a request").isEmpty();
        }
    }

    /** A server reached by an address its certificate does not name is refused, by either TLS engine (HTTPS endpoint identification). */
    @Test
    void serverAddressNotInItsCertificateIsRefused() throws Exception {
        java.net.URI master = java.net.URI.create(server.newClient().getConfiguration().getMasterUrl());
        // the whole of 127/8 is loopback: another address of it reaches the same server unless it binds 127.0.0.1 only
        String other = "127.0.0.2";
        boolean reachable;
        try (java.net.Socket socket = new java.net.Socket()) {
            socket.connect(new java.net.InetSocketAddress(other, master.getPort()), 2000);
            reachable = true;
        } catch (java.io.IOException e) {
            reachable = false;
        }
        assumeTrue(reachable, "the API server listens on 127.0.0.1 only");
        for (boolean boringSsl : engines()) {
            SharedTransports transports = new SharedTransports(vertx, false, false, boringSsl);
            Config config = transports.prepare(new ConfigBuilder(server.newClient().getConfiguration())
                    .withMasterUrl("https://" + other + ":" + master.getPort()).withRequestRetryBackoffLimit(0).build());
            try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).withHttpClientFactory(transports).build()) {
                assertThatThrownBy(() -> client.namespaces().withName("default").get()).as("boringSsl=%s", boringSsl)
                        .satisfies(e -> assertThat(causes(e)).anyMatch(c -> c instanceof javax.net.ssl.SSLHandshakeException)
                                .anyMatch(c -> String.valueOf(c.getMessage()).contains("No subject alternative names matching IP address " + other)));
            }
        }
    }

    private static List<Boolean> engines() {
        return BoringSslEngine.enabled(true) ? List.of(true, false) : List.of(false);
    }

    private static List<Throwable> causes(Throwable e) {
        List<Throwable> all = new ArrayList<>();
        for (Throwable c = e; c != null && !all.contains(c); c = c.getCause()) {
            all.add(c);
        }
        return all;
    }

    /** A throwaway self-signed CA (P-256, CN qkcm-test-untrusted-ca) that signed nothing the API server has. */
    private static final String UNTRUSTED_CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJtakNDQVQrZ0F3SUJBZ0lVSWRkNiswejY5ZGtiTzQzazdmVkpUcUpEb3Bvd0NnWUlLb1pJemowRUF3SXcKSVRFZk1CMEdBMVVFQXd3V2NXdGpiUzEwWlhOMExYVnVkSEoxYzNSbFpDMWpZVEFnRncweU5qRXhNall3TVRVeApNVGhhR0E4eU1USTJNVEV3TWpBeE5URXhPRm93SVRFZk1CMEdBMVVFQXd3V2NXdGpiUzEwWlhOMExYVnVkSEoxCmMzUmxaQzFqWVRCWk1CTUdCeXFHU000OUFnRUdDQ3FHU000OUF3RUhBMElBQkc5dEhNQjRtM1NnQ3hseFJBNDkKbisvQ1VMdkFvME82OEZRY1NUZmM5bHpGOXYxSmNTLzlSTFd0cjkzR2U1ZWRBQ0dpdWFMRnZ2aHJVckV0bzl2cgorbm1qVXpCUk1CMEdBMVVkRGdRV0JCU2FjbXRnNzQ4MUtoS3BYa1UwcDAxVGxtZVd6akFmQmdOVkhTTUVHREFXCmdCU2FjbXRnNzQ4MUtoS3BYa1UwcDAxVGxtZVd6akFQQmdOVkhSTUJBZjhFQlRBREFRSC9NQW9HQ0NxR1NNNDkKQkFNQ0Ewa0FNRVlDSVFEQTRtWXhkMXdXbUF0OUlYZjAxemZIQ2JRZXRVQVZiYVFpL3ZyemtyWjR3d0loQU9mcgpNdnBQUGk3YldZQzE5YXRRUnZ0eEtFdkZodWRwYkRzVDJzbmg4L05jCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K";

    /** The common name of the kubeconfig's client certificate: the user name the API server derives from it. */
    private static String certificateCommonName(Config config) throws Exception {
        byte[] pem = config.getClientCertData() != null ? java.util.Base64.getDecoder().decode(config.getClientCertData())
                : java.nio.file.Files.readAllBytes(java.nio.file.Path.of(config.getClientCertFile()));
        java.security.cert.X509Certificate cert = (java.security.cert.X509Certificate) java.security.cert.CertificateFactory
                .getInstance("X.509").generateCertificate(new java.io.ByteArrayInputStream(pem));
        javax.naming.ldap.LdapName name = new javax.naming.ldap.LdapName(cert.getSubjectX500Principal().getName());
        return name.getRdns().stream().filter(r -> r.getType().equalsIgnoreCase("CN")).map(r -> r.getValue().toString())
                .findFirst().orElseThrow();
    }

    /** Who the API server says the client is (authentication.k8s.io/v1 SelfSubjectReview). */
    private static String selfSubjectReviewUser(KubernetesClient client) throws Exception {
        HttpRequest request = client.getHttpClient().newHttpRequestBuilder()
                .uri(client.getMasterUrl() + "apis/authentication.k8s.io/v1/selfsubjectreviews")
                .post("application/json", "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"SelfSubjectReview\"}")
                .build();
        HttpResponse<String> response = client.getHttpClient().sendAsync(request, String.class).get(30, TimeUnit.SECONDS);
        assertThat(response.code()).as(response.body()).isEqualTo(201);
        return new com.fasterxml.jackson.databind.ObjectMapper().readTree(response.body()).at("/status/userInfo/username").asText();
    }

    /** With qkcm.tuning.kube-api-http2=true, requests and watches of several clients are streams of one HTTP/2 connection. */
    @Test
    void http2SharesOneConnectionForRequestsAndWatches() throws Exception {
        SharedTransports transports = new SharedTransports(vertx, true);
        Config base = new ConfigBuilder(server.newClient().getConfiguration()).build();
        List<KubernetesClient> all = new ArrayList<>();
        try {
            for (String agent : List.of("a", "b", "c", "d")) {
                Config config = transports.prepare(new ConfigBuilder(base).withUserAgent("qkcm-test/" + agent).build());
                all.add(new KubernetesClientBuilder().withConfig(config).withHttpClientFactory(transports).build());
            }
            exercise(all);
        } finally {
            all.forEach(KubernetesClient::close);
        }
        assertThat(transports.transports()).isEqualTo(1);
        assertThat(transports.connectionsOpened()).containsExactly(Map.entry("h2", 1L));
    }

    /**
     * With qkcm.tuning.kube-api-http2=requests, every request is a stream of one HTTP/2 connection, and each watch
     * (a WebSocket, or a streaming {@code watch=true} request as the garbage collector's) keeps an HTTP/1.1
     * connection of its own.
     */
    @Test
    void requestsOverHttp2WatchesOverHttp11() throws Exception {
        SharedTransports transports = new SharedTransports(vertx, false, SharedTransports.preferChaCha20(java.util.Optional.empty(), SharedTransports.jitHasC2()),
                BoringSslEngine.enabled(true), true);
        assertThat(transports.watchesApart()).isTrue();
        Config base = new ConfigBuilder(server.newClient().getConfiguration()).build();
        List<KubernetesClient> all = new ArrayList<>();
        try {
            for (String agent : List.of("a", "b", "c", "d")) {
                Config config = transports.prepare(new ConfigBuilder(base).withUserAgent("qkcm-test/" + agent).build());
                assertThat(config.isOnlyHttpWatches()).as("watches stay WebSockets").isFalse();
                all.add(new KubernetesClientBuilder().withConfig(config).withHttpClientFactory(transports).build());
            }
            exercise(all);
        } finally {
            all.forEach(KubernetesClient::close);
        }
        assertThat(transports.transports()).isEqualTo(1);
        // 40 GETs, a create and a delete: one HTTP/2 connection; the 10 streaming watches: 10 HTTP/1.1 ones (the
        // WebSocket's upgraded connection is not reported to Vert.x's connect handler; the watch saw its event)
        assertThat(transports.connectionsOpened()).containsOnly(Map.entry("h2", 1L), Map.entry("http/1.1", 10L));
    }

    /**
     * 40 GETs, 8 at a time, spread over the clients, while 10 streaming watches (as the garbage
     * collector's metadata informers keep) hold connections or streams, and the first client watches
     * a create by the third.
     */
    private static void exercise(List<KubernetesClient> all) throws Exception {
        List<AsyncBody> streams = new ArrayList<>();
        try {
            for (int i = 0; i < 10; i++) {
                KubernetesClient client = all.get(i % all.size());
                HttpRequest request = client.getHttpClient().newHttpRequestBuilder()
                        .uri(client.getMasterUrl() + "api/v1/namespaces?watch=true&timeoutSeconds=60").forStreaming().build();
                HttpResponse<AsyncBody> response = client.getHttpClient()
                        .consumeBytes(request, (buffers, body) -> body.consume()).get(10, TimeUnit.SECONDS);
                assertThat(response.code()).isEqualTo(200);
                response.body().consume();
                streams.add(response.body());
            }
            String namespace = "default";
            String name = "transport-" + System.nanoTime();
            CountDownLatch seen = new CountDownLatch(1);
            try (Watch watch = all.get(0).configMaps().inNamespace(namespace).watch(new Watcher<>() {
                @Override
                public void eventReceived(Action action, ConfigMap resource) {
                    if (resource.getMetadata().getName().equals(name)) {
                        seen.countDown();
                    }
                }

                @Override
                public void onClose(WatcherException cause) {
                }
            })) {
                ExecutorService pool = Executors.newFixedThreadPool(8);
                try {
                    List<Future<?>> requests = new ArrayList<>();
                    for (int i = 0; i < 40; i++) {
                        KubernetesClient client = all.get(i % all.size());
                        requests.add(pool.submit(() -> client.namespaces().withName(namespace).get()));
                    }
                    for (Future<?> f : requests) {
                        assertThat(f.get(30, TimeUnit.SECONDS)).isNotNull();
                    }
                } finally {
                    pool.shutdownNow();
                }
                all.get(2).configMaps().inNamespace(namespace)
                        .resource(new ConfigMapBuilder().withNewMetadata().withName(name).endMetadata().build()).create();
                assertThat(seen.await(30, TimeUnit.SECONDS)).as("the watch over the shared connection saw the create").isTrue();
            } finally {
                all.get(0).configMaps().inNamespace(namespace).withName(name).delete();
            }
        } finally {
            streams.forEach(AsyncBody::cancel);
        }
    }

    @Test
    void http11WhenNotRequested() throws Exception {
        SharedTransports transports = new SharedTransports(vertx, false);
        Config config = transports.prepare(new ConfigBuilder(server.newClient().getConfiguration()).build());
        try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).withHttpClientFactory(transports).build()) {
            assertThat(client.namespaces().withName("default").get()).isNotNull();
        }
        assertThat(transports.connectionsOpened()).containsOnlyKeys("http/1.1");
    }

    @Test
    void http2OnlyWhenTheTuningAsksForIt() {
        for (Tuning.KubeApiHttp2 mode : Tuning.KubeApiHttp2.values()) {
            Tuning defaults = Tuning.defaults();
            Tuning tuning = new Tuning() {
                @Override
                public boolean boringssl() {
                    return false;
                }

                @Override
                public KubeApiHttp2 kubeApiHttp2() {
                    return mode;
                }

                @Override
                public Optional<Boolean> tlsChacha20() {
                    return Optional.of(true);
                }

                @Override
                public boolean virtualThreads() {
                    return defaults.virtualThreads();
                }

                @Override
                public java.time.Duration periodicGc() {
                    return defaults.periodicGc();
                }

                @Override
                public boolean sharedStrings() {
                    return defaults.sharedStrings();
                }

                @Override
                public ProtobufWatch protobufWatch() {
                    return defaults.protobufWatch();
                }
            };
            SharedTransports transports = new SharedTransports(vertx, tuning);
            Config prepared = transports.prepare(new ConfigBuilder(Config.empty()).build());
            assertThat(prepared.isOnlyHttpWatches()).as("%s: watches as HTTP/2 streams", mode)
                    .isEqualTo(mode == Tuning.KubeApiHttp2.TRUE);
            assertThat(transports.watchesApart()).as("%s: watches apart", mode).isEqualTo(mode == Tuning.KubeApiHttp2.REQUESTS);
            assertThat(transports.boringSsl()).isFalse();
        }
    }

    @Test
    void onlyTlsIdentityAndServerSeparateTransports() {
        Config base = new ConfigBuilder(Config.empty()).withMasterUrl("https://10.0.0.1:6443").withCaCertData("Y2E=")
                .withClientCertData("Y2VydA==").withClientKeyData("a2V5").build();
        Config otherAgent = new ConfigBuilder(base).withUserAgent("qkcm/x/replicaset-controller").withOauthToken("t").build();
        Config noClientCert = new ConfigBuilder(base).withClientCertData(null).withClientKeyData(null).build();
        Config otherServer = new ConfigBuilder(base).withMasterUrl("https://10.0.0.2:6443").build();
        assertThat(SharedTransports.transportKey(otherAgent)).isEqualTo(SharedTransports.transportKey(base));
        assertThat(SharedTransports.transportKey(noClientCert)).isNotEqualTo(SharedTransports.transportKey(base));
        assertThat(SharedTransports.transportKey(otherServer)).isNotEqualTo(SharedTransports.transportKey(base));
    }

    /**
     * A transport trusts the kubeconfig's CA alone, as client-go's RootCAs: fabric8 would add it to the
     * JDK's default trust store and trust every public CA in it too. Insecure (trust-all) and CA-less
     * configurations keep fabric8's trust (client-go's system roots when no CA is given).
     */
    @Test
    void aTransportTrustsTheKubeconfigsCaAlone() throws Exception {
        Config config = server.newClient().getConfiguration();
        SharedTransports transports = new SharedTransports(vertx, false, false, false);
        try (KubernetesClient client = new KubernetesClientBuilder().withConfig(new ConfigBuilder(config).build())
                .withHttpClientFactory(transports).build()) {
            java.security.cert.X509Certificate[] issuers = x509(managers(client.getHttpClient(), "trustManagers"))
                    .getAcceptedIssuers();
            byte[] pem = config.getCaCertData() != null ? java.util.Base64.getDecoder().decode(config.getCaCertData())
                    : java.nio.file.Files.readAllBytes(java.nio.file.Path.of(config.getCaCertFile()));
            java.security.cert.Certificate ca = java.security.cert.CertificateFactory.getInstance("X.509")
                    .generateCertificate(new java.io.ByteArrayInputStream(pem));
            assertThat(issuers).containsExactly((java.security.cert.X509Certificate) ca);
            assertThat(client.namespaces().withName("default").get()).as("the API server is trusted").isNotNull();
        }
        Config insecure = new ConfigBuilder(Config.empty()).withMasterUrl("https://10.0.0.1:6443").withTrustCerts(true).build();
        assertThat(x509(SharedTransports.trustManagers(insecure)).getAcceptedIssuers()).as("trust-all").isEmpty();
        Config noCa = new ConfigBuilder(Config.empty()).withMasterUrl("https://10.0.0.1:6443").build();
        assertThat(x509(SharedTransports.trustManagers(noCa)).getAcceptedIssuers()).as("the JDK's roots").hasSizeGreaterThan(20);
        Config notACertificate = new ConfigBuilder(noCa).withCaCertData(java.util.Base64.getEncoder()
                .encodeToString("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n".getBytes())).build();
        assertThatThrownBy(() -> SharedTransports.trustManagers(notACertificate)).isInstanceOf(java.security.GeneralSecurityException.class);
    }

    /**
     * Clients derived from a shared transport use its TLS material: building one reads no key or trust
     * store (fabric8 would make both again for every client; before the first write qkcm builds one
     * client per component). Pins fabric8's StandardHttpClient.builder and StandardHttpClientBuilder's
     * manager fields, read by reflection.
     */
    @Test
    void derivedClientsReuseTheTransportsTlsMaterial() throws Exception {
        try (KubeClients clients = clients()) {
            KubernetesClient first = clients.forComponent("shared-informers");
            KubernetesClient second = clients.forComponent("leader-election");
            assertThat(clients.transports().transports()).isEqualTo(1);
            assertThat(managers(second.getHttpClient(), "trustManagers")).isSameAs(managers(first.getHttpClient(), "trustManagers"));
            assertThat(managers(second.getHttpClient(), "keyManagers")).isNotNull()
                    .isSameAs(managers(first.getHttpClient(), "keyManagers"));
            assertThat(second.getConfiguration().getUserAgent()).endsWith("/leader-election");
            assertThat(second.namespaces().withName("default").get()).isNotNull();
        }
    }

    /** The transport's clients and the derived ones refresh credentials at most once a minute (TokenRefreshOncePerMinute). */
    @Test
    void everyClientRefreshesItsTokenAtMostOnceAMinute() throws Exception {
        try (KubeClients clients = clients()) {
            for (String component : new String[] {"shared-informers", "leader-election"}) {
                var builder = builderOf(clients.forComponent(component).getHttpClient());
                assertThat(builder.getInterceptors().get(io.fabric8.kubernetes.client.utils.TokenRefreshInterceptor.NAME))
                        .as(component).isInstanceOf(TokenRefreshOncePerMinute.class);
            }
        }
    }

    /** fabric8's StandardHttpClient keeps the builder it was built from (read by reflection: pinned here). */
    private static io.fabric8.kubernetes.client.http.StandardHttpClientBuilder<?, ?, ?> builderOf(
            io.fabric8.kubernetes.client.http.HttpClient client) throws Exception {
        java.lang.reflect.Field builderField = io.fabric8.kubernetes.client.http.StandardHttpClient.class.getDeclaredField("builder");
        builderField.setAccessible(true);
        return (io.fabric8.kubernetes.client.http.StandardHttpClientBuilder<?, ?, ?>) builderField.get(client);
    }

    private static Object[] managers(io.fabric8.kubernetes.client.http.HttpClient client, String field) throws Exception {
        Object builder = builderOf(client);
        java.lang.reflect.Field managers = io.fabric8.kubernetes.client.http.StandardHttpClientBuilder.class.getDeclaredField(field);
        managers.setAccessible(true);
        return (Object[]) managers.get(builder);
    }

    private static javax.net.ssl.X509TrustManager x509(Object[] managers) {
        return java.util.Arrays.stream(managers).filter(m -> m instanceof javax.net.ssl.X509TrustManager)
                .map(m -> (javax.net.ssl.X509TrustManager) m).findFirst().orElseThrow();
    }
}
