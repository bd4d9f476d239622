// Golden vectors for qkcm's PodStatusPatch: for each case, upstream's pod status patch as
// pkg/util/pod preparePatchBytesForPodStatus builds it (strategicpatch.CreateTwoWayMergePatch of
// Pod{Status: old} and Pod{UID: uid, Status: new}), printed as JSON lines {name, uid, old, new, patch,
// unchanged}. Nothing here is part of qkcm at runtime. Run: go run . > ../../app/src/test/resources/podstatuspatch.jsonl
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// the body of upstream's preparePatchBytesForPodStatus (pkg/util/pod/pod.go, v1.34.4)
func prepare(uid types.UID, oldPodStatus, newPodStatus v1.PodStatus) ([]byte, bool, error) {
	oldData, err := json.Marshal(v1.Pod{Status: oldPodStatus})
	if err != nil {
		return nil, false, err
	}
	newData, err := json.Marshal(v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: newPodStatus})
	if err != nil {
		return nil, false, err
	}
	patchBytes, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, v1.Pod{})
	if err != nil {
		return nil, false, err
	}
	return patchBytes, bytes.Equal(patchBytes, []byte(fmt.Sprintf(`{"metadata":{"uid":%q}}`, uid))), nil
}

type vector struct {
	Name      string          `json:"name"`
	UID       types.UID       `json:"uid"`
	Old       v1.PodStatus    `json:"old"`
	New       v1.PodStatus    `json:"new"`
	Patch     string          `json:"patch"`
	Unchanged bool            `json:"unchanged"`
}

func main() {
	t0 := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	t1 := metav1.NewTime(time.Date(2026, 1, 2, 3, 9, 0, 0, time.UTC))
	dt := v1.PodCondition{Type: v1.DisruptionTarget, ObservedGeneration: 3, Status: v1.ConditionTrue,
		LastTransitionTime: t1, Reason: "DeletionByPodGC", Message: "PodGC: node no longer exists"}
	ready := v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: t0}
	scheduled := v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: t0,
		LastProbeTime: t0}
	oldDT := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionFalse, LastTransitionTime: t0,
		Reason: "Other", Message: "a <b> & c", ObservedGeneration: 1}
	sameDT := dt
	sameDT.LastTransitionTime = t0
	cases := []vector{
		{Name: "running, no conditions, failed", Old: v1.PodStatus{Phase: v1.PodRunning},
			New: v1.PodStatus{Phase: v1.PodFailed, ObservedGeneration: 3}},
		{Name: "pending without phase, failed, generation 0", Old: v1.PodStatus{},
			New: v1.PodStatus{Phase: v1.PodFailed}},
		{Name: "orphan without conditions", Old: v1.PodStatus{Phase: v1.PodRunning},
			New: v1.PodStatus{Phase: v1.PodFailed, ObservedGeneration: 3, Conditions: []v1.PodCondition{dt}}},
		{Name: "orphan with Ready", Old: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{ready}},
			New: v1.PodStatus{Phase: v1.PodFailed, ObservedGeneration: 3, Conditions: []v1.PodCondition{ready, dt}}},
		{Name: "orphan with Ready and PodScheduled, same observedGeneration",
			Old: v1.PodStatus{Phase: v1.PodRunning, ObservedGeneration: 3, Conditions: []v1.PodCondition{scheduled, ready}},
			New: v1.PodStatus{Phase: v1.PodFailed, ObservedGeneration: 3, Conditions: []v1.PodCondition{scheduled, ready, dt}}},
		{Name: "DisruptionTarget replaced",
			Old: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{oldDT, ready}},
			New: v1.PodStatus{Phase: v1.PodFailed, ObservedGeneration: 3, Conditions: []v1.PodCondition{dt, ready}}},
		{Name: "DisruptionTarget already true, only phase",
			Old: v1.PodStatus{Phase: v1.PodPending, Conditions: []v1.PodCondition{sameDT}},
			New: v1.PodStatus{Phase: v1.PodFailed, Conditions: []v1.PodCondition{sameDT}}},
		{Name: "condition removed and reordered",
			Old: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{ready, scheduled, oldDT}},
			New: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{scheduled, ready}}},
		{Name: "conditions reordered only",
			Old: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{ready, scheduled}},
			New: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{scheduled, ready}}},
		{Name: "all conditions removed, reason and message",
			Old: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{ready}, Reason: "R", Message: "m"},
			New: v1.PodStatus{Phase: v1.PodFailed, Reason: "Evicted", Message: "quoted \"x\" <y> & z\n"}},
		{Name: "unchanged", Old: v1.PodStatus{Phase: v1.PodFailed, Conditions: []v1.PodCondition{ready}},
			New: v1.PodStatus{Phase: v1.PodFailed, Conditions: []v1.PodCondition{ready}}},
	}
	enc := json.NewEncoder(os.Stdout)
	for i := range cases {
		c := &cases[i]
		c.UID = types.UID(fmt.Sprintf("5f0c1e0a-0000-4000-8000-%012d", i))
		patch, unchanged, err := prepare(c.UID, c.Old, c.New)
		if err != nil {
			panic(err)
		}
		c.Patch = string(patch)
		c.Unchanged = unchanged
		if err := enc.Encode(c); err != nil {
			panic(err)
		}
	}
}
