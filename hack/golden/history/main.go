// Golden vectors for qkcm's io.qkcm.controller.history and the StatefulSet controller's revisions,
// printed by upstream's own code (k8s.io/kubernetes v1.34.4). Nothing here is part of qkcm at runtime.
//
//	hash      : stdin lines {"prefix": s, "raw": s, "probe": n|null}
//	            -> adds history.HashControllerRevision and history.ControllerRevisionName
//	gojson    : stdin lines, a JSON document -> {"in", "compact", "sorted"} (see below)
//	jsonschema: the Go layout of v1.PodTemplateSpec as encoding/json sees it (json names, omitempty,
//	            omitzero, embedded fields, types with their own MarshalJSON or IsZero)
//	stspatch  : stdin lines, a StatefulSet as JSON (as read from an API server)
//	            -> {"set":..., "patch": <upstream getPatch bytes as a string>, "hash": ..., "name": ...}
//	defaults  : stdin lines, a v1.PodTemplateSpec as JSON (as an older release may have stored it in a revision)
//	            -> {"template":..., "patch": getPatch of a StatefulSet with that template after
//	            legacyscheme.Scheme.Default, as setMatchesLatestExistingRevision reconstructs it};
//	            an optional second argument sets feature gates first (e.g. ImageVolume=true)
//	quantity  : stdin lines, a JSON string -> {"in", "marshal": json.Marshal of the decoded resource.Quantity,
//	            "roundUp": the same after RoundUp(resource.Milli)} (or "error")
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"

	v1 "k8s.io/api/core/v1"

	apps "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/controller/history"
)

func main() {
	mode := "hash"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	if mode == "jsonschema" {
		out := map[string]*typeInfo{}
		walk(reflect.TypeOf(v1.PodTemplateSpec{}), out)
		b, _ := json.MarshalIndent(out, "", " ")
		fmt.Println(string(b))
		return
	}
	if mode == "defaults" && len(os.Args) > 2 {
		must(utilfeature.DefaultMutableFeatureGate.Set(os.Args[2]))
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 16<<20), 16<<20)
	enc := json.NewEncoder(os.Stdout)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		switch mode {
		case "hash":
			var in struct {
				Prefix string `json:"prefix"`
				Raw    string `json:"raw"`
				Probe  *int32 `json:"probe"`
			}
			must(json.Unmarshal([]byte(line), &in))
			cr := &apps.ControllerRevision{Data: runtime.RawExtension{Raw: []byte(in.Raw)}}
			h := history.HashControllerRevision(cr, in.Probe)
			enc.Encode(map[string]interface{}{
				"prefix": in.Prefix, "raw": in.Raw, "probe": in.Probe,
				"hash": h, "name": history.ControllerRevisionName(in.Prefix, h),
			})
		case "gojson":
			// what an API server makes of bytes it keeps verbatim (RawExtension) when it writes JSON, and
			// what json.Marshal makes of them decoded into interface{} (sorted keys, float64 numbers)
			compact, err := json.Marshal(json.RawMessage(line))
			must(err)
			var v interface{}
			must(json.Unmarshal([]byte(line), &v))
			sorted, err := json.Marshal(v)
			must(err)
			enc.Encode(map[string]interface{}{"in": line, "compact": string(compact), "sorted": string(sorted)})
		case "defaults":
			// what kube-controller-manager does: the default feature gates, the apps/v1 defaulting
			// registered in legacyscheme, run on the set restored from the revision
			var tmpl v1.PodTemplateSpec
			must(json.Unmarshal([]byte(line), &tmpl))
			set := &apps.StatefulSet{Spec: apps.StatefulSetSpec{Template: tmpl}}
			legacyscheme.Scheme.Default(set)
			patch, err := getPatch(set)
			must(err)
			enc.Encode(map[string]interface{}{"template": json.RawMessage(line), "patch": string(patch)})
		case "quantity":
			var in string
			must(json.Unmarshal([]byte(line), &in))
			var q resource.Quantity
			if err := json.Unmarshal([]byte(line), &q); err != nil {
				enc.Encode(map[string]interface{}{"in": in, "error": err.Error()})
				continue
			}
			m, err := json.Marshal(q)
			must(err)
			q.RoundUp(resource.Milli)
			r, err := json.Marshal(q)
			must(err)
			var ms, rs string
			must(json.Unmarshal(m, &ms))
			must(json.Unmarshal(r, &rs))
			enc.Encode(map[string]interface{}{"in": in, "marshal": ms, "roundUp": rs})
		case "stspatch":
			var set apps.StatefulSet
			must(json.Unmarshal([]byte(line), &set))
			patch, err := getPatch(&set)
			must(err)
			var cc *int32
			if set.Status.CollisionCount != nil {
				cc = set.Status.CollisionCount
			}
			cr, err := history.NewControllerRevision(&set, apps.SchemeGroupVersion.WithKind("StatefulSet"),
				set.Spec.Template.Labels, runtime.RawExtension{Raw: patch}, 1, cc)
			must(err)
			enc.Encode(map[string]interface{}{
				"set": json.RawMessage(line), "patch": string(patch),
				"hash": cr.Labels[history.ControllerRevisionHashLabel], "name": cr.Name,
			})
		}
	}
}

