package cmd

import (
	"strings"
	"testing"
)

// firstSuggestion is the first line of explain's "What would make it fit"
// section, its continuation lines joined.
func firstSuggestion(out string) string {
	_, after, ok := strings.Cut(out, "What would make it fit")
	if !ok {
		return ""
	}
	lines := strings.Split(after, "\n")[1:]
	var b []string
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || (i > 0 && strings.HasPrefix(t, "- ")) {
			break
		}
		b = append(b, strings.TrimPrefix(t, "- "))
	}
	return strings.Join(b, " ")
}

// Issue #27's rows on members and minimums: a Kueue pod group with a pod
// not created yet is told so (not to lower a flag of this tool), and
// proven to fit once it is; a gang whose minimum is every member it has is
// told that running with fewer means changing the job; one whose minimum
// is below its members by design is not.
func TestAdviceOnMembersAndMinimums(t *testing.T) {
	const nodes = `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: "8", memory: 32Gi, pods: "20"}}}
`
	kueue := nodes + `- {apiVersion: v1, kind: Pod, metadata: {name: w-0, namespace: ml, labels: {kueue.x-k8s.io/pod-group-name: grp}, annotations: {kueue.x-k8s.io/pod-group-total-count: "3"}}, spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: w-1, namespace: ml, labels: {kueue.x-k8s.io/pod-group-name: grp}, annotations: {kueue.x-k8s.io/pod-group-total-count: "3"}}, spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}}
`
	group := func(min string, members ...string) string {
		out := nodes + "- {apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, metadata: {name: job, namespace: ml}, spec: {minMember: " + min + "}}\n"
		for _, n := range members {
			out += "- {apiVersion: v1, kind: Pod, metadata: {name: w-" + n + ", namespace: ml, labels: {scheduling.x-k8s.io/pod-group: job}}, spec: {containers: [{name: c, image: x, resources: {requests: {cpu: \"3\"}}}]}}\n"
		}
		return out
	}
	// first: want is the first suggestion; else any suggestion.
	for _, tc := range []struct {
		name, snapshot, subject, want, not string
		first                              bool
	}{
		{"Kueue pod group, a pod not created", kueue, "pod/w-0",
			"1 member(s) do not exist yet (2 of the minimum 3 exist): the gang starts once they are created (Kueue admits a pod group once all 3 of its pods, its kueue.x-k8s.io/pod-group-total-count, exist); once created like w-1, then 3 member(s) fit at once (verified)",
			"--min-member", true},
		{"fixed size: the minimum is every member", group("3", "0", "1", "2"), "podgroups.scheduling.x-k8s.io/job",
			"the minimum is every member the job has (3): a job of fixed size (MPI, torchrun without an elastic policy) hangs with fewer, so the job itself must change to run with 2, not only the minimum", "", false},
		{"elastic by design: the minimum below the members", group("3", "0", "1", "2", "3"), "podgroups.scheduling.x-k8s.io/job",
			"lowering the minimum (spec.minMember) from 3 to 2 would let the gang start: then 2 member(s) fit at once and 2 wait(s) (verified)", "fixed size", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := run(t, tc.snapshot, "explain", tc.subject, "-n", "ml", "--snapshot", "-")
			first := firstSuggestion(out)
			if !tc.first {
				first = strings.Join(strings.Fields(out), " ")
			}
			if code != ExitNo || !strings.Contains(first, tc.want) || (tc.not != "" && strings.Contains(out, tc.not)) {
				t.Errorf("exit %d (stderr %q), first suggestion %q; want it to say %q (and not %q):\n%s", code, stderr, first, tc.want, tc.not, out)
			}
		})
	}
}

