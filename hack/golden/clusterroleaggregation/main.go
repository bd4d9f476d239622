// Golden vectors for qkcm's clusterrole-aggregation-controller, from upstream's own code
// (k8s.io/kubernetes v1.34.4 pkg/controller/clusterroleaggregation). syncClusterRole is unexported,
// so it is linked by name and run on a controller whose lister holds each case's ClusterRoles; a
// fake client records the server-side apply it sends (or that it sends none). With "fixedPoint",
// every aggregating role is synced and its applied rules stored back (as the API server's apply
// would) until no sync writes anything: the rules the controller leaves on the roles, aggregations
// of aggregations included (admin takes edit's rules, edit takes view's). Nothing here is part of
// qkcm at runtime.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	_ "unsafe"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/controller/clusterroleaggregation"
)

//go:linkname syncClusterRole k8s.io/kubernetes/pkg/controller/clusterroleaggregation.(*ClusterRoleAggregationController).syncClusterRole
func syncClusterRole(c *clusterroleaggregation.ClusterRoleAggregationController, ctx context.Context, key string) error

// One input line: {"name", "clusterRoles": [...], "sync": "<role>"} or {"name", "clusterRoles", "fixedPoint": true}.
type input struct {
	Name         string               `json:"name"`
	ClusterRoles []rbacv1.ClusterRole `json:"clusterRoles"`
	Sync         string               `json:"sync,omitempty"`
	FixedPoint   bool                 `json:"fixedPoint,omitempty"`
}

type output struct {
	Name string `json:"name"`
	// sync: the apply request's body, or null when upstream writes nothing
	Apply json.RawMessage `json:"apply,omitempty"`
	Error string          `json:"error,omitempty"`
	// fixedPoint: each aggregating role's rules at the end, and how many applies it took
	Rules   map[string][]rbacv1.PolicyRule `json:"rules,omitempty"`
	Applies int                            `json:"applies,omitempty"`
}

type run struct {
	controller *clusterroleaggregation.ClusterRoleAggregationController
	roles      map[string]*rbacv1.ClusterRole
	indexer    interface{ Update(obj interface{}) error }
	patches    [][]byte
}

func newRun(roles []rbacv1.ClusterRole) *run {
	r := &run{roles: map[string]*rbacv1.ClusterRole{}}
	client := fake.NewSimpleClientset()
	// the fake tracker does not apply; record the request and answer as the API server would
	client.PrependReactor("patch", "clusterroles", func(action clienttesting.Action) (bool, runtime.Object, error) {
		r.patches = append(r.patches, action.(clienttesting.PatchAction).GetPatch())
		return true, nil, nil
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	informer := factory.Rbac().V1().ClusterRoles()
	r.controller = clusterroleaggregation.NewClusterRoleAggregation(informer, client.RbacV1())
	indexer := informer.Informer().GetIndexer()
	for i := range roles {
		role := roles[i].DeepCopy()
		r.roles[role.Name] = role
		if err := indexer.Add(role); err != nil {
			panic(err)
		}
	}
	r.indexer = indexer
	return r
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	enc := json.NewEncoder(os.Stdout)
	ctx := context.Background()
	for in.Scan() {
		var i input
		if err := json.Unmarshal(in.Bytes(), &i); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		o := output{Name: i.Name}
		r := newRun(i.ClusterRoles)
		if !i.FixedPoint {
			if err := syncClusterRole(r.controller, ctx, i.Sync); err != nil {
				o.Error = err.Error()
			}
			if len(r.patches) > 1 {
				fmt.Fprintln(os.Stderr, "more than one write in one sync")
				os.Exit(1)
			}
			if len(r.patches) == 1 {
				o.Apply = r.patches[0]
			} else {
				o.Apply = json.RawMessage("null")
			}
		} else {
			var aggregating []string
			for name, role := range r.roles {
				if role.AggregationRule != nil {
					aggregating = append(aggregating, name)
				}
			}
			sort.Strings(aggregating)
			for round := 0; ; round++ {
				if round > 100 {
					fmt.Fprintln(os.Stderr, "no fixed point after 100 rounds")
					os.Exit(1)
				}
				wrote := false
				for _, name := range aggregating {
					r.patches = nil
					if err := syncClusterRole(r.controller, ctx, name); err != nil {
						fmt.Fprintln(os.Stderr, err)
						os.Exit(1)
					}
					if len(r.patches) == 0 {
						continue
					}
					wrote = true
					o.Applies++
					var applied rbacv1.ClusterRole
					if err := json.Unmarshal(r.patches[0], &applied); err != nil {
						panic(err)
					}
					role := r.roles[name].DeepCopy()
					role.Rules = applied.Rules
					r.roles[name] = role
					if err := r.indexer.Update(role); err != nil {
						panic(err)
					}
				}
				if !wrote {
					break
				}
			}
			o.Rules = map[string][]rbacv1.PolicyRule{}
			for _, name := range aggregating {
				rules := r.roles[name].Rules
				if rules == nil {
					rules = []rbacv1.PolicyRule{}
				}
				o.Rules[name] = rules
			}
		}
		if err := enc.Encode(o); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
