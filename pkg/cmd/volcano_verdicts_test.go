package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// volcanoSnapshot is issue #24's cluster: 4 nodes of 8 GPUs and 32 CPUs,
// Volcano Queues, and one Volcano gang per rule. The expected answers are
// derived by hand from Volcano's code (each row names the function);
// volcano.sh/volcano is not served by the module proxy here, so no Volcano
// scheduler runs them.
const volcanoNodes = `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: g0}, status: {allocatable: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "8", pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: g1}, status: {allocatable: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "8", pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: g2}, status: {allocatable: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "8", pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: g3}, status: {allocatable: {cpu: "32", memory: 256Gi, nvidia.com/gpu: "8", pods: "110"}}}
`

// volcanoGroups are the gangs of issue #24's rows, each in a snapshot of
// its own (with volcanoNodes and, for most, volcanoQueues): every Pending
// group's tasks count in its queue's request, so groups of several queues
// in one snapshot divide the cluster by weight among them (proportion),
// which TestVolcanoQueuesShareTheCluster shows.
var volcanoGroups = map[string]string{
	"closed": `- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: closed, namespace: ml}, spec: {minMember: 2, queue: closed}}
MEMBERS closed 2 cpu=1`,
	"cap8": `- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: cap8, namespace: ml}, spec: {minMember: 8, queue: small}}
MEMBERS cap8 8 cpu=2`,
	"busy": `- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: other, namespace: ml}, spec: {minMember: 3, queue: busy}, status: {phase: Running}}
- {apiVersion: v1, kind: Pod, metadata: {name: other-0, namespace: ml, annotations: {scheduling.k8s.io/group-name: other}}, spec: {nodeName: g0, schedulerName: volcano, containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]}, status: {phase: Running}}
- {apiVersion: v1, kind: Pod, metadata: {name: other-1, namespace: ml, annotations: {scheduling.k8s.io/group-name: other}}, spec: {nodeName: g0, schedulerName: volcano, containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]}, status: {phase: Running}}
- {apiVersion: v1, kind: Pod, metadata: {name: other-2, namespace: ml, annotations: {scheduling.k8s.io/group-name: other}}, spec: {nodeName: g0, schedulerName: volcano, containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]}, status: {phase: Running}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: busy, namespace: ml}, spec: {minMember: 8, queue: busy}}
MEMBERS busy 8 cpu=2`,
	"fortygpus": `- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: fortygpus, namespace: ml}, spec: {minMember: 5, minResources: {nvidia.com/gpu: "40"}}}
MEMBERS fortygpus 5 nvidia.com/gpu=8`,
	"behind": `- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: holder, namespace: ml, creationTimestamp: "2026-01-01T00:00:00Z"}, spec: {minMember: 1, queue: held, minResources: {nvidia.com/gpu: "32"}}, status: {phase: Inqueue}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: behind, namespace: ml}, spec: {minMember: 1, queue: held, minResources: {nvidia.com/gpu: "8"}}}
MEMBERS behind 1 nvidia.com/gpu=8`,
	"noserver": `- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: noserver, namespace: ml}, spec: {minMember: 4, minTaskMember: {ps: 1, worker: 3}}}
MEMBERS noserver 4 cpu=1 worker`,
	"psbig": `- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: psbig, namespace: ml}, spec: {minMember: 4, minTaskMember: {ps: 1, worker: 3}}}
MEMBERS psbig 1 nvidia.com/gpu=16 ps
MEMBERS psbig 4 cpu=1 worker`,
	"fits": `- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: fits, namespace: ml}, spec: {minMember: 2, queue: default}}
MEMBERS fits 2 nvidia.com/gpu=8`,
}

const volcanoQueues = `- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: default}, spec: {weight: 1}, status: {state: Open}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: closed}, spec: {weight: 1}, status: {state: Closed}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: small}, spec: {weight: 1, capability: {cpu: "8"}}, status: {state: Open}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: busy}, spec: {weight: 1, capability: {cpu: "8"}}, status: {state: Open}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: big}, spec: {weight: 1}, status: {state: Open}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: held}, spec: {weight: 1}, status: {state: Open}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: tasks}, spec: {weight: 1}, status: {state: Open}}`

