package gang

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-gang/kubectl-gang/pkg/fields"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/framework"
)

// A System is one gang system: what kubectl-gang knows of a scheduler that
// keeps pods together (docs/design.md#gang-systems). Each system is a
// package of its own (a wing) that registers itself with Register; the
// gang core asks the registry and never names a system, as kube-scheduler's
// framework asks its plugins. Besides the methods below, a system may
// implement Gater, Opener, QueueKeyer, Committer, GateKeeper, Tasker and
// GroupResolver.
type System interface {
	// Rules are the system's plain facts.
	Rules() Rules
	// NameOf is the group a pod names through the system's membership key,
	// "" for none.
	NameOf(pod *corev1.Pod) string
	// SetName makes pod a member of group name (a what-if member).
	SetName(pod *corev1.Pod, name string)
	// Read reads one of the system's group objects into g (minimum,
	// topology, queue, ...). Systems without group objects return nil.
	Read(p *fields.Reader, g *Gang) error
	// Held is how the system's scheduler words a member whose group object
	// (named name) does not exist: it holds the pod pending until the
	// group is created.
	Held(name string) string
	// Short words a gang with fewer valid members than its minimum, as
	// the system's scheduler says it; "" for the gang core's words.
	Short(g *Gang, v Validity) string
}

// Rules are a gang system's plain facts.
type Rules struct {
	// Source names the system.
	Source Source
	// Rank orders the systems whose members carry a key: a pod that names
	// groups of several is the member of the lowest rank's (GroupsOf).
	Rank int
	// Group is the API group of the system's group objects (PodGroups);
	// "" when it has none.
	Group string
	// Name names the system briefly, in lists (the pending list's -o wide).
	Name string
	// Noun names one of the system's groups in messages ("... pod
	// group"), and Key is the membership key a selector picks one by.
	Noun, Key string
	// MinimumField names where the gang's minimum is set, for advice.
	MinimumField string
	// Missing says what to check when a snapshot holds none of the
	// system's group objects.
	Missing string
	// CountsSucceeded: members that finished count toward the minimum.
	CountsSucceeded bool
	// OnePass, when set, says in the scheduler's terms that it tries each
	// pending member once, in its queue's order, in one cycle for the
	// whole group, so a member that needs another placed first fits only
	// when the queue happens to take that one first (placeOnePass). Empty:
	// a member is tried again once a member it needs is placed (placeWith).
	OnePass string
	// OwnGate is the scheduling gate the system's scheduler removes
	// itself once it admits a member; "" for none. A member gated only by
	// it competes for room as any other (GatedByOthers).
	OwnGate string
	// CopyLabels are the labels of the system's controllers whose values
	// tie a member to its own group (Gang.Copy, CopyLabels).
	CopyLabels []string
	// TopologyStandIn is the field of a group object whose topology
	// --topology-key stands in for (SetTopologyKey); "" for none.
	TopologyStandIn string
}

// A Gater is a system whose scheduler applies a gate of its own before it
// places a member (SourceGate).
type Gater interface {
	Gate(snap *schedule.Snapshot, g *Gang, nodes []*framework.NodeInfo) *GateResult
}

// An Opener is a system whose scheduler holds a session of its own around
// the placement of a gang (a queue that admits each member, a readiness
// check on the whole): PlaceOn opens it for each placement.
type Opener interface {
	Open(snap *schedule.Snapshot, g *Gang, nodes []*framework.NodeInfo) Session
}

// A Session is a system's scheduler state for the placement of one gang.
type Session interface {
	// Gate is the admission before placement (SourceGate).
	Gate() *GateResult
	// Budget is a fresh check of each member for one placement; nil for
	// none (a gang the gate holds back is never tried).
	Budget() MemberBudget
	// Hold is the gate holding the gang back when budget, the one the
	// best attempt used, refused members; nil when it refused none.
	Hold(p *Placement, budget MemberBudget) *GateResult
	// Finish applies the session's checks on the whole placement (a gate
	// of p when they fail).
	Finish(p *Placement)
	// NotEvaluated says what of the session could not be read.
	NotEvaluated() []string
}

// A MemberBudget is a gang scheduler's own check of each member during
// placement, besides the nodes (a queue's share at allocation). One budget
// serves one attempt; Fork makes a fresh one for another.
type MemberBudget interface {
	Fork() MemberBudget
	// Admit says why pod may not be placed now, or "".
	Admit(pod *corev1.Pod) string
	// Take records pod placed.
	Take(pod *corev1.Pod)
}

