package io.qkcm.runtime.clients;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.internal.CertUtils;
import io.fabric8.kubernetes.client.internal.SSLUtils;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.StandardHttpClient;
import io.fabric8.kubernetes.client.http.TlsVersion;
import io.fabric8.kubernetes.client.utils.HttpClientUtils;
import io.fabric8.kubernetes.client.utils.TokenRefreshInterceptor;
import io.fabric8.kubernetes.client.vertx.VertxHttpClient;
import io.fabric8.kubernetes.client.vertx.VertxHttpClientBuilder;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.IdentityCipherSuiteFilter;
import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContext;
import io.qkcm.runtime.options.Tuning;
import io.quarkus.runtime.annotations.RegisterForReflection;
import io.vertx.core.Vertx;
import io.vertx.core.http.Http2Settings;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.net.JdkSSLEngineOptions;
import io.vertx.core.net.ProxyOptions;
import io.vertx.core.net.ProxyType;
import io.vertx.core.spi.tls.SslContextFactory;

/**
 * The HTTP transports of the manager's API clients: one transport (connection pool) per distinct TLS
 * configuration, shared by every client that has that configuration, as client-go shares one
 * transport per TLS config.
 * <p>
 * fabric8's Vert.x builder gives each client a pool of its own, so every controller opened its own
 * connections, and each new connection costs a TLS handshake in which the client signs with its
 * private key. A client here differs from the others only in its interceptors (user agent,
 * credentials, throttle, metrics): it is a client <em>derived</em> from the shared transport, which
 * fabric8 builds on the same Vert.x HTTP client.
 * <p>
 * The protocol is HTTP/1.1 with WebSocket watches by default. HTTP/2 (ALPN, every request and watch a
 * stream of one connection, as client-go) is opt-in with {@code qkcm.tuning.kube-api-http2=true}: in the
 * benchmark at 1500 pods, qkcm's busy pod watches ended again and again during bursts over HTTP/2 (one
 * connection, read by one event-loop thread, falls behind; the watch cache drops watchers that do),
 * which HTTP/1.1's per-watch connections do not suffer (bench/results/2026-11-21-transport-checks).
 * {@code qkcm.tuning.kube-api-http2=requests} sends only the requests over HTTP/2 and keeps the watches on
 * HTTP/1.1 ({@link WatchesApart}; opt-in: a slower big ReplicaSet at QPS 1000, bench/results/2026-11-26-startup).
 * <p>
 * Derived clients share the transport's "closed" flag: closing any client closes the transport for
 * all of them, so clients are closed together, by {@link KubeClients#close()}.
 */
@RegisterForReflection(targets = VertxHttpClient.class)
public final class SharedTransports implements HttpClient.Factory {

    private static final Logger LOG = Logger.getLogger(SharedTransports.class);

    /** The JDK's PKCS#12 key-protection iteration count (a system property outranks java.security's). */
    static final String KEY_PBE_ITERATIONS = "keystore.pkcs12.keyPbeIterationCount";

    /**
     * fabric8 (for every API client it builds) and Vert.x (for the serving certificate) put the
     * client's private key into an in-memory PKCS#12 key store, protected with a fixed password, only
     * to hand it to a KeyManagerFactory at once: the JDK derives the protection key with 10,000
     * (JDK 17) PBKDF2 iterations to encrypt the entry and again to decrypt it. Before the first write
     * qkcm built ~10 such stores, which cost ~3.5 s of its ~4 s to the first write (JFR,
     * bench/results/2026-11-25-perf/profile.md). These stores are never written anywhere and hold a key
     * the process has in memory anyway, so the iteration count is 1 unless the user set one. Called
     * before any store is built: by QkcmMain before Quarkus starts, and by the transports' constructor
     * (dev mode and tests, where QkcmMain does not run).
     */
    public static void cheapInMemoryKeyStores() {
        if (System.getProperty(KEY_PBE_ITERATIONS) == null) {
            System.setProperty(KEY_PBE_ITERATIONS, "1");
        }
    }
    private static final int MAX_CONNECTIONS = 8192;
    /** golang.org/x/net/http2's transport defaults: 4 MiB per stream, 1 GiB per connection. */
    private static final int STREAM_WINDOW = 4 << 20;
    private static final int CONNECTION_WINDOW = 1 << 30;

