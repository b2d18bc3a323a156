package cmd

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Workloads are named as kubectl names resources: singular, plural or
// short name, any case, optionally qualified by group or version and group,
// TYPE/NAME or TYPE NAME.
func TestParseWorkloadSubject(t *testing.T) {
	for _, tc := range []struct {
		args []string
		kind string
		gvr  schema.GroupVersionResource
		name string
	}{
		{[]string{"jobset/pretrain"}, "JobSet", schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}, "pretrain"},
		{[]string{"jobsets", "pretrain"}, "JobSet", schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}, "pretrain"},
		{[]string{"JobSet/Pretrain"}, "JobSet", schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}, "Pretrain"},
		{[]string{"jobsets.jobset.x-k8s.io/pretrain"}, "JobSet", schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}, "pretrain"},
		{[]string{"jobsets.v1alpha2.jobset.x-k8s.io/pretrain"}, "JobSet", schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}, "pretrain"},
		{[]string{"leaderworkerset/serve"}, "LeaderWorkerSet", schema.GroupVersionResource{Group: "leaderworkerset.x-k8s.io", Version: "v1", Resource: "leaderworkersets"}, "serve"},
		{[]string{"lws/serve"}, "LeaderWorkerSet", schema.GroupVersionResource{Group: "leaderworkerset.x-k8s.io", Version: "v1", Resource: "leaderworkersets"}, "serve"},
		{[]string{"leaderworkersets.leaderworkerset.x-k8s.io/serve"}, "LeaderWorkerSet", schema.GroupVersionResource{Group: "leaderworkerset.x-k8s.io", Version: "v1", Resource: "leaderworkersets"}, "serve"},
		{[]string{"pytorchjob/t"}, "PyTorchJob", schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}, "t"},
		{[]string{"tfjobs.kubeflow.org/t"}, "TFJob", schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "tfjobs"}, "t"},
		{[]string{"xgboostjob/t"}, "XGBoostJob", schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "xgboostjobs"}, "t"},
		{[]string{"paddlejob/t"}, "PaddleJob", schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "paddlejobs"}, "t"},
		{[]string{"jaxjob/t"}, "JAXJob", schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "jaxjobs"}, "t"},
		{[]string{"mpijob/t"}, "MPIJob", schema.GroupVersionResource{Group: "kubeflow.org", Version: "v2beta1", Resource: "mpijobs"}, "t"},
		{[]string{"raycluster/r"}, "RayCluster", schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}, "r"},
		{[]string{"rayjobs.ray.io/r"}, "RayJob", schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayjobs"}, "r"},
		{[]string{"job/sim"}, "Job", schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, "sim"},
		{[]string{"jobs.batch/sim"}, "Job", schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, "sim"},
		{[]string{"jobs.v1.batch/sim"}, "Job", schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, "sim"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			s, err := parseSubject(tc.args, &SubjectFlags{}, false, true)
			if err != nil {
				t.Fatal(err)
			}
			if s.Kind != SubjectWorkload || s.Workload.Kind != tc.kind || s.Workload.Resource != tc.gvr || s.Name != tc.name {
				t.Errorf("got kind %d %s %v name %q, want workload %s %v %q", s.Kind, s.Workload.Kind, s.Workload.Resource, s.Name, tc.kind, tc.gvr, tc.name)
			}
			if want := strings.Join(tc.args, "/"); s.Arg != want {
				t.Errorf("Arg %q, want %q", s.Arg, want)
			}
		})
	}
}

func TestParseWorkloadSubjectErrors(t *testing.T) {
	for _, tc := range []struct {
		args                []string
		flags               SubjectFlags
		allowPod, allowFile bool
		want                string
	}{
		{[]string{"jobsets.example.com/x"}, SubjectFlags{}, false, true,
			`unknown resource type "jobsets.example.com": this build reads JobSet as jobsets.jobset.x-k8s.io, version v1alpha2`},
		{[]string{"jobsets.v1.jobset.x-k8s.io/x"}, SubjectFlags{}, false, true,
			`unknown resource type "jobsets.v1.jobset.x-k8s.io": this build reads JobSet as jobsets.jobset.x-k8s.io, version v1alpha2`},
		{[]string{"mpijobs.v1.kubeflow.org/x"}, SubjectFlags{}, false, true,
			`unknown resource type "mpijobs.v1.kubeflow.org": this build reads MPIJob as mpijobs.kubeflow.org, version v2beta1`},
		{[]string{"jobset/x"}, SubjectFlags{}, false, false,
			`"jobset/x" names a workload, whose members may not exist yet; give podgroup/NAME or -l SELECTOR (its pods: -l with their labels)`},
		{[]string{"jobset/x"}, SubjectFlags{Selector: "a=b"}, true, true,
			"give exactly one of pod/NAME, podgroup/NAME, jobset/NAME (and other workloads), -l SELECTOR or -f FILE"},
		{[]string{"jobset/"}, SubjectFlags{}, true, true,
			`"jobset/" is not TYPE/NAME: give pod/NAME, podgroup/NAME, jobset/NAME (and other workloads), -l SELECTOR or -f FILE`},
		{[]string{"lws/x"}, SubjectFlags{MinMember: 3}, false, true,
			"--min-member applies to -l and -f input; a PodGroup or workload carries its own minimum"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := parseSubject(tc.args, &tc.flags, tc.allowPod, tc.allowFile)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			if code := exitCode(classify(err)); code != ExitUsage {
				t.Errorf("exit code %d, want %d", code, ExitUsage)
			}
		})
	}
}
