package io.qkcm.runtime.clients;

import io.qkcm.runtime.Version;

import io.qkcm.runtime.options.ControllerManagerOptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.impl.KubernetesClientImpl;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.qkcm.runtime.flowcontrol.TokenBucket;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

/**
 * Builds the manager's API clients. As with client-go, each client (one per controller, one for the
 * shared informers, one for leader election) has its own token bucket of {@code --kube-api-qps} /
 * {@code --kube-api-burst}, and a user agent naming qkcm and the component. Clients with the same TLS
 * configuration share one HTTP/2 connection ({@link SharedTransports}), as client-go's do. Requests are
 * counted in upstream's {@code rest_client_*} metrics.
 */
public final class KubeClients implements AutoCloseable {

    private static final double[] LATENCY_BUCKETS = { 0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0 };

    private final ControllerManagerOptions options;
    private final MeterRegistry registry;
    private final SharedTransports transports;
    private final Config base;
    private final List<KubernetesClient> built = new ArrayList<>();
    private KubernetesClient credentialsRoot;

    /** Set once the lease is lost: the clients' {@link WriteFence}s refuse writes from then on. */
    private final AtomicBoolean fenced = new AtomicBoolean();

    /** Shadow mode's write layer, per component: set, every client but leader election's goes through it. */
    private volatile java.util.function.Function<String, Interceptor> shadow;

    public KubeClients(ControllerManagerOptions options, MeterRegistry registry, Vertx vertx) {
        this.options = options;
        this.registry = registry;
        this.transports = new SharedTransports(vertx, options.tuning());
        this.base = baseConfig(options);
    }

    /** The connection settings from --kubeconfig / --master, as upstream resolves them. */
    public static Config baseConfig(ControllerManagerOptions options) {
        Config config;
        String kubeconfig = options.string("kubeconfig");
        if (!kubeconfig.isEmpty()) {
            try {
                Path path = Path.of(kubeconfig);
                config = Kubeconfigs.fromKubeconfig(Files.readString(path), path.toAbsolutePath().toString());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read --kubeconfig " + kubeconfig + ": " + e.getMessage(), e);
            }
        } else if (!options.string("master").isEmpty()) {
            config = new ConfigBuilder(Config.empty()).build();
        } else {
            config = Config.autoConfigure(null);
        }
        if (!options.string("master").isEmpty()) {
            config.setMasterUrl(options.string("master"));
        }
        return config;
    }

    /**
     * Shadow mode: every client built from now on (but leader election's, which holds shadow mode's own
     * Lease) sends its requests through the interceptor {@code writes} makes for its component
     * (runtime.shadow's ShadowWrites: each write a dry run), after the fence and before the metrics.
     */
    public synchronized void shadow(java.util.function.Function<String, Interceptor> writes) {
        if (!built.isEmpty()) {
            throw new IllegalStateException("shadow mode must be set before the first client is built");
        }
        this.shadow = writes;
        // the shadow matcher compares JSON bodies with upstream's: its writes stay JSON
        io.qkcm.runtime.protobuf.ProtobufWire.writesInProtobuf(false);
    }

    /** The shared transports (connection pools) behind the clients. */
    SharedTransports transports() {
        return transports;
    }

    public Config baseConfig() {
        return base;
    }

    /** A client for a process component ("shared-informers", "leader-election", ...), with the manager's credentials. */
    public KubernetesClient forComponent(String component) {
        return build(component, false);
    }

    /**
     * A client for a controller. With {@code --use-service-account-credentials} it authenticates as
     * the ServiceAccount {@code kube-system/<controller>}, as upstream; else with the manager's credentials.
     */
    public KubernetesClient forController(String controller) {
        return build(controller, options.bool("use-service-account-credentials"));
    }

    private synchronized KubernetesClient build(String component, boolean serviceAccount) {
        Config config = new ConfigBuilder(base)
                .withUserAgent("qkcm/" + Version.QKCM + " (linux/amd64) kubernetes/" + Version.KUBERNETES + "/" + component)
                .build();
        if (serviceAccount) {
            if (credentialsRoot == null) {
                credentialsRoot = build("serviceaccount-credentials", false);
            }
            // only the bearer token may identify the controller: drop every other credential
            config.setClientCertData(null);
            config.setClientCertFile(null);
            config.setClientKeyData(null);
            config.setClientKeyFile(null);
            config.setUsername(null);
            config.setPassword(null);
            config.setOauthToken(null);
            config.setOauthTokenProvider(new ServiceAccountCredentials(credentialsRoot, component));
        }
        transports.prepare(config);
        RateScale scale = RateScale.of(component);
        TokenBucket bucket = new TokenBucket(options.kubeApiQps() * scale.qps(), options.kubeApiBurst() * scale.burst());
        HttpClient.Builder http = transports.newBuilder(config);
        http.addOrReplaceInterceptor("qkcm-throttle", new Throttle(bucket, registry))
                // after the throttle: a write that waited for a token past the fence is not sent
                .addOrReplaceInterceptor("qkcm-write-fence", new WriteFence(fenced));
        if (shadow != null && !component.equals("leader-election")) {
            http.addOrReplaceInterceptor("qkcm-shadow", shadow.apply(component));
        }
        http.addOrReplaceInterceptor("qkcm-metrics", new RequestMetrics(registry));
        // KubernetesClientBuilder's build, without the builder: its constructor makes a KubernetesSerialization
        // (an ObjectMapper and its modules) that withKubernetesSerialization then replaces, once per client
        KubernetesClient client = new KubernetesClientImpl(http.build(), config, null, io.qkcm.runtime.Json.api());
        built.add(client);
        return client;
    }