    private final Vertx vertx;
    private final boolean http2;
    private final boolean preferChaCha20;
    private final boolean boringSsl;
    private final boolean watchesApart;
    private final Map<List<Object>, HttpClient> transports = new ConcurrentHashMap<>();
    private final Map<String, Long> connections = new ConcurrentHashMap<>();
    private final Map<String, Long> negotiatedSuites = new ConcurrentHashMap<>();
    private final Map<String, Long> tlsEngines = new ConcurrentHashMap<>();

    /** The transports {@code tuning} asks for: the protocol, the TLS engine, the JDK engine's cipher order. */
    public SharedTransports(Vertx vertx, Tuning tuning) {
        this(vertx, tuning.kubeApiHttp2().http2(), preferChaCha20(tuning.tlsChacha20(), jitHasC2()),
                BoringSslEngine.enabled(tuning.boringssl()), tuning.kubeApiHttp2().watchesApart());
    }

    SharedTransports(Vertx vertx, boolean http2) {
        this(vertx, http2, preferChaCha20(Optional.empty(), jitHasC2()));
    }

    SharedTransports(Vertx vertx, boolean http2, boolean preferChaCha20) {
        this(vertx, http2, preferChaCha20, BoringSslEngine.enabled(true));
    }

    SharedTransports(Vertx vertx, boolean http2, boolean preferChaCha20, boolean boringSsl) {
        this(vertx, http2, preferChaCha20, boringSsl, false);
    }

    /** With {@code watchesApart}, HTTP/2 carries the requests and watches keep HTTP/1.1 connections of their own. */
    SharedTransports(Vertx vertx, boolean http2, boolean preferChaCha20, boolean boringSsl, boolean watchesApart) {
        cheapInMemoryKeyStores();
        this.vertx = Objects.requireNonNull(vertx);
        this.http2 = http2 || watchesApart;
        this.preferChaCha20 = preferChaCha20;
        this.boringSsl = boringSsl;
        this.watchesApart = watchesApart;
    }

    /** Whether requests go over HTTP/2 and watches over HTTP/1.1 ({@link WatchesApart}). */
    public boolean watchesApart() {
        return watchesApart;
    }

    /** Whether the API connections' TLS runs in BoringSSL ({@link BoringSslEngine}) or in the JDK. */
    public boolean boringSsl() {
        return boringSsl;
    }

    /** Adjusts a client configuration to the transport: over HTTP/2, watches are streams, not WebSockets. */
    public Config prepare(Config config) {
        if (http2 && !watchesApart) {
            config.setOnlyHttpWatches(true);
        }
        return config;
    }

    /** A builder of a transport of its own (not shared). */
    @Override
    public HttpClient.Builder newBuilder() {
        return new TransportBuilder(this, vertx, http2, watchesApart);
    }

    /** A builder of a client on the shared transport for {@code config}'s TLS configuration. */
    @Override
    public HttpClient.Builder newBuilder(Config config) {
        HttpClient transport = transports.computeIfAbsent(transportKey(config), key -> {
            HttpClient.Builder own = newBuilder();
            configureTransport(config, own, this);
            return own.build();
        });
        HttpClient.Builder derived = (HttpClient.Builder) ((StandardHttpClient<?, ?, ?>) transport).newBuilder();
        configureDerived(config, derived, this);
        return derived;
    }

