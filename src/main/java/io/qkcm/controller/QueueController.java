package io.qkcm.controller;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.jboss.logging.Logger;

/**
 * The usual upstream controller shape: event handlers enqueue keys, {@code workers} threads take
 * keys and call {@link #sync}; a failed sync is retried with the queue's rate-limited backoff, a
 * successful one resets it. Workers start only after the informers this controller reads have synced.
 */
public abstract class QueueController<K> implements Controller {

    protected final Logger log = Logger.getLogger(getClass());
    protected final ControllerContext context;
    protected final WorkQueue<K> queue;
    private final String name;
    private final int workers;
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicInteger liveWorkers = new AtomicInteger();
    private volatile boolean started;

    protected QueueController(ControllerContext context, String name, String queueName, int workers) {
        this.context = context;
        this.name = name;
        this.workers = workers;
        this.queue = context.newQueue(queueName);
    }

    /** With a queue of the controller's own making (a rate limiter other than the default). */
    protected QueueController(ControllerContext context, String name, WorkQueue<K> queue, int workers) {
        this.context = context;
        this.name = name;
        this.workers = workers;
        this.queue = queue;
    }

    @Override
    public String name() {
        return name;
    }

    /** Handles one key. Throwing requeues it with backoff. */
    protected abstract void sync(K key) throws Exception;

    /** The informers that must have synced before the first sync. */
    protected abstract List<io.fabric8.kubernetes.client.informers.SharedIndexInformer<?>> informers();

    @Override
    public synchronized void start() {
        if (started) {
            return;
        }
        started = true;
        for (int i = 0; i < workers; i++) {
            Thread t = new Thread(this::runWorker, name + "-worker-" + i);
            t.setDaemon(true);
            threads.add(t);
            liveWorkers.incrementAndGet();
            t.start();
        }
        log.infof("Starting %s with %d workers", name, workers);
    }

    private void runWorker() {
        try {
            context.informers().waitForSync(informers());
            while (processNextItem()) {
                // keep going until the queue shuts down
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            liveWorkers.decrementAndGet();
        }
    }

    private boolean processNextItem() throws InterruptedException {
        K key = queue.get();
        if (key == null) {
            return false;
        }
        try {
            sync(key);
            queue.forget(key);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            handleError(key, e);
        } finally {
            queue.done(key);
        }
        return true;
    }

    /** Logs and requeues with backoff; conflicts and stale caches are normal and end up here. */
    protected void handleError(K key, Exception e) {
        if (e instanceof io.fabric8.kubernetes.client.KubernetesClientException kce && kce.getCode() == 409) {
            log.debugf("%s: conflict syncing %s, retrying: %s", name, key, kce.getMessage());
        } else {
            // fabric8's messages embed the whole Status object; the first 300 characters say what failed
            String message = String.valueOf(e.getMessage());
            log.errorf("%s: error syncing %s (retry %d): %s", name, key, queue.numRequeues(key),
                    message.length() > 300 ? message.substring(0, 300) + "..." : message);
            log.debug("sync failure", e);
        }
        queue.addRateLimited(key);
    }

    @Override
    public void shutdown(Duration timeout) throws InterruptedException {
        boolean drained = queue.shutDownWithDrain(timeout);
        if (!drained) {
            log.warnf("%s: syncs still in flight after %s, stopping anyway", name, timeout);
        }
    }

    @Override
    public boolean healthy() {
        return !started || queue.shuttingDown() || liveWorkers.get() == workers;
    }
}
