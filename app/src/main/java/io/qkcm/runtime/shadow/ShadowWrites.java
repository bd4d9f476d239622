package io.qkcm.runtime.shadow;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.qkcm.runtime.Json;
import io.qkcm.runtime.shadow.ShadowAction.Side;

/**
 * The shadow mode's write layer, one per API client: every mutating request leaves with
 * {@code dryRun=All}, so the API server admits, validates, defaults and answers it as it would the
 * real write, and persists nothing; the controller gets that answer and goes on as if it had written.
 * Each request and its answer become a {@link ShadowAction} for the {@link ShadowMatcher}.
 * <p>
 * Requests that persist nothing are sent as they are: reviews (TokenReview, SubjectAccessReview, ...)
 * and TokenRequests ({@code serviceaccounts/token}). A mutating request that cannot be marked is refused
 * here, never sent.
 */
public final class ShadowWrites implements Interceptor {

    private static final Logger LOG = Logger.getLogger(ShadowWrites.class);
    static final String DRY_RUN = "dryRun=All";
    private static final Set<String> MUTATING = Set.of("POST", "PUT", "PATCH", "DELETE");

    private final String controller;
    private final ShadowMatcher matcher;
    private final Map<UUID, Capture> captures = new ConcurrentHashMap<>();

    public ShadowWrites(String controller, ShadowMatcher matcher) {
        this.controller = controller;
        this.matcher = matcher;
    }

    /** Whether a request is a write that shadow mode must turn into a dry run. */
    static boolean mutating(String method, URI uri) {
        if (!MUTATING.contains(method)) {
            return false;
        }
        ApiPath p = ApiPath.parse(uri.getRawPath());
        return p == null || !(p.resource().endsWith("reviews") || p.subresource().equals("token"));
    }