// expandMembers writes the pods of "MEMBERS group n res=qty [task]" lines.
func expandMembers(s string) string {
	re := regexp.MustCompile(`(?m)^MEMBERS (\S+) (\d+) (\S+)=(\S+)(?: (\S+))?$`)
	return re.ReplaceAllStringFunc(s, func(line string) string {
		m := re.FindStringSubmatch(line)
		n := int(m[2][0] - '0')
		if len(m[2]) > 1 {
			n = 0
			for _, c := range m[2] {
				n = n*10 + int(c-'0')
			}
		}
		task := ""
		name := m[1]
		if m[5] != "" {
			task = ", volcano.sh/task-spec: " + m[5]
			name += "-" + m[5]
		}
		limits := ""
		if strings.Contains(m[3], "/") {
			limits = ", limits: {" + m[3] + `: "` + m[4] + `"}`
		}
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString("- {apiVersion: v1, kind: Pod, metadata: {name: " + name + "-" + string(rune('0'+i)) + ", namespace: ml, annotations: {scheduling.k8s.io/group-name: " + m[1] + task +
				"}}, spec: {schedulerName: volcano, containers: [{name: c, image: x, resources: {requests: {" + m[3] + `: "` + m[4] + `"}` + limits + `}}]}}`)
		}
		return b.String()
	})
}

