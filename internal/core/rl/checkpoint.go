package rl

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// FormatVersion is the checkpoint format this code writes and reads.
const FormatVersion = 1

// Checkpoint framing: a magic line, the JSON header (indented, one field,
// feature, segment or tensor a line, so that two checkpoints diff well), a weights line giving the
// number of float64 values and their CRC-32 (IEEE), then the values,
// little-endian, in the header's tensor order.
const (
	magicLine   = "regiment-policy-checkpoint"
	weightsWord = "weights"
	maxHeader   = 1 << 20 // bytes
	maxValues   = 1 << 26 // float64 weights (512 MiB); far above any policy here
)

// Provenance records how a policy was trained. The caller fills it (the
// clock and the commit are the caller's); Save writes it into the header.
type Provenance struct {
	Stage     string             `json:"stage,omitempty"`     // "soldier", "commander" or "joint"
	Steps     int64              `json:"steps"`               // environment steps trained on
	Updates   int64              `json:"updates"`             // PPO updates
	Seed      uint64             `json:"seed"`                // training seed
	Date      time.Time          `json:"date,omitzero"`       // when training ended
	Commit    string             `json:"commit,omitempty"`    // git commit of the trainer, if known
	Scenarios []string           `json:"scenarios,omitempty"` // scenario names trained on
	Metrics   map[string]float64 `json:"metrics,omitempty"`   // final metrics by name; must be finite
}

func (p Provenance) clone() Provenance {
	p.Scenarios = slices.Clone(p.Scenarios)
	p.Metrics = maps.Clone(p.Metrics)
	return p
}

// header is the checkpoint's JSON header.
type header struct {
	Format      int          `json:"format"`
	Observation Layout       `json:"observation"`
	Action      ActionLayout `json:"action"`
	Actor       Arch         `json:"actor"`
	Critic      *Arch        `json:"critic"` // null: the value is an actor output (shared trunk)
	InitLogStd  float64      `json:"init_log_std"`
	Normalizer  normHeader   `json:"normalizer"`
	Provenance  Provenance   `json:"provenance"`
	Tensors     []tensor     `json:"tensors"`
}

type normHeader struct {
	Count float64 `json:"count"` // observations behind the running statistics
	Clip  float64 `json:"clip"`
}

// tensor names a block of the weights and its shape.
type tensor struct {
	Name  string `json:"name"`
	Shape []int  `json:"shape"`
}

func (t tensor) size() int {
	n := 1
	for _, s := range t.Shape {
		n *= s
	}
	return n
}

func (t tensor) String() string { return fmt.Sprintf("%s %v", t.Name, t.Shape) }

// blocks returns the tensors of p in checkpoint order and, in the same
// order, the slices holding them.
func (p *Policy) blocks() ([]tensor, [][]float64) {
	var ts []tensor
	var vs [][]float64
	net := func(name string, n *Network) {
		for l := range n.acts {
			w, b := n.Layer(n.params, l)
			ts = append(ts,
				tensor{fmt.Sprintf("%s/layer%d/weight", name, l), []int{n.sizes[l+1], n.sizes[l]}},
				tensor{fmt.Sprintf("%s/layer%d/bias", name, l), []int{n.sizes[l+1]}})
			vs = append(vs, w, b)
		}
	}
	net("actor", p.Actor)
	if p.Critic != nil {
		net("critic", p.Critic)
	}
	ts = append(ts,
		tensor{"log_std", []int{len(p.LogStd)}},
		tensor{"normalizer/mean", []int{len(p.Norm.Mean)}},
		tensor{"normalizer/m2", []int{len(p.Norm.M2)}})
	vs = append(vs, p.LogStd, p.Norm.Mean, p.Norm.M2)
	return ts, vs
}

// Save writes p as a checkpoint: header (spec, normaliser, provenance,
// tensor list) and weights (parameters, normaliser statistics).
func (p *Policy) Save(w io.Writer) error {
	for name, v := range p.Provenance.Metrics {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("save checkpoint: metric %q is %v; JSON holds only finite numbers", name, v)
		}
	}
	ts, vs := p.blocks()
	h := header{
		Format:      FormatVersion,
		Observation: p.Spec.Obs,
		Action:      p.Spec.Action,
		Actor:       p.Spec.Actor,
		InitLogStd:  p.Spec.InitLogStd,
		Normalizer:  normHeader{Count: p.Norm.Count, Clip: p.Norm.Clip},
		Provenance:  p.Provenance,
		Tensors:     ts,
	}
	if !p.Spec.SharedTrunk {
		c := p.Spec.Critic
		h.Critic = &c
	}
	js, err := json.Marshal(h)
	if err == nil {
		js, err = formatHeader(js)
	}
	if err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	var n int
	for _, v := range vs {
		n += len(v)
	}
	data := make([]byte, 0, 8*n)
	for _, v := range vs {
		for _, x := range v {
			data = binary.LittleEndian.AppendUint64(data, math.Float64bits(x))
		}
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s\n%s\n%s %d float64le crc32 %08x\n", magicLine, js, weightsWord, n, crc32.ChecksumIEEE(data))
	bw.Write(data)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	return nil
}

// Load reads a checkpoint written by Save. It fails with an error wrapping
// ErrLayoutMismatch when the checkpoint's observation layout differs from
// expect (the running code's), naming both versions and the first
// differing feature; and with a plain error on a format it does not read,
// an inconsistent header, a short, corrupt (CRC) or overlong weights
// section. The returned policy's normaliser is frozen.
func Load(r io.Reader, expect Layout) (*Policy, error) {
	p, err := load(r, expect)
	if err != nil {
		return nil, fmt.Errorf("load checkpoint: %w", err)
	}
	return p, nil
}

