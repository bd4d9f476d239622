package io.qkcm.controller.devicetainteviction;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import dev.cel.common.CelOptions;
import dev.cel.extensions.CelExtensions;
import dev.cel.runtime.CelFunctionBinding;
import dev.cel.runtime.CelInternalRuntimeLibrary;
import dev.cel.runtime.CelRuntimeBuilder;
import dev.cel.runtime.CelRuntimeLibrary;
import dev.cel.runtime.RuntimeEquality;

/**
 * The runtime halves of cel-java's own libraries that evaluate as cel-go's do: optionals (cel-go's
 * {@code cel.OptionalTypes}, with the lists' {@code first} and {@code last}), ext.Sets and the two-variable
 * comprehensions' {@code cel.@mapInsert}. Their bindings are collected from the libraries and carry upstream's
 * overload ids, renamed where cel-java names an overload differently; the type checker keeps upstream's
 * declarations.
 */
final class CelJavaLibraries {

    /** cel-java's overload id to cel-go's, where they differ. */
    private static final Map<String, List<String>> UPSTREAM_IDS = Map.of(
            "optional_unwrap_list", List.of("optional_unwrap", "optional_unwrapOpt"),
            "optional_list_first", List.of("list_first"),
            "optional_list_last", List.of("list_last"),
            "cel_@mapInsert_map_map", List.of("@mapInsert_map_map"),
            "cel_@mapInsert_map_key_value", List.of("@mapInsert_map_key_value"));

    private CelJavaLibraries() {
    }

    static List<CelFunctionBinding> bindings(RuntimeEquality equality, CelOptions options) {
        List<CelFunctionBinding> out = new ArrayList<>();
        for (CelRuntimeLibrary library : List.of(CelExtensions.optional(), CelExtensions.sets(options),
                CelExtensions.comprehensions())) {
            for (CelFunctionBinding b : collect(library, equality, options)) {
                if (b.getOverloadId().equals("optional_value")) {
                    continue; // below, with cel-go's error
                }
                for (String id : UPSTREAM_IDS.getOrDefault(b.getOverloadId(), List.of(b.getOverloadId()))) {
                    out.add(id.equals(b.getOverloadId()) ? b
                            : CelFunctionBinding.from(id, b.getArgTypes(), b.getDefinition()));
                }
            }
        }
        out.add(CelFunctionBinding.from("optional_value", java.util.Optional.class, o -> {
            if (o.isEmpty()) {
                throw CelStrings.error("optional.none() dereference");
            }
            return o.get();
        }));
        return out;
    }

    /** The bindings a library adds to a runtime builder; nothing else of the builder is used by these three. */
    private static List<CelFunctionBinding> collect(CelRuntimeLibrary library, RuntimeEquality equality,
            CelOptions options) {
        List<CelFunctionBinding> collected = new ArrayList<>();
        CelRuntimeBuilder recorder = (CelRuntimeBuilder) Proxy.newProxyInstance(CelJavaLibraries.class.getClassLoader(),
                new Class<?>[] { CelRuntimeBuilder.class }, (proxy, method, args) -> {
                    if (!method.getName().equals("addFunctionBindings")) {
                        throw new IllegalStateException("cel-java library " + library.getClass().getSimpleName()
                                + " calls " + method.getName() + ", which qkcm does not carry over");
                    }
                    Iterable<?> bindings = args[0] instanceof Object[] array ? Arrays.asList(array) : (Iterable<?>) args[0];
                    bindings.forEach(b -> collected.add((CelFunctionBinding) b));
                    return proxy;
                });
        if (library instanceof CelInternalRuntimeLibrary internal) {
            internal.setRuntimeOptions(recorder, equality, options);
        } else {
            library.setRuntimeOptions(recorder);
        }
        return collected;
    }
}