// Issue #27's fragmentation row: enough GPUs are free in all, in holes
// too small for one member; the diagnosis says so with the holes, before
// the whole-request shortfall.
func TestAdviceOnFragmentation(t *testing.T) {
	snap := "apiVersion: v1\nkind: List\nitems:\n"
	for _, n := range []string{"g0", "g1", "g2", "g3"} {
		snap += "- {apiVersion: v1, kind: Node, metadata: {name: " + n + "}, status: {allocatable: {cpu: \"32\", memory: 128Gi, nvidia.com/gpu: \"8\", pods: \"20\"}}}\n" +
			"- {apiVersion: v1, kind: Pod, metadata: {name: half-" + n + ", namespace: web}, spec: {nodeName: " + n + ", containers: [{name: c, image: x, resources: {requests: {nvidia.com/gpu: \"4\"}, limits: {nvidia.com/gpu: \"4\"}}}]}, status: {phase: Running}}\n"
	}
	snap += "- {apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, metadata: {name: job, namespace: ml}, spec: {minMember: 2}}\n"
	for _, n := range []string{"0", "1"} {
		snap += "- {apiVersion: v1, kind: Pod, metadata: {name: w-" + n + ", namespace: ml, labels: {scheduling.x-k8s.io/pod-group: job}}, spec: {containers: [{name: c, image: x, resources: {requests: {nvidia.com/gpu: \"8\"}, limits: {nvidia.com/gpu: \"8\"}}}]}}\n"
	}
	code, out, _ := run(t, snap, "explain", "podgroups.scheduling.x-k8s.io/job", "-n", "ml", "--snapshot", "-")
	want := "fragmented: 16 nvidia.com/gpu free in the cluster would hold the 2 member(s) left, but in holes smaller than the 8 nvidia.com/gpu each needs on one node (4 free on 4 node(s)); whole, short 16 nvidia.com/gpu in the cluster"
	if first := firstSuggestion(out); code != ExitNo || !strings.HasPrefix(first, want) {
		t.Errorf("exit %d, first suggestion %q; want it to start %q:\n%s", code, first, want, out)
	}
}

// Issue #27's first rows: the room exists behind a taint or behind the
// members' own spread rule; the change that opens it leads (proven), and
// the shortfall counts only the nodes the members may use as they are.
func TestAdviceRoomBehindTaintsAndSpread(t *testing.T) {
	node := func(name, zone, taint string) string {
		spec := ""
		if taint != "" {
			spec = ", spec: {taints: [{key: gpu, value: present, effect: NoSchedule}]}"
		}
		return "- {apiVersion: v1, kind: Node, metadata: {name: " + name + ", labels: {topology.kubernetes.io/zone: " + zone + "}}" + spec +
			", status: {allocatable: {cpu: \"32\", memory: 128Gi, nvidia.com/gpu: \"8\", pods: \"20\"}}}\n"
	}
	busy := func(node string) string {
		return "- {apiVersion: v1, kind: Pod, metadata: {name: busy-" + node + ", namespace: web}, spec: {nodeName: " + node + ", tolerations: [{key: gpu, operator: Exists}], containers: [{name: c, image: x, resources: {requests: {nvidia.com/gpu: \"8\"}, limits: {nvidia.com/gpu: \"8\"}}}]}, status: {phase: Running}}\n"
	}
	member := func(name, gpus, extra string) string {
		return "- {apiVersion: v1, kind: Pod, metadata: {name: " + name + ", namespace: ml, labels: {scheduling.x-k8s.io/pod-group: job}}, spec: {" + extra + "containers: [{name: c, image: x, resources: {requests: {nvidia.com/gpu: \"" + gpus + "\"}, limits: {nvidia.com/gpu: \"" + gpus + "\"}}}]}}\n"
	}
	const head = "apiVersion: v1\nkind: List\nitems:\n"
	tainted := head + node("g0", "a", "") + busy("g0") + node("g1", "a", "t") + node("g2", "a", "t") + node("g3", "a", "t") +
		"- {apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, metadata: {name: job, namespace: ml}, spec: {minMember: 2}}\n" +
		member("w-0", "8", "") + member("w-1", "8", "")
	spreadRule := "topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {scheduling.x-k8s.io/pod-group: job}}}], "
	spread := head + node("a0", "a", "") + node("a1", "a", "") + node("b0", "b", "") + busy("b0") +
		"- {apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, metadata: {name: job, namespace: ml}, spec: {minMember: 4}}\n" +
		member("w-0", "4", spreadRule) + member("w-1", "4", spreadRule) + member("w-2", "4", spreadRule) + member("w-3", "4", spreadRule)
	for _, tc := range []struct {
		name, snapshot, first, shortfall, why string
	}{
		{"the room is behind taints", tainted, "the room exists behind taints: tolerating gpu=present:NoSchedule",
			"without that change, short 16 nvidia.com/gpu", "first: it alone removes the blocker the summary names (taint gpu=present:NoSchedule on 3 node(s))"},
		{"the room is behind the spread rule", spread,
			"the room exists behind the spread rule: the members' spread constraint (topologyKey topology.kubernetes.io/zone, maxSkew 1, DoNotSchedule) keeps them off 2 node(s) with room: topology.kubernetes.io/zone=b has no room left, so the others may hold at most maxSkew more; maxSkew 4 would let the gang start: then 4 member(s) fit at once (verified)",
			"without that change, short", "first: it alone removes the blocker the summary names (the spread constraint, on 2 node(s))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, _ := run(t, tc.snapshot, "explain", "podgroups.scheduling.x-k8s.io/job", "-n", "ml", "--snapshot", "-")
			first := firstSuggestion(out)
			if code != ExitNo || !strings.HasPrefix(first, tc.first) || !strings.Contains(strings.Join(strings.Fields(out), " "), tc.shortfall) {
				t.Errorf("exit %d, first suggestion %q; want it to start %q and the shortfall %q:\n%s", code, first, tc.first, tc.shortfall, out)
			}
			// Why it is first, on the line under it (issue #27).
			if !strings.HasSuffix(first, tc.why) {
				t.Errorf("first suggestion %q\nwant it to end with why it leads: %q", first, tc.why)
			}
		})
	}
}

