package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/cmd"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/gang/explain"
	"github.com/kubectl-gang/kubectl-gang/pkg/snapshot"
	"github.com/kubectl-gang/kubectl-gang/test/conformance/scenario"
)

// explained is the part of `kubectl gang explain -o json` these tests read.
type explained struct {
	Verdict string `json:"verdict"`
	Message string `json:"message"`
	Nodes   []struct {
		Name    string   `json:"name"`
		Plugin  string   `json:"plugin"`
		Reasons []string `json:"reasons"`
		Taint   string   `json:"taint"`
	} `json:"nodes"`
	Suggestions []struct {
		Kind     string `json:"kind"`
		Verified bool   `json:"verified"`
		Victims  []struct {
			Pod  string `json:"pod"`
			Node string `json:"node"`
		} `json:"victims"`
	} `json:"suggestions"`
}

// explainOnSnapshot writes the snapshot taken before the pending pod was
// created, plus the pod as the API server stored it, to a file and runs
// `kubectl gang explain pod/NAME -o json` on it, as a user would offline.
func explainOnSnapshot(t *testing.T, r *run) explained {
	t.Helper()
	snap := *r.snap
	snap.Pods = append(slices.Clone(r.snap.Pods), r.pending)
	snap.Sort()
	list, err := snapshot.ToList(&snap)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "snapshot.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := cmd.Main([]string{"explain", "pod/" + r.pending.Name, "-n", r.pending.Namespace, "--snapshot", path, "-o", "json"},
		genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	var e explained
	if err := json.Unmarshal(out.Bytes(), &e); err != nil {
		t.Fatalf("explain exited %d, stderr %q, output not JSON: %v", code, errOut.String(), err)
	}
	if want := map[bool]int{true: cmd.ExitOK, false: cmd.ExitNo}[e.Verdict == string(explain.VerdictSchedulable)]; code != want {
		t.Errorf("explain exited %d for verdict %s, want %d", code, e.Verdict, want)
	}
	return e
}

// checkTaintsNamed checks that every node the explanation says a taint
// rejects names a taint the node has, with its key, value and effect.
func checkTaintsNamed(t *testing.T, r *run, e explained) {
	t.Helper()
	taints := map[string][]string{}
	for _, n := range r.snap.Nodes {
		for _, taint := range n.Spec.Taints {
			taints[n.Name] = append(taints[n.Name], gang.FormatTaint(&taint))
		}
	}
	for _, n := range e.Nodes {
		if n.Plugin != "TaintToleration" {
			continue
		}
		if n.Taint == "" || !slices.Contains(taints[n.Name], n.Taint) {
			t.Errorf("node %s: explain names taint %q, the node has %q", n.Name, n.Taint, taints[n.Name])
		}
	}
}

// TestExplainSummaryIsKubeSchedulers creates, for every hand-written case
// kube-scheduler leaves Pending, the cluster on the real apiserver, lets the
// real kube-scheduler mark the pod Unschedulable, and runs explain on a
// snapshot taken before: its summary line must be the PodScheduled
// condition's message, byte for byte, and the taints it names must be real.
func TestExplainSummaryIsKubeSchedulers(t *testing.T) {
	h := sharedHarness(t)
	for _, tc := range reasonCases {
		if tc.want == "" {
			continue // kube-scheduler binds this one
		}
		t.Run(tc.name, func(t *testing.T) {
			b := newCase("x-" + tc.name)
			tc.build(b)
			r, err := h.Run(t.Context(), b.sc)
			if err != nil {
				t.Fatalf("the harness failed (not a disagreement): %v", err)
			}
			if r.kube.Node != "" {
				t.Fatalf("case is wrong: kube-scheduler bound the pod to %s", r.kube.Node)
			}
			e := explainOnSnapshot(t, r)
			if e.Verdict != string(explain.VerdictUnschedulable) {
				t.Errorf("verdict %s, want Unschedulable", e.Verdict)
			}
			if e.Message != r.kube.Message {
				t.Errorf("summary line differs from kube-scheduler's PodScheduled message\n ours: %q\n kube: %q", e.Message, r.kube.Message)
			}
			checkTaintsNamed(t, r, e)
		})
	}
}

// TestExplainPreemptionVictims lets a pending pod outrank a running one:
// kube-scheduler preempts it for real, and explain, on the snapshot taken
// before, must have named that pod (and only it) as the victim, with
// kube-scheduler's message as its summary line.
func TestExplainPreemptionVictims(t *testing.T) {
	h := sharedHarness(t)
	b := newCase("x-preemption")
	b.node("a", "zone-a")
	b.node("b", "zone-b")
	b.running("a", "batch").Priority(scenario.MidPriority, scenario.MidPriorityValue).Req(testutil.Res{"cpu": "3"})
	b.running("b", "db").Req(testutil.Res{"cpu": "3"})
	b.pending("web").Priority(scenario.HighPriority, scenario.HighPriorityValue).Req(testutil.Res{"cpu": "2"})
	victim, survivor := b.sc.Running[0], b.sc.Running[1]

	r, err := h.Run(t.Context(), b.sc)
	if err != nil {
		t.Fatalf("the harness failed (not a disagreement): %v", err)
	}
	if r.kube.Node != "" {
		t.Fatalf("case is wrong: kube-scheduler bound the pod to %s", r.kube.Node)
	}
	e := explainOnSnapshot(t, r)
	if e.Message != r.kube.Message {
		t.Errorf("summary line differs from kube-scheduler's PodScheduled message\n ours: %q\n kube: %q", e.Message, r.kube.Message)
	}
	var victims []string
	verified := false
	for _, s := range e.Suggestions {
		if s.Kind == string(explain.SuggestPreempt) {
			verified = s.Verified
			for _, v := range s.Victims {
				victims = append(victims, v.Pod+"@"+v.Node)
			}
		}
	}
	want := []string{victim.Namespace + "/" + victim.Name + "@" + victim.Spec.NodeName}
	if !slices.Equal(victims, want) || !verified {
		t.Errorf("explain's victims %v (verified %v), want %v", victims, verified, want)
	}

	// What kube-scheduler did: the victim is being evicted, the other pod
	// is untouched, and the pending pod is nominated to the victim's node.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := waitFor(ctx, func() (bool, error) {
		p, err := h.cs.CoreV1().Pods(victim.Namespace).Get(ctx, victim.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && p.DeletionTimestamp != nil, err
	}); err != nil {
		t.Errorf("kube-scheduler did not evict %s/%s: %v", victim.Namespace, victim.Name, err)
	}
	if p, err := h.cs.CoreV1().Pods(survivor.Namespace).Get(ctx, survivor.Name, metav1.GetOptions{}); err != nil || p.DeletionTimestamp != nil {
		t.Errorf("kube-scheduler evicted %s/%s too (err %v)", survivor.Namespace, survivor.Name, err)
	}
	if err := waitFor(ctx, func() (bool, error) {
		p, err := h.cs.CoreV1().Pods(r.pending.Namespace).Get(ctx, r.pending.Name, metav1.GetOptions{})
		return err == nil && p.Status.NominatedNodeName == victim.Spec.NodeName, err
	}); err != nil {
		t.Errorf("kube-scheduler did not nominate %s for the pending pod: %v", victim.Spec.NodeName, err)
	}
}

// waitFor polls cond every 100ms until it holds or ctx ends.
func waitFor(ctx context.Context, cond func() (bool, error)) error {
	var last error
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("%w (last error: %v)", ctx.Err(), last)
			}
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
