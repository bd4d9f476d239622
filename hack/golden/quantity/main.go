// Golden vectors for qkcm's io.qkcm.controller.util.GoQuantity, printed by apimachinery v0.34.4's own
// resource.Quantity. Nothing here is part of qkcm at runtime.
//
//	parse: stdin lines, a JSON string -> {"in", "string": String() of ParseQuantity, "canonical":
//	       CanonicalizeBytes (the cached text ignored), "format", "value": Value(), "milli": MilliValue(),
//	       "roundUp0"/"roundUpMilli": String() after RoundUp(0)/RoundUp(Milli), "sign"} or {"in", "error"}
//	pairs: stdin lines, a JSON array [a, b] -> {"a", "b", "add": String() of a.Add(b), "addFormat",
//	       "sub": String() of a.Sub(b), "subFormat", "cmp": a.Cmp(b)}
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/api/resource"
)

func emit(v map[string]any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: quantity parse|pairs < input.jsonl")
		os.Exit(2)
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		switch os.Args[1] {
		case "parse":
			var in string
			if err := json.Unmarshal(line, &in); err != nil {
				panic(err)
			}
			q, err := resource.ParseQuantity(in)
			if err != nil {
				emit(map[string]any{"in": in, "error": err.Error()})
				continue
			}
			n, s := q.CanonicalizeBytes(nil)
			r0 := q.DeepCopy()
			r0.RoundUp(0)
			rm := q.DeepCopy()
			rm.RoundUp(resource.Milli)
			c := q.DeepCopy()
			emit(map[string]any{"in": in, "string": c.String(), "canonical": string(n) + string(s),
				"format": string(q.Format), "value": q.Value(), "milli": q.MilliValue(),
				"roundUp0": r0.String(), "roundUpMilli": rm.String(), "sign": q.Sign()})
		case "pairs":
			var in [2]string
			if err := json.Unmarshal(line, &in); err != nil {
				panic(err)
			}
			a := resource.MustParse(in[0])
			b := resource.MustParse(in[1])
			sum := a.DeepCopy()
			sum.Add(b)
			diff := a.DeepCopy()
			diff.Sub(b)
			emit(map[string]any{"a": in[0], "b": in[1], "add": sum.String(), "addFormat": string(sum.Format),
				"sub": diff.String(), "subFormat": string(diff.Format), "cmp": a.Cmp(b)})
		default:
			fmt.Fprintln(os.Stderr, "unknown mode", os.Args[1])
			os.Exit(2)
		}
	}
	if err := sc.Err(); err != nil {
		panic(err)
	}
}
