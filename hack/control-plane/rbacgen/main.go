// Command rbacgen prints, as YAML, upstream's bootstrap ClusterRole of each named controller
// (system:controller:<name>, from the kube-apiserver's RBAC bootstrap policy at the pinned
// Kubernetes version), renamed qkcm:controller:<name>, with a ClusterRoleBinding to the
// ServiceAccount kube-system/<name> that --use-service-account-credentials makes qkcm use. A
// controller upstream grants only namespaced Roles (bootstrap-signer, token-cleaner) gets those
// Roles, in the same namespaces, with RoleBindings to the same ServiceAccount.
//
// Usage: go run ./rbacgen replicaset-controller deployment-controller ...
package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"
	"sigs.k8s.io/yaml"
)

// offByDefault are the feature gates of the controllers that are off by default in v1.34: the
// bootstrap policy defines their roles only when the gate is on, and the manifests must carry them for
// a cluster that turns one on.
var offByDefault = map[string]bool{
	"DRADeviceTaints": true, "StorageVersionMigrator": true, "PodCertificateRequest": true,
	"ClusterTrustBundle": true, "APIServerIdentity": true, "StorageVersionAPI": true, "SELinuxChangePolicy": true,
}

func main() {
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(offByDefault); err != nil {
		fmt.Fprintf(os.Stderr, "rbacgen: %v\n", err)
		os.Exit(1)
	}
	roles := map[string]rbacv1.ClusterRole{}
	for _, r := range bootstrappolicy.ControllerRoles() {
		roles[strings.TrimPrefix(r.Name, "system:controller:")] = r
	}
	for _, name := range os.Args[1:] {
		upstream, ok := roles[name]
		if !ok {
			if !namespaced(name) {
				fmt.Fprintf(os.Stderr, "rbacgen: upstream has no bootstrap role for %q\n", name)
				os.Exit(1)
			}
			continue
		}
		role := rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: "qkcm:controller:" + name, Labels: map[string]string{"app.kubernetes.io/name": "qkcm"}},
			Rules:      upstream.Rules,
		}
		binding := rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: "qkcm:controller:" + name, Labels: map[string]string{"app.kubernetes.io/name": "qkcm"}},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: "kube-system"}},
		}
		for _, obj := range []interface{}{role, binding} {
			out, err := yaml.Marshal(obj)
			if err != nil {
				panic(err)
			}
			fmt.Printf("---\n%s", out)
		}
	}
}

// namespaced prints upstream's namespaced Roles system:controller:<name> (renamed qkcm:controller:<name>)
// with their RoleBindings to kube-system/<name>, in namespace order; false when there is none.
func namespaced(name string) bool {
	byNamespace := bootstrappolicy.NamespaceRoles()
	namespaces := make([]string, 0, len(byNamespace))
	for ns := range byNamespace {
		namespaces = append(namespaces, ns)
	}
	sort.Strings(namespaces)
	found := false
	for _, ns := range namespaces {
		for _, r := range byNamespace[ns] {
			if r.Name != "system:controller:"+name {
				continue
			}
			found = true
			role := rbacv1.Role{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
				ObjectMeta: metav1.ObjectMeta{Name: "qkcm:controller:" + name, Namespace: ns, Labels: map[string]string{"app.kubernetes.io/name": "qkcm"}},
				Rules:      r.Rules,
			}
			binding := rbacv1.RoleBinding{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
				ObjectMeta: metav1.ObjectMeta{Name: "qkcm:controller:" + name, Namespace: ns, Labels: map[string]string{"app.kubernetes.io/name": "qkcm"}},
				RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name},
				Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: "kube-system"}},
			}
			for _, obj := range []interface{}{role, binding} {
				out, err := yaml.Marshal(obj)
				if err != nil {
					panic(err)
				}
				fmt.Printf("---\n%s", out)
			}
		}
	}
	return found
}
