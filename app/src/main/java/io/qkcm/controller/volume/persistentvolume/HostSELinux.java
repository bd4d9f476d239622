package io.qkcm.controller.volume.persistentvolume;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What the host-path provisioner needs of github.com/opencontainers/selinux (v1.11.1, kubernetes v1.34's):
 * {@code GetEnabled} and {@code SetFileLabel}.
 * <p>
 * Enabled, as go-selinux decides it: a selinuxfs is mounted read-write (the default {@code /sys/fs/selinux}
 * first; otherwise, when {@code /proc/filesystems} lists selinuxfs, the first such mount of
 * {@code /proc/self/mountinfo} that verifies) and the process' own label
 * ({@code /proc/thread-self/attr/current}) is not {@code kernel}. Go checks the mount with statfs (magic
 * number, ST_RDONLY); a JVM asks its FileStore for the same facts (type {@code selinuxfs}, read-only). The
 * answer is computed once, as go-selinux caches it.
 * <p>
 * Labelling: go-selinux writes the {@code security.selinux} extended attribute (setxattr, following
 * symlinks). Java's extended-attribute view reaches only the {@code user.} namespace, so the label is set by
 * coreutils' {@code chcon <label> <path>}, which writes that attribute through libselinux and follows
 * symlinks by default; its failure is the error.
 */
final class HostSELinux {

    /** kubelet config's KubeletContainersSharedSELinuxLabel. */
    static final String KUBELET_CONTAINERS_SHARED_LABEL = "system_u:object_r:container_file_t:s0";
    static final String SELINUXFS_MOUNT = "/sys/fs/selinux";

    /** SetFileLabel; an IOException carries the reason. */
    interface Labeler {
        void setFileLabel(Path path, String label) throws IOException;
    }

    private final Path defaultMount;
    private final Path procFilesystems;
    private final Path mountinfo;
    private final Path currentLabel;
    private final Labeler labeler;
    private Boolean enabled;

    HostSELinux(Path defaultMount, Path procFilesystems, Path mountinfo, Path currentLabel, Labeler labeler) {
        this.defaultMount = defaultMount;
        this.procFilesystems = procFilesystems;
        this.mountinfo = mountinfo;
        this.currentLabel = currentLabel;
        this.labeler = labeler;
    }

    /** This machine's, labelling with chcon. */
    static HostSELinux host() {
        return new HostSELinux(Path.of(SELINUXFS_MOUNT), Path.of("/proc/filesystems"), Path.of("/proc/self/mountinfo"),
                Path.of("/proc/thread-self/attr/current"), HostSELinux::chcon);
    }

    /**
     * A host whose SELinux state is given rather than read (tests: no machine here has selinuxfs), labelling
     * with {@code labeler}.
     */
    static HostSELinux assuming(boolean enabled, Labeler labeler) {
        HostSELinux h = new HostSELinux(null, null, null, null, labeler);
        h.enabled = enabled;
        return h;
    }

    /** GetEnabled. */
    synchronized boolean enabled() {
        if (enabled == null) {
            boolean on = false;
            if (findSELinuxfs() != null) {
                on = !"kernel".equals(readCon(currentLabel));
            }
            enabled = on;
        }
        return enabled;
    }

    /** SetFileLabel. */
    void setFileLabel(Path path, String label) throws IOException {
        labeler.setFileLabel(path, label);
    }

    /** findSELinuxfs: the mount point, or null. */
    String findSELinuxfs() {
        if (verifySELinuxfsMount(defaultMount)) {
            return defaultMount.toString();
        }
        String filesystems;
        try {
            filesystems = Files.readString(procFilesystems, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return null;
        }
        if (!filesystems.contains("\tselinuxfs\n")) {
            return null;
        }
        List<String> lines;
        try {
            lines = Files.readAllLines(mountinfo, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return null;
        }
        for (String mount : selinuxfsMounts(lines)) {
            if (verifySELinuxfsMount(Path.of(mount))) {
                return mount;
            }
        }
        return null;
    }

    /** findSELinuxfsMount, repeated: the mount point (fifth field) of every selinuxfs line, in order. */
    static List<String> selinuxfsMounts(List<String> mountinfoLines) {
        return mountinfoLines.stream().filter(l -> l.contains(" - selinuxfs ")).map(l -> l.split(" ", 6))
                .filter(f -> f.length >= 6).map(f -> f[4]).toList();
    }

    /** verifySELinuxfsMount: a selinuxfs, not mounted read-only. */
    static boolean verifySELinuxfsMount(Path mount) {
        try {
            FileStore store = Files.getFileStore(mount);
            return "selinuxfs".equals(store.type()) && !store.isReadOnly();
        } catch (IOException | SecurityException e) {
            return false;
        }
    }

    /** readCon: the file's content less one trailing NUL; "" when unreadable (Go ignores the error too). */
    static String readCon(Path path) {
        try {
            String s = Files.readString(path, StandardCharsets.UTF_8);
            return s.endsWith("\0") ? s.substring(0, s.length() - 1) : s;
        } catch (IOException | SecurityException e) {
            return "";
        }
    }

    /** {@code chcon <label> <path>}: its output is the error when it fails. */
    static void chcon(Path path, String label) throws IOException {
        Process p = new ProcessBuilder("chcon", label, path.toString()).redirectErrorStream(true).start();
        p.getOutputStream().close();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        p.getInputStream().transferTo(out);
        int exit;
        try {
            exit = p.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroy();
            throw new IOException("interrupted setting the label of " + path);
        }
        if (exit != 0) {
            throw new IOException(out.toString(StandardCharsets.UTF_8).strip());
        }
    }
}
