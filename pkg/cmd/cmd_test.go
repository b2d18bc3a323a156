package cmd

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-gang/kubectl-gang/pkg/snapshot"
)

const exampleSnapshot = "../../examples/gpu-cluster.yaml"

func run(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(args, genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

// TestBadInputIsOneLine covers every kind of bad input a user can give without
// a cluster: each ends in one "error: ..." line and the documented exit code.
func TestBadInputIsOneLine(t *testing.T) {
	dir := t.TempDir()
	malformed := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(malformed, []byte("apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  apiVersion: v1\n  metadata: {name: [}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noNodes := filepath.Join(dir, "no-nodes.yaml")
	if err := os.WriteFile(noNodes, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: ml}\nspec: {containers: [{name: c, image: x}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		stdin    string
		wantCode int
		wantErr  string
	}{
		// A snapshot without nodes is a file saved without them, not a cluster.
		{"snapshot without nodes", []string{"place", "-l", "app=x", "-n", "ml", "--snapshot", noNodes}, "", ExitUsage,
			"error: " + noNodes + ": the snapshot holds no nodes; nothing can be placed on it"},
		{"snapshot without nodes, listing", []string{"explain", "--snapshot", noNodes}, "", ExitUsage,
			"error: " + noNodes + ": the snapshot holds no nodes"},
		// -f as kubectl and the API server take it: -n must agree, and the
		// namespace must exist.
		{"-f in another namespace than -n", []string{"place", "-f", "../../examples/finetune-job.yaml", "-n", "ml-prod", "--snapshot", exampleSnapshot}, "", ExitUsage,
			`error: the namespace from the provided object "ml-research" does not match the namespace "ml-prod". You must pass '--namespace=ml-research' to perform this operation.`},
		{"-f in a namespace the snapshot lacks", []string{"explain", "-f", "-", "--snapshot", exampleSnapshot},
			"apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: ml}\nspec: {containers: [{name: c, image: x}]}\n", ExitUsage,
			`error: <stdin>: namespaces "ml" not found`},
		{"unknown flag", []string{"explain", "--bogus"}, "", ExitUsage, "error: unknown flag: --bogus; see 'kubectl gang explain --help'"},
		{"unknown command", []string{"explian"}, "", ExitUsage, `error: unknown command "explian" for "kubectl gang" (did you mean "explain"?)`},
		{"unknown resource type", []string{"explain", "cronjob/nightly"}, "", ExitUsage, `error: unknown resource type "cronjob": give pod/NAME, podgroup/NAME, jobset/NAME (and other workloads), -l SELECTOR or -f FILE; the workloads are job, deployment, replicaset, statefulset, vcjob, jobset, leaderworkerset, pytorchjob, tfjob, xgboostjob, paddlejob, jaxjob, mpijob, raycluster, rayjob, trainjob`},
		{"unknown resource type for bind", []string{"bind", "cronjob/nightly"}, "", ExitUsage, `error: unknown resource type "cronjob": give podgroup/NAME or -l SELECTOR`},
		{"a workload for bind", []string{"bind", "deployment/web"}, "", ExitUsage, `error: "deployment/web" names a workload, whose members may not exist yet; give podgroup/NAME or -l SELECTOR (its pods: -l with their labels)`},
		{"unknown PodGroup group", []string{"place", "podgroups.example.com/x"}, "", ExitUsage, `error: unknown PodGroup group "example.com": expected one of scheduling.k8s.io, scheduling.volcano.sh, scheduling.x-k8s.io`},
		{"not TYPE/NAME", []string{"place", "llm"}, "", ExitUsage, `error: "llm" is not TYPE/NAME: give podgroup/NAME, jobset/NAME (and other workloads), -l SELECTOR or -f FILE`},
		{"no subject", []string{"place"}, "", ExitUsage, "error: name the gang: podgroup/NAME, jobset/NAME (and other workloads), -l SELECTOR or -f FILE"},
		{"two subjects", []string{"explain", "pod/a", "-l", "app=x"}, "", ExitUsage, "error: give exactly one of pod/NAME, podgroup/NAME, jobset/NAME (and other workloads), -l SELECTOR or -f FILE"},
		{"pod for place", []string{"place", "pod/a"}, "", ExitUsage, `error: "pod/a" names a pod; give its gang: podgroup/NAME, jobset/NAME (and other workloads), -l SELECTOR or -f FILE`},
		{"no subject for bind", []string{"bind"}, "", ExitUsage, "error: name the gang: podgroup/NAME or -l SELECTOR"},
		// Workloads are read from the cluster, where members may not exist yet.
		{"workload offline", []string{"place", "jobset/pretrain", "-n", "ml-research", "--snapshot", exampleSnapshot}, "", ExitUsage,
			"error: jobset/pretrain is read from the cluster; offline, give its manifest with -f"},
		{"workload offline, TYPE NAME", []string{"explain", "lws", "serve", "--snapshot", exampleSnapshot}, "", ExitUsage,
			"error: lws/serve is read from the cluster; offline, give its manifest with -f"},
		{"workload for bind", []string{"bind", "jobset/pretrain"}, "", ExitUsage,
			`error: "jobset/pretrain" names a workload, whose members may not exist yet; give podgroup/NAME or -l SELECTOR (its pods: -l with their labels)`},
		{"workload with ungate", []string{"admit", "rayjob/r", "--ungate", "example.com/gate"}, "", ExitUsage,
			"error: --ungate needs pods that exist; a workload's members may not yet: give its pods with -l"},
		{"workload of another group", []string{"place", "jobs.batch.volcano.sh/x"}, "", ExitUsage,
			`error: unknown resource type "jobs.batch.volcano.sh": this build reads Job as jobs.batch, version v1`},
		{"workload with min-member", []string{"place", "mpijob/x", "--min-member", "2"}, "", ExitUsage,
			"error: --min-member applies to -l and -f input; a PodGroup or workload carries its own minimum"},
		{"bad selector", []string{"explain", "-l", "app in (a"}, "", ExitUsage, `error: invalid selector "app in (a": `},
		{"negative min-member", []string{"place", "-l", "app=x", "--min-member", "-1"}, "", ExitUsage, "error: --min-member must not be negative, got -1"},
		{"bad output format", []string{"place", "podgroup/x", "-o", "xml"}, "", ExitUsage, `error: unable to match a printer suitable for the output format "xml"`},
		{"bad dry-run", []string{"bind", "podgroup/x", "--dry-run=maybe"}, "", ExitUsage, `error: invalid --dry-run "maybe": must be "none", "server", or "client"`},
		{"bad on-partial", []string{"bind", "podgroup/x", "--on-partial=ignore"}, "", ExitUsage, `error: invalid --on-partial "ignore": must be "report" or "delete"`},
		{"bind offline", []string{"bind", "podgroup/x", "--snapshot", exampleSnapshot}, "", ExitUsage, "error: bind reads and writes the cluster; it cannot run on --snapshot (use place for an offline plan)"},
		{"bad ungate", []string{"admit", "podgroup/x", "--ungate", "not a gate"}, "", ExitUsage, `error: invalid --ungate "not a gate": `},
		// -f is read before the cluster: no server is needed to hear about it.
		{"missing -f before the cluster", []string{"place", "-f", "/nonexistent.yaml", "--server", "https://127.0.0.1:1"}, "", ExitUsage, "error: /nonexistent.yaml: no such file"},
		{"bad manifest before the cluster", []string{"place", "-f", "-", "--server", "https://127.0.0.1:1"}, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", ExitUsage, `error: <stdin>: ConfigMap "x": kind ConfigMap of v1 is not supported with -f`},
		{"two readers of stdin", []string{"place", "-f", "-", "--snapshot", "-"}, "", ExitUsage, "error: -f - and --snapshot - cannot both read standard input"},
		// Flags do not silently change a PodGroup's own rules.
		{"topology key over the group's", []string{"place", "podgroup/llm-pretrain", "-n", "ml-research", "--snapshot", exampleSnapshot, "--topology-key", "network.topology.kubernetes.io/block"}, "", ExitUsage,
			"error: --topology-key network.topology.kubernetes.io/block would replace the topology topology.kubernetes.io/zone that podgroups.scheduling.k8s.io/llm-pretrain requires; change it in the group"},
		{"preferred topology over a required one", []string{"explain", "podgroup/llm-pretrain", "-n", "ml-research", "--snapshot", exampleSnapshot, "--prefer-topology-key", "topology.kubernetes.io/zone"}, "", ExitUsage,
			"error: podgroups.scheduling.k8s.io/llm-pretrain requires the topology topology.kubernetes.io/zone; --prefer-topology-key cannot loosen it"},
		{"min-member over a PodGroup from -f", []string{"place", "-f", "-", "--snapshot", exampleSnapshot, "--min-member", "1"},
			"apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: pg, namespace: ml}\nspec: {schedulingPolicy: {gang: {minCount: 2}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: ml}\nspec: {containers: [{name: c, image: x}]}\n", ExitUsage,
			"error: <stdin>: --min-member applies to manifests without a PodGroup; the PodGroup pg sets the minimum (2): change it there"},
		// Requests the API server would refuse never reach the scorers.
		{"negative request in -f", []string{"explain", "-f", "-", "--snapshot", exampleSnapshot},
			"apiVersion: v1\nkind: Pod\nmetadata: {name: neg, namespace: ml}\nspec: {containers: [{name: c, image: x, resources: {requests: {cpu: \"-1\"}}}]}\n", ExitUsage,
			`error: <stdin>: pod ml/neg: spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0`},
		{"request above its limit in -f", []string{"place", "-f", "-", "--snapshot", exampleSnapshot},
			"apiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: ml}\nspec: {containers: [{name: c, image: x, resources: {requests: {memory: 2Gi}, limits: {memory: 1Gi}}}]}\n", ExitUsage,
			`error: <stdin>: pod ml/big: spec.containers[0].resources.requests[memory]: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi`},
		{"negative request in a snapshot", []string{"snapshot", "--snapshot", "-"},
			"apiVersion: v1\nkind: Pod\nmetadata: {name: neg, namespace: ml}\nspec: {nodeName: node-1, containers: [{name: c, image: x, resources: {requests: {nvidia.com/gpu: \"-2\"}}}]}\n", ExitUsage,
			`error: <stdin>: document 1 (line 1): pod ml/neg: [spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "-2": must be greater than or equal to 0`},
		// The rest of the API server's rules, on every path a pod it has not
		// seen comes in by, and quantities kube-scheduler cannot count.
		{"cpu beyond int64 in -f", []string{"place", "-f", "-", "--snapshot", exampleSnapshot},
			"apiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: ml-research}\nspec: {containers: [{name: c, image: x, resources: {requests: {cpu: \"99999999999999999999999\"}}}]}\n", ExitUsage,
			`error: <stdin>: pod ml-research/big: spec.containers[0].resources.requests[cpu]: Invalid value: "99999999999999999999999": must be at most 9223372036854775807m, the most kube-scheduler counts in an int64 of millicores`},
		{"cpu kube-scheduler wraps in -f", []string{"place", "-f", "-", "--snapshot", exampleSnapshot},
			"apiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: ml-research}\nspec: {containers: [{name: c, image: x, resources: {requests: {cpu: \"9223372036854775807\"}}}]}\n", ExitUsage,
			`error: <stdin>: pod ml-research/big: spec.containers[0].resources.requests[cpu]: Invalid value: "9223372036854775807": must be at most 9223372036854775807m`},
		{"fractional gpu in -f", []string{"place", "-f", "-", "--snapshot", exampleSnapshot},
			"apiVersion: v1\nkind: Pod\nmetadata: {name: frac, namespace: ml-research}\nspec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 500m}}}]}\n", ExitUsage,
			`error: <stdin>: pod ml-research/frac: [spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer`},
		{"gpu request below its limit in a Job's template", []string{"explain", "-f", "-", "--snapshot", exampleSnapshot},
			"apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ml-research}\nspec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: x, resources: {requests: {nvidia.com/gpu: 2}, limits: {nvidia.com/gpu: 4}}}]}}}\n", ExitUsage,
			`error: <stdin>: pod ml-research/j-0: spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "2": must be equal to nvidia.com/gpu limit of 4`},
		{"fractional gpu in a hand-made snapshot", []string{"snapshot", "--snapshot", "-"},
			"apiVersion: v1\nkind: Pod\nmetadata: {name: frac, namespace: ml}\nspec: {nodeName: node-1, containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 500m}}}]}\n", ExitUsage,
			`error: <stdin>: document 1 (line 1): pod ml/frac: [spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer`},
		{"a stored pending pod kube-scheduler cannot count", []string{"explain", "pod/big", "-n", "ml", "--snapshot", "-"},
			"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: node-1}, status: {allocatable: {cpu: \"1\", pods: \"10\"}}}\n" +
				"- {apiVersion: v1, kind: Pod, metadata: {name: big, namespace: ml, uid: 5e1f}, spec: {schedulerName: default-scheduler, containers: [{name: c, image: x, resources: {requests: {cpu: \"9223372036854775807\"}}}]}}\n", ExitUsage,
			`error: pod ml/big: spec.containers[0].resources.requests[cpu]: Invalid value: "9223372036854775807": must be at most 9223372036854775807m`},
		// Names, labels and selectors the API server refuses (issue #42).
		{"a pod name the API server refuses", []string{"place", "-f", "-", "--snapshot", exampleSnapshot},
			"apiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name, namespace: ml-research}\nspec: {containers: [{name: c, image: x}]}\n", ExitUsage,
			`error: <stdin>: Pod "Bad_Name": metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of`},
		{"a name of 300 characters", []string{"place", "-f", "-", "--snapshot", exampleSnapshot},
			"apiVersion: v1\nkind: Pod\nmetadata: {name: " + strings.Repeat("a", 300) + ", namespace: ml-research}\nspec: {containers: [{name: c, image: x}]}\n", ExitUsage,
			`error: <stdin>: Pod "` + strings.Repeat("a", 300) + `": metadata.name: Invalid value: "` + strings.Repeat("a", 300) + `": must be no more than 253 characters`},
		{"a label value of 300 characters", []string{"explain", "-f", "-", "--snapshot", exampleSnapshot},
			"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml-research, labels: {app: " + strings.Repeat("a", 300) + "}}\nspec: {containers: [{name: c, image: x}]}\n", ExitUsage,
			`error: <stdin>: Pod "p": metadata.labels: Invalid value: "` + strings.Repeat("a", 300) + `": must be no more than 63 bytes`},
		{"a node affinity operator nobody can create", []string{"place", "-f", "-", "--snapshot", exampleSnapshot},
			"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml-research}\nspec: {containers: [{name: c, image: x}], affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: Near, values: [a]}]}]}}}}\n", ExitUsage,
			`error: <stdin>: pod ml-research/p: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator`},
		{"a toleration operator in a Job's template", []string{"admit", "-f", "-", "--snapshot", exampleSnapshot},
			"apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ml-research}\nspec: {template: {spec: {restartPolicy: Never, tolerations: [{key: gpu, operator: Equals, value: x}], containers: [{name: c, image: x}]}}}\n", ExitUsage,
			`error: <stdin>: pod ml-research/j-0: spec.tolerations[0].operator: Unsupported value: "Equals": supported values: "Equal", "Exists"`},
		{"a Job name the API server refuses", []string{"place", "-f", "-", "--snapshot", exampleSnapshot},
			"apiVersion: batch/v1\nkind: Job\nmetadata: {name: Train_Job, namespace: ml-research}\nspec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: x}]}}}\n", ExitUsage,
			`error: <stdin>: Job "Train_Job": metadata.name: Invalid value: "Train_Job": a lowercase RFC 1123 subdomain`},
		{"a misspelt whenUnsatisfiable", []string{"place", "-f", "-", "--snapshot", exampleSnapshot},
			"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml-research}\nspec: {containers: [{name: c, image: x}], topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedul}]}\n", ExitUsage,
			`error: <stdin>: pod ml-research/p: spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "DoNotSchedul": supported values: "DoNotSchedule", "ScheduleAnyway"`},
		{"malformed snapshot", []string{"snapshot", "--snapshot", malformed}, "", ExitUsage, "error: " + malformed + ":5: invalid YAML: did not find expected node content"},
		{"missing snapshot", []string{"snapshot", "--snapshot", filepath.Join(dir, "none.yaml")}, "", ExitUsage, "error: " + filepath.Join(dir, "none.yaml") + ": no such file or directory"},
		{"empty stdin", []string{"snapshot", "--snapshot", "-"}, "", ExitUsage, "error: <stdin>: empty snapshot"},
		{"snapshot -n", []string{"snapshot", "-n", "ml-research", "--snapshot", exampleSnapshot}, "", ExitUsage,
			"error: snapshot reads every namespace (placement needs every pod: they fill the nodes and other gangs' spreading and affinity see them); -n does not apply"},
		{"not a snapshot on stdin", []string{"snapshot", "--snapshot", "-"}, "hello: world\n", ExitUsage, "error: <stdin>: document 1 (line 1): not a Kubernetes object: apiVersion and kind are required"},
		{"summary with -o", []string{"snapshot", "--snapshot", exampleSnapshot, "--summary", "-o", "json"}, "", ExitUsage, "error: --summary prints a table; it cannot be combined with -o"},
		{"snapshot takes no arguments", []string{"snapshot", "nodes"}, "", ExitUsage, `error: unknown command "nodes" for "kubectl gang snapshot"`},
		{"bad qps", []string{"snapshot", "--snapshot", exampleSnapshot, "--qps=-5"}, "", ExitUsage, "error: --qps must be 0 (no client-side limit) or positive, got -5"},
		{"explain runs: a pod the snapshot does not hold", []string{"explain", "pod/web-0", "--snapshot", "-"}, "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: node-1}, status: {allocatable: {cpu: \"1\"}}}\n", ExitUsage, `error: pods "web-0" not found in namespace "default"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, tt.stdin, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.wantCode, stderr)
			}
			if !strings.HasPrefix(stderr, tt.wantErr) {
				t.Errorf("stderr = %q, want it to start with %q", stderr, tt.wantErr)
			}
			if strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr is not exactly one line: %q", stderr)
			}
			if out != "" {
				t.Errorf("stdout = %q, want nothing", out)
			}
		})
	}
}

// TestPartialSnapshot checks that pods bound to nodes the snapshot lacks
// are named, and that no verdict on such a snapshot is a plain yes.
func TestPartialSnapshot(t *testing.T) {
	snap := "apiVersion: v1\nkind: List\nitems:\n" +
		"- {apiVersion: v1, kind: Node, metadata: {name: node-1}, status: {allocatable: {cpu: \"8\", pods: \"10\"}}}\n" +
		"- {apiVersion: v1, kind: Pod, metadata: {name: run-0, namespace: ml}, spec: {nodeName: node-9, containers: [{name: c, image: x}]}}\n" +
		"- {apiVersion: v1, kind: Pod, metadata: {name: new-0, namespace: ml, labels: {app: x}}, spec: {containers: [{name: c, image: x}]}}\n"
	code, out, stderr := run(t, snap, "place", "-l", "app=x", "-n", "ml", "--snapshot", "-")
	if code != ExitNo || !strings.HasPrefix(out, "Placed (not verified): ") {
		t.Errorf("place: exit %d, output %q; want 3 and Placed (not verified)", code, out)
	}
	if want := "Warning: 1 pod(s) are bound to 1 node(s) the snapshot does not hold (node-9; pods ml/run-0)"; !strings.HasPrefix(stderr, want) {
		t.Errorf("stderr = %q, want it to start with %q", stderr, want)
	}
	code, out, _ = run(t, snap, "explain", "pod/new-0", "-n", "ml", "--snapshot", "-")
	if code == ExitOK || !strings.Contains(out, "the snapshot lacks 1 node(s) that 1 pod(s) are bound to (node-9; pods ml/run-0)") {
		t.Errorf("explain: exit %d, output %q; want a verdict that is not a plain yes, saying why", code, out)
	}
}

func TestHelpShowsUsageAndExamples(t *testing.T) {
	for _, verb := range []string{"", "explain", "place", "admit", "bind", "snapshot", "version"} {
		t.Run("help "+verb, func(t *testing.T) {
			args := []string{"--help"}
			if verb != "" {
				args = []string{verb, "--help"}
			}
			code, out, stderr := run(t, "", args...)
			if code != ExitOK || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if !strings.Contains(out, "kubectl gang "+verb) {
				t.Errorf("help does not name the command as kubectl gang %s:\n%s", verb, out)
			}
			if verb != "version" && !strings.Contains(out, "Examples:") {
				t.Errorf("help has no examples:\n%s", out)
			}
			if verb != "version" && !strings.Contains(out, "--kubeconfig") {
				t.Errorf("help lacks the kubectl connection flags:\n%s", out)
			}
			// bind refuses -f: its help does not offer it.
			if verb == "bind" && strings.Contains(out, "--filename") {
				t.Errorf("bind's help offers -f, which bind refuses:\n%s", out)
			}
		})
	}
}

func TestSnapshotSummaryOfExample(t *testing.T) {
	code, out, stderr := run(t, "", "snapshot", "--snapshot", exampleSnapshot, "--summary")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"RESOURCE", "nodes                                    35      2 zone(s), 1 unschedulable",
		"podgroups.scheduling.k8s.io              1       ml-research/llm-pretrain",
		"resourceslices.resource.k8s.io           0       0 device(s) on 0 node(s)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if stderr != "" {
		t.Errorf("stderr = %q, want nothing", stderr)
	}

	code, out, _ = run(t, "", "snapshot", "--snapshot", exampleSnapshot, "--summary", "--no-headers")
	if code != ExitOK || strings.Contains(out, "RESOURCE") {
		t.Errorf("--no-headers: exit %d, output:\n%s", code, out)
	}
}

func TestSnapshotOutputFormats(t *testing.T) {
	for _, format := range []string{"yaml", "json"} {
		t.Run(format, func(t *testing.T) {
			code, out, stderr := run(t, "", "snapshot", "--snapshot", exampleSnapshot, "-o", format)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var list struct {
				APIVersion string           `json:"apiVersion"`
				Kind       string           `json:"kind"`
				Items      []map[string]any `json:"items"`
			}
			if err := yaml.Unmarshal([]byte(out), &list); err != nil {
				t.Fatalf("output is not %s: %v", format, err)
			}
			if list.APIVersion != "v1" || list.Kind != "List" || len(list.Items) == 0 {
				t.Errorf("got apiVersion %q kind %q with %d items, want a v1 List", list.APIVersion, list.Kind, len(list.Items))
			}
		})
	}
	code, out, _ := run(t, "", "snapshot", "--snapshot", exampleSnapshot, "-o", "jsonpath={.items[?(@.kind==\"PodGroup\")].metadata.name}")
	if code != ExitOK || out != "llm-pretrain" {
		t.Errorf("jsonpath: exit %d, output %q", code, out)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := run(t, "", "version")
	if code != ExitOK || !strings.HasPrefix(out, "kubectl-gang ") {
		t.Errorf("exit %d, output %q", code, out)
	}
	code, out, _ = run(t, "", "version", "-o", "json")
	if code != ExitOK || !strings.Contains(out, `"goVersion"`) {
		t.Errorf("json: exit %d, output %q", code, out)
	}
	// kubectl's habit: version --client.
	code, out, _ = run(t, "", "version", "--client")
	if code != ExitOK || !strings.HasPrefix(out, "kubectl-gang ") {
		t.Errorf("--client: exit %d, output %q", code, out)
	}
	code, _, stderr := run(t, "", "version", "-o", "xml")
	if code != ExitUsage || stderr != "error: --output must be 'yaml' or 'json', got \"xml\"\n" {
		t.Errorf("bad -o: exit %d, stderr %q", code, stderr)
	}
}

// kubectl habits: "TYPE NAME" as well as "TYPE/NAME", and -o wide among
// the formats an unknown -o lists.
func TestKubectlHabits(t *testing.T) {
	_, slash, _ := run(t, "", "explain", "pod/llm-pretrain-worker-0", "-n", "ml-research", "--snapshot", exampleSnapshot)
	code, space, stderr := run(t, "", "explain", "pod", "llm-pretrain-worker-0", "-n", "ml-research", "--snapshot", exampleSnapshot)
	if code != ExitNo || space != slash {
		t.Errorf("explain pod NAME: exit %d, stderr %q; output differs from pod/NAME: %v", code, stderr, space != slash)
	}
	for _, verb := range []string{"explain", "place", "admit"} {
		code, _, stderr = run(t, "", verb, "podgroup/llm-pretrain", "-n", "ml-research", "--snapshot", exampleSnapshot, "-o", "xml")
		if code != ExitUsage || !strings.Contains(stderr, "allowed formats are: wide,") {
			t.Errorf("%s -o xml: exit %d, stderr %q; want wide among the formats", verb, code, stderr)
		}
	}
	for _, verb := range []string{"explain", "place", "admit", "bind"} {
		if _, help, _ := run(t, "", verb, "--help"); !strings.Contains(help, "One of: (wide, json, yaml") {
			t.Errorf("%s --help does not list -o wide", verb)
		}
	}
	// -o name names what a script would act on, as kubectl names objects.
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"explain", "podgroup/llm-pretrain", "-n", "ml-research"}, ExitNo, "podgroup.scheduling.k8s.io/llm-pretrain\n"},
		{[]string{"explain", "pod/llm-pretrain-worker-3", "-n", "ml-research"}, ExitNo, "pod/llm-pretrain-worker-3\n"},
		{[]string{"place", "-f", "../../examples/mpijob.yaml"}, ExitOK,
			"pod/allreduce-launcher-0\npod/allreduce-worker-0\npod/allreduce-worker-1\npod/allreduce-worker-2\npod/allreduce-worker-3\n"},
		// A plan the quota holds back places nothing.
		{[]string{"place", "-f", "../../examples/finetune-job.yaml", "--topology-key", "topology.kubernetes.io/zone"}, ExitNo, ""},
		{[]string{"place", "podgroup/llm-pretrain", "-n", "ml-research"}, ExitNo, ""},
		// In queue order: the gang's priority is higher.
		{[]string{"explain", "-A"}, ExitOK, "podgroup/llm-pretrain\npod/eval-llm-nightly-6qs4l\n"},
	} {
		code, out, stderr := run(t, "", append(tc.args, "--snapshot", exampleSnapshot, "-o", "name")...)
		if code != tc.code || out != tc.want {
			t.Errorf("%v -o name: exit %d (want %d), stderr %q, output %q, want %q", tc.args, code, tc.code, stderr, out, tc.want)
		}
	}
	// place -o wide adds each member's requests and the blocker's reason.
	_, out, _ := run(t, "", "place", "podgroup/llm-pretrain", "-n", "ml-research", "--snapshot", exampleSnapshot, "-o", "wide")
	if !strings.Contains(out, "REQUESTS") || !strings.Contains(out, "Does not fit             8 nvidia.com/gpu, 90 cpu, 1000Gi memory   0/35 nodes are available: ") {
		t.Errorf("place -o wide:\n%s", out)
	}
}

// explain without a subject lists what is pending, as kubectl get lists
// objects: in the namespace, or with -A in every one.
func TestExplainListsPending(t *testing.T) {
	// Ages count to the clock: the example's objects are from 2026-11-10.
	code, out, stderr := run(t, "", "explain", "-n", "ml-research", "--snapshot", exampleSnapshot)
	want := regexp.MustCompile(`^NAME                         PRIORITY   AGE +MEMBERS   VERDICT   REASON
podgroup/llm-pretrain        100000     \S+ +9/9       Blocked   8/9 fit in one topology.kubernetes.io/zone, all.*
pod/eval-llm-nightly-6qs4l   100        \S+ +1/1       Held      scheduling gates: kueue.x-k8s.io/admission \(Kue.*
$`)
	if code != ExitOK || !want.MatchString(out) {
		t.Errorf("exit %d, stderr %q, output:\n%s\nwant:\n%s", code, stderr, out, want)
	}
	_, out, _ = run(t, "", "explain", "-A", "--snapshot", exampleSnapshot, "--no-headers")
	if !strings.HasPrefix(out, "ml-research   podgroup/llm-pretrain        100000   ") || strings.Contains(out, "NAMESPACE") {
		t.Errorf("-A --no-headers:\n%s", out)
	}
	_, out, _ = run(t, "", "explain", "-n", "kube-system", "--snapshot", exampleSnapshot)
	if out != "No pending pods or gangs found.\n" {
		t.Errorf("nothing pending: %q", out)
	}
	_, out, _ = run(t, "", "explain", "-A", "--snapshot", exampleSnapshot, "-o", "jsonpath={.kind} {.items[0].name} {.items[0].gang.source} {.items[0].pending}/{.items[0].members} {.items[0].position} {.items[0].priority} {.items[0].verdict} {.items[0].explain}")
	if out != "PendingList podgroup/llm-pretrain scheduling.k8s.io 9/9 1 100000 Blocked Unschedulable" {
		t.Errorf("json: %q", out)
	}
	// The queue: two teams' gangs of one priority class compete; the
	// older PodGroup starts, the other waits behind it, and explaining it
	// says so.
	// pretrain and finetune start on nodes that entries of the other
	// scheduler wait for: the two schedulers race, so neither is a plain
	// yes, and the waiting ones are raced: they may start first. Then
	// notebook's node is one pretrain may take if it goes elsewhere
	// (docs/design.md#the-queue). Without the second scheduler's
	// configuration, its profile is a stand-in, and its starts are not
	// verified either way.
	_, out, _ = run(t, "", "explain", "-A", "--snapshot", "../../examples/queue-cluster.yaml", "--scheduler-config", "../../examples/two-schedulers.yaml",
		"-o", "jsonpath={range .items[*]}{.name} {.verdict} {.raced}{\"\\n\"}{end}")
	if want := "podgroup/pretrain Unverified \npodgroup/finetune Unverified \npodgroup/sweep Waits true\npodgroup/giant NeverFits \npod/eval-nightly Waits true\npod/eval-typo Held \npod/notebook Unverified \n"; out != want {
		t.Errorf("queue: %q, want %q", out, want)
	}
	code, out, _ = run(t, "", "explain", "podgroup/sweep", "-n", "ml-platform", "--snapshot", "../../examples/queue-cluster.yaml", "-o", "jsonpath={.queue.position}/{.queue.of} {.queue.verdict} {.queue.ahead}")
	if code != ExitOK || out != `3/7 Waits ["ml-research/podgroup/pretrain","ml-platform/podgroup/finetune"]` {
		t.Errorf("explain podgroup/sweep: exit %d, queue %q", code, out)
	}
	// A subject's queue line is the list's, though what makes its start
	// no plain yes (sweep, of the other scheduler) comes behind it.
	_, out, _ = run(t, "", "explain", "podgroup/pretrain", "-n", "ml-research", "--snapshot", "../../examples/queue-cluster.yaml", "--scheduler-config", "../../examples/two-schedulers.yaml", "-o", "jsonpath={.queue.position} {.queue.verdict}")
	if out != "1 Unverified" {
		t.Errorf("explain podgroup/pretrain: queue %q, want 1 Unverified as in the list", out)
	}
	_, out, _ = run(t, "", "explain", "podgroup/pretrain", "-n", "ml-research", "--snapshot", "../../examples/queue-cluster.yaml", "--scheduler-config", "../../examples/two-schedulers.yaml")
	if !strings.Contains(out, "Queue: position 1 of 7, starts on gpu-1, gpu-2, gpu-3; not verified: ml-platform/podgroup/sweep") {
		t.Errorf("explain podgroup/pretrain on screen does not say its queue line:\n%s", out)
	}
	_, out, _ = run(t, "", "explain", "-A", "-l", "scheduling.x-k8s.io/pod-group", "--sort-by", "name", "--snapshot", "../../examples/queue-cluster.yaml", "-o", "name")
	if out != "podgroup/finetune\npodgroup/giant\npodgroup/sweep\n" {
		t.Errorf("-A -l --sort-by name: %q", out)
	}
	for _, args := range [][]string{
		{"explain", "-A", "podgroup/llm-pretrain"},
		{"explain", "-A", "--topology-key", "topology.kubernetes.io/zone"},
		{"place", "--snapshot", exampleSnapshot},
	} {
		if code, _, stderr := run(t, "", append(args, "--snapshot", exampleSnapshot)...); code != ExitUsage || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want one line and exit 2", args, code, stderr)
		}
	}
}

// The manifests shipped in examples/ (the README's examples) load and get
// a verdict against the example snapshot.
func TestShippedExamples(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	snapshots := map[string]string{"dra-job.yaml": "../../examples/dra-cluster.yaml", "vcjob.yaml": "../../examples/volcano-cluster.yaml"}
	for _, f := range files {
		if data, err := os.ReadFile(f); strings.HasSuffix(filepath.Base(f), "-cluster.yaml") || err == nil && strings.Contains(string(data), "kind: KubeSchedulerConfiguration") ||
			filepath.Base(f) == "kueue-waiting.yaml" {
			// A snapshot (or objects to add to one: TestKueueWaitingExample)
			// or a scheduler's configuration, not a manifest.
			continue
		}
		snap := cmp.Or(snapshots[filepath.Base(f)], exampleSnapshot)
		code, _, stderr := run(t, "", "explain", "-f", f, "--snapshot", snap)
		if code != ExitOK && code != ExitNo {
			t.Errorf("explain -f %s: exit %d: %s", f, code, stderr)
		}
	}
	// The DRA example: 5 members of 8 GPUs, 36 GPUs free but on 4 nodes
	// with 8 free; the plan shows each member's devices, the explanation
	// what each node lacks and the node to add.
	code, out, _ := run(t, "", "place", "-f", "../../examples/dra-job.yaml", "--snapshot", "../../examples/dra-cluster.yaml")
	if code != ExitNo || !strings.Contains(out, "ml/llm-finetune-0   dgx-2    450     Fits (gang not placed)   gpu.nvidia.com/dgx-2: gpu-0,") {
		t.Errorf("place dra-job.yaml: exit %d, output %q", code, out)
	}
	code, out, _ = run(t, "", "explain", "-f", "../../examples/dra-job.yaml", "--snapshot", "../../examples/dra-cluster.yaml")
	if code != ExitNo || !strings.Contains(out, "dgx-0   -        -       0      cannot allocate all claims (gpus: 8 gpu.nvidia.com wanted, 4 of 8 free)") ||
		!strings.Contains(out, "adding 1 node(s) like dgx-0 (allocatable 220 cpu, 1990Gi memory; 8 gpu.nvidia.com device(s))") ||
		!strings.Contains(out, "short 8 gpu.nvidia.com device(s) for request gpus in the cluster: it holds 4 of minimum 5 member(s) at once; the 1\n    left need 8 gpu.nvidia.com device(s) each on one node, and the most free on any node it may run on is 4 (dgx-0)") {
		t.Errorf("explain dra-job.yaml: exit %d, output %q", code, out)
	}
	// The LeaderWorkerSet example: the second group preempts within one
	// block, as the README shows it.
	code, out, _ = run(t, "", "explain", "-f", "../../examples/lws-exclusive.yaml", "--snapshot", exampleSnapshot)
	if code != ExitNo || !strings.Contains(out, "(of\n    the values no other LeaderWorkerSet group holds, the one with the most room)") ||
		!strings.Contains(out, "  - preempting 2 lower-priority pod(s) would make room: ml-research/sweep-lr-0 (priority 100, batch-low),\n    ml-research/sweep-lr-1 (priority 100, batch-low) on gpu-b-07; then 8 member(s) fit at once (verified)") {
		t.Errorf("explain lws-exclusive.yaml: exit %d, output %q", code, out)
	}
	// The MPIJob example's explanation, as the README shows it.
	code, out, _ = run(t, "", "explain", "-f", "../../examples/mpijob.yaml", "--snapshot", exampleSnapshot)
	if code != ExitOK || !strings.Contains(out, "8       feasible                                                          gpu-a-04, gpu-b-00 (+6)") {
		t.Errorf("explain mpijob.yaml: exit %d, output %q", code, out)
	}
	// The JobSet example's explanation, as the README shows it.
	code, out, _ = run(t, "", "explain", "-f", "../../examples/jobset-exclusive.yaml", "--snapshot", exampleSnapshot)
	if code != ExitNo || !strings.Contains(out, "  - adding 3 node(s) like gpu-a-04 (allocatable 95.69 cpu, 1130.9Gi memory, 8 nvidia.com/gpu) to the cluster would make\n    room; then 8 member(s) fit at once (verified)") ||
		!strings.Contains(out, "  - short 24 nvidia.com/gpu in network.topology.kubernetes.io/block=us-east-1a-block-2, where the blocked child Job's\n    other members go:") ||
		!strings.Contains(out, "default/pretrain-workers-1-0, the leader of its child Job, goes to one of gpu-a-04\n") {
		t.Errorf("explain jobset-exclusive.yaml: exit %d, output %q", code, out)
	}
	// The fine-tuning Job fits in zone a, but the namespace's quota would
	// refuse its pods: not placed, as explain and admit say.
	if code, out, _ := run(t, "", "place", "-f", "../../examples/finetune-job.yaml", "--topology-key", "topology.kubernetes.io/zone", "--snapshot", exampleSnapshot); code != ExitNo ||
		!strings.HasPrefix(out, "Unschedulable: the namespace's ResourceQuota would refuse the new members") || !strings.Contains(out, "ml-research/finetune-1   gpu-a-04   440     Fits (gang not placed)") {
		t.Errorf("place finetune-job.yaml: exit %d, output %q", code, out)
	}
}

// TestReadmeErrorExamples runs the README's examples of errors that need no
// file of their own and checks each prints the line the README shows.
func TestReadmeErrorExamples(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(data), "Errors are one line on stderr")
	if !ok {
		t.Fatal("the README has no error examples")
	}
	block, _, _ = strings.Cut(strings.SplitN(block, "```", 3)[1], "```")
	lines := strings.Split(strings.TrimSpace(block), "\n")
	ran := 0
	for i := 0; i+1 < len(lines); i++ {
		command, ok := strings.CutPrefix(lines[i], "$ kubectl gang ")
		if !ok {
			continue
		}
		args := strings.Fields(command)
		if slices.Contains(args, "--snapshot") {
			continue // a file of the reader's, not in the repository
		}
		_, _, stderr := run(t, "", args...)
		if want := lines[i+1] + "\n"; stderr != want {
			t.Errorf("kubectl gang %s: stderr %q, the README shows %q", command, stderr, want)
		}
		ran++
	}
	if ran < 2 {
		t.Errorf("ran %d of the README's error examples, want at least 2", ran)
	}
}

// TestSnapshotProtobuf checks that -o protobuf writes a binary snapshot
// that --snapshot reads back, from a file and from stdin, as the same
// cluster.
func TestSnapshotProtobuf(t *testing.T) {
	code, bin, stderr := run(t, "", "snapshot", "--snapshot", exampleSnapshot, "-o", "protobuf")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(bin, snapshot.BinaryMagic) {
		t.Fatalf("output starts %q, want a binary snapshot", bin[:min(len(bin), 8)])
	}
	path := filepath.Join(t.TempDir(), "cluster.pb")
	if err := os.WriteFile(path, []byte(bin), 0o644); err != nil {
		t.Fatal(err)
	}
	_, want, _ := run(t, "", "snapshot", "--snapshot", exampleSnapshot, "-o", "json")
	for _, source := range []string{path, "-"} {
		code, got, stderr := run(t, bin, "snapshot", "--snapshot", source, "-o", "json")
		if code != ExitOK || got != want {
			t.Errorf("--snapshot %s: exit %d, stderr %q; the JSON differs from the original's: %v", source, code, stderr, got != want)
		}
	}
	code, _, stderr = run(t, "", "snapshot", "--snapshot", exampleSnapshot, "-o", "xml")
	if code != ExitUsage || !strings.HasSuffix(strings.TrimSpace(stderr), ",protobuf") {
		t.Errorf("-o xml: exit %d, stderr %q; want protobuf among the formats", code, stderr)
	}
	if _, help, _ := run(t, "", "snapshot", "--help"); !strings.Contains(help, "jsonpath-file, protobuf)") {
		t.Errorf("snapshot --help does not offer -o protobuf")
	}
	code, _, stderr = run(t, bin[:len(bin)/2], "snapshot", "--snapshot", "-", "--summary")
	if code != ExitUsage || !strings.Contains(stderr, "cut short") {
		t.Errorf("half a file: exit %d, stderr %q", code, stderr)
	}
}

// TestHelpListsEveryExitCode: the root help's exit codes are every code a
// verb returns (issue #42: it stopped at 4).
func TestHelpListsEveryExitCode(t *testing.T) {
	_, out, _ := run(t, "", "--help")
	_, codes, ok := strings.Cut(strings.Join(strings.Fields(out), " "), "Exit codes: ")
	if !ok {
		t.Fatalf("no exit codes in --help:\n%s", out)
	}
	codes, _, _ = strings.Cut(codes, "Usage:")
	for _, code := range []int{ExitOK, ExitError, ExitUsage, ExitNo, ExitPartial, ExitUnverified} {
		if !strings.Contains(codes, fmt.Sprintf("%d ", code)) {
			t.Errorf("--help's exit codes %q lack %d", codes, code)
		}
	}
}

// TestFilenameIsADirectory: -f DIR reads the directory's .yaml, .yml and
// .json files in name order, as kubectl does (a PodGroup in one file, its
// pods in another); a directory without any is bad input (issue #42: it was
// exit 1, "is a directory").
func TestFilenameIsADirectory(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"a-group.yaml": "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: pg, namespace: ml-research}\nspec: {schedulingPolicy: {gang: {minCount: 2}}}\n",
		"b-pods.json": `{"apiVersion": "v1", "kind": "List", "items": [` +
			`{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w-0", "namespace": "ml-research"}, "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}},` +
			`{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w-1", "namespace": "ml-research"}, "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}]}`,
		"notes.txt": "not a manifest",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, stderr := run(t, "", "place", "-f", dir, "--snapshot", exampleSnapshot, "-o", "jsonpath={.gang.name} {.minMember} {.assignments[*].pod}")
	if code != ExitOK || out != "pg 2 ml-research/w-0 ml-research/w-1" {
		t.Errorf("-f DIR: exit %d, %q (stderr %q); want 0 and the PodGroup pg with its two pods", code, out, stderr)
	}
	empty := t.TempDir()
	code, out, stderr = run(t, "", "place", "-f", empty, "--snapshot", exampleSnapshot)
	if code != ExitUsage || out != "" || stderr != "error: "+empty+": a directory without .yaml, .yml or .json files\n" {
		t.Errorf("-f of an empty directory: exit %d, %q, stderr %q; want 2 and one line", code, out, stderr)
	}
}
