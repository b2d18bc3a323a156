package explain

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"testing"
)

// The shortfall and the move run on a goroutine of their own beside the
// other what-ifs (suggest, beside): the explanation is the one the
// what-ifs give one after the other, on one core. rowsFragmented offers a
// move, a shortfall, a preemption and added nodes, so both goroutines have
// work; go test -race checks that they share nothing they write.
func TestSuggestionsBesideAreThoseInTurn(t *testing.T) {
	explainOn := func(procs int) *Explanation {
		t.Helper()
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		snap, g := rowsFragmented()
		e, err := Gang(context.Background(), snap, g, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	inTurn := explainOn(1)
	want := []SuggestionKind{SuggestMove, SuggestShortfall, SuggestPreempt, SuggestAddNodes}
	if got := kinds(inTurn.Suggestions); !reflect.DeepEqual(got, want) {
		t.Fatalf("suggestions %v, want %v: the test needs work on both goroutines", got, want)
	}
	for range 5 {
		beside := explainOn(max(2, runtime.NumCPU()))
		if !reflect.DeepEqual(beside.Suggestions, inTurn.Suggestions) || !reflect.DeepEqual(beside.NotEvaluated, inTurn.NotEvaluated) {
			t.Fatalf("suggestions beside:\n%+v\nwant, as in turn:\n%+v", beside.Suggestions, inTurn.Suggestions)
		}
	}
}

// beside returns f's error from wait, and raises f's panic again on the
// goroutine that waits (where Main turns it into one line), not on its own,
// where it would end the process with a stack trace.
func TestBesideReturnsErrorsAndPanicsOnTheWaiter(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	boom := errors.New("boom")
	if err := beside(func() error { return boom })(); err != boom {
		t.Errorf("wait = %v, want %v", err, boom)
	}
	wait := beside(func() error { panic("in the lane") })
	defer func() {
		if r := recover(); r != "in the lane" {
			t.Errorf("recovered %v, want the lane's panic", r)
		}
	}()
	_ = wait()
	t.Error("wait returned; want the lane's panic")
}
