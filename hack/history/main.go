// Golden vectors for qkcm's io.qkcm.controller.history and the StatefulSet controller's revisions,
// printed by upstream's own code (k8s.io/kubernetes v1.34.4). Nothing here is part of qkcm at runtime.
//
//	hash      : stdin lines {"prefix": s, "raw": s, "probe": n|null}
//	            -> adds history.HashControllerRevision and history.ControllerRevisionName
//	gojson    : stdin lines, a JSON document -> {"in", "compact", "sorted"} (see below)
//	stspatch  : stdin lines, a StatefulSet as JSON (as read from an API server)
//	            -> {"set":..., "patch": <upstream getPatch bytes as a string>, "hash": ..., "name": ...}
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	apps "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kubernetes/pkg/controller/history"
)

func main() {
	mode := "hash"
	if len(os.Args) > 1 {
		mode = os.Args[1]
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
