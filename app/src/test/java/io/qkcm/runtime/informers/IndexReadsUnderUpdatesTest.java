package io.qkcm.runtime.informers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.qkcm.testing.RealApiServer;

/**
 * The over-create's mechanism, live: a pod informer watching a real API server while every pod of a
 * namespace is updated over and over (as kwok's status updates after a burst). An unlocked fabric8
 * {@code byIndex} sees the namespace one pod short now and then — what made the ReplicaSet controller
 * create a pod beyond spec; {@link Indexes#byIndex} never does, neither holding the lock of a plain
 * fabric8 cache nor reading the shared informers' store ({@link IndexedItemStore}) without one.
 */
class IndexReadsUnderUpdatesTest {

    private static final int PODS = 100;

    @Test
    void updatesNeverHideAPodFromLockedIndexReads() throws Exception {
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            String ns = "index-reads-" + Long.toString(System.nanoTime(), 36);
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                    .create();
            for (int i = 0; i < PODS; i++) {
                client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName("p" + i).endMetadata()
                        .withNewSpec().addNewContainer().withName("c").withImage("pause").endContainer().endSpec().build())
                        .create();
            }
            SharedIndexInformer<Pod> informer = client.pods().inNamespace(ns).runnableInformer(0);
            informer.start().toCompletableFuture().get();
            await().atMost(Duration.ofSeconds(60)).until(() -> informer.getStore().list().size() == PODS);
            SharedIndexInformer<Pod> indexed = client.pods().inNamespace(ns).runnableInformer(0);
            indexed.itemStore(new IndexedItemStore<>());
            indexed.start().toCompletableFuture().get();
            await().atMost(Duration.ofSeconds(60)).until(() -> indexed.getStore().list().size() == PODS);
            assertThat(IndexedItemStore.of(indexed.getIndexer())).isNotNull();

            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong updates = new AtomicLong();
            AtomicLong rawShort = new AtomicLong();
            AtomicLong lockedShort = new AtomicLong();
            AtomicLong lockedReads = new AtomicLong();
            AtomicLong indexedShort = new AtomicLong();
            AtomicLong indexedReads = new AtomicLong();
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                int first = w;
                threads.add(new Thread(() -> {
                    long n = 0;
                    while (!stop.get()) {
                        for (int i = first; i < PODS && !stop.get(); i += 4) {
                            client.pods().inNamespace(ns).withName("p" + i).patch(PatchContext.of(PatchType.JSON_MERGE),
                                    "{\"metadata\":{\"annotations\":{\"n\":\"" + (n++) + "\"}}}");
                            updates.incrementAndGet();
                        }
                    }
                }, "pod-updater-" + w));
            }
            threads.add(new Thread(() -> {
                while (!stop.get()) {
                    if (informer.getIndexer().byIndex(Cache.NAMESPACE_INDEX, ns).size() < PODS) {
                        rawShort.incrementAndGet();
                    }
                }
            }, "unlocked-reader"));
            threads.add(new Thread(() -> {
                while (!stop.get()) {
                    if (Indexes.byIndex(informer, Cache.NAMESPACE_INDEX, ns).size() < PODS) {
                        lockedShort.incrementAndGet();
                    }
                    lockedReads.incrementAndGet();
                }
            }, "locked-reader"));
            threads.add(new Thread(() -> {
                while (!stop.get()) {
                    if (Indexes.byIndex(indexed, Cache.NAMESPACE_INDEX, ns).size() < PODS) {
                        indexedShort.incrementAndGet();
                    }
                    indexedReads.incrementAndGet();
                }
            }, "object-index-reader"));
            threads.forEach(Thread::start);
            try {
                // until the unlocked reader has been caught out a few times, with thousands of updates
                await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(500))
                        .until(() -> rawShort.get() >= 3 && updates.get() >= 2_000);
            } finally {
                stop.set(true);
                for (Thread t : threads) {
                    t.join(30_000);
                }
                informer.stop();
                indexed.stop();
            }
            System.out.printf("index reads under updates: %d pod updates; unlocked reads one pod short: %d; locked reads: %d,"
                    + " short: %d; object-index reads: %d, short: %d%n", updates.get(), rawShort.get(), lockedReads.get(),
                    lockedShort.get(), indexedReads.get(), indexedShort.get());
            assertThat(lockedReads.get()).isPositive();
            assertThat(lockedShort.get()).as("locked reads that missed a pod (of %d, during %d updates; unlocked: %d)",
                    lockedReads.get(), updates.get(), rawShort.get()).isZero();
            assertThat(indexedReads.get()).isPositive();
            assertThat(indexedShort.get()).as("object-index reads that missed a pod (of %d, during %d updates; unlocked: %d)",
                    indexedReads.get(), updates.get(), rawShort.get()).isZero();
        }
    }
}
