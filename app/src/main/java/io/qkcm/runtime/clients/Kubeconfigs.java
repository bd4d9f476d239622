package io.qkcm.runtime.clients;

import java.io.File;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

import org.jboss.logging.Logger;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

import io.fabric8.kubernetes.api.model.AuthInfo;
import io.fabric8.kubernetes.api.model.AuthProviderConfig;
import io.fabric8.kubernetes.api.model.Cluster;
import io.fabric8.kubernetes.api.model.Context;
import io.fabric8.kubernetes.api.model.ExecConfig;
import io.fabric8.kubernetes.api.model.ExecEnvVar;
import io.fabric8.kubernetes.api.model.NamedAuthInfo;
import io.fabric8.kubernetes.api.model.NamedCluster;
import io.fabric8.kubernetes.api.model.NamedContext;
import io.fabric8.kubernetes.api.model.NamedExtension;
import io.fabric8.kubernetes.api.model.Preferences;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.internal.KubeConfigUtils;
import io.fabric8.kubernetes.client.utils.Utils;

/**
 * fabric8 7.4's {@code Config.fromKubeconfig(null, contents, path)} without Jackson: the manager's first client
 * needs its kubeconfig, and Jackson's first look at any annotated class is slow in a fresh JVM (each annotation
 * type it reads makes a proxy class, which the AOT cache does not keep; fabric8's static {@code Serialization}
 * also registers every model class of the class path). That was 75-110 ms of the main thread between /healthz and
 * the campaign, the longest single step before the first write; the informers pay Jackson's start later, off that
 * path.
 * <p>
 * The steps are fabric8's, in its order: the YAML read by snakeyaml-engine with fabric8's settings (the defaults)
 * and bound to fabric8's kubeconfig model, field for field by the names its {@code @JsonProperty}s give, an unknown
 * key kept in the object's additional properties as Jackson's any-setter keeps it; each context, cluster and user
 * tagged with the file it came from (relative certificate paths resolve against it); {@link KubeConfigUtils#merge}
 * of the current context into an empty Config; then the system properties and environment, unless
 * auto-configuration is off. Only a kubeconfig extension's value differs: the YAML's map here, where fabric8 types
 * it (its Config never reads one). A value of another shape than the model's (a number where a string is) is not
 * bound here: fabric8 parses that kubeconfig, as before, with its coercions and its errors. {@code KubeconfigsTest}
 * pins the result to fabric8's own.
 */
public final class Kubeconfigs {

    private static final Logger LOG = Logger.getLogger(Kubeconfigs.class);

    /** fabric8's keys (KubeConfigUtils.parseConfig) for the file a context, cluster or user was read from. */
    static final String CONTEXT_FILE_KEY = "KUBERNETES_CONFIG_CONTEXT_FILE_KEY";
    static final String CLUSTER_FILE_KEY = "KUBERNETES_CONFIG_CLUSTER_FILE_KEY";
    static final String AUTH_INFO_FILE_KEY = "KUBERNETES_CONFIG_AUTH_INFO_FILE_KEY";

    private Kubeconfigs() {
    }

    /** The connection settings of the kubeconfig {@code content} read from {@code path}, as fabric8 makes them. */
    public static Config fromKubeconfig(String content, String path) {
        io.fabric8.kubernetes.api.model.Config model = null;
        if (content != null && !content.isEmpty()) {
            try {
                model = bind(content);
            } catch (RuntimeException e) {
                LOG.debugf("kubeconfig %s: parsed by fabric8 (%s)", path, e.getMessage());
            }
        }
        if (model == null) {
            return Config.fromKubeconfig(null, content, path);
        }
        // past the binding, fabric8's own steps: their errors (an exec plugin that fails, say) are fabric8's, and
        // nothing here runs twice
        File file = new File(path);
        tag(model.getContexts(), NamedContext::getAdditionalProperties, CONTEXT_FILE_KEY, file);
        tag(model.getClusters(), NamedCluster::getAdditionalProperties, CLUSTER_FILE_KEY, file);
        tag(model.getUsers(), NamedAuthInfo::getAdditionalProperties, AUTH_INFO_FILE_KEY, file);
        Config config = Config.empty();
        KubeConfigUtils.merge(config, null, model);
        if (!Utils.getSystemPropertyOrEnvVar(Config.KUBERNETES_DISABLE_AUTO_CONFIG_SYSTEM_PROPERTY, false)) {
            Config.configFromSysPropsOrEnvVars(config);
        }
        return config;
    }

