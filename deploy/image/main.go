package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/regimentd/regiment/internal/cli"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var s Spec
	var layoutDir, tarPath, tag, epoch string
	fs.StringVar(&s.BinDir, "bin", "bin/image", "`dir` holding the static binaries "+fmt.Sprint(Binaries))
	fs.StringVar(&s.ModelsDir, "models", "models", "`dir` copied to /models; empty: none")
	fs.StringVar(&s.CAFile, "ca", CABundle, "PEM `file` copied to "+CABundle+"; empty or absent: none")
	fs.StringVar(&s.Arch, "arch", runtime.GOARCH, "GOARCH of the binaries")
	fs.StringVar(&s.Entry, "entrypoint", "regiment", "binary the image runs by default")
	fs.StringVar(&s.Labels.Source, "source", "https://github.com/regimentd/regiment", "org.opencontainers.image.source")
	fs.StringVar(&s.Labels.Revision, "revision", "", "org.opencontainers.image.revision (a commit)")
	fs.StringVar(&s.Labels.Version, "image-version", "dev", "org.opencontainers.image.version")
	fs.StringVar(&s.Labels.Licenses, "licenses", "NOASSERTION", "org.opencontainers.image.licenses (an SPDX expression; the repository has no LICENSE file yet)")
	fs.StringVar(&epoch, "epoch", os.Getenv("SOURCE_DATE_EPOCH"), "Unix `seconds` for every mtime and the created time; default $SOURCE_DATE_EPOCH, else 0")
	fs.StringVar(&layoutDir, "layout", "", "OCI image layout `dir` to write (replaced); empty: none")
	fs.StringVar(&tarPath, "tar", "", "image tarball `file` to write (docker load, crane push); empty: none")
	fs.StringVar(&tag, "tag", "ghcr.io/regimentd/regiment:dev", "image reference named in the tarball and the layout")
	version := fs.Bool("version", false, "print this program's version and the wire contract, and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return nil
		}
		return cli.FlagError(fs, err)
	}
	if *version {
		fmt.Fprint(stdout, cli.Version("image"))
		return nil
	}
	if s.CAFile == CABundle {
		if _, err := os.Stat(s.CAFile); errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(os.Stderr, "image: no %s on this machine: the image has no CA bundle\n", CABundle)
			s.CAFile = ""
		}
	}
	secs, err := parseEpoch(epoch)
	if err != nil {
		return err
	}
	s.Epoch = time.Unix(secs, 0).UTC()
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("tag: %w", err)
	}
	img, err := Build(s)
	if err != nil {
		return err
	}
	if err := write(img, ref, layoutDir, tarPath); err != nil {
		return err
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, d)
	return nil
}

func parseEpoch(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	secs, err := strconv.ParseInt(s, 10, 64)
	if err != nil || secs < 0 {
		return 0, fmt.Errorf("epoch %q is not Unix seconds (example: 1764720000)", s)
	}
	return secs, nil
}

// write saves img as an OCI layout at dir (its index names ref) and as a
// tarball at tarPath; an empty path skips that form.
func write(img v1.Image, ref name.Tag, dir, tarPath string) error {
	if dir != "" {
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		p, err := layout.Write(dir, empty.Index)
		if err != nil {
			return fmt.Errorf("write layout: %w", err)
		}
		ann := map[string]string{"org.opencontainers.image.ref.name": ref.TagStr(), "io.containerd.image.name": ref.Name()}
		if err := p.AppendImage(img, layout.WithAnnotations(ann)); err != nil {
			return fmt.Errorf("write layout: %w", err)
		}
	}
	if tarPath != "" {
		if err := tarball.WriteToFile(tarPath, ref, img); err != nil {
			return fmt.Errorf("write tarball: %w", err)
		}
	}
	return nil
}
