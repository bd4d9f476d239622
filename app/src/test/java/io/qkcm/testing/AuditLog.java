package io.qkcm.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/** The API server's audit log (one JSON event per line): who sent which request, with what user agent. */
public final class AuditLog {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Verbs that change state. */
    public static final Set<String> WRITES = Set.of("create", "update", "patch", "delete", "deletecollection");

    /** One ResponseComplete (or Panic) audit event. */
    public record Entry(Instant time, String user, String userAgent, String verb, String resource, String namespace,
            String name, int code, String uri) {

        public boolean isWrite() {
            return WRITES.contains(verb);
        }

        @Override
        public String toString() {
            return time + " " + user + " " + verb + " " + uri + " -> " + code + " (" + userAgent + ")";
        }
    }

    private final Path path;

    public AuditLog(Path path) {
        this.path = path;
    }

    public List<Entry> entries() {
        return read(false);
    }

    /**
     * Long-running requests (watches) as they start: their ResponseComplete comes only when the watch
     * ends, so a watch still open is seen only here.
     */
    public List<Entry> started() {
        return read(true);
    }

    private List<Entry> read(boolean started) {
        List<String> lines;
        try {
            lines = Files.exists(path) ? Files.readAllLines(path) : List.of();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<Entry> entries = new ArrayList<>();
        for (String line : lines) {
            if (line.isBlank()) {
                continue;
            }
            try {
                JsonNode n = JSON.readTree(line);
                if (!(started ? "ResponseStarted" : "ResponseComplete").equals(n.path("stage").asText())) {
                    continue;
                }
                JsonNode ref = n.path("objectRef");
                entries.add(new Entry(Instant.parse(n.path("stageTimestamp").asText()),
                        n.path("user").path("username").asText(), n.path("userAgent").asText(),
                        n.path("verb").asText(), ref.path("resource").asText(), ref.path("namespace").asText(),
                        ref.path("name").asText(), n.path("responseStatus").path("code").asInt(),
                        n.path("requestURI").asText()));
            } catch (IOException e) {
                // a line being written right now; the next read sees it whole
            }
        }
        return entries;
    }

    public List<Entry> entries(Predicate<Entry> filter) {
        return entries().stream().filter(filter).toList();
    }

    public List<Entry> by(String user) {
        return entries(e -> e.user().equals(user));
    }
}
