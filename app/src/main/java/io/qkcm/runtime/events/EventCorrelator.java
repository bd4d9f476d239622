package io.qkcm.runtime.events;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.qkcm.runtime.flowcontrol.TokenBucket;

/**
 * client-go's EventCorrelator: a spam filter (per source and object: burst 25, one more every 5
 * minutes), an aggregator (more than 10 similar events with different messages within 10 minutes
 * become one "(combined from similar events): ..." event) and an observer that turns a repeat of a
 * known event into a count increment of the existing Event instead of a new object.
 */
final class EventCorrelator {

    static final int MAX_LRU = 4096;
    static final int SPAM_BURST = 25;
    static final double SPAM_QPS = 1.0 / 300.0;
    static final int AGGREGATE_MAX_EVENTS = 10;
    static final long AGGREGATE_INTERVAL_SECONDS = 600;

    record Result(Event event, boolean update, boolean skip) {
    }

    private record Aggregate(Set<String> messages, Instant last) {
    }

    private record Observed(int count, String firstTimestamp, String name, String resourceVersion) {
    }

    private final Map<String, TokenBucket> spam = lru();
    private final Map<String, Aggregate> aggregates = lru();
    private final Map<String, Observed> observed = lru();

    private static <V> Map<String, V> lru() {
        return new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
                return size() > MAX_LRU;
            }
        };
    }

    synchronized Result correlate(Event event) {
        String spamKey = join(event.getSource().getComponent(), event.getSource().getHost(), object(event), event.getType());
        TokenBucket bucket = spam.computeIfAbsent(spamKey, k -> new TokenBucket(SPAM_QPS, SPAM_BURST));
        if (bucket.reserve() > 0) {
            bucket.refund();
            return new Result(event, false, true);
        }
        Event aggregated = aggregate(event);
        String key = aggregated == event ? eventKey(event) : aggregateKey(event);
        Observed last = observed.get(key);
        if (last == null) {
            return new Result(aggregated, false, false);
        }
        Event repeat = new EventBuilder(aggregated).editMetadata().withName(last.name())
                .withResourceVersion(last.resourceVersion()).endMetadata()
                .withCount(last.count() + 1).withFirstTimestamp(last.firstTimestamp()).build();
        observed.put(key, new Observed(last.count() + 1, last.firstTimestamp(), last.name(), last.resourceVersion()));
        return new Result(repeat, true, false);
    }

    private Event aggregate(Event event) {
        String key = aggregateKey(event);
        Instant now = Instant.now();
        Aggregate record = aggregates.get(key);
        if (record == null || record.last().plusSeconds(AGGREGATE_INTERVAL_SECONDS).isBefore(now)) {
            record = new Aggregate(new HashSet<>(), now);
        }
        record.messages().add(event.getMessage());
        aggregates.put(key, new Aggregate(record.messages(), now));
        if (record.messages().size() < AGGREGATE_MAX_EVENTS) {
            return event;
        }
        // keep the set bounded, as upstream's PopAny
        String any = record.messages().iterator().next();
        record.messages().remove(any);
        String ts = now.truncatedTo(ChronoUnit.SECONDS).toString();
        return new EventBuilder(event).editMetadata().withName(event.getInvolvedObject().getName() + "."
                + Long.toHexString(now.getEpochSecond() * 1_000_000_000L + now.getNano())).endMetadata()
                .withMessage("(combined from similar events): " + event.getMessage())
                .withFirstTimestamp(ts).withLastTimestamp(ts).withCount(1).build();
    }

    /** Records what the server stored, so the next repeat patches the right object. */
    synchronized void updateState(Event written) {
        String key = written.getMessage() != null && written.getMessage().startsWith("(combined from similar events): ")
                ? aggregateKey(written) : eventKey(written);
        observed.put(key, new Observed(written.getCount() == null ? 1 : written.getCount(), written.getFirstTimestamp(),
                written.getMetadata().getName(), written.getMetadata().getResourceVersion()));
    }

    private static String object(Event e) {
        ObjectReference r = e.getInvolvedObject();
        return join(r.getKind(), r.getNamespace(), r.getName(), r.getUid(), r.getApiVersion());
    }

    private static String aggregateKey(Event e) {
        return join(e.getSource().getComponent(), e.getSource().getHost(), object(e), e.getType(), e.getReason());
    }

    private static String eventKey(Event e) {
        return join(aggregateKey(e), e.getInvolvedObject().getFieldPath(), e.getMessage());
    }

    private static String join(String... parts) {
        StringBuilder sb = new StringBuilder();
        for (String p : parts) {
            sb.append(p == null ? "" : p).append('\u0000');
        }
        return sb.toString();
    }
}
