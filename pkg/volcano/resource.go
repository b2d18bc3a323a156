package volcano

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// minResource is Volcano's comparison tolerance (resource_info.go).
const minResource = 0.1

// DimensionDefault says what a scalar one side lacks is worth on it
// (DimensionDefaultValue).
type DimensionDefault int

// Zero and Infinity are Volcano's dimension defaults.
const (
	Zero     DimensionDefault = 0
	Infinity DimensionDefault = -1
)

// Resource is Volcano's scheduler Resource (pkg/scheduler/api/resource_info.go):
// milli-CPU, memory bytes, and scalar resources in milli-units (pods in
// whole units), as floats.
type Resource struct {
	MilliCPU   float64
	Memory     float64
	Scalars    map[corev1.ResourceName]float64
	MaxTaskNum int
}

// NewResource converts a ResourceList as Volcano's NewResource does: cpu,
// memory, pods (whole units, also MaxTaskNum), ephemeral storage and
// scalar resources; count/ quotas and other names are left out.
func NewResource(rl corev1.ResourceList) *Resource {
	r := &Resource{}
	for name, q := range rl {
		switch {
		case name == corev1.ResourceCPU:
			r.MilliCPU += float64(q.MilliValue())
		case name == corev1.ResourceMemory:
			r.Memory += float64(q.Value())
		case name == corev1.ResourcePods:
			r.MaxTaskNum += int(q.Value())
			r.addScalar(name, float64(q.Value()))
		case name == corev1.ResourceEphemeralStorage:
			r.addScalar(name, float64(q.MilliValue()))
		case strings.HasPrefix(string(name), "count/"):
		case framework.IsScalarResourceName(name):
			r.addScalar(name, float64(q.MilliValue()))
		}
	}
	return r
}

func (r *Resource) addScalar(name corev1.ResourceName, v float64) {
	if r.Scalars == nil {
		r.Scalars = map[corev1.ResourceName]float64{}
	}
	r.Scalars[name] += v
}

// Clone copies r.
func (r *Resource) Clone() *Resource {
	out := *r
	if r.Scalars != nil {
		out.Scalars = make(map[corev1.ResourceName]float64, len(r.Scalars))
		for k, v := range r.Scalars {
			out.Scalars[k] = v
		}
	}
	return &out
}

// Get is one dimension.
func (r *Resource) Get(name corev1.ResourceName) float64 {
	switch name {
	case corev1.ResourceCPU:
		return r.MilliCPU
	case corev1.ResourceMemory:
		return r.Memory
	}
	return r.Scalars[name]
}

// Names are the dimensions of at least minResource (ResourceNames), cpu
// and memory first, then scalars by name.
func (r *Resource) Names() []corev1.ResourceName {
	var out []corev1.ResourceName
	if r.MilliCPU >= minResource {
		out = append(out, corev1.ResourceCPU)
	}
	if r.Memory >= minResource {
		out = append(out, corev1.ResourceMemory)
	}
	for _, n := range sortedNames(r.Scalars) {
		if r.Scalars[n] >= minResource {
			out = append(out, n)
		}
	}
	return out
}

// IsEmpty is Volcano's IsEmpty: nothing of at least minResource, pods aside.
func (r *Resource) IsEmpty() bool {
	if r.MilliCPU >= minResource || r.Memory >= minResource {
		return false
	}
	for name, v := range r.Scalars {
		if name != corev1.ResourcePods && v >= minResource {
			return false
		}
	}
	return true
}

// Add adds o to r and returns r.
func (r *Resource) Add(o *Resource) *Resource {
	r.MilliCPU += o.MilliCPU
	r.Memory += o.Memory
	for name, v := range o.Scalars {
		r.addScalar(name, v)
	}
	return r
}

// Sub subtracts o from r (SubWithoutAssert: no floor) and returns r.
func (r *Resource) Sub(o *Resource) *Resource {
	r.MilliCPU -= o.MilliCPU
	r.Memory -= o.Memory
	if r.Scalars == nil {
		return r
	}
	for name, v := range o.Scalars {
		r.Scalars[name] -= v
	}
	return r
}

// Multi scales r and returns it.
func (r *Resource) Multi(f float64) *Resource {
	r.MilliCPU *= f
	r.Memory *= f
	for name := range r.Scalars {
		r.Scalars[name] *= f
	}
	return r
}

func lessEqual(l, r float64) bool { return l < r || math.Abs(l-r) < minResource }

