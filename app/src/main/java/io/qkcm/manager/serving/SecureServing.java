package io.qkcm.manager.serving;

import io.qkcm.runtime.Version;

import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import javax.net.ssl.SSLPeerUnverifiedException;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.vertx.VertxHttpClientFactory;
import io.micrometer.prometheus.PrometheusMeterRegistry;
import io.qkcm.pki.DistinguishedNames;
import io.qkcm.runtime.clients.Kubeconfigs;
import io.prometheus.client.exporter.common.TextFormat;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.TrustOptions;

/**
 * kube-controller-manager's secure serving: HTTPS on {@code --bind-address:--secure-port} (0 disables it),
 * on the process' Vert.x, with the handler chain of upstream's {@code BuildHandlerChain}: delegated
 * authentication (client certificate or TokenReview, else anonymous), then delegated authorization
 * (system:masters, {@code --authorization-always-allow-paths}, SubjectAccessReview), then the mux:
 * {@code /healthz} (plus {@code /livez}, {@code /readyz}) and {@code /metrics}.
 */
@ApplicationScoped
public class SecureServing {

    private static final Logger LOG = Logger.getLogger(SecureServing.class);

    static final String AUTHENTICATION_CONFIGMAP_NAMESPACE = "kube-system";
    static final String AUTHENTICATION_CONFIGMAP = "extension-apiserver-authentication";
    static final List<String> HEALTH_PATHS = List.of("/healthz", "/livez", "/readyz");

    @Inject
    Vertx vertx;
    @Inject
    Instance<PrometheusMeterRegistry> prometheus;

    private HttpServer server;
    private KubernetesClient authenticationClient;
    private KubernetesClient authorizationClient;
    private DelegatingAuthenticator authenticator;
    private DelegatingAuthorizer authorizer;
    private java.util.function.Function<String, Map<String, BooleanSupplier>> checks;
    private volatile int port;
    private volatile ClientCertificates clientCertificates;
    private volatile io.qkcm.runtime.shadow.ShadowMatcher shadow;

    /** Serves shadow mode's report at /shadow (JSON) and /shadow.html. */
    public void shadow(io.qkcm.runtime.shadow.ShadowMatcher matcher) {
        this.shadow = matcher;
    }

    /**
     * Starts serving unless {@code --secure-port=0}; returns once the port is bound. Fails (as upstream,
     * which then exits) when the certificate, the delegated clients or the listener cannot be set up.
     */
    public synchronized void start(ControllerManagerOptions options,
            java.util.function.Function<String, Map<String, BooleanSupplier>> healthChecks) {
        int securePort = options.integer("secure-port");
        if (securePort == 0) {
            LOG.info("--secure-port=0: not serving /healthz and /metrics");
            return;
        }
        if (securePort < 0 || securePort > 65535) {
            throw new IllegalArgumentException("--secure-port " + securePort + " must be between 0 and 65535, inclusive. 0 for turning off secure port");
        }
        String bindAddress = options.string("bind-address");
        this.checks = healthChecks;
        this.authorizer = null;
        ServingCertificate cert = servingCertificate(options, bindAddress);

        authenticationClient = delegatedClient(options.string("authentication-kubeconfig"), "authentication");
        authorizationClient = delegatedClient(options.string("authorization-kubeconfig"), "authorization");
        authenticator = new DelegatingAuthenticator(authenticationClient,
                options.duration("authentication-token-webhook-cache-ttl"));
        authorizer = new DelegatingAuthorizer(options.list("authorization-always-allow-paths"), authorizationClient,
                options.duration("authorization-webhook-cache-authorized-ttl"),
                options.duration("authorization-webhook-cache-unauthorized-ttl"));
        if (authorizationClient == null) {
            LOG.warn("No authorization-kubeconfig provided, so SubjectAccessReview of authorization tokens won't work.");
        }

        HttpServerOptions serverOptions = new HttpServerOptions().setSsl(true).setCompressionSupported(true)
                .setMaxInitialLineLength(MAX_HEADER_BYTES).setMaxHeaderSize(MAX_HEADER_BYTES)
                .setKeyCertOptions(new PemKeyCertOptions().addCertValue(Buffer.buffer(cert.certificatePem()))
                        .addKeyValue(Buffer.buffer(cert.privateKeyPem())));
        String clientCa = clientCa(options);
        clientCertificates = null;
        if (clientCa != null) {
            // request a certificate, accept any, verify it in authentication (401 when it does not verify)
            clientCertificates = ClientCertificates.fromPem(clientCa);
            serverOptions.setClientAuth(ClientAuth.REQUEST)
                    .setTrustOptions(TrustOptions.wrap(clientCertificates.requestingTrustManager()));
        }
        HttpServer s = vertx.createHttpServer(serverOptions).requestHandler(this::onRequest)
                .invalidRequestHandler(SecureServing::onInvalidRequest);
        String host = bindAddress.startsWith("[") ? bindAddress.substring(1, bindAddress.length() - 1) : bindAddress;
        try {
            server = s.listen(securePort, host).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while binding " + bindAddress + ":" + securePort);
        } catch (Exception e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            closeClients();
            throw new IllegalStateException("failed to listen on " + hostPort(bindAddress, securePort) + ": " + cause.getMessage(), cause);
        }
        port = server.actualPort();
        LOG.infof("Serving securely on %s", hostPort(bindAddress, port));
    }

