package scenario

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
)

// streams hands out one random stream per feature of a scenario (the zones,
// the taints, the pending pod's tolerations, ...). A stream is seeded from
// the seed and the feature's name alone, so what a feature draws does not
// depend on which other features exist or in what order they draw: a new
// feature, or a feature that draws more than it used to, leaves every other
// feature of a recorded seed as it was. Features still depend on each
// other's values (tolerations on the taints there are), never on their
// draws.
type streams struct {
	generator string // "scenario" or "dra": the two generators' streams differ
	seed      uint64
	byFeature map[string]*rand.Rand

	// interleave, when set (tests only), is a feature that draws once
	// before every hand-out of another feature's stream: a new feature
	// woven through all the others, which must change nothing they draw.
	interleave string
	// reseeded, when set (tests only), is a feature whose stream starts
	// from another seed: a feature that draws differently, which must
	// change nothing the features not depending on it draw.
	reseeded string
}

func newStreams(generator string, seed uint64) *streams {
	return &streams{generator: generator, seed: seed, byFeature: map[string]*rand.Rand{}}
}

// stream returns feature's stream, the same one every time it is asked for
// within one scenario.
func (s *streams) stream(feature string) *rand.Rand {
	if s.interleave != "" && feature != s.interleave {
		s.stream(s.interleave).Uint64()
	}
	r, ok := s.byFeature[feature]
	if !ok {
		seed := s.seed
		if feature == s.reseeded {
			seed = ^seed
		}
		r = newStream(s.generator, seed, feature)
		s.byFeature[feature] = r
	}
	return r
}

// newStream is a PCG seeded with a SHA-256 of the generator, the seed and
// the feature: hashed, since two PCGs whose seeds differ in the first word
// alone keep the second half of their state equal forever.
func newStream(generator string, seed uint64, feature string) *rand.Rand {
	h := sha256.New()
	h.Write([]byte(generator))
	h.Write([]byte{0})
	h.Write(binary.LittleEndian.AppendUint64(nil, seed))
	h.Write([]byte(feature))
	sum := h.Sum(nil)
	return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:16])))
}

func pick[T any](r *rand.Rand, from []T) T { return from[r.IntN(len(from))] }

func chance(r *rand.Rand, p float64) bool { return r.Float64() < p }

// subset returns a random non-empty subset of from, in from's order.
func subset[T any](r *rand.Rand, from []T) []T {
	for {
		var out []T
		for _, v := range from {
			if chance(r, 0.5) {
				out = append(out, v)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
}
