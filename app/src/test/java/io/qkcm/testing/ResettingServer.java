package io.qkcm.testing;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Accepts connections, reads what arrives, and answers each with a TCP reset: the request went out,
 * its answer never comes. Counts the requests it read, so a test sees whether a client re-sent one.
 */
public final class ResettingServer implements AutoCloseable {

    private final ServerSocket server;
    public final AtomicInteger requests = new AtomicInteger();

    public ResettingServer() throws Exception {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(() -> {
            while (!server.isClosed()) {
                try {
                    Socket s = server.accept();
                    InputStream in = s.getInputStream();
                    if (in.read(new byte[65536]) > 0) {
                        requests.incrementAndGet();
                    }
                    s.setSoLinger(true, 0);
                    s.close();
                } catch (Exception e) {
                    // closed
                }
            }
        }, "resetting-server");
        t.setDaemon(true);
        t.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    @Override
    public void close() throws Exception {
        server.close();
    }
}
