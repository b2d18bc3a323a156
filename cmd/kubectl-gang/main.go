// Command kubectl-gang is the kubectl plugin behind `kubectl gang`.
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-gang/kubectl-gang/pkg/cmd"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	os.Exit(cmd.Main(os.Args[1:], streams))
}
