// Golden vectors for qkcm's DaemonSet ControllerRevisions: for DaemonSets as stored by a real
// kube-apiserver (JSON, one per line on stdin) prints upstream's revision data (the getPatch bytes,
// checked with daemon.Match) and the revision hash (controller.ComputeHash of the template with the
// status' collisionCount). With "schema" as argument, prints the Go struct layout of
// v1.PodTemplateSpec with each field's json name, omitempty, omitzero and whether its type marshals itself:
// the data qkcm's Go-JSON renderer needs to emit exactly the keys encoding/json emits.
// Nothing here is part of qkcm at runtime.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"

	apps "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/controller/daemon"
)

type field struct {
	Name      string `json:"name"`
	JSON      string `json:"json,omitempty"`
	Inline    bool   `json:"inline,omitempty"`
	OmitEmpty bool   `json:"omitempty,omitempty"`
	OmitZero  bool   `json:"omitzero,omitempty"`
	Type      string `json:"type"`
}

type typeInfo struct {
	Kind      string  `json:"kind"`
	Marshaler bool    `json:"marshaler,omitempty"`
	Elem      string  `json:"elem,omitempty"`
	Key       string  `json:"key,omitempty"`
	Fields    []field `json:"fields,omitempty"`
}

var marshalerType = reflect.TypeOf((*json.Marshaler)(nil)).Elem()

func walk(t reflect.Type, out map[string]*typeInfo) {
	name := t.String()
	if _, ok := out[name]; ok {
		return
	}
	ti := &typeInfo{Kind: t.Kind().String(), Marshaler: t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType)}
	out[name] = ti
	if ti.Marshaler {
		return
	}
	switch t.Kind() {
	case reflect.Ptr, reflect.Slice, reflect.Array:
		ti.Elem = t.Elem().String()
		walk(t.Elem(), out)
	case reflect.Map:
		ti.Key = t.Key().String()
		ti.Elem = t.Elem().String()
		walk(t.Key(), out)
		walk(t.Elem(), out)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("json")
			parts := strings.Split(tag, ",")
			jn := parts[0]
			if jn == "-" {
				continue
			}
			fi := field{Name: f.Name, Type: f.Type.String()}
			for _, p := range parts[1:] {
				if p == "omitempty" {
					fi.OmitEmpty = true
				}
				if p == "omitzero" {
					fi.OmitZero = true
				}
			}
			if jn == "" && f.Anonymous {
				fi.Inline = true
			} else {
				if jn == "" {
					jn = f.Name
				}
				fi.JSON = jn
			}
			ti.Fields = append(ti.Fields, fi)
			walk(f.Type, out)
		}
	}
}

// getPatch as upstream's (unexported) daemon.getPatch; each result is checked with daemon.Match.
func getPatch(ds *apps.DaemonSet) []byte {
	dsBytes, _ := json.Marshal(ds)
	var raw map[string]interface{}
	_ = json.Unmarshal(dsBytes, &raw)
	spec := raw["spec"].(map[string]interface{})
	template := spec["template"].(map[string]interface{})
	template["$patch"] = "replace"
	patch, _ := json.Marshal(map[string]interface{}{"spec": map[string]interface{}{"template": template}})
	return patch
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "schema" {
		out := map[string]*typeInfo{}
		walk(reflect.TypeOf(v1.PodTemplateSpec{}), out)
		b, _ := json.Marshal(out)
		fmt.Println(string(b))
		return
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 16<<20), 16<<20)
	enc := json.NewEncoder(os.Stdout)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var ds apps.DaemonSet
		if err := json.Unmarshal([]byte(line), &ds); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		patch := getPatch(&ds)
		ok, err := daemon.Match(&ds, &apps.ControllerRevision{Data: runtime.RawExtension{Raw: patch}})
		if err != nil || !ok {
			fmt.Fprintln(os.Stderr, "getPatch does not match upstream's Match", err)
			os.Exit(1)
		}
		enc.Encode(map[string]interface{}{
			"daemonSet": json.RawMessage(line),
			"data":      string(patch),
			"hash":      controller.ComputeHash(&ds.Spec.Template, ds.Status.CollisionCount),
		})
	}
}
