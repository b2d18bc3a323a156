package framework

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Classes naming one extended resource: the newest wins, equally new ones
// the lowest name, whatever the order they come in (ExtendedResourceCache's
// rule); every class also backs deviceclass.resource.kubernetes.io/<name>.
func TestExtendedResourceClass(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Hour))
	class := func(name string, at metav1.Time, resource string) *resourcev1.DeviceClass {
		c := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: at}}
		if resource != "" {
			c.Spec.ExtendedResourceName = ptr.To(resource)
		}
		return c
	}
	for _, tc := range []struct {
		name    string
		classes []*resourcev1.DeviceClass
		want    string
	}{
		{"newest", []*resourcev1.DeviceClass{class("old", t0, "x.io/gpu"), class("new", t1, "x.io/gpu")}, "new"},
		{"newest, other order", []*resourcev1.DeviceClass{class("new", t1, "x.io/gpu"), class("old", t0, "x.io/gpu")}, "new"},
		{"same age: lowest name", []*resourcev1.DeviceClass{class("b", t0, "x.io/gpu"), class("a", t0, "x.io/gpu")}, "a"},
		{"same age: lowest name, other order", []*resourcev1.DeviceClass{class("a", t0, "x.io/gpu"), class("b", t0, "x.io/gpu")}, "a"},
		{"none", []*resourcev1.DeviceClass{class("a", t0, "")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDRA(nil, tc.classes, nil, nil, nil)
			got := ""
			if c := d.ExtendedResourceClass("x.io/gpu"); c != nil {
				got = c.Name
			}
			if got != tc.want {
				t.Errorf("class for x.io/gpu = %q, want %q", got, tc.want)
			}
			for _, c := range tc.classes {
				if got := d.ExtendedResourceClass(corev1.ResourceName("deviceclass.resource.kubernetes.io/" + c.Name)); got != c {
					t.Errorf("implicit name of %s resolves to %v", c.Name, got)
				}
			}
			if d.ExtendedResourceClass("cpu") != nil {
				t.Error("cpu is backed")
			}
		})
	}
}
