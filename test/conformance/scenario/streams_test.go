package scenario

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	resourcev1 "k8s.io/api/resource/v1"
)

// generators are the two scenario generators, each run on given streams.
var generators = []struct {
	name     string
	generate func(*streams) *Scenario
}{
	{"scenario", generate},
	{"dra", generateDRA},
}

var streamSeeds = []uint64{1, 2, 7, 42, 1 << 40}

// TestNewFeatureChangesNothing proves what recorded seeds rely on: a new
// feature drawing from its own stream, here between every draw of every
// other feature, leaves the scenario of every seed as it was. Were the
// features to share one stream, its draws would shift all that follow.
func TestNewFeatureChangesNothing(t *testing.T) {
	for _, gen := range generators {
		for _, seed := range streamSeeds {
			want := gen.generate(newStreams(gen.name, seed))
			s := newStreams(gen.name, seed)
			s.interleave = "a feature added later"
			got := gen.generate(s)
			if s.byFeature[s.interleave] == nil {
				t.Fatalf("%s seed %d: the new feature never drew", gen.name, seed)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s seed %d: a new feature's draws changed the scenario (-without +with):\n%s", gen.name, seed, diff)
			}
		}
	}
}

// TestChangedFeatureChangesItAlone proves that a feature drawing
// differently (reseeded here, as a feature that draws more or other values
// than it used to) changes what depends on its values and nothing else.
func TestChangedFeatureChangesItAlone(t *testing.T) {
	tests := []struct {
		generator, feature string
		// clear removes from a scenario what the feature shapes, directly
		// or through its values.
		clear func(*Scenario)
	}{
		{"scenario", "images", func(sc *Scenario) {
			for _, n := range sc.Nodes {
				n.Status.Images = nil
			}
		}},
		// The pending pod tolerates some of the taints there are.
		{"scenario", "taints", func(sc *Scenario) {
			for _, n := range sc.Nodes {
				n.Spec.Taints = nil
			}
			sc.Pending.Spec.Tolerations = nil
		}},
		{"scenario", "pending spread", func(sc *Scenario) { sc.Pending.Spec.TopologySpreadConstraints = nil }},
		{"dra", "pending node selector", func(sc *Scenario) { sc.Pending.Spec.NodeSelector = nil }},
		{"dra", "empty slices", func(sc *Scenario) {
			var kept []*resourcev1.ResourceSlice
			for _, s := range sc.ResourceSlices {
				if len(s.Spec.Devices) > 0 {
					kept = append(kept, s)
				}
			}
			sc.ResourceSlices = kept
		}},
	}
	for _, tt := range tests {
		t.Run(tt.generator+"/"+tt.feature, func(t *testing.T) {
			var gen func(*streams) *Scenario
			for _, g := range generators {
				if g.name == tt.generator {
					gen = g.generate
				}
			}
			changed := 0
			for seed := uint64(1); seed <= 30; seed++ {
				want := gen(newStreams(tt.generator, seed))
				s := newStreams(tt.generator, seed)
				s.reseeded = tt.feature
				got := gen(s)
				if !cmp.Equal(want, got) {
					changed++
				}
				tt.clear(want)
				tt.clear(got)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("seed %d: reseeding %q changed other features (-before +after):\n%s", seed, tt.feature, diff)
				}
			}
			// Else the feature drew nothing that shows, and the test proves
			// nothing.
			if changed == 0 {
				t.Errorf("reseeding %q changed no scenario of 30", tt.feature)
			}
		})
	}
}
