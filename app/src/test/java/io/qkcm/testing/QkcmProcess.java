package io.qkcm.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * qkcm as a real OS process: the packaged app ({@code target/quarkus-app/quarkus-run.jar}) or the
 * {@code bin/qkcm} launcher, with stdout and stderr captured to files under target/it-logs.
 */
public final class QkcmProcess implements AutoCloseable {

    public static final Path APP = Path.of(System.getProperty("qkcm.it.app", "target/quarkus-app/quarkus-run.jar"));
    public static final Path LAUNCHER = Repository.file("bin/qkcm");
    private static final Path LOGS = Path.of("target/it-logs");

    private final String name;
    private final Process process;
    private final Path stdout;
    private final Path stderr;

    private QkcmProcess(String name, List<String> command, Map<String, String> env) {
        this.name = name;
        try {
            Files.createDirectories(LOGS);
            stdout = LOGS.resolve(name + ".stdout.log");
            stderr = LOGS.resolve(name + ".stderr.log");
            ProcessBuilder pb = new ProcessBuilder(command).redirectOutput(stdout.toFile())
                    .redirectError(stderr.toFile());
            pb.environment().putAll(env);
            process = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code java -jar quarkus-run.jar args} with a fast-starting JVM. */
    public static QkcmProcess java(String name, Map<String, String> env, List<String> args) {
        return java(name, env, List.of(), args);
    }

    public static QkcmProcess java(String name, Map<String, String> env, List<String> jvmOptions, List<String> args) {
        if (!Files.exists(APP)) {
            throw new IllegalStateException(APP + " is missing: run mvn package first");
        }
        List<String> command = new ArrayList<>(List.of(javaExecutable(), "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC", "-Xmx256m", "-XX:-UsePerfData"));
        command.addAll(jvmOptions);
        command.addAll(List.of("-jar", APP.toString()));
        command.addAll(args);
        return new QkcmProcess(name, command, env);
    }

    /** {@code bin/qkcm args}, the launcher script. */
    public static QkcmProcess launcher(String name, List<String> args) {
        List<String> command = new ArrayList<>(List.of(LAUNCHER.toString()));
        command.addAll(args);
        return new QkcmProcess(name, command, Map.of("JAVA", javaExecutable()));
    }

    public static String javaExecutable() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    public String name() {
        return name;
    }

    public long pid() {
        return process.pid();
    }

    public boolean alive() {
        return process.isAlive();
    }

    /** Completes with the wall-clock time this process was seen to end (ask early: it is noticed, not polled). */
    public java.util.concurrent.CompletableFuture<Instant> exitTime() {
        return process.onExit().thenApply(p -> Instant.now());
    }

    /** SIGKILL. */
    public void kill9() {
        process.destroyForcibly();
        waitFor(Duration.ofSeconds(10));
    }

    /** SIGTERM. */
    public void sigterm() {
        process.destroy();
    }

    /** Waits for the process to end; its exit code, or throws if it is still running. */
    public int waitFor(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError(name + " still running after " + timeout + "; stdout:\n" + tail(stdout()));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        return process.exitValue();
    }

    public String stdout() {
        return read(stdout);
    }

    public String stderr() {
        return read(stderr);
    }

    /** Non-empty stderr lines. */
    public List<String> stderrLines() {
        return stderr().lines().filter(l -> !l.isBlank()).toList();
    }

    public static String tail(String text) {
        return text.length() <= 6000 ? text : text.substring(text.length() - 6000);
    }

    private static String read(Path p) {
        try {
            return Files.exists(p) ? Files.readString(p) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public String toString() {
        return name + " (pid " + pid() + ")";
    }

}
