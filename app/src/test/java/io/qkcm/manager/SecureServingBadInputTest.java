package io.qkcm.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.StringReader;
import java.math.BigInteger;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;

import jakarta.inject.Inject;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.manager.serving.SecureServing;
import io.qkcm.testing.LogCapture;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * The secure port under bad input, against a real API server (TokenReview, SubjectAccessReview) and
 * side by side with upstream kube-controller-manager v1.34.4 (the reference binary, same API server,
 * same delegation flags): malformed and expired tokens, a client certificate of an unknown CA, an
 * oversized request line and headers. Each is answered with upstream's status code; the controllers
 * keep working; no token or key material reaches a log line.
 */
@QuarkusTest
@TestProfile(SecureServingTest.Profile.class)
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
class SecureServingBadInputTest {

    private static final Path KUBEAPITEST = Path.of(System.getProperty("user.home"), ".kubeapitest");
    private static final Path UPSTREAM_KCM = KUBEAPITEST.resolve("k8s/1.34.4-linux-amd64/kube-controller-manager");

    static Process upstream;
    static int upstreamPort;
    static Path upstreamLog;

    @Inject
    SecureServing serving;

    @BeforeAll
    static void startUpstream() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            upstreamPort = s.getLocalPort();
        }
        String kubeconfig = RealApiServer.get().kubeconfig().toString();
        upstreamLog = Files.createTempFile("kcm-bad-input", ".log");
        upstream = new ProcessBuilder(UPSTREAM_KCM.toString(), "--kubeconfig=" + kubeconfig,
                "--authentication-kubeconfig=" + kubeconfig, "--authorization-kubeconfig=" + kubeconfig,
                "--authorization-always-allow-paths=/healthz,/readyz,/livez,/open/*", "--leader-elect=false",
                "--controllers=serviceaccount-controller", "--bind-address=127.0.0.1",
                "--secure-port=" + upstreamPort).redirectErrorStream(true).redirectOutput(upstreamLog.toFile()).start();
        await().atMost(Duration.ofSeconds(60)).ignoreExceptions()
                .until(() -> request(upstreamPort, "GET", "/healthz", Map.of(), null).status() == 200);
    }

    @AfterAll
    static void stopUpstream() throws Exception {
        if (upstream != null) {
            upstream.destroy();
            if (!upstream.waitFor(10, TimeUnit.SECONDS)) {
                upstream.destroyForcibly();
            }
        }
    }

    /** A response's status line, or -1 when the connection was refused or closed without one. */
    record Answer(int status, String statusLine) {
    }

    /**
     * One HTTP/1.1 request over TLS (trusting any server certificate), written by a second thread while
     * this one reads: a server that refuses an oversized request answers before reading all of it.
     */
    static Answer request(int port, String method, String target, Map<String, String> headers, SSLContext tls)
            throws Exception {
        SSLContext ctx = tls != null ? tls : trustAllContext(null);
        try (SSLSocket socket = (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", port)) {
            socket.setSoTimeout(30_000);
            socket.setEnabledProtocols(new String[] { "TLSv1.3", "TLSv1.2" });
            try {
                socket.startHandshake();
            } catch (java.io.IOException e) {
                return new Answer(-1, "handshake failed: " + e);
            }
            StringBuilder head = new StringBuilder(method).append(' ').append(target).append(" HTTP/1.1\r\n")
                    .append("Host: 127.0.0.1:").append(port).append("\r\nConnection: close\r\n");
            headers.forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
            head.append("\r\n");
            byte[] bytes = head.toString().getBytes(StandardCharsets.ISO_8859_1);
            int bodyLength = Integer.parseInt(headers.getOrDefault("Content-Length", "0"));
            OutputStream out = socket.getOutputStream();
            Thread writer = new Thread(() -> {
                try {
                    out.write(bytes);
                    byte[] chunk = new byte[64 * 1024];
                    for (int sent = 0; sent < bodyLength; sent += chunk.length) {
                        out.write(chunk, 0, Math.min(chunk.length, bodyLength - sent));
                    }
                    out.flush();
                } catch (java.io.IOException e) {
                    // the server stopped reading: its answer is what counts
                }
            });
            writer.start();
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1));
            String line;
            try {
                line = in.readLine();
            } catch (java.io.IOException e) {
                line = null;
            }
            writer.join(30_000);
            if (line == null || !line.startsWith("HTTP/")) {
                return new Answer(-1, String.valueOf(line));
            }
            return new Answer(Integer.parseInt(line.split(" ")[1]), line);
        }
    }

    static SSLContext trustAllContext(KeyManagerFactory keys) throws Exception {
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(keys == null ? null : keys.getKeyManagers(), trustAllContextManagers(), new SecureRandom());
        return ctx;
    }

    /** A client certificate (CN, O=system:masters) signed by a CA nobody trusts; valid or expired. */
    static SSLContext unknownClientCertificate(boolean expired) throws Exception {
        KeyPairGenerator gen = KeyPairGenerator.getInstance("RSA");
        gen.initialize(2048);
        KeyPair ca = gen.generateKeyPair();
        KeyPair leaf = gen.generateKeyPair();
        Instant now = Instant.now();
        X500Name caName = new X500Name("CN=unknown-ca");
        JcaX509v3CertificateBuilder caBuilder = new JcaX509v3CertificateBuilder(caName, BigInteger.ONE,
                Date.from(now.minus(2, ChronoUnit.DAYS)), Date.from(now.plus(1, ChronoUnit.DAYS)), caName, ca.getPublic());
        caBuilder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
        X509Certificate caCert = new JcaX509CertificateConverter()
                .getCertificate(caBuilder.build(new JcaContentSignerBuilder("SHA256WithRSA").build(ca.getPrivate())));
        Instant notAfter = expired ? now.minus(1, ChronoUnit.DAYS) : now.plus(1, ChronoUnit.DAYS);
        JcaX509v3CertificateBuilder leafBuilder = new JcaX509v3CertificateBuilder(caName, BigInteger.TWO,
                Date.from(now.minus(2, ChronoUnit.DAYS)), Date.from(notAfter),
                new X500Name("CN=intruder,O=system:masters"), leaf.getPublic());
        X509Certificate leafCert = new JcaX509CertificateConverter()
                .getCertificate(leafBuilder.build(new JcaContentSignerBuilder("SHA256WithRSA").build(ca.getPrivate())));
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("client", leaf.getPrivate(), new char[0], new X509Certificate[] { leafCert, caCert });
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, new char[0]);
        javax.net.ssl.X509KeyManager km = (javax.net.ssl.X509KeyManager) kmf.getKeyManagers()[0];
        // present the certificate whatever CAs the server names (the JDK would otherwise send none)
        javax.net.ssl.X509ExtendedKeyManager always = new javax.net.ssl.X509ExtendedKeyManager() {
            @Override
            public String[] getClientAliases(String keyType, java.security.Principal[] issuers) {
                return new String[] { "client" };
            }

            @Override
            public String chooseClientAlias(String[] keyType, java.security.Principal[] issuers, Socket socket) {
                return "client";
            }

            @Override
            public String chooseEngineClientAlias(String[] keyType, java.security.Principal[] issuers,
                    javax.net.ssl.SSLEngine engine) {
                return "client";
            }

            @Override
            public String[] getServerAliases(String keyType, java.security.Principal[] issuers) {
                return null;
            }

            @Override
            public String chooseServerAlias(String keyType, java.security.Principal[] issuers, Socket socket) {
                return null;
            }

            @Override
            public X509Certificate[] getCertificateChain(String alias) {
                return km.getCertificateChain(alias);
            }

            @Override
            public PrivateKey getPrivateKey(String alias) {
                return km.getPrivateKey(alias);
            }
        };
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(new javax.net.ssl.KeyManager[] { always }, trustAllContextManagers(), new SecureRandom());
        return ctx;
    }

    static javax.net.ssl.TrustManager[] trustAllContextManagers() {
        return new javax.net.ssl.TrustManager[] { new javax.net.ssl.X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) {
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) {
            }

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
            }
        } };
    }

    /**
     * A service-account JWT as the API server issues them (kube-api-test's signing key and issuer),
     * expiring at {@code exp}: the fresh one proves the signing is right, so the expired one is
     * refused for its expiry alone.
     */
    static String serviceAccountJwt(ServiceAccount sa, Instant exp) throws Exception {
        PrivateKey key;
        try (PEMParser p = new PEMParser(new StringReader(Files.readString(KUBEAPITEST.resolve("apiserver.key"))))) {
            Object o = p.readObject();
            key = o instanceof PEMKeyPair kp ? new JcaPEMKeyConverter().getKeyPair(kp).getPrivate()
                    : new JcaPEMKeyConverter().getPrivateKey((org.bouncycastle.asn1.pkcs.PrivateKeyInfo) o);
        }
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        String header = b64.encodeToString("{\"alg\":\"RS256\",\"typ\":\"JWT\"}".getBytes(StandardCharsets.UTF_8));
        long iat = exp.minus(1, ChronoUnit.HOURS).getEpochSecond();
        String ns = sa.getMetadata().getNamespace();
        String name = sa.getMetadata().getName();
        String claims = "{\"aud\":[\"https://localhost\"],\"exp\":" + exp.getEpochSecond() + ",\"iat\":" + iat
                + ",\"nbf\":" + iat + ",\"iss\":\"https://localhost\",\"sub\":\"system:serviceaccount:" + ns + ":" + name
                + "\",\"kubernetes.io\":{\"namespace\":\"" + ns + "\",\"serviceaccount\":{\"name\":\"" + name
                + "\",\"uid\":\"" + sa.getMetadata().getUid() + "\"}}}";
        String signingInput = header + "." + b64.encodeToString(claims.getBytes(StandardCharsets.UTF_8));
        Signature s = Signature.getInstance("SHA256withRSA");
        s.initSign(key);
        s.update(signingInput.getBytes(StandardCharsets.US_ASCII));
        return signingInput + "." + b64.encodeToString(s.sign());
    }

    record Case(String name, String method, String target, Map<String, String> headers, SSLContext tls) {
    }

    @Test
    void badInputIsRefusedAsUpstreamRefusesIt() throws Exception {
        assertThat(serving.port()).isPositive();
        List<String> secrets = new ArrayList<>();
        List<Case> cases = new ArrayList<>();
        // debug level on the serving code and the clients it uses, so what would leak at debug shows too
        Map<java.util.logging.Logger, Level> before = new LinkedHashMap<>();
        for (String name : List.of("io.qkcm", "io.fabric8.kubernetes.client", "io.vertx")) {
            java.util.logging.Logger l = java.util.logging.Logger.getLogger(name);
            before.put(l, l.getLevel());
            l.setLevel(Level.FINE);
        }
        try (KubernetesClient kube = RealApiServer.get().newClient();
                LogCapture logs = LogCapture.start("", Level.ALL)) {
            String ns = "bad-input-" + Long.toString(System.nanoTime(), 36);
            kube.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
            ServiceAccount sa = kube.serviceAccounts().inNamespace(ns).resource(new ServiceAccountBuilder()
                    .withNewMetadata().withName("scraper").endMetadata().build()).create();
            String fresh = serviceAccountJwt(sa, Instant.now().plus(1, ChronoUnit.HOURS));
            String expired = serviceAccountJwt(sa, Instant.now().minus(1, ChronoUnit.HOURS));
            String garbage = "qkcm-garbage-token-" + "x".repeat(40);
            String huge = "qkcm-huge-token-" + "y".repeat(64 * 1024);
            secrets.addAll(List.of(fresh, expired, garbage, huge));
            // the JWTs' signatures: the part no log line may show even truncated
            secrets.add(fresh.substring(fresh.lastIndexOf('.') + 1, fresh.lastIndexOf('.') + 24));
            secrets.add(expired.substring(expired.lastIndexOf('.') + 1, expired.lastIndexOf('.') + 24));

            for (String path : List.of("/healthz", "/metrics")) {
                cases.add(new Case("fresh token " + path, "GET", path, Map.of("Authorization", "Bearer " + fresh), null));
                cases.add(new Case("expired token " + path, "GET", path, Map.of("Authorization", "Bearer " + expired), null));
                cases.add(new Case("garbage token " + path, "GET", path, Map.of("Authorization", "Bearer " + garbage), null));
                cases.add(new Case("64 KiB token " + path, "GET", path, Map.of("Authorization", "Bearer " + huge), null));
                cases.add(new Case("empty bearer " + path, "GET", path, Map.of("Authorization", "Bearer "), null));
                cases.add(new Case("bearer, space, token " + path, "GET", path,
                        Map.of("Authorization", "Bearer  " + garbage), null));
                cases.add(new Case("basic auth " + path, "GET", path, Map.of("Authorization", "Basic cWtjbTpxa2Nt"), null));
                cases.add(new Case("unknown client CA " + path, "GET", path, Map.of(), unknownClientCertificate(false)));
                cases.add(new Case("expired cert of unknown CA " + path, "GET", path, Map.of(),
                        unknownClientCertificate(true)));
                cases.add(new Case("8 KiB request line " + path, "GET", path + "?q=" + "z".repeat(8 * 1024), Map.of(), null));
                cases.add(new Case("64 KiB header " + path, "GET", path, Map.of("X-Padding", "p".repeat(64 * 1024)), null));
                cases.add(new Case("2 MiB header " + path, "GET", path, Map.of("X-Padding", "p".repeat(2 << 20)), null));
                cases.add(new Case("2 MiB request line " + path, "GET", path + "?q=" + "z".repeat(2 << 20), Map.of(), null));
                cases.add(new Case("POST, 16 MiB body " + path, "POST", path,
                        Map.of("Content-Length", Integer.toString(16 << 20), "Content-Type", "application/json"), null));
                cases.add(new Case("POST, 16 MiB body, garbage token " + path, "POST", path,
                        Map.of("Content-Length", Integer.toString(16 << 20), "Authorization", "Bearer " + garbage), null));
            }

            Map<String, String> mine = new LinkedHashMap<>();
            Map<String, String> theirs = new LinkedHashMap<>();
            for (Case c : cases) {
                Answer a = request(serving.port(), c.method(), c.target(), c.headers(), c.tls());
                Answer b = request(upstreamPort, c.method(), c.target(), c.headers(), c.tls());
                mine.put(c.name(), Integer.toString(a.status()));
                theirs.put(c.name(), Integer.toString(b.status()));
            }
            System.out.println("secure port under bad input, qkcm: " + mine + "\nupstream: " + theirs);
            assertThat(mine).as("qkcm's status codes against upstream's (upstream log %s)", upstreamLog)
                    .isEqualTo(theirs);
            // what upstream answers, spelled out (so a change on both sides is noticed too)
            assertThat(mine).containsEntry("fresh token /metrics", "403").containsEntry("fresh token /healthz", "200")
                    .containsEntry("expired token /metrics", "401").containsEntry("garbage token /healthz", "401")
                    .containsEntry("empty bearer /metrics", "403").containsEntry("unknown client CA /healthz", "401")
                    .containsEntry("2 MiB header /healthz", "431");

            // the controllers are unaffected: the serviceaccount controller still creates "default"
            String after = "bad-input-after-" + Long.toString(System.nanoTime(), 36);
            kube.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(after).endMetadata().build())
                    .create();
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> kube.serviceAccounts().inNamespace(after).withName("default").get() != null);
            assertThat(request(serving.port(), "GET", "/healthz", Map.of(), null).status()).isEqualTo(200);

            List<String> lines = logs.lines();
            for (String secret : secrets) {
                assertThat(lines).as("log lines holding token material").noneMatch(l -> l.contains(secret));
            }
            assertThat(lines).as("log lines holding key material")
                    .noneMatch(l -> l.contains("PRIVATE KEY") || l.contains("BEGIN CERTIFICATE"));
            assertThat(lines).as("the refused client certificates were logged at debug, without their content")
                    .anyMatch(l -> l.contains("client certificate refused"));
        } finally {
            before.forEach(java.util.logging.Logger::setLevel);
        }
    }
}
