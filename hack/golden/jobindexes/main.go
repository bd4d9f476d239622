// Golden vectors for qkcm's Job controller: status.completedIndexes/failedIndexes as upstream's
// orderedIntervals parse, merge and print them, and the generateName of Indexed Jobs' pods. The
// functions are unexported in k8s.io/kubernetes/pkg/controller/job, so they are linked by name; the
// interval type below has the layout of upstream's. Nothing here is part of qkcm at runtime.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	_ "unsafe"

	"k8s.io/klog/v2"
	_ "k8s.io/kubernetes/pkg/controller/job"
)

type interval struct {
	First int
	Last  int
}

type orderedIntervals []interval

//go:linkname parseIndexesFromString k8s.io/kubernetes/pkg/controller/job.parseIndexesFromString
func parseIndexesFromString(logger klog.Logger, indexesStr string, completions int) orderedIntervals

//go:linkname intervalsString k8s.io/kubernetes/pkg/controller/job.orderedIntervals.String
func intervalsString(oi orderedIntervals) string

//go:linkname withOrderedIndexes k8s.io/kubernetes/pkg/controller/job.orderedIntervals.withOrderedIndexes
func withOrderedIndexes(oi orderedIntervals, newIndexes []int) orderedIntervals

//go:linkname podGenerateNameWithIndex k8s.io/kubernetes/pkg/controller/job.podGenerateNameWithIndex
func podGenerateNameWithIndex(jobName string, index int) string

// Input lines (JSON): {"indexes":"1,3-5","completions":10,"add":[2,8]} or {"job":"name","index":3}.
type input struct {
	Indexes     *string `json:"indexes,omitempty"`
	Completions int     `json:"completions,omitempty"`
	Add         []int   `json:"add,omitempty"`
	Job         string  `json:"job,omitempty"`
	Index       int     `json:"index,omitempty"`
}

type output struct {
	input
	Parsed       string `json:"parsed,omitempty"`
	Total        int    `json:"total"`
	Merged       string `json:"merged,omitempty"`
	GenerateName string `json:"generateName,omitempty"`
}

func main() {
	logger := klog.Background()
	in := bufio.NewScanner(os.Stdin)
	enc := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var i input
		if err := json.Unmarshal(in.Bytes(), &i); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		o := output{input: i}
		if i.Indexes != nil {
			p := parseIndexesFromString(logger, *i.Indexes, i.Completions)
			o.Parsed = intervalsString(p)
			for _, v := range p {
				o.Total += v.Last - v.First + 1
			}
			if i.Add != nil {
				o.Merged = intervalsString(withOrderedIndexes(p, i.Add))
			}
		} else {
			o.GenerateName = podGenerateNameWithIndex(i.Job, i.Index)
		}
		if err := enc.Encode(o); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
