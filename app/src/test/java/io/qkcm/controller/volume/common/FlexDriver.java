package io.qkcm.controller.volume.common;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

/**
 * A real FlexVolume driver for tests: a shell script installed as {@code <plugin dir>/<vendor>~<driver>/<driver>}
 * that appends each call's arguments to a file and answers from a per-command answer file kept outside the
 * plugin directory (so changing an answer is no driver update), "Not supported" when there is none. An
 * optional {@code <command>.exit} file sets the exit status.
 */
public final class FlexDriver {

    public final Path pluginDir;
    public final String vendor;
    public final String driver;
    private final Path work;

    private FlexDriver(Path pluginDir, String vendor, String driver, Path work) {
        this.pluginDir = pluginDir;
        this.vendor = vendor;
        this.driver = driver;
        this.work = work;
    }

    /** Prepares a driver (answers and call log in {@code work}); {@link #install} puts it in the plugin dir. */
    public static FlexDriver of(Path pluginDir, String vendor, String driver, Path work) {
        try {
            Files.createDirectories(work.resolve("answers"));
            Files.writeString(work.resolve("calls.log"), "");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new FlexDriver(pluginDir, vendor, driver, work);
    }

    /** The plugin (and driver) name: {@code vendor/driver}. */
    public String name() {
        return vendor + "/" + driver;
    }

    public FlexDriver answer(String command, String json) {
        return answer(command, json, 0);
    }

    public FlexDriver answer(String command, String json, int exit) {
        try {
            Files.writeString(work.resolve("answers").resolve(command), json + "\n");
            Files.writeString(work.resolve("answers").resolve(command + ".exit"), Integer.toString(exit));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Writes the script elsewhere and moves it in, so the prober never runs a half-written file. */
    public FlexDriver install() {
        String script = "#!/bin/sh\n"
                + "echo \"$*\" >> '" + work.resolve("calls.log") + "'\n"
                + "f='" + work.resolve("answers") + "'/\"$1\"\n"
                + "if [ -f \"$f\" ]; then cat \"$f\"; else echo '{\"status\": \"Not supported\"}'; fi\n"
                + "if [ -f \"$f.exit\" ]; then exit $(cat \"$f.exit\"); fi\n"
                + "exit 0\n";
        try {
            Path staged = work.resolve(driver + ".staged");
            Files.writeString(staged, script);
            Files.setPosixFilePermissions(staged, PosixFilePermissions.fromString("rwxr-xr-x"));
            Path dir = pluginDir.resolve(vendor + "~" + driver);
            Files.createDirectories(dir);
            Files.move(staged, dir.resolve(driver), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Each call's arguments, one line per call. */
    public List<String> calls() {
        try {
            return Files.readAllLines(work.resolve("calls.log")).stream().filter(l -> !l.isEmpty()).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The calls of one command. */
    public List<String> calls(String command) {
        return calls().stream().filter(l -> l.equals(command) || l.startsWith(command + " ")).toList();
    }
}
