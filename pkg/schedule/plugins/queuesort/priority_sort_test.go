package queuesort_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-gang/kubectl-gang/internal/testutil"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/queuesort"
)

func queued(pod *corev1.Pod, ts time.Time) *framework.QueuedPodInfo {
	return &framework.QueuedPodInfo{PodInfo: framework.NewPodInfo(pod), Timestamp: ts}
}

// The cases of kube-scheduler's TestLess, plus a pod without a priority.
func TestLess(t *testing.T) {
	low, high := int32(10), int32(100)
	t1 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Second)
	tests := []struct {
		name   string
		p1, p2 *framework.QueuedPodInfo
		want   bool
	}{
		{
			name: "p1.priority less than p2.priority",
			p1:   queued(testutil.MakePod().Name("p1").Priority("low", low).Obj(), t1),
			p2:   queued(testutil.MakePod().Name("p2").Priority("high", high).Obj(), t1),
			want: false,
		},
		{
			name: "p1.priority greater than p2.priority",
			p1:   queued(testutil.MakePod().Name("p1").Priority("high", high).Obj(), t1),
			p2:   queued(testutil.MakePod().Name("p2").Priority("low", low).Obj(), t1),
			want: true,
		},
		{
			name: "equal priority, p1 queued earlier",
			p1:   queued(testutil.MakePod().Name("p1").Priority("high", high).Obj(), t1),
			p2:   queued(testutil.MakePod().Name("p2").Priority("high", high).Obj(), t2),
			want: true,
		},
		{
			name: "equal priority, p2 queued earlier",
			p1:   queued(testutil.MakePod().Name("p1").Priority("high", high).Obj(), t2),
			p2:   queued(testutil.MakePod().Name("p2").Priority("high", high).Obj(), t1),
			want: false,
		},
		{
			name: "equal priority and timestamp",
			p1:   queued(testutil.MakePod().Name("p1").Obj(), t1),
			p2:   queued(testutil.MakePod().Name("p2").Obj(), t1),
			want: false,
		},
		{
			name: "no priority counts as 0, below a positive one",
			p1:   queued(testutil.MakePod().Name("p1").Obj(), t1),
			p2:   queued(testutil.MakePod().Name("p2").Priority("low", low).Obj(), t2),
			want: false,
		},
		{
			name: "no priority counts as 0, above a negative one",
			p1:   queued(testutil.MakePod().Name("p1").Obj(), t2),
			p2:   queued(testutil.MakePod().Name("p2").Priority("neg", -1).Obj(), t1),
			want: true,
		},
	}
	pl, err := queuesort.New(nil, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	sorter := pl.(framework.QueueSortPlugin)
	if sorter.Name() != queuesort.Name || queuesort.Name != "PrioritySort" {
		t.Errorf("Name() = %q", sorter.Name())
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sorter.Less(tt.p1, tt.p2); got != tt.want {
				t.Errorf("Less() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	t1 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Minute)
	pods := []*corev1.Pod{
		testutil.MakePod().Namespace("b").Name("same-time-b").Created(t1).Obj(),
		testutil.MakePod().Namespace("a").Name("z-newer").Created(t2).Obj(),
		testutil.MakePod().Namespace("a").Name("same-time-a2").Created(t1).Obj(),
		testutil.MakePod().Namespace("a").Name("low").Priority("low", -5).Created(t1).Obj(),
		testutil.MakePod().Namespace("z").Name("high").Priority("high", 1000).Created(t2).Obj(),
		testutil.MakePod().Namespace("a").Name("same-time-a1").Created(t1).Obj(),
	}
	slices.SortFunc(pods, queuesort.Compare)
	var got []string
	for _, p := range pods {
		got = append(got, p.Namespace+"/"+p.Name)
	}
	want := []string{"z/high", "a/same-time-a1", "a/same-time-a2", "b/same-time-b", "a/z-newer", "a/low"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if c := queuesort.Compare(pods[0], pods[0]); c != 0 {
		t.Errorf("Compare(p, p) = %d, want 0", c)
	}
}

// Compare must agree with Less when timestamps are creation times.
func TestCompareAgreesWithLess(t *testing.T) {
	t1 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	pods := []*corev1.Pod{
		testutil.MakePod().Name("a").Priority("p", 5).Created(t1).Obj(),
		testutil.MakePod().Name("b").Priority("p", 5).Created(t1.Add(time.Second)).Obj(),
		testutil.MakePod().Name("c").Created(t1).Obj(),
		testutil.MakePod().Name("d").Priority("n", -3).Created(t1.Add(-time.Hour)).Obj(),
	}
	sorter := &queuesort.PrioritySort{}
	for _, a := range pods {
		for _, b := range pods {
			less := sorter.Less(queued(a, a.CreationTimestamp.Time), queued(b, b.CreationTimestamp.Time))
			if less && queuesort.Compare(a, b) >= 0 {
				t.Errorf("Less(%s, %s) but Compare = %d", a.Name, b.Name, queuesort.Compare(a, b))
			}
		}
	}
}