    /**
     * fabric8's common configuration of a transport (timeouts, proxy, TLS versions), with client-go's
     * TLS trust: a kubeconfig's certificate authority is the only one trusted, where fabric8 adds it to
     * the JDK's default trust store ({@code cacerts}, ~150 public CAs, read and parsed for every client it
     * builds). Without a CA (and with an explicit trust store, fabric8's own setting) fabric8's trust
     * stays, as client-go's system roots do.
     */
    static void configureTransport(Config config, HttpClient.Builder builder, HttpClient.Factory factory) {
        try {
            KeyManager[] keyManagers = SSLUtils.keyManagers(config);
            TrustManager[] trustManagers = trustManagers(config);
            // fabric8's method computes trust and key managers itself: handed a copy that trusts every
            // certificate and carries no client key, it computes nothing costly, and its managers are
            // replaced at once below, before the builder builds anything
            Config settingsOnly = new ConfigBuilder(config).withTrustCerts(true).withCaCertData(null)
                    .withCaCertFile(null).withClientCertData(null).withClientCertFile(null).withClientKeyData(null)
                    .withClientKeyFile(null).withKeyStoreFile(null).withTrustStoreFile(null).build();
            HttpClientUtils.applyCommonConfiguration(settingsOnly, builder, factory);
            builder.sslContext(keyManagers, trustManagers);
            // the interceptors hold the configuration they were made from (credentials, token refresh)
            interceptors(config, builder, factory);
        } catch (GeneralSecurityException | IOException e) {
            throw KubernetesClientException.launderThrowable(e);
        }
    }

    /** The trust managers of a transport: the kubeconfig's CA alone, as client-go's RootCAs; else fabric8's. */
    static TrustManager[] trustManagers(Config config) throws GeneralSecurityException, IOException {
        boolean hasCa = (config.getCaCertData() != null && !config.getCaCertData().isEmpty())
                || (config.getCaCertFile() != null && !config.getCaCertFile().isEmpty());
        if (config.isTrustCerts() || !hasCa || config.getTrustStoreFile() != null) {
            return SSLUtils.trustManagers(config);
        }
        KeyStore roots = KeyStore.getInstance("PKCS12");
        roots.load(null, null);
        int n = 0;
        try (var pem = CertUtils.getInputStreamFromDataOrFile(config.getCaCertData(), config.getCaCertFile())) {
            for (java.security.cert.Certificate ca : CertificateFactory.getInstance("X.509").generateCertificates(pem)) {
                roots.setCertificateEntry("ca-" + n++, ca);
            }
        }
        if (n == 0) {
            // client-go: "unable to load root certificates: no valid certificate authority data"
            throw new CertificateException("unable to load root certificates: no valid certificate authority data");
        }
        TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(roots);
        return factory.getTrustManagers();
    }

    /**
     * A client derived from a shared transport gets its own request settings and interceptors (user
     * agent, credentials); the TLS settings, timeouts and proxy it copied from the transport, whose
     * connections it uses (fabric8 would build a key store and trust store for each client, never used).
     */
    static void configureDerived(Config config, HttpClient.Builder derived, HttpClient.Factory factory) {
        derived.tag(config.getRequestConfig());
        interceptors(config, derived, factory);
    }

    /** fabric8's interceptors, with its token refresh attempted at most once a minute ({@link TokenRefreshOncePerMinute}). */
    static void interceptors(Config config, HttpClient.Builder builder, HttpClient.Factory factory) {
        HttpClientUtils.createApplicableInterceptors(config, factory).forEach(builder::addOrReplaceInterceptor);
        builder.addOrReplaceInterceptor(TokenRefreshInterceptor.NAME, new TokenRefreshOncePerMinute(config, factory));
    }

    /** How many transports (connection pools) exist. */
    public int transports() {
        return transports.size();
    }

    /** Connections opened so far, by protocol ("h2" or "http/1.1"). */
    public Map<String, Long> connectionsOpened() {
        return Map.copyOf(connections);
    }

    /** TLS connections opened so far, by the TLS implementation that ran them ("BoringSSL" or "JDK"). */
    public Map<String, Long> tlsEnginesUsed() {
        return Map.copyOf(tlsEngines);
    }

    /** Netty's OpenSSL engine has sessions of its own; every other session is the JDK's. */
    static String tlsEngine(javax.net.ssl.SSLSession session) {
        return session instanceof io.netty.handler.ssl.OpenSslSession ? "BoringSSL" : "JDK";
    }

    /** TLS connections opened so far, by the cipher suite the server chose. */
    public Map<String, Long> cipherSuitesNegotiated() {
        return Map.copyOf(negotiatedSuites);
    }

