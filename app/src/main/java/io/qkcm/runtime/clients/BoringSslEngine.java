package io.qkcm.runtime.clients;

import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509KeyManager;
import javax.net.ssl.X509TrustManager;

import org.jboss.logging.Logger;

import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.OpenSslCachingX509KeyManagerFactory;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.util.KeyManagerFactoryWrapper;
import io.vertx.core.net.OpenSSLEngineOptions;
import io.vertx.core.spi.tls.SslContextFactory;

/**
 * Vert.x engine options that run the API clients' TLS in BoringSSL (netty-tcnative) with fabric8's
 * key and trust managers: the client certificate and key of the kubeconfig, the CA it trusts.
 * <p>
 * Why: at startup qkcm opens ~60 connections at once and each one is a full TLS 1.3 handshake (they
 * cannot resume from each other's tickets); in the JDK each handshake signs with the client's RSA key in
 * {@code BigInteger} arithmetic, which under C1 ({@code bin/qkcm}'s JIT) was 55% of the CPU samples of
 * the first 12 s (bench/results/2026-11-25-decode/startup). Under load the JDK's record ciphers were
 * ~11% of the CPU. In BoringSSL both are native code, whatever the JIT.
 * <p>
 * The server's certificate is still checked by fabric8's (the JDK's) trust manager, and Vert.x still
 * sets HTTPS endpoint identification on every engine, as with the JDK engine. Cipher suites and their
 * order are BoringSSL's (AES-GCM first where the CPU has AES instructions). Quarkus makes OpenSSL
 * unavailable in a native image, where the JDK engine is used.
 */
public final class BoringSslEngine extends OpenSSLEngineOptions {

    private static final Logger LOG = Logger.getLogger(BoringSslEngine.class);

    private final KeyManager[] keyManagers;
    private final TrustManager[] trustManagers;
    private final String[] protocols;

    BoringSslEngine(KeyManager[] keyManagers, TrustManager[] trustManagers, String[] protocols) {
        this.keyManagers = keyManagers;
        this.trustManagers = trustManagers;
        this.protocols = protocols;
    }

    /**
     * Whether the API clients use BoringSSL: when {@code requested} ({@code qkcm.tuning.boringssl}, true by
     * default) and netty-tcnative loads on this platform (it is not in a native image).
     */
    static boolean enabled(boolean requested) {
        if (!requested) {
            LOG.debug("API TLS: the JDK's (BoringSSL turned off)");
            return false;
        }
        return Holder.AVAILABLE;
    }

    private static final class Holder {
        static final boolean AVAILABLE = load();

        private static boolean load() {
            if (!OpenSsl.isAvailable()) {
                LOG.infof("API TLS: the JDK's, BoringSSL (netty-tcnative) is not available here: %s",
                        OpenSsl.unavailabilityCause());
                return false;
            }
            LOG.debugf("API TLS: %s (netty-tcnative)", OpenSsl.versionString());
            return true;
        }
    }

    /**
     * Loads netty-tcnative on a thread of its own, so that the process' start does not wait for it:
     * unpacking and loading the library and Netty's probing of it took 0.6–0.8 s of a fresh JVM here
     * (0.3–0.5 s on the way to the first write, bench/results/2026-11-26-tls), while Quarkus' own start,
     * which needs no TLS client, takes about a second. The first API transport waits for the load (class
     * initialisation is the lock) if it has not finished. Called by {@code QkcmMain} before Quarkus starts,
     * that is before the configuration is read: with {@code qkcm.tuning.boringssl=false} the library is
     * loaded all the same, off the start's path, and never used.
     */
    public static void preload() {
        Thread loader = new Thread(() -> enabled(true), "boringssl-load");
        loader.setDaemon(true);
        loader.start();
    }

    @Override
    public OpenSSLEngineOptions copy() {
        return this;
    }

    @Override
    public SslContextFactory sslContextFactory() {
        return new SharedTransports.AlpnContextFactory() {
            @Override
            SslContext create(ApplicationProtocolConfig alpn) throws SSLException {
                return context(alpn);
            }
        };
    }

    /** The client context: fabric8's managers, the requested TLS versions, ALPN when Vert.x asks for it. */
    SslContext context(ApplicationProtocolConfig alpn) throws SSLException {
        SslContextBuilder builder = SslContextBuilder.forClient().sslProvider(SslProvider.OPENSSL);
        X509KeyManager keyManager = x509(keyManagers);
        if (keyManager != null) {
            // the caching factory converts the key and chain to BoringSSL's form once, not per handshake
            builder.keyManager(new OpenSslCachingX509KeyManagerFactory(new KeyManagerFactoryWrapper(keyManager)));
        }
        if (trustManagers != null) {
            for (TrustManager m : trustManagers) {
                if (m instanceof X509TrustManager) {
                    builder.trustManager(m);
                    break;
                }
            }
        }
        if (protocols != null) {
            builder.protocols(protocols);
        }
        return builder.applicationProtocolConfig(alpn).build();
    }

    private static X509KeyManager x509(KeyManager[] managers) {
        if (managers != null) {
            for (KeyManager m : managers) {
                if (m instanceof X509KeyManager x) {
                    return x;
                }
            }
        }
        return null;
    }
}
