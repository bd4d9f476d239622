package io.qkcm.controller.volume.common;

import static java.nio.file.StandardWatchEventKinds.ENTRY_CREATE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_DELETE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_MODIFY;
import static java.nio.file.StandardWatchEventKinds.OVERFLOW;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.jboss.logging.Logger;

/**
 * flexVolumeProber (pkg/volume/flexvolume/probe.go), the dynamic plugin prober each of the attach/detach and
 * selinux-warning controllers gets (its own, as GetDynamicPluginProber makes one per call) for {@code --flex-volume-plugin-dir}: the first probe reads every driver directory (not starting with a
 * dot); afterwards a file-system watch on the directory tree (recursively, as fsnotify is used upstream)
 * records which driver directories changed, and the next probe re-creates exactly those plugins (an
 * {@code init} call) or reports them removed (the directory or its executable deleted). A driver whose
 * {@code init} fails is reported as an error and probed again at the next probe. The prober is polled, not
 * driven: every plugin lookup probes first (VolumePluginMgr.refreshProbedPlugins).
 */
public final class FlexVolumeProber implements AutoCloseable {

    /** ProbeEvent: a plugin added or updated (with the plugin), or removed (by name). */
    public record ProbeEvent(boolean remove, String pluginName, FlexVolumePlugin plugin) {
    }

    /** Probe's answer: the events, and the errors of the drivers that could not be created. */
    public record ProbeResult(List<ProbeEvent> events, List<String> errors) {
    }

    private static final Logger LOG = Logger.getLogger(FlexVolumeProber.class);

    private final Path pluginDir;
    private WatchService watcher;
    private final Map<WatchKey, Path> watched = new HashMap<>();
    private boolean probeAllNeeded = true;
    /** The driver directories changed since the last probe → remove (true) or add/update (false). */
    private final Map<Path, Boolean> eventsMap = new LinkedHashMap<>();

    public FlexVolumeProber(Path pluginDir) {
        this.pluginDir = pluginDir.toAbsolutePath().normalize();
    }

    /** Init: creates the directory when missing and starts watching it; an error leaves no prober. */
    public synchronized void init() throws IOException {
        probeAllNeeded = true;
        createPluginDir();
        watcher = pluginDir.getFileSystem().newWatchService();
        addWatchRecursive(pluginDir);
    }

    public Path pluginDir() {
        return pluginDir;
    }

    public synchronized ProbeResult probe() {
        drainWatchEvents();
        if (probeAllNeeded) {
            probeAllNeeded = false;
            eventsMap.clear();
            return probeAll();
        }
        return probeMap();
    }

    private ProbeResult probeAll() {
        List<ProbeEvent> events = new ArrayList<>();
        List<String> errors = new ArrayList<>();
        List<Path> dirs;
        try (Stream<Path> files = Files.list(pluginDir)) {
            dirs = files.filter(Files::isDirectory).filter(p -> !p.getFileName().toString().startsWith("."))
                    .sorted().toList();
        } catch (IOException e) {
            errors.add("error reading the Flexvolume directory: " + e.getMessage());
            return new ProbeResult(events, errors);
        }
        for (Path dir : dirs) {
            try {
                events.add(addOrUpdate(dir.getFileName().toString()));
            } catch (RuntimeException e) {
                errors.add(e.getMessage());
            }
        }
        return new ProbeResult(events, errors);
    }

    private ProbeResult probeMap() {
        List<ProbeEvent> events = new ArrayList<>();
        List<String> errors = new ArrayList<>();
        for (var it = eventsMap.entrySet().iterator(); it.hasNext();) {
            var e = it.next();
            String dirName = e.getKey().getFileName().toString();
            if (e.getValue()) {
                events.add(new ProbeEvent(true, FlexVolumePlugin.unescapeQualifiedName(dirName), null));
            } else {
                try {
                    events.add(addOrUpdate(dirName));
                } catch (RuntimeException ex) {
                    errors.add(ex.getMessage());
                    continue; // kept: probed again next time
                }
            }
            it.remove();
        }
        return new ProbeResult(events, errors);
    }

