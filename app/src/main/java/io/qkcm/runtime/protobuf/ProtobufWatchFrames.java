package io.qkcm.runtime.protobuf;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The frames of a protobuf watch stream: each a 4-byte big-endian length and that many bytes
 * (upstream's LengthDelimitedFramer). Read from a blocking {@link InputStream} ({@link #next()}) or fed
 * chunk by chunk as an HTTP client hands them over ({@link #feed(ByteBuffer)}).
 */
public final class ProtobufWatchFrames {

    /** A frame longer than this is not believed (upstream's watch decoder refuses frames past 16 MiB too). */
    static final int MAX_FRAME = 16 * 1024 * 1024 + 1024;

    private final DataInputStream in;
    private final ByteBuffer header = ByteBuffer.allocate(4);
    private ByteBuffer body;

    /** Reads frames from {@code in} with {@link #next()}. */
    public ProtobufWatchFrames(InputStream in) {
        this.in = new DataInputStream(in);
    }

    /** Frames fed with {@link #feed(ByteBuffer)}. */
    public ProtobufWatchFrames() {
        this.in = null;
    }

    /** The next frame, or null at the end of the stream (between frames). */
    public byte[] next() throws IOException {
        int length;
        try {
            length = in.readInt();
        } catch (EOFException e) {
            return null;
        }
        byte[] frame = new byte[checked(length)];
        in.readFully(frame);
        return frame;
    }

    /** The frames {@code chunk} completes (a frame may span chunks; a chunk may hold several). */
    public List<byte[]> feed(ByteBuffer chunk) throws IOException {
        List<byte[]> frames = new ArrayList<>();
        while (chunk.hasRemaining()) {
            if (body == null) {
                while (header.hasRemaining() && chunk.hasRemaining()) {
                    header.put(chunk.get());
                }
                if (header.hasRemaining()) {
                    break;
                }
                body = ByteBuffer.allocate(checked(header.flip().getInt()));
                header.clear();
                if (!body.hasRemaining()) {
                    frames.add(body.array());
                    body = null;
                    continue;
                }
            }
            int n = Math.min(body.remaining(), chunk.remaining());
            ByteBuffer slice = chunk.slice(chunk.position(), n);
            body.put(slice);
            chunk.position(chunk.position() + n);
            if (!body.hasRemaining()) {
                frames.add(body.array());
                body = null;
            }
        }
        return frames;
    }

    private static int checked(int length) throws IOException {
        if (length < 0 || length > MAX_FRAME) {
            throw Decoding.malformed("watch frame of " + Integer.toUnsignedString(length) + " bytes");
        }
        return length;
    }
}
