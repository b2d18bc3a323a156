package podtopologyspread

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

func TestNew(t *testing.T) {
	h := framework.NewSnapshotHandle(nil, framework.SnapshotObjects{}, 1)
	tests := []struct {
		name            string
		args            runtime.Object
		wantErr         string
		wantDefaults    []corev1.TopologySpreadConstraint
		wantSystemDeflt bool
	}{
		{
			name:            "nil args are kube-scheduler's defaults: System",
			args:            nil,
			wantDefaults:    systemDefaultConstraints,
			wantSystemDeflt: true,
		},
		{
			name:            "empty defaultingType defaults to System",
			args:            &configv1.PodTopologySpreadArgs{},
			wantDefaults:    systemDefaultConstraints,
			wantSystemDeflt: true,
		},
		{
			name: "List with constraints",
			args: &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule},
			}},
			wantDefaults: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule}},
		},
		{
			name: "List without constraints",
			args: &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting},
		},
		{
			name:    "wrong args type",
			args:    &configv1.NodeResourcesFitArgs{},
			wantErr: "want args to be of type PodTopologySpreadArgs, got *v1.NodeResourcesFitArgs",
		},
		// Cases from kube-scheduler's TestValidatePodTopologySpreadArgs.
		{
			name: "System with constraints",
			args: &configv1.PodTopologySpreadArgs{DefaultConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule},
			}},
			wantErr: `defaultingType: Invalid value: "System": when .defaultConstraints are not empty`,
		},
		{
			name:    "unknown defaultingType",
			args:    &configv1.PodTopologySpreadArgs{DefaultingType: "Unknown"},
			wantErr: `defaultingType: Unsupported value: "Unknown": supported values: "System", "List"`,
		},
		{
			name: "maxSkew less than zero",
			args: &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: -1, TopologyKey: "node", WhenUnsatisfiable: corev1.DoNotSchedule},
			}},
			wantErr: `defaultConstraints[0].maxSkew: Invalid value: -1: not in valid range (0, inf)`,
		},
		{
			name: "empty topology key",
			args: &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: 1, WhenUnsatisfiable: corev1.DoNotSchedule},
			}},
			wantErr: `defaultConstraints[0].topologyKey: Required value: can not be empty`,
		},
		{
			name: "invalid topology key",
			args: &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: 1, TopologyKey: "-bad", WhenUnsatisfiable: corev1.DoNotSchedule},
			}},
			wantErr: `defaultConstraints[0].topologyKey: Invalid value: "-bad": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
		},
		{
			name: "whenUnsatisfiable is empty",
			args: &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: 1, TopologyKey: "node"},
			}},
			wantErr: `defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty`,
		},
		{
			name: "whenUnsatisfiable contains unsupported action",
			args: &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: 1, TopologyKey: "node", WhenUnsatisfiable: "unknown action"},
			}},
			wantErr: `defaultConstraints[0].whenUnsatisfiable: Unsupported value: "unknown action": supported values: "DoNotSchedule", "ScheduleAnyway"`,
		},
		{
			name: "duplicated constraints",
			args: &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: 1, TopologyKey: "node", WhenUnsatisfiable: corev1.DoNotSchedule},
				{MaxSkew: 2, TopologyKey: "node", WhenUnsatisfiable: corev1.DoNotSchedule},
			}},
			wantErr: `defaultConstraints[1]: Duplicate value: "{node, DoNotSchedule}"`,
		},
		{
			name: "label selector present",
			args: &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: 1, TopologyKey: "key", WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}},
			}},
			wantErr: `defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod`,
		},
		{
			name: "several errors",
			args: &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: []corev1.TopologySpreadConstraint{
				{MaxSkew: 0, TopologyKey: "node"},
			}},
			wantErr: `[defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf), defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := New(tt.args, h)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("New error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			p := pl.(*PodTopologySpread)
			if p.Name() != Name || Name != "PodTopologySpread" {
				t.Errorf("Name() = %q", p.Name())
			}
			if diff := cmp.Diff(tt.wantDefaults, p.defaultConstraints); diff != "" {
				t.Errorf("default constraints (-want +got):\n%s", diff)
			}
			if p.systemDefaulted != tt.wantSystemDeflt {
				t.Errorf("systemDefaulted = %v, want %v", p.systemDefaulted, tt.wantSystemDeflt)
			}
		})
	}
	if _, err := New(nil, nil); err == nil {
		t.Error("New without a handle succeeded")
	}
}

func TestNewLeavesArgsAlone(t *testing.T) {
	args := &configv1.PodTopologySpreadArgs{}
	if _, err := New(args, framework.NewSnapshotHandle(nil, framework.SnapshotObjects{}, 1)); err != nil {
		t.Fatal(err)
	}
	if args.DefaultingType != "" {
		t.Errorf("New changed the caller's args: %+v", args)
	}
}

func TestSystemDefaultConstraints(t *testing.T) {
	want := []corev1.TopologySpreadConstraint{
		{TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway, MaxSkew: 3},
		{TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway, MaxSkew: 5},
	}
	if diff := cmp.Diff(want, systemDefaultConstraints); diff != "" {
		t.Errorf("system defaults (-want +got):\n%s", diff)
	}
}

func TestReasons(t *testing.T) {
	if ErrReasonConstraintsNotMatch != "node(s) didn't match pod topology spread constraints" ||
		ErrReasonNodeLabelNotMatch != "node(s) didn't match pod topology spread constraints (missing required label)" {
		t.Errorf("reasons changed: %q, %q", ErrReasonConstraintsNotMatch, ErrReasonNodeLabelNotMatch)
	}
}
