package io.qkcm.runtime.clients;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

class ApiCallExecutorTest {

    @Test
    void aPoolOfNamedDaemonThreadsByDefault() throws Exception {
        ExecutorService pool = ApiCallExecutor.create("rs", 3, false);
        try {
            assertThat(pool).isInstanceOf(ThreadPoolExecutor.class);
            assertThat(((ThreadPoolExecutor) pool).getMaximumPoolSize()).isEqualTo(3);
            Thread t = pool.submit(Thread::currentThread).get(30, TimeUnit.SECONDS);
            assertThat(t.getName()).isEqualTo("rs-api-1");
            assertThat(t.isDaemon()).isTrue();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void virtualThreadsWhenAskedAndTheJvmHasThem() throws Exception {
        ExecutorService pool = ApiCallExecutor.create("rs", 3, true);
        try {
            Thread t = pool.submit(Thread::currentThread).get(30, TimeUnit.SECONDS);
            boolean virtual = (boolean) Thread.class.getMethod("isVirtual").invoke(t);
            if (Runtime.version().feature() >= 21) {
                assertThat(virtual).isTrue();
            } else {
                assertThat(pool).isInstanceOf(ThreadPoolExecutor.class); // Java 17: the pool, with a warning
            }
        } catch (NoSuchMethodException e) {
            assertThat(pool).isInstanceOf(ThreadPoolExecutor.class);
        } finally {
            pool.shutdownNow();
        }
    }
}