    /**
     * The client's cipher suites, ChaCha20-Poly1305 first, then the SSLContext's defaults in their order;
     * null (Netty's defaults, AES-GCM first) when AES-GCM is preferred.
     * <p>
     * With C1 only ({@code -XX:TieredStopAtLevel=1}, {@code bin/qkcm}'s default) the JDK's AES-GCM runs
     * without its AES-NI and CLMUL intrinsics: 3.0–4.6× the CPU per record of ChaCha20-Poly1305 on this
     * machine (JDK 25, bench/cipher), and TLS record encryption was ~11% of qkcm's CPU under load. With C2 it
     * is the other way round. Go's TLS server (the API server) takes ChaCha20-Poly1305 when the client lists
     * it before AES-GCM.
     */
    static List<String> cipherSuites(SSLContext context, boolean preferChaCha20) {
        if (!preferChaCha20) {
            return null;
        }
        String[] defaults = context.getDefaultSSLParameters().getCipherSuites();
        List<String> ordered = new ArrayList<>(defaults.length);
        for (String suite : defaults) {
            if (suite.contains("CHACHA20")) {
                ordered.add(suite);
            }
        }
        for (String suite : defaults) {
            if (!suite.contains("CHACHA20")) {
                ordered.add(suite);
            }
        }
        return ordered;
    }

    /** {@code qkcm.tuning.tls-chacha20=true|false} decides; unset, ChaCha20-Poly1305 first unless C2 compiles. */
    static boolean preferChaCha20(Optional<Boolean> configured, boolean jitHasC2) {
        return configured.orElse(!jitHasC2);
    }

    /** Whether this JVM's JIT includes C2 (tiered up to level 4, or C2 alone); false where it cannot tell. */
    static boolean jitHasC2() {
        try {
            com.sun.management.HotSpotDiagnosticMXBean hotspot = java.lang.management.ManagementFactory
                    .getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
            boolean tiered = Boolean.parseBoolean(hotspot.getVMOption("TieredCompilation").getValue());
            int stopAt = Integer.parseInt(hotspot.getVMOption("TieredStopAtLevel").getValue());
            return !tiered || stopAt >= 4;
        } catch (RuntimeException | LinkageError e) {
            return false; // a native image or another VM: no JIT to ask
        }
    }

    private void connected(HttpConnection connection) {
        String protocol;
        try {
            // Vert.x names no protocol on a connection, and ALPN may fall back to HTTP/1.1:
            // only HTTP/2 connections have SETTINGS (the probe runs once per connection)
            connection.remoteSettings();
            protocol = H2;
        } catch (UnsupportedOperationException e) {
            protocol = "http/1.1";
        }
        connections.merge(protocol, 1L, Long::sum);
        if (connection.isSsl() && connection.sslSession() != null) {
            negotiatedSuites.merge(connection.sslSession().getCipherSuite(), 1L, Long::sum);
            tlsEngines.merge(tlsEngine(connection.sslSession()), 1L, Long::sum);
        }
        LOG.debugf("API connection opened to %s (%s)", connection.remoteAddress(), protocol);
    }

    /**
     * What makes two configurations need different connections: the server, the TLS identity and
     * trust, and the proxy. Credentials sent in headers (tokens, basic auth) do not.
     */
    static List<Object> transportKey(Config c) {
        List<Object> key = new ArrayList<>();
        key.add(c.getMasterUrl());
        key.add(c.getCaCertFile());
        key.add(c.getCaCertData());
        key.add(c.isTrustCerts());
        key.add(c.isDisableHostnameVerification());
        key.add(c.getClientCertFile());
        key.add(c.getClientCertData());
        key.add(c.getClientKeyFile());
        key.add(c.getClientKeyData());
        key.add(c.getClientKeyAlgo());
        key.add(c.getClientKeyPassphrase());
        key.add(c.getKeyStoreFile());
        key.add(c.getTrustStoreFile());
        key.add(c.getTlsVersions() == null ? null : Arrays.asList(c.getTlsVersions()));
        key.add(c.getHttpProxy());
        key.add(c.getHttpsProxy());
        key.add(c.getNoProxy() == null ? null : Arrays.asList(c.getNoProxy()));
        key.add(c.getConnectionTimeout());
        key.add(c.isHttp2Disable());
        return key;
    }

