package wire

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// addGoldens seeds f with the golden files; testdata/fuzz/<Target> holds more.
func addGoldens(f *testing.F, files ...string) {
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// roundTrip checks that a decoded value v re-encodes, re-decodes to the same
// value, and re-encodes to the same bytes. Times are compared in UTC: a
// decoded offset may come back as a different but equivalent *time.Location.
func roundTrip[T any](t *testing.T, v T, enc func(T) ([]byte, error), dec func([]byte) (T, error), utc func(T) T) {
	t.Helper()
	b1, err := enc(v)
	if err != nil {
		t.Fatalf("decoded value does not re-encode: %v\n%+v", err, v)
	}
	v2, err := dec(b1)
	if err != nil {
		t.Fatalf("re-encoded value does not decode: %v\n%s", err, b1)
	}
	if !reflect.DeepEqual(utc(v), utc(v2)) {
		t.Fatalf("round trip changed the value:\n%+v\n%+v", v, v2)
	}
	b2, err := enc(v2)
	if err != nil || !bytes.Equal(b1, b2) {
		t.Fatalf("encoding not stable: %v\n%s\n%s", err, b1, b2)
	}
}

// FuzzDecodeDirective: decoding arbitrary bytes never panics, and whatever
// decodes round-trips.
func FuzzDecodeDirective(f *testing.F) {
	addGoldens(f, "directive.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := DecodeDirective(b)
		if err != nil {
			return
		}
		roundTrip(t, d, Directive.Encode, DecodeDirective, func(d Directive) Directive {
			d.IssuedAt = d.IssuedAt.UTC()
			return d
		})
	})
}

// FuzzDecodeDomainReport: as FuzzDecodeDirective, for reports.
func FuzzDecodeDomainReport(f *testing.F) {
	addGoldens(f, "report.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeDomainReport(b)
		if err != nil {
			return
		}
		roundTrip(t, r, DomainReport.Encode, DecodeDomainReport, func(r DomainReport) DomainReport {
			r.SentAt = r.SentAt.UTC()
			return r
		})
	})
}

// FuzzDecodeAllocation: as FuzzDecodeDirective, for allocations; the sum rule
// must not depend on map order.
func FuzzDecodeAllocation(f *testing.F) {
	addGoldens(f, "allocation.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := DecodeAllocation(b)
		if err != nil {
			return
		}
		roundTrip(t, a, Allocation.Encode, DecodeAllocation, func(a Allocation) Allocation {
			a.IssuedAt = a.IssuedAt.UTC()
			return a
		})
	})
}

// FuzzDecodeOverride: as FuzzDecodeDirective, for overrides.
func FuzzDecodeOverride(f *testing.F) {
	addGoldens(f, "override_share.json", "override_replicas.json", "override_cancel.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := DecodeOverride(b)
		if err != nil {
			return
		}
		roundTrip(t, o, Override.Encode, DecodeOverride, func(o Override) Override {
			o.IssuedAt, o.Until = o.IssuedAt.UTC(), o.Until.UTC()
			return o
		})
	})
}

// FuzzDecodeOverrideAck: as FuzzDecodeDirective, for override acknowledgements.
func FuzzDecodeOverrideAck(f *testing.F) {
	addGoldens(f, "override_ack.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := DecodeOverrideAck(b)
		if err != nil {
			return
		}
		roundTrip(t, a, OverrideAck.Encode, DecodeOverrideAck, func(a OverrideAck) OverrideAck {
			a.At = a.At.UTC()
			return a
		})
	})
}

// TestRoundTripOffsets pins the case the fuzz targets normalise: a time with
// a zone offset keeps its instant and its encoding.
func TestRoundTripOffsets(t *testing.T) {
	d := exampleDirective()
	d.IssuedAt = d.IssuedAt.In(time.FixedZone("", -5*3600))
	b, err := d.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeDirective(b)
	if err != nil {
		t.Fatal(err)
	}
	if !got.IssuedAt.Equal(d.IssuedAt) {
		t.Errorf("issued_at = %v, want %v", got.IssuedAt, d.IssuedAt)
	}
	b2, _ := json.Marshal(got)
	if !bytes.Equal(b, b2) {
		t.Errorf("re-encoding differs:\n%s\n%s", b, b2)
	}
}