    /** The bound port, 0 when not serving. */
    public int port() {
        return port;
    }

    public synchronized void stop() {
        if (server != null) {
            try {
                server.close().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                LOG.debugf("closing the secure server: %s", e.getMessage());
            }
            server = null;
            port = 0;
        }
        closeClients();
    }

    private void closeClients() {
        if (authenticationClient != null) {
            authenticationClient.close();
            authenticationClient = null;
        }
        if (authorizationClient != null) {
            authorizationClient.close();
            authorizationClient = null;
        }
    }

    private static String hostPort(String host, int port) {
        return (host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host) + ":" + port;
    }

    private static ServingCertificate servingCertificate(ControllerManagerOptions options, String bindAddress) {
        String certFile = options.string("tls-cert-file");
        String keyFile = options.string("tls-private-key-file");
        if (!certFile.isEmpty() || !keyFile.isEmpty()) {
            if (certFile.isEmpty() || keyFile.isEmpty()) {
                throw new IllegalArgumentException("--tls-cert-file and --tls-private-key-file must be given together");
            }
            return ServingCertificate.fromFiles(Path.of(certFile), Path.of(keyFile));
        }
        LOG.debug("no --tls-cert-file: generating a self-signed serving certificate for localhost");
        return ServingCertificate.selfSigned("localhost", List.of(bindAddress));
    }

    /**
     * upstream getClient(): the kubeconfig when given, else the in-cluster config when running in a pod
     * (RemoteKubeConfigFileOptional: outside a cluster there is simply no client). QPS is not limited.
     */
    private KubernetesClient delegatedClient(String kubeconfig, String purpose) {
        Config config;
        if (!kubeconfig.isEmpty()) {
            try {
                Path path = Path.of(kubeconfig);
                config = Kubeconfigs.fromKubeconfig(Files.readString(path), path.toAbsolutePath().toString());
            } catch (IOException e) {
                throw new IllegalStateException("failed to get delegated " + purpose + " kubeconfig: " + e.getMessage(), e);
            }
        } else {
            config = inClusterConfig();
            if (config == null) {
                LOG.debugf("no --%s-kubeconfig and not in a cluster: no delegated %s", purpose, purpose);
                return null;
            }
        }
        config = new ConfigBuilder(config).withRequestTimeout(10_000)
                .withUserAgent("qkcm/" + Version.QKCM + " (linux/amd64) kubernetes/" + Version.KUBERNETES + "/delegated-" + purpose)
                .build();
        return new KubernetesClientBuilder().withConfig(config).withHttpClientFactory(new VertxHttpClientFactory(vertx)).build();
    }

    static final Path SA_DIR = Path.of("/var/run/secrets/kubernetes.io/serviceaccount");