    /** The kubeconfig model of {@code content}; refused (an exception) for what fabric8's parse must handle. */
    static io.fabric8.kubernetes.api.model.Config bind(String content) {
        io.fabric8.kubernetes.api.model.Config model = config(new Load(LoadSettings.builder().build()).loadFromString(content));
        if (model == null) {
            throw new IllegalArgumentException("empty kubeconfig");
        }
        return model;
    }

    private static <T> void tag(List<T> named, Function<T, Map<String, Object>> properties, String key, File file) {
        if (named != null) {
            named.forEach(n -> properties.apply(n).put(key, file));
        }
    }

    // the model, one method per class of fabric8's kubeconfig model

    static io.fabric8.kubernetes.api.model.Config config(Object yaml) {
        return object(yaml, io.fabric8.kubernetes.api.model.Config::new, (o, k, v) -> {
            switch (k) {
                case "apiVersion" -> o.setApiVersion(string(v));
                case "kind" -> o.setKind(string(v));
                case "current-context" -> o.setCurrentContext(string(v));
                case "clusters" -> o.setClusters(list(v, Kubeconfigs::namedCluster));
                case "contexts" -> o.setContexts(list(v, Kubeconfigs::namedContext));
                case "users" -> o.setUsers(list(v, Kubeconfigs::namedAuthInfo));
                case "preferences" -> o.setPreferences(preferences(v));
                case "extensions" -> o.setExtensions(list(v, Kubeconfigs::namedExtension));
                default -> o.setAdditionalProperty(k, v);
            }
        });
    }

    private static NamedCluster namedCluster(Object yaml) {
        return object(yaml, NamedCluster::new, (o, k, v) -> {
            switch (k) {
                case "name" -> o.setName(string(v));
                case "cluster" -> o.setCluster(cluster(v));
                default -> o.setAdditionalProperty(k, v);
            }
        });
    }

    private static Cluster cluster(Object yaml) {
        return object(yaml, Cluster::new, (o, k, v) -> {
            switch (k) {
                case "server" -> o.setServer(string(v));
                case "certificate-authority" -> o.setCertificateAuthority(string(v));
                case "certificate-authority-data" -> o.setCertificateAuthorityData(string(v));
                case "insecure-skip-tls-verify" -> o.setInsecureSkipTlsVerify(bool(v));
                case "tls-server-name" -> o.setTlsServerName(string(v));
                case "proxy-url" -> o.setProxyUrl(string(v));
                case "disable-compression" -> o.setDisableCompression(bool(v));
                case "extensions" -> o.setExtensions(list(v, Kubeconfigs::namedExtension));
                default -> o.setAdditionalProperty(k, v);
            }
        });
    }

    private static NamedContext namedContext(Object yaml) {
        return object(yaml, NamedContext::new, (o, k, v) -> {
            switch (k) {
                case "name" -> o.setName(string(v));
                case "context" -> o.setContext(context(v));
                default -> o.setAdditionalProperty(k, v);
            }
        });
    }

    private static Context context(Object yaml) {
        return object(yaml, Context::new, (o, k, v) -> {
            switch (k) {
                case "cluster" -> o.setCluster(string(v));
                case "user" -> o.setUser(string(v));
                case "namespace" -> o.setNamespace(string(v));
                case "extensions" -> o.setExtensions(list(v, Kubeconfigs::namedExtension));
                default -> o.setAdditionalProperty(k, v);
            }
        });
    }

    private static NamedAuthInfo namedAuthInfo(Object yaml) {
        return object(yaml, NamedAuthInfo::new, (o, k, v) -> {
            switch (k) {
                case "name" -> o.setName(string(v));
                case "user" -> o.setUser(authInfo(v));
                default -> o.setAdditionalProperty(k, v);
            }
        });
    }

    private static AuthInfo authInfo(Object yaml) {
        return object(yaml, AuthInfo::new, (o, k, v) -> {
            switch (k) {
                case "as" -> o.setAs(string(v));
                case "as-groups" -> o.setAsGroups(list(v, Kubeconfigs::string));
                case "as-uid" -> o.setAsUid(string(v));
                case "as-user-extra" -> o.setAsUserExtra(stringMap(v, item -> list(item, Kubeconfigs::string)));
                case "auth-provider" -> o.setAuthProvider(authProvider(v));
                case "client-certificate" -> o.setClientCertificate(string(v));
                case "client-certificate-data" -> o.setClientCertificateData(string(v));
                case "client-key" -> o.setClientKey(string(v));
                case "client-key-data" -> o.setClientKeyData(string(v));
                case "exec" -> o.setExec(exec(v));
                case "extensions" -> o.setExtensions(list(v, Kubeconfigs::namedExtension));
                case "password" -> o.setPassword(string(v));
                case "token" -> o.setToken(string(v));
                case "tokenFile" -> o.setTokenFile(string(v));
                case "username" -> o.setUsername(string(v));
                default -> o.setAdditionalProperty(k, v);
            }
        });
    }

