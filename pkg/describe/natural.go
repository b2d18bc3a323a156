package describe

import (
	"cmp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// CompareNatural orders names as people count: runs of digits compare as
// numbers, so train-2 comes before train-10; the rest compares byte by
// byte. Equal numbers written differently (01 and 1) are told apart by
// length, then as strings, so the order is total. It orders what the
// output lists (members in tables and lists), never what is placed: the
// members are placed in their scheduler's queue order.
func CompareNatural(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			ei, ej := digitsEnd(a, i), digitsEnd(b, j)
			na, nb := strings.TrimLeft(a[i:ei], "0"), strings.TrimLeft(b[j:ej], "0")
			if c := cmp.Or(cmp.Compare(len(na), len(nb)), strings.Compare(na, nb)); c != 0 {
				return c
			}
			i, j = ei, ej
			continue
		}
		if a[i] != b[j] {
			return cmp.Compare(a[i], b[j])
		}
		i++
		j++
	}
	return cmp.Or(cmp.Compare(len(a)-i, len(b)-j), cmp.Compare(len(a), len(b)), strings.Compare(a, b))
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func digitsEnd(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// comparePods orders pods by namespace, then name, naturally.
func comparePods(a, b *corev1.Pod) int {
	return cmp.Or(CompareNatural(a.Namespace, b.Namespace), CompareNatural(a.Name, b.Name))
}

// naturalKeys returns namespace/name keys in natural order (a copy).
func naturalKeys(keys []string) []string {
	out := slices.Clone(keys)
	slices.SortStableFunc(out, CompareNatural)
	return out
}

// naturalPods returns pods in natural order of namespace/name (a copy).
func naturalPods(pods []*corev1.Pod) []*corev1.Pod {
	out := slices.Clone(pods)
	slices.SortStableFunc(out, comparePods)
	return out
}
