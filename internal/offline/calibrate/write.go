package calibrate

import (
	"os"

	"github.com/regimentd/regiment/internal/config"
)

// WriteConfig writes to path a copy of src, the cluster config read from
// srcPath, with the applied estimates of sets edited in (PatchHCL) and its
// relative checkpoint paths rebased to path's directory (config.Relocate).
// The copy is checked to load before anything is written.
func WriteConfig(src []byte, srcPath, path string, sets []SetFit) error {
	patched, err := PatchHCL(src, srcPath, sets)
	if err == nil {
		patched, err = config.Relocate(patched, srcPath, path)
	}
	if err == nil {
		_, err = config.Parse(patched, path)
	}
	if err == nil {
		err = os.WriteFile(path, patched, 0o644)
	}
	return err
}
