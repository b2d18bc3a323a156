// Package fields reads fields of unstructured objects (PodGroups, Queues,
// workloads the typed API does not cover) and names the object and the
// field in every error, so that bad input is reported in one line that
// points at it (docs/design.md#gangs). It is pure: objects in, values out.
package fields

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Error is a malformed field of an object.
type Error struct {
	// Object names it as kubectl would: podgroups.scheduling.volcano.sh ml/train.
	Object string
	// Field is the field's path: spec.minMember.
	Field string
	Msg   string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.Object, e.Field, e.Msg)
}

// Reader reads fields of one object and names it and the field in every error.
type Reader struct {
	obj  map[string]any
	name string
}

// New returns a Reader of u, named as kubectl names a resource:
// <plural>.<group> <namespace>/<name>.
func New(u *unstructured.Unstructured) *Reader {
	name := u.GetName()
	if ns := u.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	gvk := u.GroupVersionKind()
	resource := strings.ToLower(gvk.Kind) + "s"
	if gvk.Group != "" {
		resource += "." + gvk.Group
	}
	return &Reader{obj: u.Object, name: resource + " " + name}
}

// Within returns a Reader of obj, a part of r's object (an item of a list),
// that names r's object in its errors; Prefix puts the part's path in front
// of their fields.
func (r *Reader) Within(obj map[string]any) *Reader { return &Reader{obj: obj, name: r.name} }

// Errorf is an error about the field at path.
func (r *Reader) Errorf(path []string, format string, args ...any) error {
	return &Error{Object: r.name, Field: strings.Join(path, "."), Msg: fmt.Sprintf(format, args...)}
}

// Get returns the value at path; found is false when it or a parent is
// absent or null. A parent that is not an object is an error.
func (r *Reader) Get(path ...string) (any, bool, error) {
	var cur any = r.obj
	for i, key := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false, r.Errorf(path[:i], "must be an object, got %s", Describe(cur))
		}
		v, ok := m[key]
		if !ok || v == nil {
			return nil, false, nil
		}
		cur = v
	}
	return cur, true, nil
}

// Int32 reads an integer field of at least minimum; def is returned when it
// is absent.
func (r *Reader) Int32(def, minimum int32, path ...string) (int32, bool, error) {
	v, found, err := r.Get(path...)
	if err != nil || !found {
		return def, false, err
	}
	n, err := toInt32(v)
	if err != nil {
		return 0, true, r.Errorf(path, "%v", err)
	}
	if n < minimum {
		if minimum == 0 {
			return 0, true, r.Errorf(path, "must not be negative, got %d", n)
		}
		return 0, true, r.Errorf(path, "must be at least %d, got %d", minimum, n)
	}
	return n, true, nil
}

// String reads a string field; "" when absent.
func (r *Reader) String(path ...string) (string, error) {
	v, found, err := r.Get(path...)
	if err != nil || !found {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", r.Errorf(path, "must be a string, got %s", Describe(v))
	}
	return s, nil
}

// Map reads an object field; nil when absent.
func (r *Reader) Map(path ...string) (map[string]any, error) {
	v, found, err := r.Get(path...)
	if err != nil || !found {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, r.Errorf(path, "must be an object, got %s", Describe(v))
	}
	return m, nil
}

// Slice reads a list field; nil when absent.
func (r *Reader) Slice(path ...string) ([]any, error) {
	v, found, err := r.Get(path...)
	if err != nil || !found {
		return nil, err
	}
	l, ok := v.([]any)
	if !ok {
		return nil, r.Errorf(path, "must be a list, got %s", Describe(v))
	}
	return l, nil
}

// Resources reads a ResourceList field; nil when absent.
func (r *Reader) Resources(path ...string) (corev1.ResourceList, error) {
	m, err := r.Map(path...)
	if err != nil || m == nil {
		return nil, err
	}
	out := corev1.ResourceList{}
	for _, name := range sortedKeys(m) {
		q, err := toQuantity(m[name])
		if err != nil {
			return nil, r.Errorf(append(slices.Clone(path), name), "%v", err)
		}
		out[corev1.ResourceName(name)] = q
	}
	return out, nil
}

// Int32Map reads a map of non-negative integers, such as minTaskMember.
func (r *Reader) Int32Map(path ...string) (map[string]int32, error) {
	m, err := r.Map(path...)
	if err != nil || m == nil {
		return nil, err
	}
	out := make(map[string]int32, len(m))
	for _, k := range sortedKeys(m) {
		n, _, err := r.Int32(0, 0, append(slices.Clone(path), k)...)
		if err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, nil
}

// Prefix puts path in front of the field of a field error read through a
// Reader of a part of the object (Within).
func Prefix(err error, path []string) error {
	var fe *Error
	if errors.As(err, &fe) {
		fe.Field = strings.Join(path, ".") + "." + fe.Field
		return fe
	}
	return err
}

// Describe words a decoded JSON or YAML value for an error: `string "x"`,
// "an object", "a list". A long string is cut, so that the error stays one
// readable line (a file that is not YAML decodes as one string).
func Describe(v any) string {
	switch x := v.(type) {
	case string:
		const most = 60
		if r := []rune(x); len(r) > most {
			return fmt.Sprintf("string %q... (%d characters)", string(r[:most]), len(r))
		}
		return fmt.Sprintf("string %q", x)
	case bool:
		return fmt.Sprintf("boolean %v", x)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T %v", v, v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// toInt32 accepts the numbers JSON and YAML decoding produce (int64, whole
// float64) and the Go integers builders use.
func toInt32(v any) (int32, error) {
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case int32:
		n = int64(x)
	case int:
		n = int64(x)
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) {
			return 0, fmt.Errorf("must be an integer, got %v", x)
		}
		if x > math.MaxInt32 || x < math.MinInt32 {
			return 0, fmt.Errorf("must fit in 32 bits, got %v", x)
		}
		n = int64(x)
	default:
		return 0, fmt.Errorf("must be an integer, got %s", Describe(v))
	}
	if n > math.MaxInt32 || n < math.MinInt32 {
		return 0, fmt.Errorf("must fit in 32 bits, got %d", n)
	}
	return int32(n), nil
}

// toQuantity accepts a quantity string or a bare number, as the API server does.
func toQuantity(v any) (resource.Quantity, error) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case int64:
		s = strconv.FormatInt(x, 10)
	case int:
		s = strconv.Itoa(x)
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	default:
		return resource.Quantity{}, fmt.Errorf("must be a quantity, got %s", Describe(v))
	}
	q, err := resource.ParseQuantity(strings.TrimSpace(s))
	if err != nil {
		return resource.Quantity{}, fmt.Errorf("invalid quantity %q: %w", s, err)
	}
	return q, nil
}
