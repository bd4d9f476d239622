package io.qkcm.runtime.josdk;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.FilterWatchListDeletable;
import io.fabric8.kubernetes.client.dsl.AnyNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.qkcm.runtime.informers.SharedInformers;
import io.quarkus.runtime.annotations.RegisterForProxy;

/**
 * The KubernetesClient a controller's JOSDK Operator is given: the controller's own client (its user
 * agent, QPS budget and credentials, so every write JOSDK or a dependent makes is the controller's),
 * except that the informer JOSDK builds for an event source is a {@link SharedInformerView} of the
 * process's shared informer.
 *
 * <p>JOSDK 5.2 builds informers in exactly one way ({@code InformerManager}):
 * {@code client.resources(type).inAnyNamespace().withLabelSelector(selector).runnableInformer(0)}.
 * That chain, for all namespaces and no label selector, is the one answered here; anything else
 * (a namespace, a selector, a list limit) is refused loudly, since it would need an informer of its
 * own. {@code SharedInformerClientTest} pins this chain, so a JOSDK upgrade that changes it fails there.
 */
@RegisterForProxy(targets = { KubernetesClient.class, MixedOperation.class, AnyNamespaceOperation.class,
        FilterWatchListDeletable.class })
public final class SharedInformerClient {

    private SharedInformerClient() {
    }

    /** {@code client} for everything, with JOSDK's informers served from {@code informers}. */
    public static KubernetesClient wrap(KubernetesClient client, SharedInformers informers) {
        return proxy(KubernetesClient.class, client, (method, args) -> {
            if (method.getName().equals("resources") && args != null && args.length >= 1 && args[0] instanceof Class<?> type
                    && HasMetadata.class.isAssignableFrom(type)) {
                Object resources = invoke(client, method, args);
                return resources(type, resources, informers);
            }
            return null;
        });
    }

    private static Object resources(Class<?> type, Object resources, SharedInformers informers) {
        return proxy(MixedOperation.class, resources, (method, args) -> {
            if (method.getName().equals("inAnyNamespace") && (args == null || args.length == 0)) {
                return anyNamespace(type, invoke(resources, method, args), informers);
            }
            if (method.getName().equals("inNamespace") || method.getName().equals("runnableInformer")
                    || method.getName().equals("inform") || method.getName().equals("informOnCondition")) {
                throw new IllegalStateException("qkcm's JOSDK controllers watch " + type.getSimpleName()
                        + " through the shared informer, in all namespaces; '" + method.getName() + "' would need an informer of its own");
            }
            return null;
        });
    }

    private static Object anyNamespace(Class<?> type, Object any, SharedInformers informers) {
        return proxy(AnyNamespaceOperation.class, any, (method, args) -> {
            if (method.getName().equals("withLabelSelector") && args != null && args.length == 1
                    && (args[0] == null || args[0] instanceof String)) {
                String selector = (String) args[0];
                if (selector != null && !selector.isBlank()) {
                    throw new IllegalStateException("a label-selected informer for " + type.getSimpleName()
                            + " cannot be served from the shared cache: " + selector);
                }
                return informable(type, invoke(any, method, args), informers);
            }
            if (method.getName().equals("runnableInformer")) {
                return view(type, informers);
            }
            return null;
        });
    }

    private static Object informable(Class<?> type, Object filtered, SharedInformers informers) {
        return proxy(FilterWatchListDeletable.class, filtered, (method, args) -> {
            if (method.getName().equals("runnableInformer")) {
                return view(type, informers);
            }
            if (method.getName().equals("withLimit") || method.getName().equals("withField")
                    || method.getName().equals("withoutField") || method.getName().equals("withFields")) {
                throw new IllegalStateException("a filtered informer for " + type.getSimpleName()
                        + " cannot be served from the shared cache (" + method.getName() + ")");
            }
            return null;
        });
    }

    @SuppressWarnings({ "unchecked", "rawtypes" })
    private static Object view(Class<?> type, SharedInformers informers) {
        return new SharedInformerView(informers, type);
    }

    /** A method answered here instead of by the target; null means "not mine, forward it". */
    @FunctionalInterface
    private interface Override {
        Object apply(Method method, Object[] args) throws Throwable;
    }

    private static <T> T proxy(Class<T> iface, Object target, Override override) {
        InvocationHandler handler = (p, method, args) -> {
            if (method.getDeclaringClass() == Object.class) {
                return switch (method.getName()) {
                    case "equals" -> p == args[0];
                    case "hashCode" -> System.identityHashCode(p);
                    case "toString" -> "SharedInformerClient(" + target + ")";
                    default -> invoke(target, method, args);
                };
            }
            Object answered = override.apply(method, args);
            return answered != null ? answered : invoke(target, method, args);
        };
        return iface.cast(Proxy.newProxyInstance(SharedInformerClient.class.getClassLoader(), new Class<?>[] { iface },
                handler));
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