    private ProbeEvent addOrUpdate(String dirName) {
        FlexVolumePlugin plugin;
        try {
            plugin = FlexVolumePlugin.probe(pluginDir, dirName);
        } catch (RuntimeException e) {
            throw new IllegalStateException("error creating Flexvolume plugin from directory " + dirName
                    + ", skipping. Error: " + e.getMessage(), e);
        }
        return new ProbeEvent(false, plugin.name(), plugin);
    }

    // --- the watch (handleWatchEvent)

    private void drainWatchEvents() {
        if (watcher == null) {
            return;
        }
        WatchKey key;
        while ((key = watcher.poll()) != null) {
            Path dir = watched.get(key);
            for (WatchEvent<?> event : key.pollEvents()) {
                if (event.kind() == OVERFLOW) {
                    // events were lost: read everything again
                    probeAllNeeded = true;
                    continue;
                }
                if (dir == null) {
                    continue;
                }
                handleWatchEvent(dir.resolve((Path) event.context()), event.kind());
            }
            if (!key.reset()) {
                watched.remove(key);
                if (pluginDir.equals(dir)) {
                    // the plugin directory itself went: recreate it and watch it again
                    try {
                        createPluginDir();
                        addWatchRecursive(pluginDir);
                    } catch (IOException e) {
                        LOG.errorf("Flexvolume prober watch: %s", e.getMessage());
                    }
                }
            }
        }
    }

    private void handleWatchEvent(Path path, WatchEvent.Kind<?> kind) {
        if (path.getFileName().toString().startsWith(".")) {
            return;
        }
        if (kind == ENTRY_CREATE && Files.isDirectory(path)) {
            try {
                addWatchRecursive(path);
            } catch (IOException e) {
                LOG.errorf("Flexvolume prober watch: %s", e.getMessage());
            }
        }
        Path rel = pluginDir.relativize(path);
        if (rel.getNameCount() == 0 || rel.toString().isEmpty()) {
            return;
        }
        String driverDirName = rel.getName(0).toString();
        Path driverDir = pluginDir.resolve(driverDirName);
        boolean executableRemoved = rel.equals(executablePathRel(driverDirName));
        if (kind == ENTRY_DELETE && (executableRemoved || path.getParent().equals(pluginDir))) {
            updateEventsMap(driverDir, true);
        } else if (kind == ENTRY_CREATE || kind == ENTRY_MODIFY || kind == ENTRY_DELETE) {
            updateEventsMap(driverDir, false);
        }
    }

    /** getExecutablePathRel: {@code vendor~driver/driver}. */
    public static Path executablePathRel(String driverDirName) {
        String[] parts = driverDirName.split("~", -1);
        return Path.of(driverDirName, parts[parts.length - 1]);
    }

    private void updateEventsMap(Path driverDir, boolean remove) {
        if (probeAllNeeded) {
            return;
        }
        eventsMap.put(driverDir, remove);
    }

    private void addWatchRecursive(Path root) throws IOException {
        if (!Files.isDirectory(root)) {
            return;
        }
        try (Stream<Path> tree = Files.walk(root)) {
            for (Path dir : tree.filter(Files::isDirectory).toList()) {
                try {
                    WatchKey key = dir.register(watcher, ENTRY_CREATE, ENTRY_DELETE, ENTRY_MODIFY);
                    watched.put(key, dir);
                } catch (IOException e) {
                    LOG.errorf("Error recursively adding watch: %s", e.getMessage());
                }
            }
        }
    }

    private void createPluginDir() throws IOException {
        if (!Files.exists(pluginDir)) {
            LOG.warnf("Flexvolume plugin directory at %s does not exist. Recreating.", pluginDir);
            try {
                Files.createDirectories(pluginDir);
            } catch (IOException e) {
                throw new IOException("error (re-)creating driver directory: " + e.getMessage(), e);
            }
        }
    }

    @Override
    public synchronized void close() {
        if (watcher != null) {
            try {
                watcher.close();
            } catch (IOException e) {
                LOG.debugf("closing the Flexvolume watch: %s", e.getMessage());
            }
            watcher = null;
        }
    }
}
