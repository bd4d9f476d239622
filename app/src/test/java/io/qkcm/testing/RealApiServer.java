package io.qkcm.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubeapitest.KubeAPIServer;
import io.fabric8.kubeapitest.KubeAPIServerConfigBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;

/**
 * One real kube-apiserver + etcd (fabric8 kube-api-test, binaries from
 * hack/install-control-plane.sh) per test JVM, started on first use and shared by every test class:
 * starting a control plane costs seconds, and tests isolate themselves by namespace.
 */
public final class RealApiServer {

    private static RealApiServer instance;

    private final KubeAPIServer server;
    private final Path kubeconfig;
    private final Path certDir;

    private RealApiServer(List<String> extraFlags) {
        this(extraFlags, null);
    }

    private RealApiServer(List<String> extraFlags, Path testDir) {
        String version = System.getProperty("qkcm.test.kubernetes-version");
        KubeAPIServerConfigBuilder config = KubeAPIServerConfigBuilder.anAPIServerConfig()
                .withOfflineMode(true)
                .withUpdateKubeConfig(false)
                .withStartupTimeout(120_000);
        if (version != null) {
            config.withApiServerVersion(version);
        }
        if (testDir != null) {
            config.withTestDir(testDir.toString());
        }
        List<String> flags = new ArrayList<>(extraFlags);
        if (!flags.isEmpty()) {
            config.withApiServerFlags(flags);
        }
        io.fabric8.kubeapitest.KubeAPIServerConfig built = config.build();
        certDir = Path.of(built.getKubeAPITestDir());
        server = new KubeAPIServer(built);
        server.start();
        try {
            kubeconfig = Files.createTempFile("qkcm-test-kubeconfig", ".yaml");
            Files.writeString(kubeconfig, server.getKubeConfigYaml());
            kubeconfig.toFile().deleteOnExit();
        } catch (IOException e) {
            throw new IllegalStateException("cannot write the test kubeconfig", e);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(server::stop, "kube-api-test-stop"));
    }

    private static RealApiServer audited;
    private Path auditLog;

    /**
     * A second API server of this JVM (separate from {@link #get()}, started on first call) that
     * writes an audit log of every request (user, user agent, verb, object) at Metadata level, so
     * process-level tests can attribute requests to the identity that sent them.
     */
    public static synchronized RealApiServer audited() {
        if (audited == null) {
            try {
                Path dir = Files.createTempDirectory("qkcm-audit");
                Path policy = dir.resolve("audit-policy.yaml");
                Files.writeString(policy, """
                        apiVersion: audit.k8s.io/v1
                        kind: Policy
                        omitStages: ["RequestReceived"]
                        rules:
                        - level: Metadata
                        """);
                Path log = dir.resolve("audit.log");
                audited = new RealApiServer(List.of("--audit-policy-file=" + policy, "--audit-log-path=" + log,
                        "--audit-log-mode=blocking", "--audit-log-format=json"));
                audited.auditLog = log;
            } catch (IOException e) {
                throw new IllegalStateException("cannot write the audit policy", e);
            }
        }
        return audited;
    }

    /** The audit log of {@link #audited()}; empty for the other servers. */
    public java.util.Optional<Path> auditLog() {
        return java.util.Optional.ofNullable(auditLog);
    }

    public void stop() {
        server.stop();
    }

    /** The shared API server of this JVM, started on first call. */
    public static synchronized RealApiServer get() {
        if (instance == null) {
            instance = new RealApiServer(List.of());
        }
        return instance;
    }

    private static final java.util.Map<List<String>, RealApiServer> withFlags = new java.util.HashMap<>();

    /**
     * A separate API server (own etcd) started with {@code flags} before kube-api-test's own; one per
     * distinct flag list in this JVM. The shared default instance is left untouched. String-slice flags
     * such as {@code --service-account-key-file} accumulate with kube-api-test's.
     */
    public static synchronized RealApiServer withFlags(List<String> flags) {
        return withFlags.computeIfAbsent(List.copyOf(flags), RealApiServer::new);
    }

