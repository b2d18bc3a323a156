package gang

// The sources of the gang systems the internal tests use, by name: a test
// of the gang core cannot import a wing (the wing imports the core);
// systems_test.go, an external test file of the same test binary,
// registers them.
const (
	testVolcano      Source = "scheduling.volcano.sh"
	testCoscheduling Source = "scheduling.x-k8s.io"
)
