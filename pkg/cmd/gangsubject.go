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
		g, err = gangFromFile(snap, s.manifest)
	case SubjectWorkload:
		g, err = gangFromWorkload(snap, s.object, namespace)
	case SubjectPod:
		var pod = s.Name
		g, _, err = gang.ResolvePod(snap, namespace, pod)
	default:
		return nil, fmt.Errorf("internal error: subject kind %d", s.Kind)
	}
	if err != nil {
		return nil, asInputError(err)
	}
	return g, nil
}

// readManifests reads what-if manifests into a gang, before any cluster
// read: a missing file or a bad manifest is reported at once.
func readManifests(filename, namespace string, minMember int32, stdin io.Reader) (*gang.Gang, error) {
	source := filename
	var data []byte
	var err error
	if filename == "-" {
		source = "<stdin>"
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(filename)
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, usageErrorf("%s: no such file", filename)
		}
		return nil, &exitError{code: ExitError, err: fmt.Errorf("reading %s: %w", source, err)}
	}
	objs, err := gang.DecodeManifests(data, source)
	if err != nil {
		return nil, err
	}
	g, err := gang.FromManifests(objs, namespace, minMember)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return g, nil
}

// gangFromFile gives the members of a what-if gang the priorities admission
// would, from the snapshot's PriorityClasses.
func gangFromFile(snap *schedule.Snapshot, g *gang.Gang) (*gang.Gang, error) {
	if err := gang.ApplyPriorities(g.Members, snap.PriorityClasses); err != nil {
		return nil, err
	}
	gang.ApplyWebhooks(g.Members)
	g.SortMembers()
	return g, nil
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

// gangFromWorkload expands a workload read from the cluster exactly as -f
// expands its manifest (names, labels, priorities, webhooks), then puts
// the pods its controllers already created in the place of the members
// they stand for (gang.MergeLive).
func gangFromWorkload(snap *schedule.Snapshot, obj *unstructured.Unstructured, namespace string) (*gang.Gang, error) {
	g, err := gang.FromManifests([]*unstructured.Unstructured{obj}, namespace, 0)
	if err != nil {
		return nil, err
	}
	if g, err = gangFromFile(snap, g); err != nil {
		return nil, err
	}
	return gang.MergeLive(g, snap.Pods), nil
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