    /** client-go's rest.InClusterConfig(); null when not in a cluster. */
    private static Config inClusterConfig() {
        String host = System.getenv("KUBERNETES_SERVICE_HOST");
        String port = System.getenv("KUBERNETES_SERVICE_PORT");
        Path token = SA_DIR.resolve("token");
        if (host == null || host.isEmpty() || port == null || port.isEmpty() || !Files.isReadable(token)) {
            return null;
        }
        String h = host.indexOf(':') >= 0 ? "[" + host + "]" : host;
        ConfigBuilder b = new ConfigBuilder(Config.empty()).withMasterUrl("https://" + h + ":" + port)
                .withOauthTokenProvider(() -> {
                    try {
                        return Files.readString(token).trim(); // re-read: the kubelet rotates it
                    } catch (IOException e) {
                        throw new IllegalStateException("cannot read " + token + ": " + e.getMessage(), e);
                    }
                });
        Path ca = SA_DIR.resolve("ca.crt");
        if (Files.isReadable(ca)) {
            b.withCaCertFile(ca.toString());
        }
        return b.build();
    }

    /**
     * The CA that verifies client certificates: {@code --client-ca-file}, else (unless
     * {@code --authentication-skip-lookup}) {@code client-ca-file} of
     * kube-system/extension-apiserver-authentication, read once at startup.
     */
    private String clientCa(ControllerManagerOptions options) {
        String file = options.string("client-ca-file");
        if (!file.isEmpty()) {
            try {
                return Files.readString(Path.of(file));
            } catch (IOException e) {
                throw new IllegalStateException("unable to load client CA provider: " + e.getMessage(), e);
            }
        }
        if (options.bool("authentication-skip-lookup")) {
            return null;
        }
        if (authenticationClient == null) {
            LOG.warnf("No authentication-kubeconfig provided in order to lookup client-ca-file in configmap/%s in %s, so client certificate authentication won't work.",
                    AUTHENTICATION_CONFIGMAP, AUTHENTICATION_CONFIGMAP_NAMESPACE);
            return null;
        }
        try {
            ConfigMap cm = authenticationClient.configMaps().inNamespace(AUTHENTICATION_CONFIGMAP_NAMESPACE)
                    .withName(AUTHENTICATION_CONFIGMAP).get();
            String ca = cm == null || cm.getData() == null ? null : cm.getData().get("client-ca-file");
            if (ca == null || ca.isBlank()) {
                LOG.infof("configmap/%s in %s has no client-ca-file: client certificate authentication is off",
                        AUTHENTICATION_CONFIGMAP, AUTHENTICATION_CONFIGMAP_NAMESPACE);
                return null;
            }
            return ca;
        } catch (RuntimeException e) {
            LOG.warnf("Error looking up in-cluster authentication configuration: %s; client certificate authentication is off",
                    e.getMessage());
            return null;
        }
    }

    // ---- request handling ----

    /**
     * Go's net/http limit on the request line and headers of the secure server (k8s.io/apiserver's
     * SecureServingInfo sets MaxHeaderBytes to 1 MiB; Go reads 4096 bytes beyond it before refusing).
     * Go counts line and headers together; Vert.x limits each on its own, at the same size.
     */
    static final int MAX_HEADER_BYTES = (1 << 20) + 4096;

    /**
     * A request Vert.x could not decode. Too long a request line or too many header bytes is Go's
     * answer, 431 with its text and the connection closed (Vert.x alone would answer 414 to a long
     * line); anything else keeps Vert.x's default answer (400).
     */
    static void onInvalidRequest(HttpServerRequest request) {
        Throwable cause = request.decoderResult() == null ? null : request.decoderResult().cause();
        if (cause instanceof io.netty.handler.codec.http.TooLongHttpLineException
                || cause instanceof io.netty.handler.codec.http.TooLongHttpHeaderException) {
            HttpServerResponse out = request.response();
            out.setStatusCode(431).putHeader("Content-Type", "text/plain; charset=utf-8").putHeader("Connection", "close");
            out.end("431 Request Header Fields Too Large").onComplete(ar -> request.connection().close());
            return;
        }
        HttpServerRequest.DEFAULT_INVALID_REQUEST_HANDLER.handle(request);
    }

