package io.qkcm.controller.tainteviction;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Upstream's timed_workers_test.go on the fake clock: immediate and delayed work, cancel, cancel and re-add. */
class TimedWorkerQueueTest {

    private final ExecutorService executor = Executors.newFixedThreadPool(4);
    private final Instant now = Instant.parse("2026-01-01T00:00:00Z");
    private final Instant then = now.plusSeconds(10);
    private final FakeClock clock = new FakeClock(now);
    private final List<String> ran = new CopyOnWriteArrayList<>();

    @AfterEach
    void tearDown() {
        executor.shutdownNow();
    }

    private TimedWorkerQueue queue(CountDownLatch done) {
        return new TimedWorkerQueue((namespace, name, fireAt) -> {
            ran.add(namespace + "/" + name);
            done.countDown();
        }, clock, executor);
    }

    private void addFiveTwice(TimedWorkerQueue queue, Instant fireAt) {
        for (int round = 0; round < 2; round++) {
            for (int i = 1; i <= 5; i++) {
                queue.addWork("" + i, "" + i, now, fireAt);
            }
        }
    }

    @Test
    void workDueNowRunsWithoutATimer() throws InterruptedException {
        CountDownLatch done = new CountDownLatch(5);
        TimedWorkerQueue queue = queue(done);
        for (int i = 1; i <= 5; i++) {
            queue.addWork("" + i, "" + i, now, now);
        }
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(ran).containsExactlyInAnyOrder("1/1", "2/2", "3/3", "4/4", "5/5");
        assertThat(clock.pendingTimers()).isZero();
    }

    @Test
    void delayedWorkRunsOnceWhenTheClockReachesIt() throws InterruptedException {
        CountDownLatch done = new CountDownLatch(5);
        TimedWorkerQueue queue = queue(done);
        addFiveTwice(queue, then);
        assertThat(clock.pendingTimers()).isEqualTo(5);
        clock.step(Duration.ofSeconds(9));
        assertThat(done.getCount()).isEqualTo(5);
        assertThat(queue.getWorkerUnsafe("1/1").fireAt()).isEqualTo(then);
        clock.step(Duration.ofSeconds(2));
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(ran).containsExactlyInAnyOrder("1/1", "2/2", "3/3", "4/4", "5/5");
    }

    @Test
    void cancelledWorkDoesNotRun() throws InterruptedException {
        CountDownLatch done = new CountDownLatch(3);
        TimedWorkerQueue queue = queue(done);
        addFiveTwice(queue, then);
        assertThat(queue.cancelWork("2/2")).isTrue();
        assertThat(queue.cancelWork("4/4")).isTrue();
        assertThat(queue.cancelWork("4/4")).isFalse();
        clock.step(Duration.ofSeconds(11));
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        executor.shutdown();
        assertThat(executor.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        assertThat(ran).containsExactlyInAnyOrder("1/1", "3/3", "5/5");
    }

    @Test
    void cancelledAndAddedAgainRuns() throws InterruptedException {
        CountDownLatch done = new CountDownLatch(4);
        TimedWorkerQueue queue = queue(done);
        addFiveTwice(queue, then);
        queue.cancelWork("2/2");
        queue.cancelWork("4/4");
        queue.addWork("2", "2", now, then);
        clock.step(Duration.ofSeconds(11));
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        executor.shutdown();
        assertThat(executor.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        assertThat(ran).containsExactlyInAnyOrder("1/1", "2/2", "3/3", "5/5");
    }

    @Test
    void runningWorkIsNotCancelledNorAddedAgain() throws InterruptedException {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        TimedWorkerQueue queue = new TimedWorkerQueue((namespace, name, fireAt) -> {
            ran.add(namespace + "/" + name);
            started.countDown();
            release.await();
        }, clock, executor);
        queue.addWork("ns", "p", now, now);
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        // the key is held while the work runs, without a timer: no second run, nothing to cancel
        queue.addWork("ns", "p", now, now);
        assertThat(queue.getWorkerUnsafe("ns/p")).isNull();
        assertThat(queue.cancelWork("ns/p")).isFalse();
        release.countDown();
        executor.shutdown();
        assertThat(executor.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        assertThat(ran).containsExactly("ns/p");
    }
}
