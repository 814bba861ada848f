package rl

import (
	"errors"
	"fmt"
	"strings"
)

// ErrLayoutMismatch is returned (wrapped) by Load when a checkpoint's
// observation layout differs from the running code's.
var ErrLayoutMismatch = errors.New("observation layout mismatch")

// Feature is a named block of an observation vector.
type Feature struct {
	Name string `json:"name"`
	Size int    `json:"size"` // number of float64 values, >= 1
}

// Layout describes an observation vector: its features in order. Name says
// whose layout it is ("commander", "soldier"); Version changes whenever the
// meaning of any feature changes, even if names and sizes stay the same.
type Layout struct {
	Name     string    `json:"name"`
	Version  int       `json:"version"`
	Features []Feature `json:"features"`
}

// ScalarLayout returns a layout of one value per name.
func ScalarLayout(name string, version int, names []string) Layout {
	l := Layout{Name: name, Version: version, Features: make([]Feature, len(names))}
	for i, n := range names {
		l.Features[i] = Feature{Name: n, Size: 1}
	}
	return l
}

// Dim returns the number of values in an observation.
func (l Layout) Dim() int {
	n := 0
	for _, f := range l.Features {
		n += f.Size
	}
	return n
}

// Validate reports a layout without features, an empty or repeated name or
// a size below 1.
func (l Layout) Validate() error {
	if len(l.Features) == 0 {
		return fmt.Errorf("observation layout %q v%d has no features", l.Name, l.Version)
	}
	seen := make(map[string]bool, len(l.Features))
	for i, f := range l.Features {
		switch {
		case f.Name == "":
			return fmt.Errorf("observation layout %q v%d: feature #%d has no name", l.Name, l.Version, i)
		case seen[f.Name]:
			return fmt.Errorf("observation layout %q v%d: feature %q appears twice", l.Name, l.Version, f.Name)
		case f.Size < 1 || f.Size > MaxWidth:
			return fmt.Errorf("observation layout %q v%d: feature %q has size %d, want 1 to %d", l.Name, l.Version, f.Name, f.Size, MaxWidth)
		}
		seen[f.Name] = true
	}
	return nil
}

// String returns "name v<version>".
func (l Layout) String() string { return fmt.Sprintf("%q v%d", l.Name, l.Version) }

// CheckLayout returns nil if the checkpoint's layout ckpt equals the
// running code's layout code (name, version, and every feature's name and
// size in order), and otherwise an error wrapping ErrLayoutMismatch that
// names both versions and the first differing feature.
func CheckLayout(ckpt, code Layout) error {
	i := 0
	for ; i < len(ckpt.Features) && i < len(code.Features); i++ {
		if ckpt.Features[i] != code.Features[i] {
			break
		}
	}
	sameFeatures := i == len(ckpt.Features) && i == len(code.Features)
	if sameFeatures && ckpt.Name == code.Name && ckpt.Version == code.Version {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "checkpoint has %s, running code has %s", ckpt, code)
	if sameFeatures {
		fmt.Fprintf(&b, "; all %d features have the same names and sizes", len(code.Features))
	} else {
		fmt.Fprintf(&b, "; first differing feature is #%d: checkpoint %s, code %s", i, featureAt(ckpt, i), featureAt(code, i))
	}
	return fmt.Errorf("%w: %s", ErrLayoutMismatch, b.String())
}

func featureAt(l Layout, i int) string {
	if i >= len(l.Features) {
		return fmt.Sprintf("(none: %d features)", len(l.Features))
	}
	return fmt.Sprintf("%q (size %d)", l.Features[i].Name, l.Features[i].Size)
}

// SegmentKind is the distribution of an action segment.
type SegmentKind uint8

// Segment kinds.
const (
	// Gaussian: Size independent normal dimensions.
	Gaussian SegmentKind = iota
	// Simplex: Size shares on the open simplex, logistic normal over
	// Size-1 logits (see the package doc).
	Simplex
)

// String returns the kind's name as it appears in checkpoints.
func (k SegmentKind) String() string {
	switch k {
	case Gaussian:
		return "gaussian"
	case Simplex:
		return "simplex"
	}
	return fmt.Sprintf("segmentkind(%d)", uint8(k))
}

// MarshalText implements encoding.TextMarshaler.
func (k SegmentKind) MarshalText() ([]byte, error) {
	if k > Simplex {
		return nil, fmt.Errorf("unknown segment kind %d", uint8(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (k *SegmentKind) UnmarshalText(b []byte) error {
	switch string(b) {
	case "gaussian":
		*k = Gaussian
	case "simplex":
		*k = Simplex
	default:
		return fmt.Errorf("unknown segment kind %q (want gaussian or simplex)", b)
	}
	return nil
}

// Segment is a named block of an action vector.
type Segment struct {
	Name string      `json:"name"`
	Kind SegmentKind `json:"kind"`
	Size int         `json:"size"` // values in Action.Env: >= 1, >= 2 for Simplex
}

// latent returns the number of Gaussian dimensions behind the segment.
func (s Segment) latent() int {
	if s.Kind == Simplex {
		return s.Size - 1
	}
	return s.Size
}

// ActionLayout describes an action vector: its segments in order.
type ActionLayout struct {
	Segments []Segment `json:"segments"`
}

// Dim returns the number of values in Action.Env.
func (a ActionLayout) Dim() int {
	n := 0
	for _, s := range a.Segments {
		n += s.Size
	}
	return n
}

// LatentDim returns the number of Gaussian dimensions (Action.Latent, the
// actor's mean outputs, LogStd): a Simplex segment of K shares has K-1.
func (a ActionLayout) LatentDim() int {
	n := 0
	for _, s := range a.Segments {
		n += s.latent()
	}
	return n
}

// Validate reports an empty layout, an empty or repeated name, or a size
// too small for its kind.
func (a ActionLayout) Validate() error {
	if len(a.Segments) == 0 {
		return errors.New("action layout has no segments")
	}
	seen := make(map[string]bool, len(a.Segments))
	for i, s := range a.Segments {
		switch {
		case s.Name == "":
			return fmt.Errorf("action layout: segment #%d has no name", i)
		case seen[s.Name]:
			return fmt.Errorf("action layout: segment %q appears twice", s.Name)
		case s.Kind > Simplex:
			return fmt.Errorf("action layout: segment %q has unknown kind %d", s.Name, uint8(s.Kind))
		case s.Kind == Simplex && s.Size < 2:
			return fmt.Errorf("action layout: simplex segment %q has size %d, want >= 2", s.Name, s.Size)
		case s.Size < 1 || s.Size > MaxWidth:
			return fmt.Errorf("action layout: segment %q has size %d, want 1 to %d", s.Name, s.Size, MaxWidth)
		}
		seen[s.Name] = true
	}
	return nil
}

// Equal reports whether a and b have the same segments in the same order.
func (a ActionLayout) Equal(b ActionLayout) bool {
	if len(a.Segments) != len(b.Segments) {
		return false
	}
	for i := range a.Segments {
		if a.Segments[i] != b.Segments[i] {
			return false
		}
	}
	return true
}