    /**
     * From now on no write leaves the process through any of its clients: called the moment this replica
     * knows it lost the lease, before anything else, so that nothing it still had in hand (a sync in
     * flight, a queued event) reaches the API server while another replica leads. Upstream gets the same
     * by exiting at once ({@code klog.FlushAndExit}); a request already sent cannot be called back.
     */
    public void fenceWrites() {
        fenced.set(true);
    }

    /** Whether {@link #fenceWrites} was called. */
    public boolean writesFenced() {
        return fenced.get();
    }

    @Override
    public synchronized void close() {
        built.forEach(KubernetesClient::close);
        built.clear();
        credentialsRoot = null;
    }

    /**
     * Controllers whose client limits upstream raises above {@code --kube-api-qps/--kube-api-burst}
     * (cmd/kube-controller-manager/app/core.go): the garbage collector's metadata client gets twice
     * the QPS (every deletion is a GET and a DELETE), the namespace controller's clients 20× the QPS
     * and 100× the burst (it deletes everything in a namespace), the storage version migrator's the same
     * (it writes every object of a resource).
     */
    record RateScale(double qps, int burst) {
        static final RateScale NONE = new RateScale(1, 1);

        static RateScale of(String component) {
            return switch (component) {
                case "generic-garbage-collector" -> new RateScale(2, 1);
                case "namespace-controller" -> new RateScale(20, 100);
                // upstream: "svm controller can make a lot of requests during migration, keep it fast"
                case "storage-version-migrator-controller" -> new RateScale(20, 100);
                default -> NONE;
            };
        }
    }

    /** Refuses every request but reads and watches once the lease is lost ({@link #fenceWrites}). */
    static final class WriteFence implements Interceptor {
        private final AtomicBoolean fenced;

        WriteFence(AtomicBoolean fenced) {
            this.fenced = fenced;
        }

        @Override
        public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
            if (fenced.get() && !"GET".equals(request.method()) && !"HEAD".equals(request.method())) {
                throw new io.fabric8.kubernetes.client.KubernetesClientException(
                        "leaderelection lost: " + request.method() + " " + request.uri().getPath() + " not sent");
            }
        }
    }

    /** client-go's client-side throttle: wait for a token before each request. */
    static final class Throttle implements Interceptor {
        private final TokenBucket bucket;
        private final MeterRegistry registry;

        Throttle(TokenBucket bucket, MeterRegistry registry) {
            this.bucket = bucket;
            this.registry = registry;
        }

        @Override
        public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
            long wait = bucket.reserve();
            if (wait <= 0) {
                return;
            }
            Timer.builder("rest.client.rate.limiter.duration")
                    .description("Client side rate limiter latency in seconds. Broken down by verb, and host.")
                    .tags("verb", request.method(), "host", host(request)).serviceLevelObjectives(durations())
                    .register(registry).record(wait, TimeUnit.NANOSECONDS);
            if (Context.isOnEventLoopThread()) {
                return; // never block an event loop; the token is reserved, the debt slows later callers
            }
            try {
                TimeUnit.NANOSECONDS.sleep(wait);
            } catch (InterruptedException e) {
                // the caller is being stopped: fail the request rather than send it unthrottled
                Thread.currentThread().interrupt();
                throw new io.fabric8.kubernetes.client.KubernetesClientException(
                        "request cancelled while waiting for the client rate limiter", e);
            }
        }
    }

    /** {@code rest_client_requests_total{code,host,method}} and {@code rest_client_request_duration_seconds}. */
    static final class RequestMetrics implements Interceptor {
        private final MeterRegistry registry;
        private final Map<java.util.UUID, Long> started = new ConcurrentHashMap<>();

        RequestMetrics(MeterRegistry registry) {
            this.registry = registry;
        }

        /**
         * Called with the final request just before it is sent ({@code before} sees an intermediate
         * request: each interceptor's changes build a new request with a new id).
         */
        @Override
        public io.fabric8.kubernetes.client.http.AsyncBody.Consumer<List<java.nio.ByteBuffer>> consumer(
                io.fabric8.kubernetes.client.http.AsyncBody.Consumer<List<java.nio.ByteBuffer>> consumer,
                HttpRequest request) {
            started.put(request.id(), System.nanoTime());
            return consumer;
        }

        @Override
        public void after(HttpRequest request, HttpResponse<?> response,
                io.fabric8.kubernetes.client.http.AsyncBody.Consumer<List<java.nio.ByteBuffer>> consumer) {
            record(request, Integer.toString(response.code()));
        }

        @Override
        public void afterConnectionFailure(HttpRequest request, Throwable failure) {
            record(request, "<error>");
        }

        private void record(HttpRequest request, String code) {
            String host = host(request);
            Counter.builder("rest.client.requests")
                    .description("Number of HTTP requests, partitioned by status code, method, and host.")
                    .tags("code", code, "method", request.method(), "host", host).register(registry).increment();
            Long start = started.remove(request.id());
            if (start != null) {
                Timer.builder("rest.client.request.duration")
                        .description("Request latency in seconds. Broken down by verb, and host.")
                        .tags("verb", request.method(), "host", host).serviceLevelObjectives(durations())
                        .register(registry).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
            }
        }
    }

    private static String host(HttpRequest request) {
        return request.uri().getHost() + (request.uri().getPort() > 0 ? ":" + request.uri().getPort() : "");
    }

    private static java.time.Duration[] durations() {
        java.time.Duration[] d = new java.time.Duration[LATENCY_BUCKETS.length];
        for (int i = 0; i < d.length; i++) {
            d[i] = java.time.Duration.ofNanos((long) (LATENCY_BUCKETS[i] * 1e9));
        }
        return d;
    }
}