    /** fabric8's Vert.x transport, with HTTP/2 over ALPN. */
    static final class TransportBuilder extends VertxHttpClientBuilder<SharedTransports> {
        private final Vertx vertx;
        private final boolean http2;
        private final boolean watchesApart;

        TransportBuilder(SharedTransports factory, Vertx vertx, boolean http2, boolean watchesApart) {
            super(factory, vertx);
            this.vertx = vertx;
            this.http2 = http2;
            this.watchesApart = watchesApart;
        }

        @Override
        public VertxHttpClient<SharedTransports> build() {
            if (client != null) {
                return super.build(); // derived: the shared Vert.x client, this builder's interceptors
            }
            HttpClientOptions options = new HttpClientOptions()
                    .setMaxWebSockets(MAX_CONNECTIONS)
                    .setIdleTimeoutUnit(TimeUnit.SECONDS)
                    // the API server does not fragment WebSocket messages: frames can be as large as objects
                    .setMaxWebSocketFrameSize(Integer.MAX_VALUE)
                    .setMaxWebSocketMessageSize(Integer.MAX_VALUE);
            if (connectTimeout != null) {
                options.setConnectTimeout((int) connectTimeout.toMillis());
            }
            if (proxyType != HttpClient.ProxyType.DIRECT && proxyAddress != null) {
                options.setProxyOptions(proxy());
            }
            String[] protocols = tlsVersions == null || tlsVersions.length == 0 ? null
                    : Stream.of(tlsVersions).map(TlsVersion::javaName).toArray(String[]::new);
            if (protocols != null) {
                options.setEnabledSecureTransportProtocols(new HashSet<>(Arrays.asList(protocols)));
            }
            boolean h2 = http2 && !preferHttp11 && sslContext != null;
            // the watches' own HTTP/1.1 client, when they are kept apart: these options without HTTP/2's
            HttpClientOptions watchOptions = h2 && watchesApart
                    ? new HttpClientOptions(options).setProtocolVersion(HttpVersion.HTTP_1_1) : null;
            options.setProtocolVersion(h2 ? HttpVersion.HTTP_2 : HttpVersion.HTTP_1_1);
            if (h2) {
                options.setUseAlpn(true)
                        .setAlpnVersions(List.of(HttpVersion.HTTP_2, HttpVersion.HTTP_1_1))
                        // one connection (the pool's HTTP/2 size), as client-go
                        // Go's HTTP/2 transport windows. With HTTP/2's default 64 KiB per stream, a watch
                        // whose events are being handled stops the server's writes after 64 KiB, and the
                        // API server closes watchers that fall behind: bursts would end watches early.
                        .setInitialSettings(new Http2Settings().setInitialWindowSize(STREAM_WINDOW))
                        .setHttp2ConnectionWindowSize(CONNECTION_WINDOW);
            }
            if (sslContext != null) {
                // both engines' copy() is the engine itself: the two clients share it
                io.vertx.core.net.SSLEngineOptions engine = getClientFactory().boringSsl
                        ? new BoringSslEngine(keyManagers, trustManagers, protocols)
                        : new FixedContextEngine(sslContext, protocols, getClientFactory().preferChaCha20);
                options.setSsl(true).setSslEngineOptions(engine);
                if (watchOptions != null) {
                    watchOptions.setSsl(true).setSslEngineOptions(engine);
                }
            }
            LOG.debugf("API transport: %s", h2 ? (watchOptions != null ? "HTTP/2 (ALPN), watches over HTTP/1.1"
                    : "HTTP/2 (ALPN)") : "HTTP/1.1");
            SharedTransports factory = getClientFactory();
            // the pool sizes must be given here: the builder ignores HttpClientOptions' deprecated ones (5 per host)
            PoolOptions pool = new PoolOptions().setHttp1MaxSize(MAX_CONNECTIONS).setHttp2MaxSize(1);
            io.vertx.core.http.HttpClient transport = vertx.httpClientBuilder().with(options).with(pool)
                    .withConnectHandler(factory::connected).build();
            if (watchOptions != null) {
                transport = new WatchesApart(transport, vertx.httpClientBuilder().with(watchOptions).with(pool)
                        .withConnectHandler(factory::connected).build());
            }
            return newClient(this, transport);
        }

