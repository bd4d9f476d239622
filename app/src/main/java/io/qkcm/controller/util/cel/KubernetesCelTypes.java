package io.qkcm.controller.util.cel;

import java.util.List;

import dev.cel.common.CelVarDecl;
import dev.cel.common.types.OptionalType;
import dev.cel.common.types.SimpleType;
import dev.cel.common.types.TypeParamType;
import dev.cel.common.types.TypeType;
import dev.cel.checker.CelStandardDeclarations;

/**
 * The type identifiers cel-go declares, for a cel-java checker whose functions come from
 * {@link KubernetesCelFunctions}: cel-java's standard identifiers but {@code dyn} (no standard function),
 * plus timestamp, duration, optional_type and the two protobuf well-known names.
 */
public final class KubernetesCelTypes {

    /** cel-java's standard declarations reduced to their type identifiers, dyn excluded. */
    public static final CelStandardDeclarations STANDARD_IDENTIFIERS_ONLY = CelStandardDeclarations.newBuilder()
            .filterFunctions((function, overload) -> false)
            .excludeIdentifiers(CelStandardDeclarations.StandardIdentifier.DYN)
            .build();

    /** The type names cel-go declares beyond cel-java's standard ones. */
    public static final List<CelVarDecl> TYPE_IDENTIFIERS = List.of(
            CelVarDecl.newVarDeclaration("timestamp", TypeType.create(SimpleType.TIMESTAMP)),
            CelVarDecl.newVarDeclaration("duration", TypeType.create(SimpleType.DURATION)),
            CelVarDecl.newVarDeclaration("google.protobuf.Timestamp", TypeType.create(SimpleType.TIMESTAMP)),
            CelVarDecl.newVarDeclaration("google.protobuf.Duration", TypeType.create(SimpleType.DURATION)),
            CelVarDecl.newVarDeclaration("optional_type", TypeType.create(OptionalType.create(TypeParamType.create("T")))));

    private KubernetesCelTypes() {
    }
}
