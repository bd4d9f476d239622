package io.qkcm.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The last lines of a script's log, for assertion messages of the tests that run scripts. */
public final class LogTail {

    private LogTail() {
    }

    public static String of(Path file, int lines) {
        try {
            List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(" + file + " unreadable: " + e + ")";
        }
    }
}
