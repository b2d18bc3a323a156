package schedule

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// Verdict is the outcome of one scheduling cycle for a pod.
type Verdict string

// Verdicts.
const (
	// VerdictScheduled: at least one node is feasible and SelectedNode is set.
	VerdictScheduled Verdict = "Scheduled"
	// VerdictUnschedulable: no node is feasible (or PreFilter rejected the pod).
	VerdictUnschedulable Verdict = "Unschedulable"
	// VerdictGated: the pod has scheduling gates; kube-scheduler does not try it.
	VerdictGated Verdict = "Gated"
	// VerdictError: a plugin returned an error.
	VerdictError Verdict = "Error"
)

// PluginVerdict is one plugin's Filter result on one node.
type PluginVerdict struct {
	Plugin  string
	Code    framework.Code
	Reasons []string
}

// PluginScore is one score plugin's weighted, normalized score on a node.
type PluginScore struct {
	Plugin string
	Score  int64
}

// NodeResult is everything one cycle found out about one node.
type NodeResult struct {
	Name     string
	Feasible bool
	// Status is the node's verdict as kube-scheduler records it: the first
	// failing Filter plugin (or the PreFilter rejection applied to every
	// node); nil when feasible.
	Status *framework.Status
	// Filters holds every Filter plugin's verdict when the cycle ran with
	// RunAllFilters (explain -o wide); otherwise it is empty and Status says
	// which plugin rejected the node.
	Filters []PluginVerdict
	// Scores holds each score plugin's weighted, normalized score (the
	// figure kube-scheduler logs per plugin), in the profile's order; empty
	// for infeasible nodes.
	Scores []PluginScore
	// Score is the final score: the sum of Scores.
	Score int64
}

// Result is one scheduling cycle for one pod on a snapshot.
type Result struct {
	Pod     *corev1.Pod
	Verdict Verdict
	// SelectedNode is the highest-scored feasible node, ties broken by name.
	SelectedNode string
	// SelectedScore is SelectedNode's final score.
	SelectedScore int64
	// Message is the FailedScheduling message, byte for byte what
	// kube-scheduler v1.37 writes ("0/N nodes are available: ..."), empty
	// when scheduled.
	Message string
	// NumAllNodes is how many nodes the cycle looked at.
	NumAllNodes int
	// PreFilterStatus is set when PreFilter rejected the pod for every node.
	PreFilterStatus *framework.Status
	// PostFilterMessage is the preemption part of Message.
	PostFilterMessage string
	// NominatedNode is where a preemption would make room, if anywhere;
	// PreemptionVictims are the pods it would evict there (nothing is
	// evicted), PreemptionPDBViolations how many a budget protects.
	NominatedNode           string
	PreemptionVictims       []*corev1.Pod
	PreemptionPDBViolations int
	// PreemptionEquallyGood are the other nodes preemption ranks as high as
	// NominatedNode, among the candidates its dry run found: kube-scheduler
	// picks one of them at random, this the first by name.
	PreemptionEquallyGood []string
	// Nodes has one entry per node of the snapshot, in name order.
	Nodes []NodeResult
	// NotEvaluated lists what the pipeline did not evaluate for this pod
	// (dynamic resource claims, unbound volumes, ...), one sentence each.
	NotEvaluated []string
	// exact are the float scores of a cycle of a profile with a
	// NodeOrder, by node (as Nodes), which the choice compares; nil
	// otherwise.
	exact []float64
}

// ExactScores are the float scores of a cycle of a profile with a
// NodeOrder, by node (as Nodes); nil otherwise.
func (r *Result) ExactScores() []float64 { return r.exact }

// TopNodes returns the feasible nodes that share the highest score.
func (r *Result) TopNodes() []string {
	if r.exact != nil {
		// The highest float, as the NodeOrder's scheduler takes it.
		best := bestExact(r.exact, r.Nodes)
		var top []string
		for i, n := range r.Nodes {
			if n.Feasible && r.exact[i] == best {
				top = append(top, n.Name)
			}
		}
		return top
	}
	var best int64 = -1
	var top []string
	for _, n := range r.Nodes {
		if !n.Feasible {
			continue
		}
		switch {
		case n.Score > best:
			best, top = n.Score, []string{n.Name}
		case n.Score == best:
			top = append(top, n.Name)
		}
	}
	return top
}
