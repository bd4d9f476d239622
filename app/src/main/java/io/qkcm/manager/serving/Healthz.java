package io.qkcm.manager.serving;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * k8s.io/apiserver's healthz handler (pkg/server/healthz), as kube-controller-manager mounts it: the root
 * path answers {@code ok}, or with {@code ?verbose} one {@code [+]name ok} line per check and
 * {@code <name> check passed}; {@code ?exclude=name} skips a check; any failed check gives 500 with the
 * per-check lines (reasons withheld) and {@code <name> check failed}. {@code <path>/<check>} runs one check.
 * With no checks registered the {@code ping} check stands in, as upstream.
 */
final class Healthz {

    static final String TEXT = "text/plain; charset=utf-8";

    private Healthz() {
    }

    /**
     * @param path   {@code /healthz}, {@code /livez} or {@code /readyz}
     * @param sub    the part after {@code path + "/"}, or null for the root
     * @param params query parameters (name to values); {@code verbose} and {@code exclude} are read
     */
    static Response handle(String path, String sub, Map<String, List<String>> params,
            Map<String, BooleanSupplier> registered) {
        Map<String, BooleanSupplier> checks = registered.isEmpty() ? Map.of("ping", () -> true) : registered;
        String name = path.substring(1);
        if (sub != null) {
            BooleanSupplier check = checks.get(sub);
            if (check == null) {
                return Response.notFound();
            }
            if (run(check)) {
                return Response.text(200, "ok");
            }
            return Response.text(500, "internal server error: " + sub + " check failed\n");
        }
        TreeSet<String> excluded = new TreeSet<>();
        params.getOrDefault("exclude", List.of()).forEach(excluded::add);
        TreeSet<String> unknownExcluded = new TreeSet<>(excluded);
        StringBuilder out = new StringBuilder();
        List<String> failed = new ArrayList<>();
        for (Map.Entry<String, BooleanSupplier> c : checks.entrySet()) {
            if (excluded.contains(c.getKey())) {
                unknownExcluded.remove(c.getKey());
                out.append("[+]").append(c.getKey()).append(" excluded: ok\n");
                continue;
            }
            if (run(c.getValue())) {
                out.append("[+]").append(c.getKey()).append(" ok\n");
            } else {
                out.append("[-]").append(c.getKey()).append(" failed: reason withheld\n");
                failed.add(c.getKey());
            }
        }
        if (!unknownExcluded.isEmpty()) {
            out.append("warn: some health checks cannot be excluded: no matches for ")
                    .append(unknownExcluded.stream().map(n -> "\"" + n + "\"").collect(Collectors.joining(",")))
                    .append('\n');
        }
        if (!failed.isEmpty()) {
            // http.Error: the message plus a newline
            return Response.text(500, out + name + " check failed\n");
        }
        if (!params.containsKey("verbose")) {
            return Response.text(200, "ok");
        }
        return Response.text(200, out + name + " check passed\n");
    }

    private static boolean run(BooleanSupplier check) {
        try {
            return check.getAsBoolean();
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** A response to write: status, content type and body. */
    record Response(int status, String contentType, String body, Map<String, String> headers) {

        static Response text(int status, String body) {
            Map<String, String> h = new LinkedHashMap<>();
            h.put("X-Content-Type-Options", "nosniff");
            return new Response(status, TEXT, body, h);
        }

        /** Go's http.NotFound. */
        static Response notFound() {
            return text(404, "404 page not found\n");
        }
    }
}
