package io.qkcm.manager.serving;

import java.util.List;
import java.util.Map;

/** An authenticated (or anonymous) requester, as k8s.io/apiserver's user.Info. */
public record UserInfo(String name, String uid, List<String> groups, Map<String, List<String>> extra) {

    public static final String ANONYMOUS = "system:anonymous";
    public static final String UNAUTHENTICATED = "system:unauthenticated";
    public static final String AUTHENTICATED = "system:authenticated";

    public UserInfo {
        uid = uid == null ? "" : uid;
        groups = groups == null ? List.of() : List.copyOf(groups);
        extra = extra == null ? Map.of() : Map.copyOf(extra);
    }

    static UserInfo anonymous() {
        return new UserInfo(ANONYMOUS, "", List.of(UNAUTHENTICATED), Map.of());
    }
}
