package io.qkcm.controller;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

/**
 * Upstream's slowStartBatch: calls {@code fn} {@code count} times in batches of growing size
 * (initial, then doubling: 1, 2, 4, …), the calls of a batch in parallel. The first batch with a
 * failure ends the run: later batches are skipped, so a controller hitting a quota or an admission
 * error makes one failing call, not hundreds.
 */
public final class SlowStart {

    /** Upstream's SlowStartInitialBatchSize. */
    public static final int INITIAL_BATCH_SIZE = 1;

    private SlowStart() {
    }

    /** How many calls succeeded, and the first failure of the failing batch (null if none failed). */
    public record Result(int successes, Exception error) {
    }

    public static Result run(int count, int initialBatchSize, ExecutorService executor, Callable<?> fn)
            throws InterruptedException {
        int remaining = count;
        int successes = 0;
        for (int batchSize = Math.min(remaining, initialBatchSize); batchSize > 0; batchSize = Math.min(2 * batchSize,
                remaining)) {
            List<Future<?>> futures = new ArrayList<>(batchSize);
            for (int i = 0; i < batchSize; i++) {
                futures.add(executor.submit(fn));
            }
            Exception firstError = null;
            int failures = 0;
            for (Future<?> f : futures) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    failures++;
                    if (firstError == null) {
                        firstError = e.getCause() instanceof Exception ex ? ex : new RuntimeException(e.getCause());
                    }
                }
            }
            successes += batchSize - failures;
            if (firstError != null) {
                return new Result(successes, firstError);
            }
            remaining -= batchSize;
        }
        return new Result(successes, null);
    }
}