        private ProxyOptions proxy() {
            ProxyOptions proxy = new ProxyOptions().setHost(proxyAddress.getHostName()).setPort(proxyAddress.getPort())
                    .setType(switch (proxyType) {
                        case HTTP -> ProxyType.HTTP;
                        case SOCKS4 -> ProxyType.SOCKS4;
                        case SOCKS5 -> ProxyType.SOCKS5;
                        default -> throw new KubernetesClientException("Unsupported proxy type " + proxyType);
                    });
            String[] userPassword = HttpClientUtils.decodeBasicCredentials(proxyAuthorization);
            if (userPassword != null) {
                proxy.setUsername(userPassword[0]).setPassword(userPassword[1]);
            } else {
                addProxyAuthInterceptor();
            }
            return proxy;
        }
    }

    /**
     * Vert.x engine options over fabric8's SSLContext (it carries the client certificate and the CA),
     * honouring the ALPN protocols Vert.x asks for, which fabric8's own engine options disable.
     */
    static final class FixedContextEngine extends JdkSSLEngineOptions {
        private final SSLContext context;
        private final String[] protocols;
        private final boolean preferChaCha20;

        FixedContextEngine(SSLContext context, String[] protocols, boolean preferChaCha20) {
            this.context = context;
            this.protocols = protocols;
            this.preferChaCha20 = preferChaCha20;
        }

        @Override
        public JdkSSLEngineOptions copy() {
            return this;
        }

        @Override
        public SslContextFactory sslContextFactory() {
            return new AlpnContextFactory() {
                @Override
                SslContext create(ApplicationProtocolConfig alpn) {
                    return new JdkSslContext(context, true, cipherSuites(context, preferChaCha20), IdentityCipherSuiteFilter.INSTANCE, alpn,
                            io.netty.handler.ssl.ClientAuth.NONE, protocols, false);
                }
            };
        }
    }

    /**
     * A client context factory that honours the ALPN protocols Vert.x asks for (HTTP/2 over TLS), which
     * fabric8's own engine options disable; the rest of Vert.x's settings are the engine's.
     */
    abstract static class AlpnContextFactory implements SslContextFactory {
        private boolean alpn;
        private List<String> applicationProtocols = List.of();

        @Override
        public SslContextFactory useAlpn(boolean useAlpn) {
            this.alpn = useAlpn;
            return this;
        }

        @Override
        public SslContextFactory applicationProtocols(List<String> protocols) {
            this.applicationProtocols = protocols == null ? List.of() : List.copyOf(protocols);
            return this;
        }

        @Override
        public SslContext create() throws javax.net.ssl.SSLException {
            return create(alpn && !applicationProtocols.isEmpty()
                    ? new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN,
                            ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                            ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                            applicationProtocols)
                    : ApplicationProtocolConfig.DISABLED);
        }

        abstract SslContext create(ApplicationProtocolConfig alpn) throws javax.net.ssl.SSLException;
    }

    /** ALPN's name for HTTP/2, as {@link #connectionsOpened()} reports it. */
    private static final String H2 = ApplicationProtocolNames.HTTP_2;

    private static final Constructor<?> CLIENT;

    static {
        try {
            // fabric8 keeps this constructor package-private; it is the only way to wrap our own Vert.x client
            CLIENT = VertxHttpClient.class.getDeclaredConstructor(VertxHttpClientBuilder.class, AtomicBoolean.class,
                    io.vertx.core.http.HttpClient.class, boolean.class);
            CLIENT.setAccessible(true);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unchecked")
    private static VertxHttpClient<SharedTransports> newClient(TransportBuilder builder, io.vertx.core.http.HttpClient client) {
        try {
            return (VertxHttpClient<SharedTransports>) CLIENT.newInstance(builder, new AtomicBoolean(), client, false);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot build fabric8's Vert.x HTTP client", e);
        }
    }
}
