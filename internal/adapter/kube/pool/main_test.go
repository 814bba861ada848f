package pool

import (
	"os"
	"testing"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
)

// The pool's tests share one control plane (with the scheduler and kwok for
// the balloons) per test binary, each test in its own namespace
// (testenv.Namespace).
func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{Full: true})) }