// A QueueKeyer is a system whose scheduler orders pending gangs by a key
// of its own (QueueKey). It is given kube-scheduler's pod by pod: priority
// is the first pending member's, since the earliest pending member's
// creation.
type QueueKeyer interface {
	QueueKey(snap *schedule.Snapshot, g *Gang, priority int32, since time.Time) (int32, time.Time)
}

// A Committer is a system whose group object changes when the gang starts
// (CommitGroup): it returns the object as the system's controller leaves
// it, a copy when it changes it.
type Committer interface {
	Committed(pg *unstructured.Unstructured) *unstructured.Unstructured
}

// A GateKeeper is a system whose scheduler or controller sets scheduling
// gates and removes them itself: GateOwner words who removes gate and
// when, "" for a gate not its own.
type GateKeeper interface {
	GateOwner(gate string) string
}

// A Tasker is a system whose members belong to tasks (roles) with a
// minimum each (Gang.MinTaskMember): TaskOf names a member's task.
type Tasker interface {
	TaskOf(pod *corev1.Pod) string
}

// A GroupResolver is a system whose groups are sets of pods without a
// group object: it resolves the group a pod names (ResolvePod, and a
// selector that picks all of one group), and reads what its keys on the
// members of a selector's gang say (a topology).
type GroupResolver interface {
	ResolveGroup(snap *schedule.Snapshot, namespace, name string) (*Gang, error)
	ReadMembers(g *Gang)
}

// registry holds the systems. Register runs only in package init
// functions, which finish before any other code runs, so reading needs no
// lock; each system's Rules are taken once, as they do not change.
var registry struct {
	bySource map[Source]registered
	// keyed are the registered systems (their members carry a key), by
	// rank; the gang core's own keyless ones are in bySource only.
	// systems are keyed's systems.
	keyed   []registered
	systems []System
	// podGroup are keyed's systems with a group object, by rank
	// (podGroupSystems).
	podGroup []registered
}

type registered struct {
	system System
	rules  Rules
}

// Register adds a gang system whose members carry a key; each wing calls
// it once, in its init. Registering a source twice panics.
func Register(s System) {
	registry.keyed = append(registry.keyed, add(s))
	slices.SortStableFunc(registry.keyed, func(a, b registered) int { return a.rules.Rank - b.rules.Rank })
	registry.systems, registry.podGroup = registry.systems[:0], registry.podGroup[:0]
	for _, k := range registry.keyed {
		registry.systems = append(registry.systems, k.system)
		if k.rules.Group != "" {
			registry.podGroup = append(registry.podGroup, k)
		}
	}
}

func add(s System) registered {
	r := s.Rules()
	if _, ok := registry.bySource[r.Source]; ok {
		panic(fmt.Sprintf("gang system %q registered twice", r.Source))
	}
	if registry.bySource == nil {
		registry.bySource = map[Source]registered{}
	}
	registry.bySource[r.Source] = registered{system: s, rules: r}
	return registry.bySource[r.Source]
}

// Systems are the registered gang systems, in rank order.
func Systems() []System { return registry.systems }

// SystemOf is src's system; a source nobody registered has none (nil).
func SystemOf(src Source) System { return registry.bySource[src].system }

// RulesOf is src's Rules; an unknown source has only its name.
func RulesOf(src Source) Rules { return rulesOf(src) }

// rulesOf is src's Rules; an unknown source has only its name.
func rulesOf(src Source) Rules {
	if r, ok := registry.bySource[src]; ok {
		return r.rules
	}
	return Rules{Source: src}
}

// keyless is the part of System a gang without a membership key needs
// (selector, file, lone pod): the gang core's own.
type keyless struct{ rules Rules }

func (k keyless) Rules() Rules                   { return k.rules }
func (keyless) NameOf(*corev1.Pod) string        { return "" }
func (keyless) SetName(*corev1.Pod, string)      {}
func (keyless) Read(*fields.Reader, *Gang) error { return nil }
func (keyless) Held(string) string               { return "" }
func (k keyless) Short(g *Gang, v Validity) string {
	if k.rules.Source == SourcePod {
		return ""
	}
	return MembersMissing(g, v)
}

func init() {
	for _, src := range []Source{SourceSelector, SourceFile, SourcePod} {
		_ = add(keyless{Rules{Source: src, MinimumField: "--min-member"}})
	}
}
