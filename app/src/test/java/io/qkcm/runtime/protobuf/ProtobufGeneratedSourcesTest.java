package io.qkcm.runtime.protobuf;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The committed decoders are what {@link ProtobufDecoderGenerator} writes from the descriptors and model
 * classes on the class path today: a fabric8 or Kubernetes API upgrade that changes them fails here until
 * they are regenerated ({@code -Dqkcm.protobuf.regenerate=true} writes them instead of comparing).
 */
class ProtobufGeneratedSourcesTest {

    @Test
    void committedDecodersAreWhatTheGeneratorWrites() throws IOException {
        Map<String, String> generated = new ProtobufDecoderGenerator().generate();
        Path dir = ProtobufDecoderGenerator.OUTPUT;
        if (Boolean.getBoolean("qkcm.protobuf.regenerate")) {
            for (Map.Entry<String, String> file : generated.entrySet()) {
                Files.writeString(dir.resolve(file.getKey()), file.getValue());
            }
        }
        TreeSet<String> committed = new TreeSet<>();
        try (Stream<Path> files = Files.list(dir)) {
            files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith("Proto.java") || n.equals("ProtobufDecoders.java"))
                    .forEach(committed::add);
        }
        assertEquals(new TreeSet<>(generated.keySet()), committed, "generated files");
        for (Map.Entry<String, String> file : generated.entrySet()) {
            assertEquals(file.getValue(), Files.readString(dir.resolve(file.getKey())),
                    file.getKey() + " differs from what ProtobufDecoderGenerator writes: regenerate it");
        }
    }
}