// getPatch is pkg/controller/statefulset/stateful_set_utils.go's getPatch (unexported there), verbatim in
// substance: the set encoded with the apps/v1 legacy codec, then only spec.template kept, with
// "$patch":"replace", marshalled from a map (sorted keys).
var patchCodec = scheme.Codecs.LegacyCodec(apps.SchemeGroupVersion)

func getPatch(set *apps.StatefulSet) ([]byte, error) {
	data, err := runtime.Encode(patchCodec, set)
	if err != nil {
		return nil, err
	}
	var raw map[string]interface{}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	objCopy := make(map[string]interface{})
	specCopy := make(map[string]interface{})
	spec := raw["spec"].(map[string]interface{})
	template := spec["template"].(map[string]interface{})
	specCopy["template"] = template
	template["$patch"] = "replace"
	objCopy["spec"] = specCopy
	return json.Marshal(objCopy)
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

type field struct {
	JSON      string `json:"json,omitempty"`
	Inline    bool   `json:"inline,omitempty"`
	OmitEmpty bool   `json:"omitempty,omitempty"`
	OmitZero  bool   `json:"omitzero,omitempty"`
	Type      string `json:"type"`
}

type typeInfo struct {
	Kind      string  `json:"kind"`
	Elem      string  `json:"elem,omitempty"`
	Key       string  `json:"key,omitempty"`
	Marshaler bool    `json:"marshaler,omitempty"`
	IsZero    bool    `json:"isZero,omitempty"`
	Fields    []field `json:"fields,omitempty"`
}

var marshalerType = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
var isZeroerType = reflect.TypeOf((*interface{ IsZero() bool })(nil)).Elem()

func walk(t reflect.Type, out map[string]*typeInfo) {
	name := t.String()
	if _, ok := out[name]; ok {
		return
	}
	ti := &typeInfo{Kind: t.Kind().String()}
	out[name] = ti
	if t.Kind() != reflect.Ptr && (t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType)) {
		ti.Marshaler = true
	}
	if t.Kind() != reflect.Ptr && t.Implements(isZeroerType) {
		ti.IsZero = true
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
		if ti.Marshaler {
			return
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("json")
			parts := strings.Split(tag, ",")
			jn := parts[0]
			if jn == "-" && len(parts) == 1 {
				continue
			}
			fi := field{Type: f.Type.String()}
			for _, o := range parts[1:] {
				switch o {
				case "omitempty":
					fi.OmitEmpty = true
				case "omitzero":
					fi.OmitZero = true
				case "inline":
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
