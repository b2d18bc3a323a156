package testutil

import (
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SemanticOptions compare API objects by meaning, as apimachinery's
// equality.Semantic does: 1000m equals 1, and times compare as instants
// whatever their location (JSON decodes to local time, protobuf to UTC).
var SemanticOptions = cmp.Options{
	cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }),
	cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) }),
	cmp.Comparer(func(a, b metav1.MicroTime) bool { return a.Equal(&b) }),
	cmpopts.EquateEmpty(),
}

// Diff returns cmp.Diff(want, got) with SemanticOptions; empty means equal.
func Diff(want, got any) string {
	return cmp.Diff(want, got, SemanticOptions)
}