// TestVolcanoVerdicts runs place, explain and admit on issue #24's rows:
// each verb gives Volcano's answer, with Volcano's words in the message.
func TestVolcanoVerdicts(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, queues bool, groups ...string) string {
		var b strings.Builder
		b.WriteString(volcanoNodes)
		if queues {
			b.WriteString(volcanoQueues + "\n")
		}
		for _, g := range groups {
			b.WriteString(volcanoGroups[g] + "\n")
		}
		path := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(path, []byte(expandMembers(b.String())), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	no := func(msg string) []string { return []string{"Unschedulable", "Unschedulable", "Rejected", msg} }
	tests := []struct {
		name   string
		group  string
		queues bool
		code   int
		// place, explain and admit verdicts, and words every verb prints.
		want []string
	}{
		// proportion's queueAllocatable refuses every task of a queue that
		// is not Open (the enqueue action enqueues a group without
		// minResources without asking its plugins).
		{"closed queue, no minResources", "closed", true, ExitNo, no(`queue closed is Closed, not Open`)},
		// allocate lets a task in only while the queue's allocated plus its
		// request stays within its deserved share (min of the cluster, the
		// capability 8 and the request 16): 4 of 8.
		{"queue capability below the gang", "cap8", true, ExitNo, no("4/8 tasks in gang unschedulable")},
		// The same with the queue's running job holding 6 of its 8 CPUs: 1 of 8.
		{"the queue's other job holds it", "busy", true, ExitNo, no("7/8 tasks in gang unschedulable")},
		// overcommit: 40 > 32 x 1.2, with or without Queues.
		{"minResources beyond the overcommitted cluster", "fortygpus", true, ExitNo, no("resource in cluster is overused: overused nvidia.com/gpu")},
		{"overcommit needs no Queue", "fortygpus", false, ExitNo, no("resource in cluster is overused: overused nvidia.com/gpu")},
		// overcommit adds the Inqueue group's 32 GPUs: 32 + 8 > 38.4.
		{"an Inqueue group holds the overcommit room", "behind", true, ExitNo, no("resource in cluster is overused")},
		// validJobFn's CheckTaskValid: no ps exists.
		{"a task without members", "noserver", true, ExitNo, no("Not enough valid pods of each task")},
		// JobReadyFn's CheckTaskReady: the ps fits nowhere, the 4 workers
		// reach minMember 4 but not the ps's minTaskMember.
		{"a task that cannot fit", "psbig", true, ExitNo, no("minTaskMember not met (ps: 0 of 1)")},
		{"fits", "fits", true, ExitOK, []string{"Placed", "Schedulable", "Admitted", "placed"}},
		// Without Queues the queue's state and share are unknown: not a plain yes.
		{"fits, no Queues", "fits", false, ExitNo, []string{"Placed", "Unverified", "Unverified", "Volcano Queues"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snapshot := write(fmt.Sprint(i), tt.queues, tt.group)
			for i, verb := range []string{"place", "explain", "admit"} {
				args := []string{verb, "podgroups.scheduling.volcano.sh/" + tt.group, "-n", "ml", "--snapshot", snapshot}
				code, out, stderr := run(t, "", append(args, "-o", "jsonpath={.verdict}")...)
				if code != tt.code || out != tt.want[i] {
					t.Errorf("%s: exit %d, verdict %q (stderr %q); want %d, %q", verb, code, out, stderr, tt.code, tt.want[i])
				}
				_, text, _ := run(t, "", args...)
				if flat := strings.Join(strings.Fields(text), " "); !strings.Contains(flat, tt.want[3]) {
					t.Errorf("%s: output does not say %q:\n%s", verb, tt.want[3], text)
				}
			}
		})
	}
}

// TestVolcanoQueuesShareTheCluster: every Pending group's tasks count in
// its queue's request, and proportion divides the cluster by weight among
// the queues with demand (proportion.go OnSessionOpen). The gang "fits"
// (2 x 8 GPUs in queue default) beside a group asking 32 GPUs in queue
// "other": with weights 1:1 default deserves 16 GPUs and the gang is
// placed; with 1:3 it deserves 32/4 = 8, one member's worth, and the
// allocate action never gets it to its minimum.
func TestVolcanoQueuesShareTheCluster(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		otherWeight string
		code        int
		verdict     string
		words       string
	}{
		{"1", ExitOK, "Placed", "placed"},
		{"3", ExitNo, "Unschedulable", "1/2 tasks in gang unschedulable: 1 of them refused by queue default: queue default's deserved share is nvidia.com/gpu=8"},
	} {
		snapshot := filepath.Join(dir, "w"+tc.otherWeight+".yaml")
		content := volcanoNodes + `- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: default}, spec: {weight: 1}, status: {state: Open}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {name: other}, spec: {weight: ` + tc.otherWeight + `}, status: {state: Open}}
- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup, metadata: {name: wide, namespace: ml}, spec: {minMember: 4, queue: other}}
MEMBERS wide 4 nvidia.com/gpu=8
` + volcanoGroups["fits"] + "\n"
		if err := os.WriteFile(snapshot, []byte(expandMembers(content)), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, _ := run(t, "", "place", "podgroups.scheduling.volcano.sh/fits", "-n", "ml", "--snapshot", snapshot, "-o", "jsonpath={.verdict}")
		_, text, _ := run(t, "", "place", "podgroups.scheduling.volcano.sh/fits", "-n", "ml", "--snapshot", snapshot)
		if code != tc.code || out != tc.verdict || !strings.Contains(strings.Join(strings.Fields(text), " "), tc.words) {
			t.Errorf("weight of other %s: exit %d, %s; want %d, %s saying %q:\n%s", tc.otherWeight, code, out, tc.code, tc.verdict, tc.words, text)
		}
	}
}

// TestVolcanoExplainProvesQueueChanges: explain leads with a change to the
// Volcano queue that holds the gang back, proven by placing the gang again
// on a copy of the snapshot with the changed Queue: open a Closed queue,
// raise a capability, a weight (proportion's share among the queues with
// demand), the two together.
func TestVolcanoExplainProvesQueueChanges(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(small, []byte(expandMembers(volcanoNodes+volcanoQueues+"\n"+volcanoGroups["cap8"]+"\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		snapshot, group, namespace, first string
	}{
		{"../../examples/volcano-cluster.yaml", "nightly-report", "default", "opening queue archive (vcctl queue operate -n archive -a open) lets Volcano allocate the gang; then 1 member(s) fit at once (verified)"},
		{"../../examples/volcano-cluster.yaml", "llm-finetune", "research",
			"raising queue research's capability to nvidia.com/gpu=32 and raising queue research's weight from 1 to 8 gives it a deserved share that holds the gang's minimum; then 2 member(s) fit at once (verified)"},
		{small, "cap8", "ml", "raising queue small's capability to cpu=16; then 8 member(s) fit at once (verified)"},
	} {
		code, out, stderr := run(t, "", "explain", "podgroups.scheduling.volcano.sh/"+tc.group, "-n", tc.namespace, "--snapshot", tc.snapshot)
		flat := strings.Join(strings.Fields(out), " ")
		i := strings.Index(flat, "What would make it fit")
		if code != ExitNo || i < 0 || !strings.Contains(flat[i:], "- "+tc.first) {
			t.Errorf("%s: exit %d (stderr %q), want the first suggestion %q:\n%s", tc.group, code, stderr, tc.first, out)
		}
	}
}
