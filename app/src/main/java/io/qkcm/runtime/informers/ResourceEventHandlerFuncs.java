package io.qkcm.runtime.informers;

import java.util.function.BiConsumer;
import java.util.function.Consumer;

import io.fabric8.kubernetes.client.informers.ResourceEventHandler;

/**
 * client-go's {@code cache.ResourceEventHandlerFuncs}: an informer event handler made of an add, an
 * update and a delete function, any of which may be null (that event is then ignored). The delete
 * function gets the last known state of the object, whether or not the deletion was observed directly.
 */
public final class ResourceEventHandlerFuncs<T> implements ResourceEventHandler<T> {

    private final Consumer<T> addFunc;
    private final BiConsumer<T, T> updateFunc;
    private final Consumer<T> deleteFunc;

    private ResourceEventHandlerFuncs(Consumer<T> addFunc, BiConsumer<T, T> updateFunc, Consumer<T> deleteFunc) {
        this.addFunc = addFunc;
        this.updateFunc = updateFunc;
        this.deleteFunc = deleteFunc;
    }

    /** The handler calling {@code addFunc(obj)}, {@code updateFunc(old, cur)} and {@code deleteFunc(obj)}; null ones do nothing. */
    public static <T> ResourceEventHandlerFuncs<T> of(Consumer<T> addFunc, BiConsumer<T, T> updateFunc, Consumer<T> deleteFunc) {
        return new ResourceEventHandlerFuncs<>(addFunc, updateFunc, deleteFunc);
    }

    @Override
    public void onAdd(T obj) {
        if (addFunc != null) {
            addFunc.accept(obj);
        }
    }

    @Override
    public void onUpdate(T oldObj, T newObj) {
        if (updateFunc != null) {
            updateFunc.accept(oldObj, newObj);
        }
    }

    @Override
    public void onDelete(T obj, boolean deletedFinalStateUnknown) {
        if (deleteFunc != null) {
            deleteFunc.accept(obj);
        }
    }
}