    @Override
    public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
        if (!mutating(request.method(), request.uri())) {
            return;
        }
        builder.uri(dryRun(request.uri()));
    }

    static URI dryRun(URI uri) {
        String query = uri.getRawQuery();
        if (query != null && (query.equals(DRY_RUN) || query.startsWith(DRY_RUN + "&") || query.contains("&" + DRY_RUN))) {
            return uri;
        }
        try {
            return new URI(uri.getScheme(), uri.getRawAuthority(), uri.getRawPath(),
                    query == null || query.isEmpty() ? DRY_RUN : query + "&" + DRY_RUN, uri.getRawFragment())
                    .normalize();
        } catch (URISyntaxException e) {
            throw new KubernetesClientException("shadow mode: cannot mark " + uri + " as a dry run; not sent", e);
        }
    }

    @Override
    public AsyncBody.Consumer<List<ByteBuffer>> consumer(AsyncBody.Consumer<List<ByteBuffer>> consumer, HttpRequest request) {
        if (!mutating(request.method(), request.uri())) {
            return consumer;
        }
        String query = request.uri().getRawQuery();
        if (query == null || !(query.equals(DRY_RUN) || query.startsWith(DRY_RUN + "&") || query.contains("&" + DRY_RUN))) {
            // an interceptor after this one dropped the mark: never let a real write out
            throw new KubernetesClientException("shadow mode: " + request.method() + " " + request.uri().getPath()
                    + " lost its dryRun mark; not sent");
        }
        Capture capture = new Capture(request.method(), request.uri(), request.bodyString());
        captures.put(request.id(), capture);
        return new AsyncBody.Consumer<>() {
            @Override
            public void consume(List<ByteBuffer> buffers, AsyncBody body) throws Exception {
                capture.append(buffers, body, () -> finish(request.id()));
                consumer.consume(buffers, body);
            }

            @Override
            public <U> U unwrap(Class<U> target) {
                return consumer.unwrap(target);
            }
        };
    }

    @Override
    public void after(HttpRequest request, HttpResponse<?> response, AsyncBody.Consumer<List<ByteBuffer>> consumer) {
        Capture c = captures.get(request.id());
        if (c != null) {
            c.code = response.code();
            if (response.code() >= 300) {
                // an error's body may be read past this interceptor's consumer: the code is what matters
                finish(request.id());
            }
        }
    }

    @Override
    public void afterConnectionFailure(HttpRequest request, Throwable failure) {
        captures.remove(request.id());
    }

    private void finish(UUID id) {
        Capture c = captures.remove(id);
        if (c == null) {
            return;
        }
        try {
            for (ShadowAction a : c.actions(controller, matcher.now())) {
                matcher.submit(a);
            }
        } catch (RuntimeException e) {
            LOG.debugf("shadow mode: cannot read %s %s: %s", c.method, c.uri.getPath(), e);
        }
    }

    /** One dry-run request and what came back. */
    static final class Capture {
        final String method;
        final URI uri;
        final String body;
        volatile int code;
        private final ByteArrayOutputStream response = new ByteArrayOutputStream();
        private boolean watching;

        Capture(String method, URI uri, String body) {
            this.method = method;
            this.uri = uri;
            this.body = body;
        }

        synchronized void append(List<ByteBuffer> buffers, AsyncBody body, Runnable done) {
            if (buffers != null) {
                for (ByteBuffer b : buffers) {
                    ByteBuffer d = b.duplicate();
                    byte[] bytes = new byte[d.remaining()];
                    d.get(bytes);
                    response.write(bytes, 0, bytes.length);
                }
            }
            if (!watching) {
                watching = true;
                body.done().whenComplete((v, e) -> {
                    if (e == null) {
                        done.run();
                    }
                });
            }
        }

        synchronized String response() {
            return response.toString(StandardCharsets.UTF_8);
        }

        /** The request as actions (a collection's delete is one per object it deletes; none when it deletes none). */
        @SuppressWarnings("unchecked")
        List<ShadowAction> actions(String controller, java.time.Instant now) {
            ApiPath p = ApiPath.parse(uri.getRawPath());
            if (p == null) {
                return List.of();
            }
            Map<String, Object> answer = parse(response());
            Map<String, Object> sent = parse(body);
            String verb = switch (method) {
                case "POST" -> p.name().isEmpty() ? "create" : "update"; // POST to a subresource (eviction, binding, ...)
                case "DELETE" -> "delete";
                default -> "update";
            };
            if (verb.equals("delete") && p.name().isEmpty()) {
                // a collection: the dry run lists what it would delete
                if (!(answer.get("items") instanceof List<?> items)) {
                    return List.of();
                }
                List<ShadowAction> out = new java.util.ArrayList<>();
                for (Object item : items) {
                    if (item instanceof Map<?, ?> m && m.get("metadata") instanceof Map<?, ?> meta) {
                        out.add(new ShadowAction(Side.QKCM, controller, "delete", p.groupResource(), "",
                                String.valueOf(((Map<String, Object>) meta).getOrDefault("namespace", p.namespace())),
                                String.valueOf(meta.get("name")), code, (Map<String, Object>) m, now));
                    }
                }
                return out;
            }
            boolean ok = code >= 200 && code < 300;
            Map<String, Object> object = ok && !"Status".equals(answer.get("kind")) ? answer : sent;
            if (p.group().isEmpty() && p.resource().equals("events")) {
                String key = Normalise.eventKey(object);
                return key == null ? List.of()
                        : List.of(new ShadowAction(Side.QKCM, controller, "event", "events", "", p.namespace(), key, code,
                                ok ? answer : sent, now));
            }
            String name = p.name();
            if (verb.equals("create")) {
                name = Normalise.createName(object, sent);
            }
            return List.of(new ShadowAction(Side.QKCM, controller, verb, p.groupResource(), p.subresource(),
                    p.namespace(), name, code, ok ? answer : (answer.isEmpty() ? null : answer), now));
        }

        @SuppressWarnings("unchecked")
        private static Map<String, Object> parse(String json) {
            if (json == null || json.isBlank() || json.charAt(0) != '{') {
                return Map.of();
            }
            try {
                return Json.mapper().readValue(json, Map.class);
            } catch (java.io.IOException e) {
                return Map.of();
            }
        }
    }

    /** The parts of an API path: /api/v1/... or /apis/group/version/..., namespaced or not. */
    record ApiPath(String group, String namespace, String resource, String name, String subresource) {

        String groupResource() {
            return group + "/" + resource;
        }

        static ApiPath parse(String path) {
            String[] s = path.replaceAll("^/+", "").split("/");
            int i;
            String group;
            if (s.length >= 2 && s[0].equals("api")) {
                group = "";
                i = 2;
            } else if (s.length >= 3 && s[0].equals("apis")) {
                group = s[1];
                i = 3;
            } else {
                return null;
            }
            String[] rest = java.util.Arrays.copyOfRange(s, i, s.length);
            String ns = "";
            // namespaces/{ns}/{resource}...: but namespaces/{name}[/status|/finalize] is the Namespace itself
            if (rest.length >= 3 && rest[0].equals("namespaces")
                    && !(rest.length == 3 && group.isEmpty() && (rest[2].equals("status") || rest[2].equals("finalize")))) {
                ns = rest[1];
                rest = java.util.Arrays.copyOfRange(rest, 2, rest.length);
            }
            if (rest.length == 0) {
                return null;
            }
            return new ApiPath(group, ns, rest[0], rest.length > 1 ? rest[1] : "", rest.length > 2 ? rest[2] : "");
        }
    }
}