    private void onRequest(HttpServerRequest request) {
        Request r;
        try {
            ClientCert cert = clientCert(request);
            r = new Request(request.method(), request.uri(), decodePath(request.path()), params(request.params()),
                    request.getHeader("Authorization"), cert.user(), cert.error());
        } catch (IllegalArgumentException e) {
            write(request, Healthz.Response.text(400, "400 Bad Request"));
            return;
        }
        vertx.<Healthz.Response>executeBlocking(() -> handle(r), false).onComplete(ar -> {
            if (ar.succeeded()) {
                write(request, ar.result());
            } else {
                LOG.errorf(ar.cause(), "serving %s", r.path());
                write(request, Healthz.Response.text(500, sanitize("Internal Server Error: \"" + r.uri() + "\": "
                        + ar.cause().getMessage()) + "\n"));
            }
        });
    }

    /** One request, as the handler chain sees it. */
    record Request(HttpMethod method, String uri, String path, Map<String, List<String>> params, String authorization,
            UserInfo clientCert, String clientCertError) {
    }

    /** The handler chain: authentication, authorization, then the mux. Runs on a worker thread. */
    Healthz.Response handle(Request r) {
        DelegatingAuthenticator.Result authn = authenticator.authenticate(r.authorization(), r.clientCert(), r.clientCertError());
        if (!authn.authenticated()) {
            return status(401, "Unauthorized", "Unauthorized", false);
        }
        String verb = r.method().name().toLowerCase(Locale.ROOT);
        DelegatingAuthorizer.Decision decision = authorizer.authorize(authn.user(), verb, r.path());
        if (!decision.allowed()) {
            if (decision.error() != null) {
                return Healthz.Response.text(500,
                        sanitize("Internal Server Error: \"" + r.uri() + "\": " + decision.error()) + "\n");
            }
            String msg = sanitize("User \"" + authn.user().name() + "\" cannot " + verb + " path \"" + r.path() + "\"");
            if (!decision.reason().isEmpty()) {
                msg += ": " + decision.reason();
            }
            LOG.debugf("Forbidden: %s, reason %s", r.uri(), decision.reason());
            return status(403, "forbidden: " + msg, "Forbidden", true);
        }
        return route(r);
    }

    private Healthz.Response route(Request r) {
        String path = r.path();
        for (String health : HEALTH_PATHS) {
            if (path.equals(health)) {
                return Healthz.handle(health, null, r.params(), checks.apply(health));
            }
            if (path.startsWith(health + "/") && path.length() > health.length() + 1) {
                return Healthz.handle(health, path.substring(health.length() + 1), r.params(), checks.apply(health));
            }
        }
        if (path.equals("/metrics")) {
            PrometheusMeterRegistry registry = prometheus.isResolvable() ? prometheus.get() : null;
            if (registry == null) {
                return Healthz.Response.notFound();
            }
            return new Healthz.Response(200, TextFormat.CONTENT_TYPE_004,
                    UpstreamCounterNames.rename(registry.scrape(TextFormat.CONTENT_TYPE_004)), Map.of());
        }
        io.qkcm.runtime.shadow.ShadowMatcher matcher = shadow;
        if (matcher != null && path.equals("/shadow")) {
            return new Healthz.Response(200, "application/json", io.qkcm.runtime.shadow.ShadowReport.json(matcher), Map.of());
        }
        if (matcher != null && path.equals("/shadow.html")) {
            return new Healthz.Response(200, "text/html; charset=utf-8", io.qkcm.runtime.shadow.ShadowReport.html(matcher),
                    Map.of());
        }
        return Healthz.Response.notFound();
    }

