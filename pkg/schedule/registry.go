package schedule

import (
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/defaultbinder"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/defaultpreemption"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/dynamicresources"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/imagelocality"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/interpodaffinity"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeaffinity"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodedeclaredfeatures"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodename"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeports"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/noderesources"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodeunschedulable"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/nodevolumelimits"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/podtopologyspread"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/queuesort"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/schedulinggates"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/tainttoleration"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/volumebinding"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/volumerestrictions"
	"github.com/kubectl-gang/kubectl-gang/pkg/schedule/plugins/volumezone"
)

// registry maps every plugin a profile may name to its factory: the plugins
// of kube-scheduler v1.37's default profile.
var registry = map[string]PluginFactory{
	schedulinggates.Name:                 schedulinggates.New,
	queuesort.Name:                       queuesort.New,
	nodename.Name:                        nodename.New,
	nodeunschedulable.Name:               nodeunschedulable.New,
	tainttoleration.Name:                 tainttoleration.New,
	nodeaffinity.Name:                    nodeaffinity.New,
	nodeports.Name:                       nodeports.New,
	noderesources.Name:                   noderesources.New,
	noderesources.BalancedAllocationName: noderesources.NewBalancedAllocation,
	volumerestrictions.Name:              volumerestrictions.New,
	nodevolumelimits.Name:                nodevolumelimits.New,
	volumebinding.Name:                   volumebinding.New,
	volumezone.Name:                      volumezone.New,
	podtopologyspread.Name:               podtopologyspread.New,
	interpodaffinity.Name:                interpodaffinity.New,
	dynamicresources.Name:                dynamicresources.New,
	defaultpreemption.Name:               defaultpreemption.New,
	imagelocality.Name:                   imagelocality.New,
	defaultbinder.Name:                   defaultbinder.New,
	nodedeclaredfeatures.Name:            nodedeclaredfeatures.New,
}
