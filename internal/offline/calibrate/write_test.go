package calibrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/config"
)

// TestWriteConfigWritesOnlyACopyThatLoads: the calibrated copy holds the
// applied estimates, relative checkpoint paths rebased to its own
// directory, and loads; a copy that would not load is not written.
func TestWriteConfigWritesOnlyACopyThatLoads(t *testing.T) {
	dir := t.TempDir()
	srcPath := filepath.Join(dir, "conf", "t.hcl")
	ckpt, err := os.ReadFile("../../../models/soldier.ckpt")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "conf", "models"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "conf", "models", "s.ckpt"), ckpt, 0o644); err != nil {
		t.Fatal(err)
	}
	src := []byte(patchSrc + "soldier {\n  policy = \"models/s.ckpt\"\n}\n")
	out := filepath.Join(dir, "calibrated.hcl")
	sets := []SetFit{{Domain: "d", Set: "back", ServiceTime: Estimate{New: 0.015, Applied: true}}}
	if err := WriteConfig(src, srcPath, out, sets); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(b, out)
	if err != nil {
		t.Fatalf("the copy does not load: %v\n%s", err, b)
	}
	if got := cfg.Domains[0].AppSets[1].ServiceTime; got != 15*time.Millisecond {
		t.Errorf("back's service_time %s, want 15ms", got)
	}
	if !strings.Contains(string(b), `"conf/models/s.ckpt"`) {
		t.Errorf("the checkpoint path is not rebased to the copy's directory:\n%s", b)
	}
	bad := filepath.Join(dir, "bad.hcl")
	sets[0].ServiceTime.New = -1
	if err := WriteConfig(src, srcPath, bad, sets); err == nil {
		t.Fatal("a copy with a negative service_time was accepted")
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a copy that does not load was written: %v", err)
	}
}