    /**
     * A separate API server (own etcd) with kube-api-test's flags only, that no application of the test
     * JVM connects to: for a test of one part of a controller that writes objects no running controller
     * (say, a garbage collector or a mirroring controller left running by another test class) may touch.
     */
    public static RealApiServer isolated() {
        return withFlags(List.of());
    }

    /** Kubeconfig (cluster-admin client certificate) for this API server. */
    public Path kubeconfig() {
        return kubeconfig;
    }

    public String kubeconfigYaml() {
        return server.getKubeConfigYaml();
    }

    /** A new admin client; the caller closes it. */
    public KubernetesClient newClient() {
        return new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(kubeconfigYaml())).build();
    }

    private static RealApiServer signingClientCa;

    /**
     * A separate API server (own etcd) whose {@code --client-ca-file} can sign client certificates: kube-api-test's
     * own admin certificate is self-signed without basicConstraints, which Go refuses as an issuer, so this one's
     * is generated with CA:TRUE (still O=system:masters, CN=kubeapitest, the admin of its kubeconfig). For the
     * CSR signer's test that a certificate it issues authenticates, and bootstrap tokens are accepted
     * ({@code --enable-bootstrap-token-auth}). Binaries and serving certificate are kube-api-test's.
     */
    public static synchronized RealApiServer withSigningClientCa() {
        if (signingClientCa == null) {
            try {
                Path shared = Path.of(System.getProperty("user.home"), ".kubeapitest");
                Path dir = Files.createTempDirectory("qkcm-kubeapitest-ca");
                Files.createSymbolicLink(dir.resolve("k8s"), shared.resolve("k8s"));
                Files.copy(shared.resolve("apiserver.crt"), dir.resolve("apiserver.crt"));
                Files.copy(shared.resolve("apiserver.key"), dir.resolve("apiserver.key"));
                writeSigningAdminCertificate(dir.resolve("client.crt"), dir.resolve("client.key"));
                // bootstrap tokens authenticate too, for a kubelet-style TLS bootstrap
                signingClientCa = new RealApiServer(List.of("--enable-bootstrap-token-auth=true"), dir);
            } catch (Exception e) {
                throw new IllegalStateException("cannot prepare the API server with a signing client CA", e);
            }
        }
        return signingClientCa;
    }

    private static void writeSigningAdminCertificate(Path certFile, Path keyFile) throws Exception {
        java.security.KeyPairGenerator gen = java.security.KeyPairGenerator.getInstance("RSA");
        gen.initialize(2048);
        java.security.KeyPair key = gen.generateKeyPair();
        org.bouncycastle.asn1.x500.X500Name name = new org.bouncycastle.asn1.x500.X500Name("O=system:masters,CN=kubeapitest");
        java.time.Instant now = java.time.Instant.now();
        var builder = new org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder(name,
                java.math.BigInteger.valueOf(now.toEpochMilli()), java.util.Date.from(now.minusSeconds(3600)),
                java.util.Date.from(now.plusSeconds(365L * 24 * 3600)), name, key.getPublic());
        builder.addExtension(org.bouncycastle.asn1.x509.Extension.basicConstraints, true,
                new org.bouncycastle.asn1.x509.BasicConstraints(true));
        var cert = builder.build(new org.bouncycastle.operator.jcajce.JcaContentSignerBuilder("SHA256WithRSA")
                .build(key.getPrivate()));
        for (Object[] o : new Object[][] { { certFile, cert }, { keyFile, key.getPrivate() } }) {
            java.io.StringWriter out = new java.io.StringWriter();
            try (var w = new org.bouncycastle.openssl.jcajce.JcaPEMWriter(out)) {
                w.writeObject(o[1]);
            }
            Files.writeString((Path) o[0], out.toString());
        }
    }

    /**
     * The CA certificate of the API server's {@code --client-ca-file} (kube-api-test's self-signed admin
     * certificate, O=system:masters). Only {@link #withSigningClientCa()}'s can sign certificates Go accepts.
     */
    public Path clientCaCertFile() {
        return certDir.resolve("client.crt");
    }

    /** The private key of {@link #clientCaCertFile()}. */
    public Path clientCaKeyFile() {
        return certDir.resolve("client.key");
    }
}
