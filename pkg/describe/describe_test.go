package describe

import (
	"bytes"
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/explain"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/noderesources"
)

// TestExplainColor: colour only where the writer is told it is on a
// terminal, and never inside tables, whose columns it would shift.
func TestExplainColor(t *testing.T) {
	e := &explain.Explanation{Verdict: explain.VerdictUnschedulable, Message: "0/1 nodes are available: 1 Insufficient cpu.",
		Pod: &corev1.Pod{}, Nodes: []explain.Node{{Name: "n", Plugin: noderesources.Name, Reasons: []string{"Insufficient cpu"}}}}
	e.Pod.Namespace, e.Pod.Name = "ns", "p"
	for _, color := range []bool{false, true} {
		var buf bytes.Buffer
		if err := Explanation(&buf, e, Options{Color: color}); err != nil {
			t.Fatal(err)
		}
		first, rest, _ := strings.Cut(buf.String(), "\n")
		if got := strings.Contains(first, "\x1b["); got != color {
			t.Errorf("color %v: verdict line %q", color, first)
		}
		for _, line := range strings.Split(rest, "\n") {
			if strings.HasPrefix(line, "n ") && strings.Contains(line, "\x1b[") {
				t.Errorf("color %v: a table row is coloured: %q", color, line)
			}
		}
	}
}

// TestExplainOneScreen: on a 5,120-node cluster, the default explain of a
// gang that does not fit answers first (verdict on the first line, the
// suggestions before the node details), fits about one screen, and no line
// is wider than 120 columns; -o wide lists every node.
func TestExplainOneScreen(t *testing.T) {
	nodes, pods := testutil.BlockCluster()
	snap := &schedule.Snapshot{Nodes: nodes, Pods: pods}
	members := testutil.GPUWorkers(1300, "6")
	g := &gang.Gang{Source: gang.SourceNative, Namespace: "ml", Name: "train", MinMember: 1300, Members: members}
	e, err := explain.Gang(context.Background(), snap, g, explain.Options{PlaceOptions: gang.PlaceOptions{TopologyKey: testutil.BlockKey}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Explanation(&buf, e, Options{MaxRows: 10}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "Unschedulable: gang ml/train") {
		t.Errorf("first line %q, want the verdict", lines[0])
	}
	if len(lines) > 60 {
		t.Errorf("%d lines, want at most 60:\n%s", len(lines), out)
	}
	for i, l := range lines {
		if len(l) > lineWidth {
			t.Errorf("line %d is %d characters: %q", i+1, len(l), l)
		}
	}
	answer, details := strings.Index(out, "What would make it fit"), strings.Index(out, "Nodes by verdict")
	if answer < 0 || details < 0 || answer > details {
		t.Errorf("the suggestions (at %d) do not come before the node details (at %d):\n%s", answer, details, out)
	}
	buf.Reset()
	if err := Explanation(&buf, e, Options{Wide: true}); err != nil {
		t.Fatal(err)
	}
	if rows := strings.Count(buf.String(), "\nnode-"); rows < len(nodes) {
		t.Errorf("-o wide lists %d node rows, want all %d", rows, len(nodes))
	}
}

// A missing PersistentVolumeClaim (issue #27): the summary stays
// kube-scheduler's byte for byte, its trailing PostFilter "not found" is
// said to be no second missing object, and creating the claim leads instead
// of "nothing tried was enough".
func TestExplainMissingClaim(t *testing.T) {
	pod := testutil.MakePod().Namespace("ml").Name("trainer").Req(testutil.Res{"cpu": "1"}).Obj()
	pod.Spec.Volumes = []corev1.Volume{{Name: "checkpoints", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "ckpt"}}}}
	snap := &schedule.Snapshot{Nodes: testutil.GPUNodes("zone-a", 2)}
	e, err := explain.Pod(context.Background(), snap, pod, explain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Explanation(&buf, e, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		`0/2 nodes are available: persistentvolumeclaim "ckpt" not found. not found` + "\n",
		`(the last "not found" is kube-scheduler's own PostFilter message`,
		"  - create PersistentVolumeClaim ml/ckpt (volume checkpoints of the pod)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "nothing tried was enough") {
		t.Errorf("output says nothing was enough:\n%s", out)
	}
}

// An init container that sets the pod's request is named where the screen
// gives the pod's requests (issue #27).
func TestExplainNamesInitContainer(t *testing.T) {
	pod := testutil.MakePod().Namespace("ml").Name("trainer").Req(testutil.Res{"cpu": "4", "memory": "8Gi"}).Obj()
	pod.Spec.InitContainers = []corev1.Container{{Name: "prepare", Image: "busybox",
		Resources: corev1.ResourceRequirements{Requests: testutil.Res{"cpu": "40"}.List()}}}
	snap := &schedule.Snapshot{Nodes: []*corev1.Node{testutil.MakeNode().Name("c0").Capacity(testutil.Res{"cpu": "32", "memory": "128Gi"}).Obj()}}
	e, err := explain.Pod(context.Background(), snap, pod, explain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Explanation(&buf, e, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"Nodes for pod ml/trainer (40 cpu, 8Gi memory; cpu set by init container prepare)",
		"  - no node of the cluster could hold ml/trainer even empty: it requests 40 cpu",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestQueuePlaceGrammar: one entry ahead starts, two start (issue #42's
// "1 ahead of it start first").
func TestQueuePlaceGrammar(t *testing.T) {
	pod := func(name string) explain.Pending {
		return explain.Pending{Pod: testutil.MakePod().Namespace("ml").Name(name).Obj()}
	}
	entry := explain.Pending{Outcome: explain.OutcomeStarts}
	entry.Position = 2
	one := queuePlace(&explain.QueuePlace{Entry: entry, Of: 2, Ahead: []explain.Pending{pod("a")}})
	two := queuePlace(&explain.QueuePlace{Entry: entry, Of: 3, Ahead: []explain.Pending{pod("a"), pod("b")}})
	if want := "position 2 of 2 (1 ahead of it starts first: pod/a)"; one != want {
		t.Errorf("one ahead: %q, want %q", one, want)
	}
	if want := "position 2 of 3 (2 ahead of it start first: pod/a, pod/b)"; two != want {
		t.Errorf("two ahead: %q, want %q", two, want)
	}
}

// An entry held outside the pipeline, or one that does not fit even
// first, gets no list of those that start ahead of it (they do not
// matter to it): a held one says why it is held.
func TestQueuePlaceOfHeldAndBlocked(t *testing.T) {
	ahead := []explain.Pending{{Pod: testutil.MakePod().Namespace("ml").Name("a").Obj()}}
	held := explain.Pending{Outcome: explain.OutcomeHeld, Reason: "Kueue: LocalQueue reserch doesn't exist", Position: 3}
	if got, want := queuePlace(&explain.QueuePlace{Entry: held, Of: 4, Ahead: ahead}), "position 3 of 4, held: Kueue: LocalQueue reserch doesn't exist"; got != want {
		t.Errorf("held: %q, want %q", got, want)
	}
	blocked := explain.Pending{Outcome: explain.OutcomeBlocked, Reason: "0/2 fit", Position: 2}
	if got, want := queuePlace(&explain.QueuePlace{Entry: blocked, Of: 4, Ahead: ahead}), "position 2 of 4"; got != want {
		t.Errorf("blocked: %q, want %q", got, want)
	}
}