// errLongLine is readLine's error for a line past its bound.
var errLongLine = errors.New("line too long")

// readLine reads a line of at most n bytes, its '\n' included, so that a
// file of one endless line (a sparse file, a corrupt copy) costs n bytes
// and not its size. A longer line is errLongLine; the line's end without a
// '\n' is io.EOF with the line read.
func readLine(br *bufio.Reader, n int) (string, error) {
	var b []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(b)+len(chunk) > n {
			return "", errLongLine
		}
		b = append(b, chunk...)
		if err != bufio.ErrBufferFull {
			return string(b), err
		}
	}
}

func load(r io.Reader, expect Layout) (*Policy, error) {
	br := bufio.NewReader(r)
	line, err := readLine(br, len(magicLine)+1)
	if err != nil || strings.TrimSuffix(line, "\n") != magicLine {
		return nil, fmt.Errorf("not a policy checkpoint (first line %q, want %q)", strings.TrimSpace(line), magicLine)
	}
	var js bytes.Buffer
	for {
		line, err = readLine(br, maxHeader+1)
		if errors.Is(err, errLongLine) {
			return nil, fmt.Errorf("header longer than %d bytes", maxHeader)
		}
		if err != nil {
			return nil, fmt.Errorf("header without a %q line: %w", weightsWord, errOrEOF(err))
		}
		if strings.HasPrefix(line, weightsWord+" ") {
			break
		}
		if js.Len()+len(line) > maxHeader {
			return nil, fmt.Errorf("header longer than %d bytes", maxHeader)
		}
		js.WriteString(line)
	}
	var h header
	if err := json.Unmarshal(js.Bytes(), &h); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if h.Format != FormatVersion {
		return nil, fmt.Errorf("checkpoint format %d, this code reads format %d", h.Format, FormatVersion)
	}
	if err := CheckLayout(h.Observation, expect); err != nil {
		return nil, err
	}
	count, crc, err := parseWeightsLine(line)
	if err != nil {
		return nil, err
	}

	spec := Spec{
		Obs: h.Observation, Action: h.Action, Actor: h.Actor,
		SharedTrunk: h.Critic == nil, InitLogStd: h.InitLogStd, NormClip: h.Normalizer.Clip,
	}
	if h.Critic != nil {
		spec.Critic = *h.Critic
	}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if h.Normalizer.Count < 0 {
		return nil, fmt.Errorf("header: normaliser count %v < 0", h.Normalizer.Count)
	}
	// Check the size before allocating: the header may be damaged.
	if count > maxValues {
		return nil, fmt.Errorf("weights line says %d values, more than the %d this code reads", count, maxValues)
	}
	if want := spec.numValues(); count != want {
		return nil, fmt.Errorf("weights line says %d values, the header's architecture holds %d", count, want)
	}
	p := newPolicy(spec)
	ts, vs := p.blocks()
	for i := 0; i < max(len(ts), len(h.Tensors)); i++ {
		var want, have string
		if i < len(ts) {
			want = ts[i].String()
		}
		if i < len(h.Tensors) {
			have = h.Tensors[i].String()
		}
		if want != have {
			return nil, fmt.Errorf("header: tensor #%d is %q, the spec implies %q", i, have, want)
		}
	}
	data := make([]byte, 8*count)
	if _, err := io.ReadFull(br, data); err != nil {
		return nil, fmt.Errorf("weights: %w", errOrEOF(err))
	}
	if got := crc32.ChecksumIEEE(data); got != crc {
		return nil, fmt.Errorf("weights: CRC-32 %08x, header says %08x", got, crc)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, errors.New("weights: trailing data after the last value")
	}
	off := 0
	for _, v := range vs {
		for j := range v {
			v[j] = math.Float64frombits(binary.LittleEndian.Uint64(data[off:]))
			off += 8
		}
	}
	p.Norm.Count = h.Normalizer.Count
	p.Norm.Frozen = true
	p.Provenance = h.Provenance
	return p, nil
}

// numValues returns the number of float64 values in a checkpoint of a
// valid spec: parameters and normaliser statistics.
func (s Spec) numValues() int {
	in, lat := s.Obs.Dim(), s.Action.LatentDim()
	aout := lat
	if s.SharedTrunk {
		aout++
	}
	sz, _ := s.Actor.sizes(in, aout)
	n := NumParams(sz) + lat + 2*in
	if !s.SharedTrunk {
		sz, _ = s.Critic.sizes(in, 1)
		n += NumParams(sz)
	}
	return n
}

// parseWeightsLine parses "weights <n> float64le crc32 <hex>".
func parseWeightsLine(line string) (count int, crc uint32, err error) {
	f := strings.Fields(line)
	if len(f) != 5 || f[0] != weightsWord || f[2] != "float64le" || f[3] != "crc32" {
		return 0, 0, fmt.Errorf("malformed weights line %q (want \"weights <n> float64le crc32 <hex>\")", strings.TrimSpace(line))
	}
	count, err = strconv.Atoi(f[1])
	if err != nil || count < 0 {
		return 0, 0, fmt.Errorf("malformed weights line %q: bad count", strings.TrimSpace(line))
	}
	c, err := strconv.ParseUint(f[4], 16, 32)
	if err != nil {
		return 0, 0, fmt.Errorf("malformed weights line %q: bad CRC", strings.TrimSpace(line))
	}
	return count, uint32(c), nil
}

// errOrEOF turns a bare io.EOF into io.ErrUnexpectedEOF: inside a
// checkpoint, an end of input is always premature.
func errOrEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
