package workload_test

import (
	"strings"
	"testing"

	schedulingv1 "k8s.io/api/scheduling/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/workload"
)

// A native PodGroup from -f gets the priority the Priority admission plugin
// gives a new one (admitPodGroup): its class's value, else the global
// default's; a class that does not exist is refused as admission refuses it.
func TestWhatIfResolvesPodGroupPriority(t *testing.T) {
	manifest := func(class string) string {
		spec := ""
		if class != "" {
			spec = "\n  priorityClassName: " + class
		}
		return `apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: train}
spec:
  schedulingPolicy: {gang: {minCount: 1}}` + spec + `
---
apiVersion: v1
kind: Pod
metadata: {name: w-0}
spec:
  schedulingGroup: {podGroupName: train}
  priorityClassName: high
  containers: [{name: c, image: busybox}]
`
	}
	def := testutil.MakePriorityClass("default", 7)
	def.GlobalDefault = true
	classes := []*schedulingv1.PriorityClass{testutil.MakePriorityClass("high", 1500), def}
	for _, tc := range []struct {
		name, class string
		want        int32
		wantErr     string
		passes      bool
	}{
		{name: "the members' class", class: "high", want: 1500, passes: true},
		{name: "no class: the global default", want: 7},
		{name: "a class that does not exist", class: "missing", wantErr: "podgroups.scheduling.k8s.io ml/train: no PriorityClass with name missing was found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := workload.WhatIf([]byte(manifest(tc.class)), "job.yaml", &schedule.Snapshot{PriorityClasses: classes}, workload.Options{Namespace: "ml"})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g.PodGroupPriority == nil || *g.PodGroupPriority != tc.want {
				t.Errorf("PodGroup priority %v, want %d", g.PodGroupPriority, tc.want)
			}
			if r := gang.NativeGate(g); r.Passed != tc.passes {
				t.Errorf("gate passed %v (%s), want %v", r.Passed, r.Message, tc.passes)
			}
		})
	}
}
