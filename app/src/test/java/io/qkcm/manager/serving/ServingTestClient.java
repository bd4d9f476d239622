package io.qkcm.manager.serving;

import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Duration;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;

/** An HTTPS client for the manager's secure port that trusts any server certificate (tests only). */
public final class ServingTestClient {

    private final HttpClient client;
    private final int port;

    public ServingTestClient(int port) {
        this.port = port;
        this.client = HttpClient.newBuilder().sslContext(trustAll()).connectTimeout(Duration.ofSeconds(10)).build();
    }

    public HttpResponse<String> get(String pathAndQuery) throws IOException, InterruptedException {
        return get(pathAndQuery, null);
    }

    public HttpResponse<String> get(String pathAndQuery, String bearerToken) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + pathAndQuery))
                .timeout(Duration.ofSeconds(30)).GET();
        if (bearerToken != null) {
            b.header("Authorization", "Bearer " + bearerToken);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static SSLContext trustAll() {
        try {
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, new TrustManager[] { new TrustAll() }, new SecureRandom());
            return ctx;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Extended, so the JDK does not add its own hostname check on top. */
    static final class TrustAll extends X509ExtendedTrustManager {
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

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) {
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {
        }
    }
}
