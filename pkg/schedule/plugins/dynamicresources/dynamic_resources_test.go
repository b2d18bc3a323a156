package dynamicresources_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/dynamicresources"
)

func podWithClaims(names ...string) *corev1.Pod {
	p := testutil.MakePod().Name("p").Obj()
	for _, n := range names {
		template := n + "-template"
		p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, corev1.PodResourceClaim{Name: n, ResourceClaimTemplateName: &template})
	}
	return p
}

func newPlugin(t *testing.T) *dynamicresources.DynamicResources {
	t.Helper()
	pl, err := dynamicresources.New(nil, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return pl.(*dynamicresources.DynamicResources)
}

func TestPodWithoutClaims(t *testing.T) {
	pl := newPlugin(t)
	ctx := context.Background()
	state := framework.NewCycleState()
	pod := testutil.MakePod().Name("p").Req(testutil.Res{"nvidia.com/gpu": "1"}).Obj()
	_, status := pl.PreFilter(ctx, state, pod, nil)
	if diff := cmp.Diff(framework.NewStatus(framework.Skip), status); diff != "" {
		t.Fatalf("PreFilter (-want +got):\n%s", diff)
	}
	if status.IsNotEvaluated() {
		t.Error("a pod without claims is reported as not evaluated")
	}
	node := framework.NewNodeInfo(testutil.MakeNode().Name("n").Obj())
	if s := pl.Filter(ctx, state, pod, node); s != nil {
		t.Errorf("Filter = %v, want success", s)
	}
	scores := framework.NodeScoreList{{Name: "a"}, {Name: "b"}}
	for i := range scores {
		score, s := pl.Score(ctx, state, pod, node)
		if !s.IsSuccess() {
			t.Fatalf("Score = %v", s)
		}
		scores[i].Score = score
	}
	if s := pl.ScoreExtensions().NormalizeScore(ctx, state, pod, scores); !s.IsSuccess() {
		t.Fatalf("NormalizeScore = %v", s)
	}
	if diff := cmp.Diff(framework.NodeScoreList{{Name: "a"}, {Name: "b"}}, scores); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
}

func TestPodWithClaimsIsNotEvaluatedWithoutDRAObjects(t *testing.T) {
	pl := newPlugin(t)
	_, status := pl.PreFilter(context.Background(), framework.NewCycleState(), podWithClaims("gpu", "nic"), nil)
	want := `DynamicResources not evaluated: resource claim(s) "gpu", "nic": the snapshot holds no ResourceClaims, ResourceSlices or DeviceClasses, so device allocation is not evaluated`
	if !status.IsNotEvaluated() || !status.IsSkip() || status.Message() != want {
		t.Errorf("PreFilter = %v, want not evaluated: %q", status, want)
	}
	if !strings.HasPrefix(status.Message(), dynamicresources.NotEvaluatedReason) {
		t.Errorf("reason %q does not start with NotEvaluatedReason", status.Message())
	}
}

func TestFilterWithoutPreFilter(t *testing.T) {
	pl := newPlugin(t)
	node := framework.NewNodeInfo(testutil.MakeNode().Name("n").Obj())
	if s := pl.Filter(context.Background(), framework.NewCycleState(), testutil.MakePod().Obj(), node); s.Code() != framework.Error {
		t.Errorf("Filter without PreFilter = %v, want an Error", s)
	}
}

func TestNormalizeScore(t *testing.T) {
	pl := newPlugin(t)
	scores := framework.NodeScoreList{{Name: "a", Score: 3}, {Name: "b", Score: 7}, {Name: "c"}}
	pl.NormalizeScore(context.Background(), nil, nil, scores)
	if diff := cmp.Diff(framework.NodeScoreList{{Name: "a", Score: 42}, {Name: "b", Score: 100}, {Name: "c"}}, scores); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
}

func TestNew(t *testing.T) {
	d := func(v time.Duration) *metav1.Duration { return &metav1.Duration{Duration: v} }
	tests := []struct {
		name    string
		args    runtime.Object
		wantErr string
	}{
		{name: "nil args"},
		{name: "typed nil args", args: (*configv1.DynamicResourcesArgs)(nil)},
		{name: "valid timeouts", args: &configv1.DynamicResourcesArgs{FilterTimeout: d(0), BindingTimeout: d(time.Second)}},
		{name: "wrong type", args: &configv1.NodeAffinityArgs{}, wantErr: "got args of type *v1.NodeAffinityArgs, want *DynamicResourcesArgs"},
		{name: "negative filter timeout", args: &configv1.DynamicResourcesArgs{FilterTimeout: d(-time.Second)}, wantErr: "filterTimeout: Invalid value"},
		{name: "binding timeout below a second", args: &configv1.DynamicResourcesArgs{BindingTimeout: d(time.Millisecond)}, wantErr: "bindingTimeout: Invalid value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := dynamicresources.New(tt.args, nil)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("New: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr)):
				t.Errorf("New error = %v, want one starting with %q", err, tt.wantErr)
			}
		})
	}
}
