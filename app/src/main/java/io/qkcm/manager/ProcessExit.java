package io.qkcm.manager;

import jakarta.enterprise.context.ApplicationScoped;

/**
 * How the process ends after a lost lease: upstream's {@code klog.FlushAndExit(..., 1)} — at once,
 * without the shutdown sequence (which would wait for syncs in flight while another replica already
 * leads). A bean, so a test can replace it with an {@code @Alternative} that records the code.
 */
@ApplicationScoped
public class ProcessExit {

    public void exit(int code) {
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(code);
    }
}
