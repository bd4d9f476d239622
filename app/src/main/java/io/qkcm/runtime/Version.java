package io.qkcm.runtime;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** qkcm's own version and the Kubernetes version it is a drop-in for (from the Maven build). */
public final class Version {

    public static final String QKCM;
    public static final String KUBERNETES;

    static {
        Properties p = new Properties();
        try (InputStream in = Version.class.getClassLoader().getResourceAsStream("qkcm/version.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            // fall through to the defaults below
        }
        QKCM = p.getProperty("qkcm", "unknown");
        KUBERNETES = "v" + p.getProperty("kubernetes", "1.34.4");
    }

    private Version() {
    }

    /** What {@code --version} prints; kwokctl reads the first version in it. */
    public static String line() {
        return "Kubernetes " + KUBERNETES + " (qkcm " + QKCM + ")";
    }
}