// Issue #27's host-port row: three members that keep apart by hostname and
// take host port 29500, on two nodes, one of which another pod holds the
// port on. The port's holders are named first (the gang's own member
// among them), and adding nodes is proven; before, only a lower minimum.
func TestAdviceOnHostPorts(t *testing.T) {
	snap := "apiVersion: v1\nkind: List\nitems:\n" +
		"- {apiVersion: v1, kind: Node, metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}, status: {allocatable: {cpu: \"8\", memory: 32Gi, pods: \"20\"}}}\n" +
		"- {apiVersion: v1, kind: Node, metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}, status: {allocatable: {cpu: \"8\", memory: 32Gi, pods: \"20\"}}}\n" +
		"- {apiVersion: v1, kind: Pod, metadata: {name: old-trainer, namespace: ml}, spec: {nodeName: n1, containers: [{name: c, image: x, ports: [{containerPort: 29500, hostPort: 29500}]}]}, status: {phase: Running}}\n" +
		"- {apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, metadata: {name: job, namespace: ml}, spec: {minMember: 3}}\n"
	for _, i := range []string{"0", "1", "2"} {
		snap += "- {apiVersion: v1, kind: Pod, metadata: {name: w-" + i + ", namespace: ml, labels: {scheduling.x-k8s.io/pod-group: job, app: w}}, spec: {affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: w}}}]}}, containers: [{name: c, image: x, ports: [{containerPort: 29500, hostPort: 29500}], resources: {requests: {cpu: \"1\"}}}]}}\n"
	}
	code, out, _ := run(t, snap, "explain", "podgroups.scheduling.x-k8s.io/job", "-n", "ml", "--snapshot", "-")
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{
		"What would make it fit (each change proven by placing on a changed copy of the snapshot): - host port 29500/TCP is held on n1 by ml/old-trainer, on n2 by ml/w-0 (a member of the gang)",
		"- adding 2 node(s) like n1 (allocatable 8 cpu, 32Gi memory) to the cluster would make room; then 3 member(s) fit at once (verified)",
	} {
		if code != ExitNo || !strings.Contains(flat, want) {
			t.Errorf("exit %d; want %q in:\n%s", code, want, out)
		}
	}
}

// Issue #27: scheduling gates and who owns them. The gated pod of the
// example cluster carries Kueue's admission gate: the list and the
// suggestion name Kueue and what it waits for.
func TestAdviceNamesGateOwners(t *testing.T) {
	_, out, _ := run(t, "", "explain", "pod/eval-llm-nightly-6qs4l", "-n", "ml-research", "--snapshot", exampleSnapshot)
	if want := "kueue.x-k8s.io/admission is Kueue's: it removes it once a ClusterQueue admits the workload (check the Workload's conditions) (verified)"; !strings.Contains(firstSuggestion(out), want) {
		t.Errorf("first suggestion %q, want it to end %q", firstSuggestion(out), want)
	}
}
