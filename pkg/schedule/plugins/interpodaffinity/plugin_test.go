package interpodaffinity_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/interpodaffinity"
)

func TestNew(t *testing.T) {
	h := framework.NewSnapshotHandle(nil, framework.SnapshotObjects{}, 1)
	tests := []struct {
		name    string
		args    runtime.Object
		handle  framework.Handle
		wantErr string
	}{
		{name: "nil args take the defaults", args: nil, handle: h},
		{name: "unset weight takes the default", args: &configv1.InterPodAffinityArgs{}, handle: h},
		{name: "weight 0", args: &configv1.InterPodAffinityArgs{HardPodAffinityWeight: ptrTo[int32](0)}, handle: h},
		{name: "weight 100", args: &configv1.InterPodAffinityArgs{HardPodAffinityWeight: ptrTo[int32](100), IgnorePreferredTermsOfExistingPods: true}, handle: h},
		{
			name:    "weight below the range",
			args:    &configv1.InterPodAffinityArgs{HardPodAffinityWeight: ptrTo[int32](-1)},
			handle:  h,
			wantErr: "hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]",
		},
		{
			name:    "weight above the range",
			args:    &configv1.InterPodAffinityArgs{HardPodAffinityWeight: ptrTo[int32](101)},
			handle:  h,
			wantErr: "hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]",
		},
		{
			name:    "args of another plugin",
			args:    &configv1.NodeAffinityArgs{},
			handle:  h,
			wantErr: "want args to be of type InterPodAffinityArgs, got *v1.NodeAffinityArgs",
		},
		{name: "no handle", wantErr: "interpodaffinity: the handle is nil"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := interpodaffinity.New(tc.args, tc.handle)
			var got string
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, got); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if err == nil && p.Name() != interpodaffinity.Name {
				t.Errorf("Name() = %q", p.Name())
			}
		})
	}
}

func TestArgsDefaults(t *testing.T) {
	in := &configv1.InterPodAffinityArgs{}
	if _, err := interpodaffinity.New(in, framework.NewSnapshotHandle(nil, framework.SnapshotObjects{}, 1)); err != nil {
		t.Fatal(err)
	}
	if in.HardPodAffinityWeight != nil {
		t.Errorf("New changed the caller's args: %+v", in)
	}
	interpodaffinity.SetDefaults(in)
	want := &configv1.InterPodAffinityArgs{HardPodAffinityWeight: ptrTo[int32](1)}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if err := interpodaffinity.ValidateArgs(&configv1.InterPodAffinityArgs{}); err == nil || err.Error() != "hardPodAffinityWeight: Required value" {
		t.Errorf("ValidateArgs of undefaulted args: %v", err)
	}
}
