package describe

import (
	"slices"
	"testing"
)

func TestNaturalCompare(t *testing.T) {
	got := []string{"train-10", "train-2", "train-1", "a", "train-02", "b-1", "train-x", "train-9b", "train-9a"}
	slices.SortFunc(got, NaturalCompare)
	want := []string{"a", "b-1", "train-1", "train-2", "train-02", "train-9a", "train-9b", "train-10", "train-x"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
