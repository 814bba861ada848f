package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Nonroot is the uid and gid the image runs as (distroless's "nonroot").
const Nonroot = 65532

// Binaries are the programs the image holds at its root, one per daemon
// plus the operator's CLI; a manifest's command picks one.
var Binaries = []string{"commander", "soldier", "regiment"}

// CABundle is where the image holds the CA certificates, and where the build
// machine's are read from by default.
const CABundle = "/etc/ssl/certs/ca-certificates.crt"

// Spec is what an image is built from.
type Spec struct {
	BinDir    string    // holds Binaries, each a static linux ELF of Arch
	ModelsDir string    // its regular files go to /models; "": none
	CAFile    string    // PEM bundle copied to CABundle; "": none
	Arch      string    // GOARCH of the binaries, e.g. "amd64"
	Epoch     time.Time // every mtime and the config's created time
	Entry     string    // entrypoint binary, one of Binaries
	Labels    Labels
}

// Labels are the OCI annotations the config carries
// (github.com/opencontainers/image-spec/blob/main/annotations.md).
type Labels struct {
	Source, Revision, Version, Licenses string
}

// entry is one file or directory of the layer.
type entry struct {
	name     string // without a leading slash; directories without a trailing one
	mode     int64  // permission bits
	uid, gid int
	dir      bool
	data     []byte
}

// Build makes the image of s: one gzip layer on an empty base, an OCI
// manifest and config.
func Build(s Spec) (v1.Image, error) {
	entries, err := s.entries()
	if err != nil {
		return nil, err
	}
	layerTar, err := writeTar(entries, s.Epoch)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("make layer: %w", err)
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: s.Epoch}, CreatedBy: "deploy/image", Comment: "regiment binaries and models"}})
	if err != nil {
		return nil, fmt.Errorf("append layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = s.Arch, "linux"
	cf.Created = v1.Time{Time: s.Epoch}
	cf.Config = s.config()
	return mutate.ConfigFile(img, cf)
}

// config is the runtime config: the entrypoint, the nonroot user, and the
// labels.
func (s Spec) config() v1.Config {
	env := []string{"PATH=/"}
	if s.CAFile != "" {
		env = append(env, "SSL_CERT_FILE="+CABundle)
	}
	labels := map[string]string{
		"org.opencontainers.image.title":    "regiment",
		"org.opencontainers.image.created":  s.Epoch.UTC().Format(time.RFC3339),
		"org.opencontainers.image.source":   s.Labels.Source,
		"org.opencontainers.image.revision": s.Labels.Revision,
		"org.opencontainers.image.version":  s.Labels.Version,
		"org.opencontainers.image.licenses": s.Labels.Licenses,
	}
	for k, v := range labels {
		if v == "" {
			delete(labels, k)
		}
	}
	return v1.Config{
		Entrypoint: []string{"/" + s.Entry},
		User:       fmt.Sprintf("%d:%d", Nonroot, Nonroot),
		WorkingDir: "/",
		Env:        env,
		Labels:     labels,
	}
}

// entries lists the layer: the binaries, the models, the user database,
// the CA bundle and the directories that hold them.
func (s Spec) entries() ([]entry, error) {
	if !slices.Contains(Binaries, s.Entry) {
		return nil, fmt.Errorf("entrypoint %q is not one of %s", s.Entry, strings.Join(Binaries, ", "))
	}
	es := []entry{
		{name: "etc", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, data: []byte(fmt.Sprintf(
			"root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", Nonroot, Nonroot))},
		{name: "etc/group", mode: 0o644, data: []byte(fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", Nonroot))},
		{name: "home", mode: 0o755, dir: true},
		{name: "home/nonroot", mode: 0o700, uid: Nonroot, gid: Nonroot, dir: true},
		{name: "data", mode: 0o750, uid: Nonroot, gid: Nonroot, dir: true},
		{name: "tmp", mode: 0o1777, dir: true},
	}
	for _, b := range Binaries {
		p := filepath.Join(s.BinDir, b)
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read binary: %w", err)
		}
		if err := checkStatic(p, data, s.Arch); err != nil {
			return nil, err
		}
		es = append(es, entry{name: b, mode: 0o755, data: data})
	}
	if s.ModelsDir != "" {
		models, err := readTree(s.ModelsDir, "models")
		if err != nil {
			return nil, err
		}
		es = append(es, entry{name: "models", mode: 0o755, dir: true})
		es = append(es, models...)
	}
	if s.CAFile != "" {
		data, err := os.ReadFile(s.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read CA bundle: %w", err)
		}
		es = append(es, entry{name: "etc/ssl", mode: 0o755, dir: true}, entry{name: "etc/ssl/certs", mode: 0o755, dir: true},
			entry{name: strings.TrimPrefix(CABundle, "/"), mode: 0o644, data: data})
	}
	return es, nil
}

// readTree lists the regular files and directories under dir as entries
// under prefix: files 0644, directories 0755, whatever their modes on disk
// (so a checkout's umask does not change the digest).
func readTree(dir, prefix string) ([]entry, error) {
	var es []entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := path.Join(prefix, filepath.ToSlash(rel))
		switch {
		case d.IsDir():
			es = append(es, entry{name: name, mode: 0o755, dir: true})
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			es = append(es, entry{name: name, mode: 0o644, data: data})
		default:
			return fmt.Errorf("%s is neither a file nor a directory", p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	return es, nil
}

// writeTar is the layer's uncompressed tar: entries in lexical order, each
// with mtime epoch (whole seconds) and numeric owners only, in USTAR
// headers where they fit.
func writeTar(es []entry, epoch time.Time) ([]byte, error) {
	sorted := append([]entry(nil), es...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for i, e := range sorted {
		if i > 0 && sorted[i-1].name == e.name {
			return nil, fmt.Errorf("layer: %s twice", e.name)
		}
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: epoch.UTC()}
		if e.dir {
			h.Typeflag, h.Name = tar.TypeDir, e.name+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer: %s: %w", e.name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("layer: %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// checkStatic refuses what would not run on an empty base: anything but a
// linux ELF executable of arch, or one that asks for a dynamic loader
// (PT_INTERP: built with cgo).
func checkStatic(name string, data []byte, arch string) error {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%s: not an ELF binary: %w", name, err)
	}
	defer f.Close()
	if want, ok := elfMachines[arch]; !ok || f.Machine != want {
		return fmt.Errorf("%s: machine %s, not GOARCH %q", name, f.Machine, arch)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked (PT_INTERP); build it with CGO_ENABLED=0", name)
		}
	}
	return nil
}

var elfMachines = map[string]elf.Machine{
	"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64, "arm": elf.EM_ARM,
	"386": elf.EM_386, "ppc64le": elf.EM_PPC64, "s390x": elf.EM_S390, "riscv64": elf.EM_RISCV,
}
