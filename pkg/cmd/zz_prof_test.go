package cmd

import (
	"os"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func TestZZProf(t *testing.T) {
	args := os.Getenv("ZZ_ARGS")
	if args == "" {
		t.Skip()
	}
	f, _ := os.Create("/dev/null")
	Main(strings.Fields(args), genericiooptions.IOStreams{In: os.Stdin, Out: f, ErrOut: f})
}
