package schedule

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestValidateFields: each rule the v1.37 API server applies to a new pod's
// names, labels and placement fields (pkg/apis/core/validation, cited on
// ValidateFields) refuses what the server refuses, and passes what it takes:
// every valid case below is also a pod the test bed's kube-apiserver creates.
func TestValidateFields(t *testing.T) {
	base := func() *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ml", Labels: map[string]string{"app": "x"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	}
	req := func(key string, op corev1.NodeSelectorOperator, values ...string) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}}}}}
	}
	podAffinity := func(term corev1.PodAffinityTerm) *corev1.Affinity {
		return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term}}}
	}
	five := int32(5)
	bogus := corev1.NodeInclusionPolicy("Sometimes")
	for _, tt := range []struct {
		name   string
		change func(p *corev1.Pod)
		// want is a part of the first error expected (the server may
		// report one fault more than once, as it does an empty topology
		// key); "" for a valid pod.
		want string
	}{
		{"valid", func(*corev1.Pod) {}, ""},
		{"a dotted name, labels with prefixes", func(p *corev1.Pod) {
			p.Name = "trainer-0.a"
			p.Labels = map[string]string{"example.com/role": "worker", "team": ""}
		}, ""},
		{"uppercase name", func(p *corev1.Pod) { p.Name = "Trainer" }, `metadata.name: Invalid value: "Trainer"`},
		{"no name", func(p *corev1.Pod) { p.Name = "" }, "metadata.name: Required value"},
		{"namespace not a DNS label", func(p *corev1.Pod) { p.Namespace = "ml.team" }, `metadata.namespace: Invalid value: "ml.team"`},
		{"label key with two slashes", func(p *corev1.Pod) { p.Labels = map[string]string{"a/b/c": "x"} }, `metadata.labels: Invalid value: "a/b/c"`},
		{"label value with a space", func(p *corev1.Pod) { p.Labels = map[string]string{"app": "a b"} }, `metadata.labels: Invalid value: "a b"`},
		{"annotation key", func(p *corev1.Pod) { p.Annotations = map[string]string{"not a key": "x"} }, `metadata.annotations: Invalid value: "not a key"`},
		{"container without a name", func(p *corev1.Pod) { p.Spec.Containers[0].Name = "" }, "spec.containers[0].name: Required value"},
		{"two containers of one name", func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "c", Image: "x"}}
		}, `spec.containers[0].name: Duplicate value: "c"`},
		{"host port out of range", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 70000, Protocol: corev1.ProtocolTCP}}
		}, "spec.containers[0].ports[0].hostPort: Invalid value: 70000"},
		{"a port protocol", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: "HTTP"}}
		}, `spec.containers[0].ports[0].protocol: Unsupported value: "HTTP"`},
		{"node selector value", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"zone": "a/b"} }, `spec.nodeSelector: Invalid value: "a/b"`},
		{"any scheduler name", func(p *corev1.Pod) { p.Spec.SchedulerName = "My Scheduler" }, ""},
		{"priority class name", func(p *corev1.Pod) { p.Spec.PriorityClassName = "High" }, `spec.priorityClassName: Invalid value: "High"`},
		{"operator Near", func(p *corev1.Pod) { p.Spec.Affinity = req("zone", "Near", "a") }, `operator: Invalid value: "Near": not a valid selector operator`},
		{"In without values", func(p *corev1.Pod) { p.Spec.Affinity = req("zone", corev1.NodeSelectorOpIn) }, "values: Required value"},
		{"Exists with values", func(p *corev1.Pod) { p.Spec.Affinity = req("zone", corev1.NodeSelectorOpExists, "a") }, "values: Forbidden"},
		{"Gt with two values", func(p *corev1.Pod) { p.Spec.Affinity = req("gpus", corev1.NodeSelectorOpGt, "1", "2") }, "values: Required value: must be specified single value"},
		{"required affinity value", func(p *corev1.Pod) { p.Spec.Affinity = req("zone", corev1.NodeSelectorOpIn, "a b") }, `values[0]: Invalid value: "a b"`},
		{"preferred affinity takes any value, not any weight", func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
				Weight: 0, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a b"}}}}}}}}
		}, "preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100"},
		{"no node selector terms", func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{}}}
		}, "nodeSelectorTerms: Required value"},
		{"match field other than the name", func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.uid", Operator: corev1.NodeSelectorOpIn, Values: []string{"x"}}}}}}}}
		}, `matchFields[0].key: Invalid value: "metadata.uid": not a valid field selector key`},
		{"pod affinity without a topology key", func(p *corev1.Pod) {
			p.Spec.Affinity = podAffinity(corev1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}})
		}, "topologyKey: Required value"},
		{"pod affinity selector operator", func(p *corev1.Pod) {
			p.Spec.Affinity = podAffinity(corev1.PodAffinityTerm{TopologyKey: "zone", LabelSelector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near", Values: []string{"x"}}}}})
		}, `labelSelector.matchExpressions[0].operator: Invalid value: "Near"`},
		{"toleration Equals", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: "Equals", Value: "x"}}
		}, `spec.tolerations[0].operator: Unsupported value: "Equals"`},
		{"toleration without a key must be Exists", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpEqual, Value: "x"}}
		}, "operator must be Exists when `key` is empty"},
		{"toleration effect", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: "NoScheduling"}}
		}, `spec.tolerations[0].effect: Unsupported value: "NoScheduling"`},
		{"tolerationSeconds without NoExecute", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: new(int64(5))}}
		}, "effect must be 'NoExecute' when `tolerationSeconds` is set"},
		{"Gt toleration with a number", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "tier", Operator: corev1.TolerationOpGt, Value: "3", Effect: corev1.TaintEffectNoSchedule}}
		}, ""},
		{"spread: zero skew", func(p *corev1.Pod) {
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 0, TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule}}
		}, "maxSkew: Invalid value: 0: must be greater than zero"},
		{"spread: repeated", func(p *corev1.Pod) {
			c := corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule}
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{c, c}
		}, "Duplicate value"},
		{"spread: minDomains with ScheduleAnyway", func(p *corev1.Pod) {
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: corev1.ScheduleAnyway, MinDomains: &five}}
		}, "can only use minDomains if whenUnsatisfiable=DoNotSchedule"},
		{"spread: node inclusion policy", func(p *corev1.Pod) {
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule, NodeTaintsPolicy: &bogus}}
		}, `nodeTaintsPolicy: Unsupported value: "Sometimes"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := base()
			tt.change(p)
			errs := ValidateFields(p)
			switch {
			case tt.want == "" && len(errs) > 0:
				t.Errorf("refused a valid pod: %v", errs.ToAggregate())
			case tt.want != "" && (len(errs) == 0 || !strings.Contains(errs[0].Error(), tt.want)):
				t.Errorf("errors %v, want the first containing %q", errs.ToAggregate(), tt.want)
			}
		})
	}
}