    private static AuthProviderConfig authProvider(Object yaml) {
        return object(yaml, AuthProviderConfig::new, (o, k, v) -> {
            switch (k) {
                case "name" -> o.setName(string(v));
                case "config" -> o.setConfig(stringMap(v, Kubeconfigs::string));
                default -> o.setAdditionalProperty(k, v);
            }
        });
    }

    private static ExecConfig exec(Object yaml) {
        return object(yaml, ExecConfig::new, (o, k, v) -> {
            switch (k) {
                case "apiVersion" -> o.setApiVersion(string(v));
                case "args" -> o.setArgs(list(v, Kubeconfigs::string));
                case "command" -> o.setCommand(string(v));
                case "env" -> o.setEnv(list(v, Kubeconfigs::execEnvVar));
                case "installHint" -> o.setInstallHint(string(v));
                case "interactiveMode" -> o.setInteractiveMode(string(v));
                case "provideClusterInfo" -> o.setProvideClusterInfo(bool(v));
                default -> o.setAdditionalProperty(k, v);
            }
        });
    }

    private static ExecEnvVar execEnvVar(Object yaml) {
        return object(yaml, ExecEnvVar::new, (o, k, v) -> {
            switch (k) {
                case "name" -> o.setName(string(v));
                case "value" -> o.setValue(string(v));
                default -> o.setAdditionalProperty(k, v);
            }
        });
    }

    private static Preferences preferences(Object yaml) {
        return object(yaml, Preferences::new, (o, k, v) -> {
            switch (k) {
                case "colors" -> o.setColors(bool(v));
                case "extensions" -> o.setExtensions(list(v, Kubeconfigs::namedExtension));
                default -> o.setAdditionalProperty(k, v);
            }
        });
    }

    private static NamedExtension namedExtension(Object yaml) {
        return object(yaml, NamedExtension::new, (o, k, v) -> {
            switch (k) {
                case "name" -> o.setName(string(v));
                case "extension" -> o.setExtension(v);
                default -> o.setAdditionalProperty(k, v);
            }
        });
    }

    // YAML's shapes: anything else than the model's is refused, and fabric8 parses the kubeconfig

    private interface Field<T> {
        void set(T object, String key, Object value);
    }

    private static <T> T object(Object yaml, Supplier<T> type, Field<T> field) {
        if (yaml == null) {
            return null;
        }
        if (!(yaml instanceof Map<?, ?> map)) {
            throw new IllegalArgumentException("not a mapping: " + yaml.getClass().getSimpleName());
        }
        T o = type.get();
        map.forEach((k, v) -> field.set(o, key(k), v));
        return o;
    }

    private static String key(Object k) {
        if (k instanceof String s) {
            return s;
        }
        throw new IllegalArgumentException("not a string key: " + k);
    }

    private static String string(Object v) {
        if (v == null || v instanceof String) {
            return (String) v;
        }
        throw new IllegalArgumentException("not a string: " + v.getClass().getSimpleName());
    }

    private static Boolean bool(Object v) {
        if (v == null || v instanceof Boolean) {
            return (Boolean) v;
        }
        throw new IllegalArgumentException("not a boolean: " + v.getClass().getSimpleName());
    }

    private static <T> List<T> list(Object v, Function<Object, T> item) {
        if (v == null) {
            return null;
        }
        if (!(v instanceof List<?> items)) {
            throw new IllegalArgumentException("not a list: " + v.getClass().getSimpleName());
        }
        List<T> out = new ArrayList<>(items.size());
        items.forEach(i -> out.add(item.apply(i)));
        return out;
    }

    private static <T> Map<String, T> stringMap(Object v, Function<Object, T> value) {
        if (v == null) {
            return null;
        }
        if (!(v instanceof Map<?, ?> m)) {
            throw new IllegalArgumentException("not a mapping: " + v.getClass().getSimpleName());
        }
        Map<String, T> out = new LinkedHashMap<>();
        m.forEach((k, x) -> out.put(key(k), value.apply(x)));
        return out;
    }
}
