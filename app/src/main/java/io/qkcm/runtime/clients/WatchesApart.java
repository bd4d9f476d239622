package io.qkcm.runtime.clients;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Function;

import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketConnectOptions;
import io.vertx.core.http.WebsocketVersion;
import io.vertx.core.net.SSLOptions;

/**
 * One Vert.x client made of two: requests go over {@code requests} (HTTP/2: every request a stream of one
 * connection, as client-go sends them), watches (WebSockets, and requests with {@code watch=true}) over
 * {@code watches} (HTTP/1.1: a connection per watch, read on its own). A busy watch multiplexed with
 * everything else on one connection fell behind and was ended by the API server during bursts
 * (bench/results/2026-11-21-transport-checks); a create waiting in a pool of HTTP/1.1 connections costs
 * a connection and a TLS handshake per concurrent request.
 * <p>
 * fabric8 7.4's Vert.x client calls {@code request(RequestOptions)}, {@code webSocket(WebSocketConnectOptions)}
 * and {@code close()} only (its bytecode, read with javap); every other method is routed the same way
 * all the same. SharedTransportsTest shows the routing against a real API server.
 */
final class WatchesApart implements HttpClient {

    private final HttpClient requests;
    private final HttpClient watches;

    WatchesApart(HttpClient requests, HttpClient watches) {
        this.requests = requests;
        this.watches = watches;
    }

    /**
     * Whether a request is a watch, as the API server reads its query (apimachinery's
     * Convert_Slice_string_To_bool on the first {@code watch} value): present and neither "0" nor "false"
     * (any case); a bare {@code watch} is a watch too.
     */
    static boolean isWatch(String uri) {
        int q = uri == null ? -1 : uri.indexOf('?');
        if (q < 0) {
            return false;
        }
        int end = uri.indexOf('#', q);
        for (String param : uri.substring(q + 1, end < 0 ? uri.length() : end).split("&")) {
            int eq = param.indexOf('=');
            if (!decode(eq < 0 ? param : param.substring(0, eq)).equals("watch")) {
                continue;
            }
            String value = eq < 0 ? "" : decode(param.substring(eq + 1));
            return !value.equals("0") && !value.equalsIgnoreCase("false");
        }
        return false;
    }

    private static String decode(String s) {
        try {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return s; // malformed escapes: the raw text
        }
    }

    private HttpClient forRequest(RequestOptions options) {
        return isWatch(options.getURI()) ? watches : requests;
    }

    @Override
    public Future<HttpClientRequest> request(RequestOptions options) {
        return forRequest(options).request(options);
    }

    @Override
    public void request(RequestOptions options, Handler<AsyncResult<HttpClientRequest>> handler) {
        forRequest(options).request(options, handler);
    }

    @Override
    public void request(HttpMethod method, int port, String host, String requestURI,
            Handler<AsyncResult<HttpClientRequest>> handler) {
        (isWatch(requestURI) ? watches : requests).request(method, port, host, requestURI, handler);
    }

    @Override
    public void request(HttpMethod method, String host, String requestURI, Handler<AsyncResult<HttpClientRequest>> handler) {
        (isWatch(requestURI) ? watches : requests).request(method, host, requestURI, handler);
    }

    @Override
    public void request(HttpMethod method, String requestURI, Handler<AsyncResult<HttpClientRequest>> handler) {
        (isWatch(requestURI) ? watches : requests).request(method, requestURI, handler);
    }

    @Override
    public Future<WebSocket> webSocket(WebSocketConnectOptions options) {
        return watches.webSocket(options);
    }

    @Override
    public void webSocket(WebSocketConnectOptions options, Handler<AsyncResult<WebSocket>> handler) {
        watches.webSocket(options, handler);
    }

    @Override
    public void webSocket(int port, String host, String requestURI, Handler<AsyncResult<WebSocket>> handler) {
        watches.webSocket(port, host, requestURI, handler);
    }

    @Override
    public Future<WebSocket> webSocket(int port, String host, String requestURI) {
        return watches.webSocket(port, host, requestURI);
    }

    @Override
    public void webSocket(String host, String requestURI, Handler<AsyncResult<WebSocket>> handler) {
        watches.webSocket(host, requestURI, handler);
    }

    @Override
    public Future<WebSocket> webSocket(String host, String requestURI) {
        return watches.webSocket(host, requestURI);
    }

    @Override
    public void webSocket(String requestURI, Handler<AsyncResult<WebSocket>> handler) {
        watches.webSocket(requestURI, handler);
    }

    @Override
    public Future<WebSocket> webSocket(String requestURI) {
        return watches.webSocket(requestURI);
    }

    @Override
    public void webSocketAbs(String url, MultiMap headers, WebsocketVersion version, List<String> subProtocols,
            Handler<AsyncResult<WebSocket>> handler) {
        watches.webSocketAbs(url, headers, version, subProtocols, handler);
    }

    @Override
    public Future<WebSocket> webSocketAbs(String url, MultiMap headers, WebsocketVersion version, List<String> subProtocols) {
        return watches.webSocketAbs(url, headers, version, subProtocols);
    }

    @Override
    public Future<Boolean> updateSSLOptions(SSLOptions options, boolean force) {
        return Future.all(requests.updateSSLOptions(options, force), watches.updateSSLOptions(options, force))
                .map(all -> all.<Boolean>resultAt(0) && all.<Boolean>resultAt(1));
    }

    @Override
    public HttpClient connectionHandler(Handler<HttpConnection> handler) {
        requests.connectionHandler(handler);
        watches.connectionHandler(handler);
        return this;
    }

    @Override
    public HttpClient redirectHandler(Function<HttpClientResponse, Future<RequestOptions>> handler) {
        requests.redirectHandler(handler);
        watches.redirectHandler(handler);
        return this;
    }

    @Override
    public Function<HttpClientResponse, Future<RequestOptions>> redirectHandler() {
        return requests.redirectHandler();
    }

    @Override
    public void close(Handler<AsyncResult<Void>> handler) {
        close().onComplete(handler);
    }

    @Override
    public Future<Void> close() {
        return Future.join(requests.close(), watches.close()).mapEmpty();
    }
}
