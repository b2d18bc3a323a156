package cmd

import (
	"os"
	"testing"
)

func TestZZProf(t *testing.T) {
	if os.Getenv("ZZ_SNAP") == "" {
		t.Skip()
	}
	code, _, stderr := run(t, "", "explain", "-A", "--snapshot", os.Getenv("ZZ_SNAP"))
	if code != 0 {
		t.Fatal(stderr)
	}
}
