package io.qkcm.manager;

import io.qkcm.runtime.Version;

import io.qkcm.runtime.josdk.ControllerDescriptor;
import io.qkcm.runtime.options.CommandLineConfigSource;
import io.qkcm.runtime.options.Flag;
import io.qkcm.runtime.options.Flags;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import sun.misc.Signal;
import sun.misc.SignalHandler;

import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.QuarkusApplication;
import io.quarkus.runtime.annotations.QuarkusMain;

/**
 * Command line, as kube-controller-manager's: {@code --help} and {@code --version} answer before
 * anything starts; an unknown flag, a malformed value or an unknown controller is one line on
 * stderr and exit code 1. Given flags become configuration properties {@code qkcm.<flag>}
 * ({@link CommandLineConfigSource}), which outrank -D, the environment and application.properties, so one
 * config view serves the whole process.
 */
@QuarkusMain
public class QkcmMain implements QuarkusApplication {

    public static void main(String... args) {
        // Quarkus' log manager, before anything reaches java.util.logging: the JVM build's flat class path
        // starts here, not in fast-jar's launcher, which set it
        if (System.getProperty(LOG_MANAGER_PROPERTY) == null) {
            System.setProperty(LOG_MANAGER_PROPERTY, "org.jboss.logmanager.LogManager");
        }
        int code = prepare(List.of(args));
        if (code >= 0) {
            System.exit(code);
        }
        handleTerminationSignals();
        io.qkcm.runtime.clients.SharedTransports.cheapInMemoryKeyStores();
        io.qkcm.runtime.clients.BoringSslEngine.preload();
        Quarkus.run(QkcmMain.class, args);
    }

    private static final AtomicBoolean TERMINATING = new AtomicBoolean();
    static final String LOG_MANAGER_PROPERTY = "java.util.logging.manager";

    /**
     * SIGTERM and SIGINT start a clean shutdown that ends with exit code 0, as upstream's: without
     * this the JVM runs the shutdown hooks itself and exits 143/130, since Quarkus' main thread cannot
     * set an exit code once the VM is shutting down. A second signal exits at once with code 1, as
     * upstream's signal handler does.
     */
    static void handleTerminationSignals() {
        SignalHandler handler = signal -> {
            if (LaunchMode.current() != LaunchMode.NORMAL) {
                // Dev mode: a Ctrl-C reaches both Maven and this JVM, and Maven then stops this JVM with a
                // SIGTERM of its own; the second signal must not halt before the shutdown (which releases
                // the Lease) has run. Exit (code 0, as upstream on SIGTERM; Maven reports any other code
                // as a failure), running the shutdown hooks.
                if (TERMINATING.compareAndSet(false, true)) {
                    System.exit(0);
                }
                return;
            }
            if (TERMINATING.compareAndSet(false, true)) {
                System.err.println("received SIG" + signal.getName() + ", shutting down");
                Quarkus.asyncExit(0);
            } else {
                System.err.println("received SIG" + signal.getName() + " again, exiting at once");
                System.err.flush();
                Runtime.getRuntime().halt(1);
            }
        };
        for (String name : List.of("TERM", "INT")) {
            try {
                Signal.handle(new Signal(name), handler);
            } catch (IllegalArgumentException | UnsupportedOperationException e) {
                // not available on this platform: the JVM's default handling stays
            }
        }
    }

    /** Handles the command line; returns an exit code to stop with, or -1 to start the manager. */
    static int prepare(List<String> args) {
        Flags flags = Flags.upstream();
        FlagParser.Result result;
        try {
            result = new FlagParser(flags).parse(args);
        } catch (FlagParser.FlagError e) {
            System.err.println("Error: " + e.getMessage() + " (see qkcm --help)");
            return 1;
        }
        ControllerCatalog catalog = ControllerCatalog.upstream();
        if (result.help()) {
            List<String> implemented = catalog.all().stream().filter(ControllerDescriptor::implemented)
                    .map(ControllerDescriptor::name).toList();
            System.out.print(flags.help(catalog.names(), catalog.disabledByDefault(), implemented, catalog.partial()));
            return 0;
        }
        if (result.version()) {
            System.out.println("raw".equals(result.versionValue()) ? Version.KUBERNETES : Version.line());
            return 0;
        }
        String controllers = result.values().get("controllers");
        if (controllers != null) {
            Optional<String> error = ControllerSelection.validate(catalog, List.of(controllers.split(",")).stream()
                    .map(String::trim).filter(s -> !s.isEmpty()).toList());
            if (error.isPresent()) {
                System.err.println("Error: " + error.get());
                return 1;
            }
        }
        Map<String, String> properties = new LinkedHashMap<>();
        result.values().forEach((name, value) -> properties.put(Flag.CONFIG_PREFIX + name, value));
        int v = Integer.parseInt(result.values().getOrDefault("v", "0").trim());
        if (v >= 4) {
            properties.put("quarkus.log.category.\"io.qkcm\".level", "DEBUG");
        }
        CommandLineConfigSource.given(properties);
        return -1;
    }

    @Override
    public int run(String... args) {
        Quarkus.waitForExit();
        return 0;
    }
}