    /** An apimachinery metav1.Status, as responsewriters.ErrorNegotiated writes it (JSON). */
    private static Healthz.Response status(int code, String message, String reason, boolean details) {
        String body = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":"
                + json(message) + ",\"reason\":\"" + reason + "\"," + (details ? "\"details\":{}," : "") + "\"code\":"
                + code + "}\n";
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("X-Content-Type-Options", "nosniff");
        return new Healthz.Response(code, "application/json", body, headers);
    }

    private static String sanitize(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                case '<' -> b.append("\\u003c");
                case '>' -> b.append("\\u003e");
                case '&' -> b.append("\\u0026");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    private static void write(HttpServerRequest request, Healthz.Response response) {
        HttpServerResponse out = request.response();
        if (out.ended() || out.closed()) {
            return;
        }
        out.setStatusCode(response.status());
        out.putHeader("Content-Type", response.contentType());
        out.putHeader("Cache-Control", "no-cache, private"); // WithCacheControl
        response.headers().forEach(out::putHeader);
        if (request.method() == HttpMethod.HEAD) {
            out.putHeader("Content-Length", Integer.toString(response.body().getBytes(StandardCharsets.UTF_8).length));
            out.end();
        } else {
            out.end(response.body());
        }
    }

    static String decodePath(String raw) {
        if (raw == null || raw.isEmpty()) {
            return "/";
        }
        return URLDecoder.decode(raw.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    private static Map<String, List<String>> params(MultiMap params) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (String name : params.names()) {
            out.put(name, new ArrayList<>(params.getAll(name)));
        }
        return out;
    }

    /** The client certificate's outcome: a user, an error (401), or neither (no certificate, no opinion). */
    record ClientCert(UserInfo user, String error) {
        static final ClientCert NONE = new ClientCert(null, null);
    }

    /**
     * upstream's x509 authenticator: the chain the client sent, verified against the client CA
     * ({@link ClientCertificates}); then x509.CommonNameUserConversion: CN is the user, each O a group.
     */
    private ClientCert clientCert(HttpServerRequest request) {
        ClientCertificates verifier = clientCertificates;
        if (!request.isSSL() || verifier == null) {
            return ClientCert.NONE;
        }
        List<Certificate> chain;
        try {
            chain = request.connection().peerCertificates();
        } catch (SSLPeerUnverifiedException | RuntimeException e) {
            return ClientCert.NONE;
        }
        if (chain == null || chain.isEmpty()) {
            return ClientCert.NONE;
        }
        List<X509Certificate> x509 = new ArrayList<>();
        for (Certificate c : chain) {
            if (!(c instanceof X509Certificate x)) {
                return new ClientCert(null, "not an X.509 client certificate");
            }
            x509.add(x);
        }
        String error = verifier.verify(x509);
        if (error != null) {
            LOG.debugf("client certificate refused: %s", error);
            return new ClientCert(null, error);
        }
        UserInfo user = userFromCertificate(x509.get(0));
        return user == null ? ClientCert.NONE : new ClientCert(user, null);
    }

    /**
     * The subject's CN (the last one, as Go reads it) is the user, every O (in order) a group. The subject is read from its DER
     * encoding ({@link DistinguishedNames}, JDK only: BouncyCastle's signed jars are slow to load), so
     * values with commas or other RFC 4514 special characters come through intact.
     */
    static UserInfo userFromCertificate(X509Certificate cert) {
        List<DistinguishedNames.Attribute> subject;
        try {
            subject = DistinguishedNames.attributes(cert.getSubjectX500Principal());
        } catch (IllegalArgumentException e) {
            return null; // cannot happen for a certificate the JDK parsed; no identity rather than a 500
        }
        List<String> cns = DistinguishedNames.values(subject, DistinguishedNames.COMMON_NAME);
        // Go's pkix.Name keeps the last CommonName attribute it meets; the authenticator uses that one
        String cn = cns.isEmpty() ? null : cns.get(cns.size() - 1);
        if (cn == null || cn.isEmpty()) {
            return null; // upstream: "common name is empty" → this authenticator fails
        }
        return new UserInfo(cn, "", DistinguishedNames.values(subject, DistinguishedNames.ORGANIZATION), Map.of());
    }
}
