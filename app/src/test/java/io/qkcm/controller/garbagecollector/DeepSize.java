package io.qkcm.controller.garbagecollector;

import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;

/**
 * A rough retained-size estimate of an object graph on a 64-bit JVM with compressed oops (12-byte
 * headers, 4-byte references, 8-byte alignment, Latin-1 strings). JDK collections are estimated from
 * their layout, everything else walked by reflection. Test-only; good for comparisons, not for exact numbers.
 */
final class DeepSize {

    private final Set<Object> seen = Collections.newSetFromMap(new IdentityHashMap<>());

    /** Objects shared by every cached object (e.g. interned apiVersion/kind) are not counted. */
    DeepSize exclude(Object... shared) {
        for (Object o : shared) {
            seen.add(o);
        }
        return this;
    }

    static long align(long n) {
        return (n + 7) / 8 * 8;
    }

    long sizeOf(Object root) {
        long total = 0;
        Deque<Object> todo = new ArrayDeque<>();
        todo.push(root);
        while (!todo.isEmpty()) {
            Object o = todo.pop();
            if (o == null || !seen.add(o) || o instanceof Enum<?> || o instanceof Class<?>) {
                continue;
            }
            if (o == Boolean.TRUE || o == Boolean.FALSE) {
                continue;
            }
            if (o instanceof String s) {
                total += 24 + align(16 + s.length());
            } else if (o instanceof Number || o instanceof Boolean || o instanceof Character) {
                total += 16;
            } else if (o instanceof Map<?, ?> m && o.getClass().getName().startsWith("java.")) {
                int cap = Integer.highestOneBit(Math.max(1, (int) (m.size() / 0.75f)) * 2 - 1);
                total += 56 + align(16 + 4L * cap) + 40L * m.size();
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    todo.push(e.getKey());
                    if (e.getValue() != null) {
                        todo.push(e.getValue());
                    }
                }
            } else if (o instanceof Collection<?> c && o.getClass().getName().startsWith("java.")) {
                total += 24 + align(16 + 4L * c.size());
                for (Object x : c) {
                    if (x != null) {
                        todo.push(x);
                    }
                }
            } else if (o.getClass().isArray()) {
                int len = Array.getLength(o);
                Class<?> component = o.getClass().getComponentType();
                if (component.isPrimitive()) {
                    total += align(16 + (long) len * primitiveSize(component));
                } else {
                    total += align(16 + 4L * len);
                    for (int i = 0; i < len; i++) {
                        Object x = Array.get(o, i);
                        if (x != null) {
                            todo.push(x);
                        }
                    }
                }
            } else {
                long shallow = 12;
                for (Class<?> k = o.getClass(); k != null && k != Object.class; k = k.getSuperclass()) {
                    for (Field f : k.getDeclaredFields()) {
                        if (Modifier.isStatic(f.getModifiers())) {
                            continue;
                        }
                        if (f.getType().isPrimitive()) {
                            shallow += primitiveSize(f.getType());
                            continue;
                        }
                        shallow += 4;
                        try {
                            f.setAccessible(true);
                            Object v = f.get(o);
                            if (v != null) {
                                todo.push(v);
                            }
                        } catch (ReflectiveOperationException | RuntimeException e) {
                            // inaccessible JDK internals: counted shallowly
                        }
                    }
                }
                total += align(shallow);
            }
        }
        return total;
    }

    private static int primitiveSize(Class<?> t) {
        if (t == long.class || t == double.class) {
            return 8;
        }
        if (t == int.class || t == float.class) {
            return 4;
        }
        if (t == short.class || t == char.class) {
            return 2;
        }
        return 1;
    }
}
