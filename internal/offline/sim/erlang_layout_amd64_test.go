//go:build amd64 && !amd64.v3

package sim

import (
	"testing"
	"unsafe"
)

// erlang_amd64.s reads erlangBatch at fixed offsets: lambda at 0, mu at 96,
// servers at 192, cs at 288, a at 384, scratch at 480, out at 576. A field
// moved or resized must move the assembly's offsets with it.
func TestErlangBatchLayoutMatchesTheAssembly(t *testing.T) {
	var b erlangBatch
	for _, f := range []struct {
		name      string
		got, want uintptr
	}{
		{"lambda", unsafe.Offsetof(b.lambda), 0},
		{"mu", unsafe.Offsetof(b.mu), 96},
		{"servers", unsafe.Offsetof(b.servers), 192},
		{"cs", unsafe.Offsetof(b.cs), 288},
		{"a", unsafe.Offsetof(b.a), 384},
		{"scratch", unsafe.Offsetof(b.scratch), 480},
		{"out", unsafe.Offsetof(b.out), 576},
	} {
		if f.got != f.want {
			t.Errorf("erlangBatch.%s at offset %d, the assembly reads it at %d", f.name, f.got, f.want)
		}
	}
}
