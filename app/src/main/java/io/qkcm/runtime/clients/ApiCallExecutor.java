package io.qkcm.runtime.clients;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jboss.logging.Logger;

/**
 * The threads a controller makes its concurrent API calls on (the creations of a slow-start batch,
 * the deletions of a scale-down), where upstream starts a goroutine per call. By default a pool of
 * {@code threads} platform threads whose idle threads end after 30 s; with {@code virtualThreads}
 * ({@code qkcm.tuning.virtual-threads}, {@code context.options().tuning().virtualThreads()}) on a JDK with
 * virtual threads (21+), a virtual thread per call, as upstream's goroutines (the QPS limit of the client
 * still bounds the rate).
 */
public final class ApiCallExecutor {

    private static final Logger LOG = Logger.getLogger(ApiCallExecutor.class);

    private ApiCallExecutor() {
    }

    public static ExecutorService create(String name, int threads, boolean virtualThreads) {
        if (virtualThreads) {
            try {
                // reflection: the code is compiled for Java 17, which has no virtual threads
                return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
            } catch (ReflectiveOperationException | RuntimeException e) {
                LOG.warnf("qkcm.tuning.virtual-threads=true, but this JVM (Java %s) has no virtual threads: a pool of %d threads instead",
                        Runtime.version().feature(), threads);
            }
        }
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, name + "-api-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }
}
