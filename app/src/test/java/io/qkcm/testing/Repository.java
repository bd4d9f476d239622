package io.qkcm.testing;

import java.nio.file.Path;

/**
 * The repository's files outside the application module: tests run in the module's directory (app/, Maven's
 * and the IDEs' working directory for a module's tests), so its own src/ and target/ are relative paths and
 * the launcher, the scripts, the images and deploy/ are one level up.
 */
public final class Repository {

    /** The repository's root: where bin/, hack/, bench/, deploy/ and the Dockerfiles are. */
    public static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    private Repository() {
    }

    /** A file of the repository, by its path from the root (e.g. {@code bin/qkcm}). */
    public static Path file(String path) {
        return ROOT.resolve(path);
    }
}