// LessEqual is Volcano's LessEqual(rr, defaultValue).
func (r *Resource) LessEqual(o *Resource, def DimensionDefault) bool {
	if !lessEqual(r.MilliCPU, o.MilliCPU) || !lessEqual(r.Memory, o.Memory) {
		return false
	}
	if def == Infinity {
		for name := range o.Scalars {
			if _, ok := r.Scalars[name]; !ok {
				return false
			}
		}
	}
	for name, l := range r.Scalars {
		rv, ok := o.Scalars[name]
		if !ok && def == Infinity {
			continue
		}
		if !lessEqual(l, rv) {
			return false
		}
	}
	return true
}

// LessEqualIn is LessEqualWithDimensionAndResourcesName: r <= o in each
// dimension req asks a positive amount of (pods aside), with the names of
// those that are not, cpu and memory first, then scalars by name.
func (r *Resource) LessEqualIn(o, req *Resource) (bool, []string) {
	var names []string
	if req.MilliCPU > 0 && r.MilliCPU > o.MilliCPU {
		names = append(names, string(corev1.ResourceCPU))
	}
	if req.Memory > 0 && r.Memory > o.Memory {
		names = append(names, string(corev1.ResourceMemory))
	}
	for _, name := range sortedNames(req.Scalars) {
		if name == corev1.ResourcePods {
			continue
		}
		if req.Scalars[name] > 0 && r.Scalars[name] > o.Scalars[name] {
			names = append(names, string(name))
		}
	}
	return len(names) == 0, names
}

// MinDimension is MinDimensionResource: each dimension of r capped by o's;
// a scalar o lacks is capped at 0 (Zero) or left (Infinity).
func (r *Resource) MinDimension(o *Resource, def DimensionDefault) *Resource {
	r.MilliCPU = min(r.MilliCPU, o.MilliCPU)
	r.Memory = min(r.Memory, o.Memory)
	if r.Scalars == nil {
		return r
	}
	for name, v := range r.Scalars {
		if ov, ok := o.Scalars[name]; ok {
			r.Scalars[name] = math.Min(v, ov)
		} else if def == Zero {
			r.Scalars[name] = 0
		}
	}
	return r
}

// diff is Volcano's Diff(rr, defaultValue): what r has more and less than o.
func (r *Resource) diff(o *Resource, def DimensionDefault) (increased, decreased *Resource) {
	l, rr := r.Clone(), o.Clone()
	if l.Scalars == nil {
		l.Scalars = map[corev1.ResourceName]float64{}
	}
	if rr.Scalars == nil {
		rr.Scalars = map[corev1.ResourceName]float64{}
	}
	for name := range l.Scalars {
		if _, ok := rr.Scalars[name]; !ok {
			rr.Scalars[name] = float64(def)
		}
	}
	for name := range rr.Scalars {
		if _, ok := l.Scalars[name]; !ok {
			l.Scalars[name] = float64(def)
		}
	}
	increased = &Resource{Scalars: map[corev1.ResourceName]float64{}}
	decreased = &Resource{Scalars: map[corev1.ResourceName]float64{}}
	if l.MilliCPU > rr.MilliCPU {
		increased.MilliCPU = l.MilliCPU - rr.MilliCPU
	} else {
		decreased.MilliCPU = rr.MilliCPU - l.MilliCPU
	}
	if l.Memory > rr.Memory {
		increased.Memory = l.Memory - rr.Memory
	} else {
		decreased.Memory = rr.Memory - l.Memory
	}
	for name, lq := range l.Scalars {
		rq := rr.Scalars[name]
		switch {
		case lq == float64(Infinity):
			increased.Scalars[name] = lq
		case rq == float64(Infinity):
			decreased.Scalars[name] = rq
		case lq > rq:
			increased.Scalars[name] = lq - rq
		default:
			decreased.Scalars[name] = rq - lq
		}
	}
	return increased, decreased
}

// exceededPart is ExceededPart(l, r): what l has beyond r.
func exceededPart(l, r *Resource) *Resource {
	inc, _ := l.diff(r, Zero)
	return inc
}

// maxOf is helpers.Max.
func maxOf(l, r *Resource) *Resource {
	out := &Resource{MilliCPU: math.Max(l.MilliCPU, r.MilliCPU), Memory: math.Max(l.Memory, r.Memory)}
	if l.Scalars == nil && r.Scalars == nil {
		return out
	}
	out.Scalars = map[corev1.ResourceName]float64{}
	for name, v := range l.Scalars {
		if v >= 0 {
			out.Scalars[name] = v
		}
	}
	for name, v := range r.Scalars {
		if v >= 0 {
			out.Scalars[name] = math.Max(v, out.Scalars[name])
		}
	}
	return out
}

