package kubelist

import (
	"context"
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// server is a LIST of n pods at resourceVersion rv, pages of limit; the
// continue tokens it hands out expire after expireAfter pages (0: never).
type server struct {
	n, expireAfter, pages int
	rv                    string
	requests              []string
}

func (s *server) page(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
	s.requests = append(s.requests, fmt.Sprintf("limit=%d continue=%q", o.Limit, o.Continue))
	start := 0
	if o.Continue != "" {
		s.pages++
		if s.expireAfter > 0 && s.pages >= s.expireAfter {
			// Compaction passed: the server has moved on.
			s.rv = "2"
			return nil, apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result.")
		}
		fmt.Sscan(o.Continue, &start)
	}
	end := s.n
	if o.Limit > 0 && start+int(o.Limit) < s.n {
		end = start + int(o.Limit)
	}
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: s.rv}}
	if end < s.n {
		list.Continue = fmt.Sprint(end)
	}
	for i := start; i < end; i++ {
		list.Items = append(list.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", i), ResourceVersion: s.rv}})
	}
	return list, nil
}

func TestListRestartsWhenTheTokenExpires(t *testing.T) {
	for _, tt := range []struct {
		name        string
		expireAfter int
		wantReqs    int
	}{
		{"no expiry", 0, 3},
		{"the second page expires", 1, 3},
		{"the third page expires", 2, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &server{n: 25, expireAfter: tt.expireAfter, rv: "1"}
			resets, counted := 0, int64(0)
			items, err := List(context.Background(), s.page, 10, metav1.ListOptions{}, func(n int64) {
				counted += n
				if n < 0 {
					resets++
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []*corev1.Pod
			for _, obj := range items {
				got = append(got, obj.(*corev1.Pod))
			}
			if counted != int64(len(got)) {
				t.Errorf("counted %d items, %d read", counted, len(got))
			}
			if len(got) != 25 {
				t.Fatalf("%d pods, want 25 (requests %q)", len(got), s.requests)
			}
			// Never two resource versions in one answer.
			for _, p := range got {
				if p.ResourceVersion != got[0].ResourceVersion {
					t.Fatalf("pods of versions %s and %s in one list", got[0].ResourceVersion, p.ResourceVersion)
				}
			}
			if wantResets := min(tt.expireAfter, 1); resets != wantResets || len(s.requests) != tt.wantReqs {
				t.Errorf("%d resets, requests %q; want %d resets, %d requests", resets, s.requests, wantResets, tt.wantReqs)
			}
			if tt.expireAfter > 0 && s.requests[len(s.requests)-1] != `limit=0 continue=""` {
				t.Errorf("the restart was %s, want one request without a limit", s.requests[len(s.requests)-1])
			}
		})
	}
}

// Other errors are returned as they are, and nothing is read again.
func TestListReturnsOtherErrors(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	_, err := List(context.Background(), func(context.Context, metav1.ListOptions) (runtime.Object, error) {
		calls++
		if calls == 1 {
			return &corev1.PodList{ListMeta: metav1.ListMeta{Continue: "x", ResourceVersion: "1"}, Items: []corev1.Pod{{}}}, nil
		}
		return nil, boom
	}, 1, metav1.ListOptions{}, func(n int64) {
		if n < 0 {
			t.Error("reset on another error")
		}
	})
	if !errors.Is(err, boom) || calls != 2 {
		t.Errorf("err %v after %d calls, want boom after 2", err, calls)
	}
}

// An answer of another kind reaches a typed client's caller as the empty
// list it was given, with no error (rest.Result.Into): List refuses it
// rather than read a cluster without pods.
func TestListRefusesAnAnswerThatIsNoList(t *testing.T) {
	items, err := List(context.Background(), func(context.Context, metav1.ListOptions) (runtime.Object, error) {
		return &corev1.PodList{}, nil
	}, 10, metav1.ListOptions{}, nil)
	if n := len(items); !errors.Is(err, ErrNotAList) || n != 0 {
		t.Errorf("err %v, %d items; want ErrNotAList and none", err, n)
	}
}

// A first page with no items but a continue token (a field selector that
// matched nothing in it) followed by an expired token still lists again.
func TestListRestartsAfterAnEmptyFirstPage(t *testing.T) {
	calls := 0
	items, err := List(context.Background(), func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
		calls++
		switch {
		case o.Continue != "":
			return nil, apierrors.NewResourceExpired("too old")
		case o.Limit > 0:
			return &corev1.PodList{ListMeta: metav1.ListMeta{Continue: "x", ResourceVersion: "1"}}, nil
		}
		return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "2"}, Items: []corev1.Pod{{}, {}}}, nil
	}, 10, metav1.ListOptions{}, nil)
	if got := len(items); err != nil || got != 2 || calls != 3 {
		t.Errorf("err %v, %d items after %d calls; want the full list's 2 after 3", err, got, calls)
	}
}
