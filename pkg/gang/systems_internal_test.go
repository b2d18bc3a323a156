package gang

// The sources of the gang systems the internal tests use, by name: a test
// of the gang core cannot import a wing (the wing imports the core), and
// TestMain's external file (systems_test.go) registers them.
const (
	testVolcano      Source = "scheduling.volcano.sh"
	testCoscheduling Source = "scheduling.x-k8s.io"
)
