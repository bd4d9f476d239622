package io.qkcm.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy in front of the API server whose connections can be stalled: while stalled, bytes are
 * read but not passed on (no reset, no close), as a network that drops packets without telling — the
 * case in which a request hangs rather than fails. TLS passes through untouched.
 */
public final class StallingProxy implements AutoCloseable {

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private volatile boolean stalled;
    private volatile boolean closed;

    public StallingProxy(URI apiServer) throws IOException {
        this.target = new InetSocketAddress(apiServer.getHost(), apiServer.getPort());
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::accept, "stalling-proxy-accept");
        accept.setDaemon(true);
        accept.start();
    }

    /** {@code https://127.0.0.1:<port>}: the address to give a client instead of the API server's. */
    public String url() {
        return "https://127.0.0.1:" + server.getLocalPort();
    }

    public void stall() {
        stalled = true;
    }

    public void resume() {
        synchronized (gate) {
            stalled = false;
            gate.notifyAll();
        }
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket();
                upstream.connect(target);
                sockets.add(client);
                sockets.add(upstream);
                pump(client, upstream);
                pump(upstream, client);
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    synchronized (gate) {
                        while (stalled && !closed) {
                            gate.wait();
                        }
                    }
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // the other side went away
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "stalling-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        closed = true;
        resume();
        try {
            server.close();
        } catch (IOException e) {
            // closing anyway
        }
        sockets.forEach(StallingProxy::closeQuietly);
    }
}
