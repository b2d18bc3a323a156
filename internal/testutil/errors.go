package testutil

import "testing"

// CheckErr fails t unless err is nil and want is empty, or err's message
// is exactly want.
func CheckErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case err == nil && want != "":
		t.Fatalf("got no error, want %q", want)
	case err != nil && want == "":
		t.Fatalf("unexpected error: %v", err)
	case err != nil && err.Error() != want:
		t.Fatalf("got error\n%q\nwant\n%q", err.Error(), want)
	}
}
