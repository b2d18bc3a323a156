package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-gang/kubectl-gang/pkg/gang"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/workload"
)

// readShapes reads what the shapes are made from before the cluster is
// read: -f's manifests (split by workload.SplitShapes) and workloads.
func (o *CapacityOptions) readShapes(ctx context.Context) error {
	var shapes []*Subject
	for _, s := range o.shapes {
		if s.Kind != SubjectFile {
			o.subject = s
			if err := o.readSubject(ctx); err != nil {
				return err
			}
			shapes = append(shapes, s)
			continue
		}
		objs, err := o.readManifestFile(s.Filename)
		if err != nil {
			return err
		}
		opts := workload.Options{Namespace: o.namespace, MinMember: o.Subject.MinMember}
		if !o.Snapshot.Offline() {
			opts.Runtimes = clusterRuntimes{ctx: ctx, config: o.Snapshot.RESTConfig}
		}
		for _, part := range workload.SplitShapes(objs) {
			g, err := workload.FromManifestsWith(part, opts.Namespace, opts.MinMember, opts.Runtimes)
			if err != nil {
				return asInputError(fmt.Errorf("%s: %w", manifestSource(s.Filename), err))
			}
			shapes = append(shapes, &Subject{Kind: SubjectFile, Filename: s.Filename,
				made: func(snap *schedule.Snapshot) (*gang.Gang, error) { return workload.Create(g, snap) }})
		}
	}
	o.shapes = shapes
	return nil
}

// shapeName names a shape in the table: the subject as given, or, for
// -f, the kind and name of the workload read.
func shapeName(s *Subject, g *gang.Gang) string {
	if s.Kind != SubjectFile && s.Kind != SubjectSelector {
		return s.Arg
	}
	if s.Kind == SubjectFile {
		// The object the gang is named after ("Kind name (group/version)"),
		// not a runtime or claim read with it.
		first, _, _ := strings.Cut(g.Name, ",")
		for _, r := range g.Read {
			kind, rest, _ := strings.Cut(r, " ")
			if name, _, _ := strings.Cut(rest, " "); name == first {
				return strings.ToLower(kind) + "/" + name
			}
		}
	}
	return g.Name
}

// shapeGang resolves the current shape into its gang: a pod of no gang is
// a gang of one.
func (o *CapacityOptions) shapeGang(snap *schedule.Snapshot) (*schedule.Snapshot, *gang.Gang, error) {
	if o.subject.Kind != SubjectPod {
		return o.subjectGang(snap)
	}
	g, pod, err := gang.ResolvePod(snap, o.namespace, o.subject.Name)
	if err != nil {
		return nil, nil, asInputError(err)
	}
	if g == nil {
		g = gang.LonePod(pod)
	}
	if err := refuseUncountable(g.Members...); err != nil {
		return nil, nil, err
	}
	return snap, g, o.checkOverrides(g)
}
