package leader

import (
	"os"
	"testing"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
)

// The election tests share one control plane (etcd and kube-apiserver; no
// controllers) per test binary, each test in its own namespace.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }
