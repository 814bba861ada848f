package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/regimentd/regiment/wire"
)

// buildStatic compiles pkgs with CGO_ENABLED=0 for linux, stripped as
// `make image` does, into a new directory and returns it.
func buildStatic(t *testing.T, ldflags string, pkgs ...string) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", append([]string{"build", "-ldflags=-s -w " + ldflags, "-o", dir + "/"}, pkgs...)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	return dir
}

// smallBinaries is a directory holding one tiny static program under each
// name of Binaries: real ELF files, seconds to build.
func smallBinaries(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	files := map[string]string{"go.mod": "module hello\n\ngo 1.26\n", "main.go": "package main\n\nfunc main() { println(\"hello\") }\n"}
	for f, body := range files {
		if err := os.WriteFile(filepath.Join(src, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "hello"), ".")
	cmd.Dir, cmd.Env = src, append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build hello: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "hello"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range Binaries {
		if err := os.WriteFile(filepath.Join(dir, b), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func goarch(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOARCH").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// layerFiles reads the single layer of img: each entry's header and
// content by path (without a leading slash or a trailing one).
func layerFiles(t *testing.T, img v1.Image) ([]*tar.Header, map[string][]byte) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var hs []*tar.Header
	data := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
		data[strings.TrimSuffix(h.Name, "/")] = b
	}
	return hs, data
}

func digest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func sumFile(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestImageIsAFunctionOfItsInputs(t *testing.T) {
	models := t.TempDir()
	if err := os.WriteFile(filepath.Join(models, "soldier.ckpt"), []byte("weights"), 0o600); err != nil {
		t.Fatal(err)
	}
	epoch := time.Unix(1764720000, 0).UTC()
	spec := Spec{BinDir: smallBinaries(t), ModelsDir: models, Arch: goarch(t), Epoch: epoch, Entry: "regiment",
		Labels: Labels{Source: "https://example.com/regiment", Revision: "abc", Version: "v1"}}
	first, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Build(spec)
	if digest(t, first) != digest(t, again) {
		t.Fatalf("two builds of the same inputs: %s and %s", digest(t, first), digest(t, again))
	}

	t.Run("the files written are identical too", func(t *testing.T) {
		dir := t.TempDir()
		ref, _ := name.NewTag("example.com/regiment:v1")
		for _, n := range []string{"a", "b"} {
			if err := write(first, ref, filepath.Join(dir, n+"-oci"), filepath.Join(dir, n+".tar")); err != nil {
				t.Fatal(err)
			}
		}
		if sumFile(t, filepath.Join(dir, "a.tar")) != sumFile(t, filepath.Join(dir, "b.tar")) {
			t.Error("two tarballs of one image differ")
		}
		if sumFile(t, filepath.Join(dir, "a-oci", "index.json")) != sumFile(t, filepath.Join(dir, "b-oci", "index.json")) {
			t.Error("two layouts of one image differ")
		}
	})

	t.Run("entries are sorted with the epoch as mtime", func(t *testing.T) {
		hs, _ := layerFiles(t, first)
		for i, h := range hs {
			if !h.ModTime.Equal(epoch) {
				t.Errorf("%s: mtime %s, want %s", h.Name, h.ModTime, epoch)
			}
			if h.Uname != "" || h.Gname != "" {
				t.Errorf("%s: owner names %q:%q, want numeric ids only", h.Name, h.Uname, h.Gname)
			}
			if i > 0 && strings.TrimSuffix(hs[i-1].Name, "/") >= strings.TrimSuffix(h.Name, "/") {
				t.Errorf("%s after %s", h.Name, hs[i-1].Name)
			}
		}
		if hs[0].Name != "commander" || len(hs) < len(Binaries)+5 {
			t.Errorf("layer starts with %s and has %d entries", hs[0].Name, len(hs))
		}
	})

	changed := map[string]func(*Spec){
		"the epoch":  func(s *Spec) { s.Epoch = s.Epoch.Add(time.Second) },
		"a label":    func(s *Spec) { s.Labels.Revision = "abd" },
		"a model":    func(s *Spec) { s.ModelsDir = t.TempDir() },
		"entrypoint": func(s *Spec) { s.Entry = "commander" },
	}
	for what, change := range changed {
		t.Run("changing "+what+" changes the digest", func(t *testing.T) {
			s := spec
			change(&s)
			img, err := Build(s)
			if err != nil {
				t.Fatal(err)
			}
			if digest(t, img) == digest(t, first) {
				t.Errorf("same digest %s", digest(t, img))
			}
		})
	}
}

func TestBuildRefuses(t *testing.T) {
	bins := smallBinaries(t)
	spec := Spec{BinDir: bins, Arch: goarch(t), Entry: "regiment"}
	t.Run("an entrypoint that is not a shipped binary", func(t *testing.T) {
		s := spec
		s.Entry = "sh"
		if _, err := Build(s); err == nil || !strings.Contains(err.Error(), "entrypoint") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("binaries of another architecture", func(t *testing.T) {
		s := spec
		s.Arch = map[string]string{"arm64": "amd64"}[spec.Arch]
		if s.Arch == "" {
			s.Arch = "arm64"
		}
		if _, err := Build(s); err == nil || !strings.Contains(err.Error(), "not GOARCH") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("a dynamically linked binary", func(t *testing.T) {
		sh, err := exec.LookPath("sh")
		if err != nil {
			t.Skip("no sh on this machine to stand for a dynamic binary")
		}
		f, err := elf.Open(sh)
		if err != nil {
			t.Skipf("%s is not ELF: %v", sh, err)
		}
		dynamic := false
		for _, p := range f.Progs {
			dynamic = dynamic || p.Type == elf.PT_INTERP
		}
		f.Close()
		if !dynamic {
			t.Skipf("%s is static here", sh)
		}
		data, _ := os.ReadFile(sh)
		if err := os.WriteFile(filepath.Join(bins, "soldier"), data, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := Build(spec); err == nil || !strings.Contains(err.Error(), "PT_INTERP") {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestImageOfTheDaemons builds the real binaries and models/ into an image,
// writes it as `make image` does, opens both forms and checks what a
// cluster runs: entrypoint, user, static executables, models, labels.
func TestImageOfTheDaemons(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skips building the three binaries (CGO_ENABLED=0) and their image")
	}
	t0 := time.Now()
	// As the Makefile links them: --version says VERSION and REVISION.
	bins := buildStatic(t, "-X github.com/regimentd/regiment/internal/cli.release=v0.1.0 -X github.com/regimentd/regiment/internal/cli.revision=0123abcdef0123abcdef",
		"github.com/regimentd/regiment/cmd/...")
	t.Logf("binaries built in %s", time.Since(t0).Round(time.Millisecond))
	if runtime.GOOS == "linux" {
		for _, b := range Binaries {
			out, err := exec.Command(filepath.Join(bins, b), "--version").Output()
			if want := b + " v0.1.0 (revision 0123abcdef01)\nwire contract " + wire.ContractVersion() + "\n"; err != nil || !strings.HasPrefix(string(out), want) {
				t.Errorf("%s --version: %v\n%s\nwant it to start\n%s", b, err, out, want)
			}
		}
	}
	ca := CABundle
	if _, err := os.Stat(ca); err != nil {
		ca = ""
	}
	epoch := time.Unix(1764720000, 0).UTC()
	spec := Spec{BinDir: bins, ModelsDir: "../../models", CAFile: ca, Arch: goarch(t), Epoch: epoch, Entry: "regiment",
		Labels: Labels{Source: "https://github.com/regimentd/regiment", Revision: "0123abc", Version: "v0.1.0", Licenses: "NOASSERTION"}}
	img, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ref, _ := name.NewTag("ghcr.io/regimentd/regiment:v0.1.0")
	if err := write(img, ref, filepath.Join(dir, "oci"), filepath.Join(dir, "image.tar")); err != nil {
		t.Fatal(err)
	}
	fromTar, err := tarball.ImageFromPath(filepath.Join(dir, "image.tar"), &ref)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := layout.ImageIndexFromPath(filepath.Join(dir, "oci"))
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil || len(im.Manifests) != 1 {
		t.Fatalf("layout index: %v, %v", im, err)
	}
	if got := im.Manifests[0].Annotations["org.opencontainers.image.ref.name"]; got != "v0.1.0" {
		t.Errorf("layout ref.name %q, want v0.1.0", got)
	}
	fromLayout, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	if digest(t, fromLayout) != digest(t, img) {
		t.Errorf("layout holds %s, built %s", digest(t, fromLayout), digest(t, img))
	}
	// The tarball keeps the config and layers but is a Docker manifest:
	// compare what runs, not the manifest digest.
	for form, got := range map[string]v1.Image{"layout": fromLayout, "tarball": fromTar} {
		t.Run(form, func(t *testing.T) { checkDaemonImage(t, got, spec) })
	}
	size, _ := os.Stat(filepath.Join(dir, "image.tar"))
	t.Logf("image %s: tarball %.1f MB", digest(t, img), float64(size.Size())/1e6)
}

func checkDaemonImage(t *testing.T, img v1.Image, spec Spec) {
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532", cf.Config.User)
	}
	if strings.Join(cf.Config.Entrypoint, " ") != "/regiment" {
		t.Errorf("entrypoint %q", cf.Config.Entrypoint)
	}
	if cf.OS != "linux" || cf.Architecture != spec.Arch || !cf.Created.Time.Equal(spec.Epoch) {
		t.Errorf("platform %s/%s created %s", cf.OS, cf.Architecture, cf.Created.Time)
	}
	wantLabels := map[string]string{
		"org.opencontainers.image.source":   spec.Labels.Source,
		"org.opencontainers.image.revision": spec.Labels.Revision,
		"org.opencontainers.image.version":  spec.Labels.Version,
		"org.opencontainers.image.licenses": spec.Labels.Licenses,
		"org.opencontainers.image.created":  "2025-12-03T00:00:00Z",
	}
	for k, v := range wantLabels {
		if cf.Config.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, cf.Config.Labels[k], v)
		}
	}
	hs, files := layerFiles(t, img)
	modes := map[string]*tar.Header{}
	for _, h := range hs {
		modes[strings.TrimSuffix(h.Name, "/")] = h
	}
	for _, b := range Binaries {
		h := modes[b]
		if h == nil || h.Mode&0o111 != 0o111 || h.Typeflag != tar.TypeReg {
			t.Errorf("/%s: %+v, want a regular file executable by all", b, h)
			continue
		}
		if err := checkStatic(b, files[b], spec.Arch); err != nil {
			t.Error(err)
		}
	}
	models, _ := filepath.Glob(filepath.Join(spec.ModelsDir, "*"))
	if len(models) == 0 {
		t.Fatal("no models in the repository")
	}
	for _, m := range models {
		want, _ := os.ReadFile(m)
		if got, ok := files["models/"+filepath.Base(m)]; !ok || !bytes.Equal(got, want) {
			t.Errorf("/models/%s missing or different", filepath.Base(m))
		}
	}
	if !strings.Contains(string(files["etc/passwd"]), "nonroot:x:65532:65532:") || !strings.Contains(string(files["etc/group"]), "nonroot:x:65532:") {
		t.Errorf("passwd %q group %q do not name nonroot 65532", files["etc/passwd"], files["etc/group"])
	}
	if h := modes["data"]; h == nil || h.Uid != Nonroot {
		t.Errorf("/data %+v, want a directory of 65532", h)
	}
	if spec.CAFile != "" && !bytes.Contains(files["etc/ssl/certs/ca-certificates.crt"], []byte("BEGIN CERTIFICATE")) {
		t.Error("no CA bundle at /etc/ssl/certs/ca-certificates.crt")
	}
}
