package noderesources

import (
	"fmt"
	"testing"
)

// TestBrokenLinearFunction recreates kube-scheduler's test of the helper.
func TestBrokenLinearFunction(t *testing.T) {
	type assertion struct{ p, want int64 }
	tests := []struct {
		shape      functionShape
		assertions []assertion
	}{
		{
			shape: functionShape{{10, 1}, {90, 9}},
			assertions: []assertion{
				{-10, 1}, {0, 1}, {9, 1}, {10, 1}, {15, 1}, {19, 1}, {20, 2},
				{89, 8}, {90, 9}, {99, 9}, {100, 9}, {110, 9},
			},
		},
		{
			shape:      functionShape{{0, 2}, {40, 10}, {100, 0}},
			assertions: []assertion{{-10, 2}, {0, 2}, {20, 6}, {30, 8}, {40, 10}, {70, 5}, {100, 0}, {110, 0}},
		},
		{
			shape:      functionShape{{0, 2}, {40, 2}, {100, 2}},
			assertions: []assertion{{-10, 2}, {0, 2}, {20, 2}, {30, 2}, {40, 2}, {70, 2}, {100, 2}, {110, 2}},
		},
	}
	for i, tc := range tests {
		t.Run(fmt.Sprintf("case_%d", i), func(t *testing.T) {
			for _, a := range tc.assertions {
				if got := tc.shape.at(a.p); got != a.want {
					t.Errorf("f(%d) = %d, want %d (shape %v)", a.p, got, a.want, tc.shape)
				}
			}
		})
	}
}

// TestResourceScores checks each strategy's per-resource formula at its
// edges: no allocatable, a request past allocatable, exact fits.
func TestResourceScores(t *testing.T) {
	shape := functionShape{{0, 0}, {100, 100}}
	tests := []struct {
		requested, allocatable   int64
		least, most, ratioShaped int64
	}{
		{requested: 0, allocatable: 0, least: 0, most: 0, ratioShaped: 100},
		{requested: 5, allocatable: 4, least: 0, most: 100, ratioShaped: 100},
		{requested: 4, allocatable: 4, least: 0, most: 100, ratioShaped: 100},
		{requested: 1, allocatable: 3, least: 66, most: 33, ratioShaped: 33},
		{requested: 0, allocatable: 3, least: 100, most: 0, ratioShaped: 0},
	}
	for _, tc := range tests {
		name := fmt.Sprintf("%d of %d", tc.requested, tc.allocatable)
		if got := leastRequestedScore(tc.requested, tc.allocatable); got != tc.least {
			t.Errorf("%s: leastRequestedScore = %d, want %d", name, got, tc.least)
		}
		if got := mostRequestedScore(tc.requested, tc.allocatable); got != tc.most {
			t.Errorf("%s: mostRequestedScore = %d, want %d", name, got, tc.most)
		}
		if got := shape.resourceScore(tc.requested, tc.allocatable); got != tc.ratioShaped {
			t.Errorf("%s: shape.resourceScore = %d, want %d", name, got, tc.ratioShaped)
		}
	}
}
