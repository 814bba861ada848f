package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var t0 = time.Date(2026, 3, 14, 15, 9, 26, 535000000, time.UTC)

func exampleDirective() Directive {
	return Directive{
		Version:  Version,
		Cluster:  "prod",
		Domain:   "payment",
		Term:     3,
		Seq:      1042,
		IssuedAt: t0,
		TTL:      Duration(3 * time.Minute),
		Share:    0.3125,
		Cores:    3750,
		Urgency:  0.8,
		Headroom: 0.15,
		Policy:   "commander-v7",
		Reason:   "forecast p80 +15m rises 22%; fraud at floor",
	}
}

func exampleAllocation() Allocation {
	return Allocation{
		Version:  Version,
		Cluster:  "prod",
		Term:     3,
		Seq:      1042,
		IssuedAt: t0,
		Shares:   map[string]float64{"payment": 0.3125, "fraud": 0.25, "merchant": 0.2, "pipelines": 0.15},
		Reserve:  0.0875,
	}
}

func exampleReport() DomainReport {
	return DomainReport{
		Version:           Version,
		Cluster:           "prod",
		Domain:            "payment",
		Seq:               88211,
		SentAt:            t0,
		RPS:               18250.5,
		RPSP95:            19900,
		P99Seconds:        0.132,
		ErrorRate:         0.0004,
		CPUUtilP75:        0.71,
		MemUtilP75:        0.55,
		RestartRate:       0.5,
		LivePods:          742,
		PendingPods:       12,
		StartingPods:      30,
		CoresUsed:         3601.5,
		BudgetCores:       3750,
		DemandCores:       3980.25,
		BudgetUtilisation: 0.9604,
		DirectiveTerm:     3,
		DirectiveSeq:      1041,
		Mode:              ModeActive,
		Fallback:          false,
	}
}

func exampleShareOverride() Override {
	s := 0.4
	return Override{
		Version:  Version,
		Cluster:  "prod",
		Domain:   "payment",
		Share:    &s,
		IssuedAt: t0,
		Until:    t0.Add(2 * time.Hour),
		By:       "alice",
		Reason:   "black friday: pin payment at 40%",
	}
}

func exampleReplicasOverride() Override {
	n := 40
	return Override{
		Version:  Version,
		Cluster:  "prod",
		Domain:   "fraud",
		App:      "fraud/scoring-3",
		Replicas: &n,
		IssuedAt: t0,
		Until:    t0.Add(30 * time.Minute),
		By:       "oncall-bob",
		Reason:   "INC-4411: hold scoring-3 while the model reloads",
	}
}

func exampleCancelOverride() Override {
	return Override{
		Version:  Version,
		Cluster:  "prod",
		Domain:   "fraud",
		App:      "fraud/scoring-3",
		Cancel:   true,
		IssuedAt: t0.Add(10 * time.Minute),
		By:       "oncall-bob",
		Reason:   "INC-4411 resolved",
	}
}

func exampleOverrideAck() OverrideAck {
	return OverrideAck{
		Version:  Version,
		Cluster:  "prod",
		Domain:   "fraud",
		App:      "fraud/scoring-3",
		From:     "soldier",
		Accepted: true,
		At:       t0.Add(50 * time.Millisecond),
		Reason:   "pinned fraud/scoring-3 at 40 replicas until 2026-03-14T15:39:26Z",
	}
}

type message interface{ Encode() ([]byte, error) }

// goldens lists each golden file with its value and decoder.
var goldens = []struct {
	file   string
	value  func() message
	decode func([]byte) (any, error)
}{
	{"directive.json", func() message { return exampleDirective() }, func(b []byte) (any, error) { return DecodeDirective(b) }},
	{"allocation.json", func() message { return exampleAllocation() }, func(b []byte) (any, error) { return DecodeAllocation(b) }},
	{"report.json", func() message { return exampleReport() }, func(b []byte) (any, error) { return DecodeDomainReport(b) }},
	{"override_share.json", func() message { return exampleShareOverride() }, func(b []byte) (any, error) { return DecodeOverride(b) }},
	{"override_replicas.json", func() message { return exampleReplicasOverride() }, func(b []byte) (any, error) { return DecodeOverride(b) }},
	{"override_cancel.json", func() message { return exampleCancelOverride() }, func(b []byte) (any, error) { return DecodeOverride(b) }},
	{"override_ack.json", func() message { return exampleOverrideAck() }, func(b []byte) (any, error) { return DecodeOverrideAck(b) }},
}

// TestGolden pins the encoding: field names, order, and formats of times and
// durations. Golden files hold the wire bytes indented; run with -update to
// rewrite them after an intended change (which bumps Version, see doc.go).
func TestGolden(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.file, func(t *testing.T) {
			v := g.value()
			b, err := v.Encode()
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			var ind bytes.Buffer
			if err := json.Indent(&ind, b, "", "  "); err != nil {
				t.Fatal(err)
			}
			ind.WriteByte('\n')
			path := filepath.Join("testdata", g.file)
			if *update {
				if err := os.WriteFile(path, ind.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if !bytes.Equal(ind.Bytes(), want) {
				t.Errorf("encoding differs from %s (run with -update if intended)\ngot:\n%s\nwant:\n%s", path, ind.Bytes(), want)
			}
			got, err := g.decode(want)
			if err != nil {
				t.Fatalf("decode golden: %v", err)
			}
			if !reflect.DeepEqual(got, any(v)) {
				t.Errorf("decode golden:\ngot  %+v\nwant %+v", got, v)
			}
		})
	}
}

func TestDurationJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Duration
		err  bool
	}{
		{"go duration string", `"3m0s"`, Duration(3 * time.Minute), false},
		{"fractional seconds", `"1.5s"`, Duration(1500 * time.Millisecond), false},
		{"null leaves zero", `null`, 0, false},
		{"number is rejected", `180`, 0, true},
		{"unit-less string is rejected", `"180"`, 0, true},
		{"empty string is rejected", `""`, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d Duration
			err := json.Unmarshal([]byte(tt.in), &d)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if d != tt.want {
				t.Errorf("got %s, want %s", d, tt.want)
			}
		})
	}
	b, err := json.Marshal(Duration(90 * time.Second))
	if err != nil || string(b) != `"1m30s"` {
		t.Errorf("marshal 90s = %s, %v; want \"1m30s\"", b, err)
	}
}

func TestDecodeRejects(t *testing.T) {
	good, err := exampleDirective().Encode()
	if err != nil {
		t.Fatal(err)
	}
	withField := func(kv string) []byte {
		return append(append(bytes.Clone(good[:len(good)-1]), ","+kv...), '}')
	}
	tests := []struct {
		name    string
		in      []byte
		want    error
		wantMsg string
	}{
		{"payload over MaxPayload is rejected before parsing", bytes.Repeat([]byte{'x'}, MaxPayload+1), ErrTooLarge, "directive: payload too large: 65537 bytes, limit 65536"},
		{"unknown field", withField(`"priority":1`), ErrMalformed, `unknown field "priority"`},
		{"trailing object", append(bytes.Clone(good), `{}`...), ErrMalformed, "after top-level value"},
		{"trailing garbage", append(bytes.Clone(good), `x`...), ErrMalformed, ""},
		{"not an object", []byte(`[1,2]`), ErrMalformed, "not a JSON object"},
		{"empty payload", nil, ErrMalformed, ""},
		{"wrong type", bytes.Replace(good, []byte(`"seq":1042`), []byte(`"seq":"1042"`), 1), ErrMalformed, ""},
		{"negative seq", bytes.Replace(good, []byte(`"seq":1042`), []byte(`"seq":-1`), 1), ErrMalformed, ""},
		{"ttl as a number", bytes.Replace(good, []byte(`"ttl":"3m0s"`), []byte(`"ttl":180`), 1), ErrMalformed, ""},
		{"other version, even with new fields", []byte(`{"version":2,"future_field":true}`), ErrInvalid, "directive: version 2 not supported (this build reads 1.0-1.1)"},
		{"missing version", []byte(`{"domain":"payment"}`), ErrInvalid, "directive: version 0 not supported (this build reads 1.0-1.1)"},
		{"null", []byte(`null`), ErrMalformed, "directive: malformed payload: not a JSON object"},
		{"decodes but out of range", bytes.Replace(good, []byte(`"share":0.3125`), []byte(`"share":1.3`), 1), ErrInvalid, "directive: share 1.3 out of range [0,1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := DecodeDirective(tt.in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err = %q, want it to contain %q", err, tt.wantMsg)
			}
			if !reflect.DeepEqual(d, Directive{}) {
				t.Errorf("got %+v with an error, want the zero directive", d)
			}
		})
	}
	t.Run("trailing whitespace is fine", func(t *testing.T) {
		if _, err := DecodeDirective(append(bytes.Clone(good), " \n\t"...)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("payload of exactly MaxPayload is parsed", func(t *testing.T) {
		b := append(bytes.Clone(good), bytes.Repeat([]byte{' '}, MaxPayload-len(good))...)
		if _, err := DecodeDirective(b); err != nil {
			t.Fatal(err)
		}
	})
}

func TestEncodeRejectsInvalid(t *testing.T) {
	d := exampleDirective()
	d.Cores = -1
	if _, err := d.Encode(); !errors.Is(err, ErrInvalid) {
		t.Errorf("encode with negative cores: err = %v, want ErrInvalid", err)
	}
	r := exampleReport()
	r.Mode = "auto"
	if _, err := r.Encode(); !errors.Is(err, ErrInvalid) {
		t.Errorf("encode with mode auto: err = %v, want ErrInvalid", err)
	}
}

func TestValidName(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"payment", true},
		{"merchant-api_v2", true},
		{"A0", true},
		{strings.Repeat("a", MaxName), true},
		{strings.Repeat("a", MaxName+1), false},
		{"", false},
		{"pay ment", false},
		{"pay.ment", false},
		{"pay*", false},
		{">", false},
		{"pay/ment", false},
		{"paymént", false},
	}
	for _, tt := range tests {
		if got := ValidName(tt.in); got != tt.want {
			t.Errorf("ValidName(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
