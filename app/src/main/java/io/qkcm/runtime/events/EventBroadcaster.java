package io.qkcm.runtime.events;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.runtime.clients.ProtobufWrites;

/**
 * client-go's event broadcaster writing core/v1 Events: events go through {@link EventCorrelator}
 * (spam filter, aggregation of similar events, counting of repeats) and are written by one
 * background thread, so recording never blocks a controller. A full buffer drops events, as upstream.
 */
public final class EventBroadcaster {

    private static final Logger LOG = Logger.getLogger(EventBroadcaster.class);
    /** Upstream's broadcaster buffer (maxQueuedEvents). */
    private static final int MAX_QUEUED = 1000;
    private static final int MAX_TRIES = 12;

    private final KubernetesClient client;
    private final EventCorrelator correlator = new EventCorrelator();
    private final ExecutorService writer;

    public EventBroadcaster(KubernetesClient client) {
        this.client = client;
        this.writer = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(MAX_QUEUED), r -> {
            Thread t = new Thread(r, "event-broadcaster");
            t.setDaemon(true);
            return t;
        }, (r, e) -> LOG.debug("event buffer full, dropping an event"));
    }

    /** A recorder whose events name {@code component} as their source, e.g. replicaset-controller. */
    public EventRecorder recorder(String component) {
        return (object, type, reason, message) -> {
            Instant now = Instant.now();
            Event event = newEvent(component, reference(object), type, reason, message, now);
            writer.execute(() -> write(event));
        };
    }

    static Event newEvent(String component, ObjectReference ref, String type, String reason, String message,
            Instant now) {
        String namespace = ref.getNamespace() == null || ref.getNamespace().isEmpty() ? "default" : ref.getNamespace();
        long nanos = now.getEpochSecond() * 1_000_000_000L + now.getNano();
        String ts = now.truncatedTo(ChronoUnit.SECONDS).toString();
        return new EventBuilder().withNewMetadata().withName(ref.getName() + "." + Long.toHexString(nanos))
                .withNamespace(namespace).endMetadata()
                .withInvolvedObject(ref).withReason(reason).withMessage(message).withType(type)
                .withFirstTimestamp(ts).withLastTimestamp(ts).withCount(1)
                .withNewSource().withComponent(component).endSource().build();
    }

    static ObjectReference reference(HasMetadata o) {
        return new ObjectReferenceBuilder().withApiVersion(o.getApiVersion()).withKind(o.getKind())
                .withNamespace(o.getMetadata().getNamespace()).withName(o.getMetadata().getName())
                .withUid(o.getMetadata().getUid()).withResourceVersion(o.getMetadata().getResourceVersion()).build();
    }

    private void write(Event event) {
        EventCorrelator.Result result = correlator.correlate(event);
        if (result.skip()) {
            return;
        }
        for (int attempt = 1; attempt <= MAX_TRIES; attempt++) {
            try {
                Event written = null;
                if (result.update()) {
                    try {
                        written = client.v1().events().inNamespace(result.event().getMetadata().getNamespace())
                                .withName(result.event().getMetadata().getName())
                                .edit(e -> {
                                    e.setCount(result.event().getCount());
                                    e.setLastTimestamp(result.event().getLastTimestamp());
                                    e.setMessage(result.event().getMessage());
                                    return e;
                                });
                    } catch (KubernetesClientException e) {
                        if (e.getCode() != 404) {
                            throw e;
                        }
                    }
                }
                if (written == null) {
                    Event create = new EventBuilder(result.event()).editMetadata().withResourceVersion(null).endMetadata()
                            .build();
                    written = ProtobufWrites.create(client, create.getMetadata().getNamespace(), create);
                }
                correlator.updateState(written);
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() >= 400 && e.getCode() < 500) {
                    // malformed, already exists, or the namespace is terminating: never retried upstream
                    LOG.debugf("server rejected event %s (will not retry): %s", event.getReason(), e.getMessage());
                    return;
                }
                LOG.debugf("unable to write event (may retry after sleeping): %s", e.getMessage());
            } catch (RuntimeException e) {
                LOG.debugf("unable to write event (may retry after sleeping): %s", e.toString());
            }
            try {
                // upstream sleeps ~10s between tries; keep the first retries quicker
                Thread.sleep(Math.min(10_000, 250L << Math.min(attempt, 6)));
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Lets queued events drain for at most {@code timeout}. */
    public void shutdown(Duration timeout) {
        writer.shutdown();
        try {
            writer.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
