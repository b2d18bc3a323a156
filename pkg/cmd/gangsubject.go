package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/snapshot"
	"github.com/kubectl-gang/kubectl-gang/pkg/workload"
)

// resolveGang turns the parsed subject into a gang on the snapshot. A group
// or pod that is not there, or a bad manifest, is bad input (exit 2).
func resolveGang(snap *schedule.Snapshot, s *Subject, namespace string, minMember int32) (*gang.Gang, error) {
	var g *gang.Gang
	var err error
	switch s.Kind {
	case SubjectPodGroup:
		g, err = gang.ResolvePodGroup(snap, gang.Ref{Namespace: namespace, Name: s.Name, Group: s.Group})
	case SubjectSelector:
		g, err = gang.ResolveSelector(snap, namespace, s.Selector, minMember)
	case SubjectFile:
		g, err = workload.Create(s.manifest, snap)
	case SubjectWorkload:
		g, err = workload.Live(s.object, snap, workload.Options{Namespace: namespace, Runtimes: s.runtimes})
	case SubjectPod:
		g, _, err = gang.ResolvePod(snap, namespace, s.Name)
	default:
		return nil, fmt.Errorf("internal error: subject kind %d", s.Kind)
	}
	if err != nil {
		return nil, asInputError(err)
	}
	return g, nil
}

// readManifests reads what-if manifests into a gang, before any cluster
// read: a missing file or a bad manifest is reported at once. The objects
// come back with a *workload.MissingRuntimeError, which the cluster may mend.
func readManifests(filename, namespace string, minMember int32, stdin io.Reader) ([]*unstructured.Unstructured, *gang.Gang, error) {
	source := manifestSource(filename)
	var data []byte
	var err error
	if filename == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(filename)
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, usageErrorf("%s: no such file", filename)
		}
		return nil, nil, &exitError{code: ExitError, err: fmt.Errorf("reading %s: %w", source, err)}
	}
	objs, err := workload.Decode(data, source)
	if err != nil {
		return nil, nil, err
	}
	g, err := workload.FromManifests(objs, namespace, minMember)
	if err != nil {
		return objs, nil, fmt.Errorf("%s: %w", source, err)
	}
	return objs, g, nil
}

// manifestSource names -f's input in messages.
func manifestSource(filename string) string {
	if filename == "-" {
		return "<stdin>"
	}
	return filename
}

// clusterRuntimes looks TrainJobs' runtimes up in the cluster
// (workload.TrainingRuntimes): a runtime the server does not serve, or that is
// not there, is none.
type clusterRuntimes struct {
	ctx context.Context
	cfg *rest.Config
}

func (c clusterRuntimes) TrainingRuntime(kind, namespace, name string) (*unstructured.Unstructured, error) {
	gvr, ok := workload.TrainingRuntimeResources[kind]
	if !ok {
		return nil, nil
	}
	if gvr.Resource == "clustertrainingruntimes" {
		namespace = ""
	}
	obj, err := snapshot.GetObject(c.ctx, c.cfg, gvr, namespace, name)
	var notServed *snapshot.NotServedError
	switch {
	case err == nil:
		return obj, nil
	case apierrors.IsNotFound(err), errors.As(err, &notServed):
		return nil, nil
	}
	return nil, err
}

// readWorkload reads a workload subject from the cluster, at the version
// FromManifests reads, in namespace. A resource the server does not serve
// or an object that is not there is bad input (exit 2), said in one line.
func readWorkload(ctx context.Context, cfg *rest.Config, s *Subject, namespace string) (*unstructured.Unstructured, error) {
	k := s.Workload
	obj, err := snapshot.GetObject(ctx, cfg, k.Resource, namespace, s.Name)
	var notServed *snapshot.NotServedError
	switch {
	case err == nil:
		return obj, nil
	case errors.As(err, &notServed) && len(notServed.Versions) > 0:
		return nil, usageErrorf("the server serves %s at %s, not at %s, the version this build reads",
			k.Qualified(), strings.Join(notServed.Versions, ", "), k.Resource.Version)
	case errors.As(err, &notServed):
		return nil, usageErrorf("the server does not serve %s (is %s installed?)", k.Qualified(), k.Kind)
	case apierrors.IsNotFound(err):
		return nil, asInputError(&gang.NotFoundError{Resource: k.Qualified(), Namespace: namespace, Name: s.Name})
	}
	return nil, err
}

// asInputError marks resolution failures as bad input: a group or pod not in
// the snapshot, an ambiguous name, a malformed manifest or PodGroup field. An
// error that already carries its exit code (an I/O error) keeps it.
func asInputError(err error) error {
	var exit *exitError
	if errors.As(err, &exit) {
		return err
	}
	return &exitError{code: ExitUsage, err: err}
}