// equal is equality.Semantic.DeepEqual, as proportion compares deserved
// shares (a nil and an empty map are equal).
func (r *Resource) equal(o *Resource) bool { return equality.Semantic.DeepEqual(r, o) }

// Shortfall is r - o in the named dimensions, as Quantities.
func (r *Resource) Shortfall(o *Resource, names []string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, n := range names {
		name := corev1.ResourceName(n)
		v := r.Get(name) - o.Get(name)
		if framework.IsScalarResourceName(name) && !strings.HasPrefix(n, corev1.ResourceHugePagesPrefix) {
			v = math.Ceil(v/1000-1e-9) * 1000 // whole devices: no one frees 0.4 of a GPU
		}
		out[name] = quantity(name, v)
	}
	return out
}

// unlimited is where a dimension stands for no limit (Volcano's
// math.MaxFloat64 cpu and memory, math.MaxInt64 scalars of an infinite
// resource): far beyond any cluster.
const unlimited = 1e18

// List renders r as a ResourceList, dimensions of at least minResource;
// an unlimited dimension (math.MaxFloat64) is left out.
func (r *Resource) List() corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, name := range r.Names() {
		v := r.Get(name)
		if v >= unlimited {
			continue
		}
		out[name] = quantity(name, v)
	}
	return out
}

// String renders r as "cpu=4, memory=8Gi, nvidia.com/gpu=8" (zero
// dimensions left out; "0" when empty).
func (r *Resource) String() string {
	rl := r.List()
	if len(rl) == 0 {
		return "0"
	}
	names := make([]string, 0, len(rl))
	for name := range rl {
		names = append(names, string(name))
	}
	slices.Sort(names)
	slices.SortStableFunc(names, func(a, b string) int { return rank(a) - rank(b) })
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + formatValue(corev1.ResourceName(n), r.Get(corev1.ResourceName(n)))
	}
	return strings.Join(parts, ", ")
}

// formatValue renders one dimension for people: cpu and memory as kubectl
// prints quantities; a scalar in its own units, with two decimals when a
// share divided it ("15.33" GPUs, not "15334m").
func formatValue(name corev1.ResourceName, v float64) string {
	switch {
	case name == corev1.ResourceCPU, name == corev1.ResourceMemory, name == corev1.ResourceEphemeralStorage,
		strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix):
		q := quantity(name, v)
		return q.String()
	case name == corev1.ResourcePods:
		return fmt.Sprint(int64(math.Round(v)))
	}
	units := v / 1000
	if math.Abs(units-math.Round(units)) < 1e-6 {
		return fmt.Sprint(int64(math.Round(units)))
	}
	return strconv.FormatFloat(units, 'f', 2, 64)
}

func rank(name string) int {
	switch name {
	case "cpu":
		return 0
	case "memory":
		return 1
	}
	return 2
}

// quantity converts a Volcano float of a dimension back to a Quantity.
func quantity(name corev1.ResourceName, v float64) resource.Quantity {
	v = math.Ceil(v - 1e-9)
	switch name {
	case corev1.ResourceCPU:
		return *resource.NewMilliQuantity(int64(v), resource.DecimalSI)
	case corev1.ResourceMemory:
		return *resource.NewQuantity(int64(v), resource.BinarySI)
	case corev1.ResourcePods:
		return *resource.NewQuantity(int64(v), resource.DecimalSI)
	}
	q := resource.NewMilliQuantity(int64(v), resource.DecimalSI)
	if name == corev1.ResourceEphemeralStorage || strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
		return *resource.NewQuantity(q.Value(), resource.BinarySI)
	}
	return *q
}

func sortedNames(m map[corev1.ResourceName]float64) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func parseQuantity(s string) (resource.Quantity, error) { return resource.ParseQuantity(s) }

// FromFramework converts the scheduler's integer Resource (what a node's
// pods request) as Volcano's node Used sums its tasks' requests.
func FromFramework(fr *framework.Resource) *Resource {
	r := &Resource{MilliCPU: float64(fr.MilliCPU), Memory: float64(fr.Memory)}
	if fr.EphemeralStorage != 0 {
		r.addScalar(corev1.ResourceEphemeralStorage, float64(fr.EphemeralStorage)*1000)
	}
	for name, q := range fr.ScalarResources {
		r.addScalar(name, float64(q)*1000)
	}
	return r
}
