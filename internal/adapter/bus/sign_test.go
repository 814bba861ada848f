package bus

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/wire"
)

func TestSignatures(t *testing.T) {
	old, _ := EphemeralSigner()
	cur, _ := EphemeralSigner()
	other, _ := EphemeralSigner()
	v, err := NewVerifier([]string{old.PublicKey(), cur.PublicKey()})
	if err != nil {
		t.Fatal(err)
	}
	// A directive whose floats and time take every digit, in a local zone:
	// the signature must survive encoding and decoding.
	d := directive("payment", 7, 9)
	d.IssuedAt = time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.FixedZone("X", 5*3600+1800))
	d.Share, d.Cores, d.Headroom = 0.1+0.2, math.Nextafter(3000, 4000), 1.0/3
	d.Reason = "ünïcode <&> \"quoted\""
	signed := func(s *Signer, d wire.Directive) wire.Directive {
		sd, err := s.Sign(d)
		if err != nil {
			t.Fatal(err)
		}
		b, err := sd.Encode()
		if err != nil {
			t.Fatal(err)
		}
		got, err := wire.DecodeDirective(b)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	tests := []struct {
		rule string
		d    wire.Directive
		want error // nil: accepted
	}{
		{"the current key's signature survives the wire", signed(cur, d), nil},
		{"the old key is accepted during a rollover", signed(old, d), nil},
		{"an unsigned directive is refused", d, wire.ErrUnsigned},
		{"another key's signature is refused", signed(other, d), wire.ErrBadSignature},
		{"a signer label of a trusted key does not help", func() wire.Directive { x := signed(other, d); x.Signer = cur.PublicKey(); return x }(), wire.ErrBadSignature},
		{"a change after signing is refused", func() wire.Directive { x := signed(cur, d); x.Cores = 0.5; return x }(), wire.ErrBadSignature},
		{"a change of term after signing is refused", func() wire.Directive { x := signed(cur, d); x.Term = 1 << 62; return x }(), wire.ErrBadSignature},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			err := v.Verify(tt.d)
			if (tt.want == nil) != (err == nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
		})
	}

	t.Run("a malformed signature is invalid on the wire", func(t *testing.T) {
		x := signed(cur, d)
		x.Sig = x.Sig[:20]
		if _, err := x.Encode(); !errors.Is(err, wire.ErrInvalid) {
			t.Fatalf("Encode = %v, want ErrInvalid", err)
		}
	})
	t.Run("only public nkeys are trusted", func(t *testing.T) {
		for _, keys := range [][]string{nil, {"UNOTAKEY"}, {strings.Repeat("U", 56)}} {
			if _, err := NewVerifier(keys); err == nil {
				t.Errorf("NewVerifier(%q) succeeded", keys)
			}
		}
	})
}
