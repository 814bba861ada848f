package bus

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nkeys"

	"github.com/regimentd/regiment/internal/infile"
	"github.com/regimentd/regiment/wire"
)

// Signer signs directives with an ed25519 key held as an nkey seed (the
// format of `regiment nats-config`'s seeds, "SU..."). Its public key
// ("U...") is what Soldiers list in nats { directive_keys }.
type Signer struct {
	kp  nkeys.KeyPair
	pub string
}

// NewSigner returns a Signer for an nkey seed. Curve (encryption) seeds are
// refused: they do not sign.
func NewSigner(seed []byte) (*Signer, error) {
	kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(seed))))
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	if strings.HasPrefix(pub, "X") {
		return nil, errors.New("signing key: a curve key does not sign; use an nkey seed such as `regiment nats-config` writes")
	}
	return &Signer{kp: kp, pub: pub}, nil
}

// LoadSigner reads the directive signing nkey seed at path.
func LoadSigner(path string) (*Signer, error) { return loadSigner("directive", path) }

// LoadOverrideSigner reads the override signing nkey seed at path (the
// operator's).
func LoadOverrideSigner(path string) (*Signer, error) { return loadSigner("override", path) }

func loadSigner(what, path string) (*Signer, error) {
	seed, err := infile.ReadFile(path, maxKeyFile)
	if err != nil {
		return nil, fmt.Errorf("%s signing key: %w", what, err)
	}
	s, err := NewSigner(seed)
	if err != nil {
		return nil, fmt.Errorf("%s signing key %q: %w", what, path, err)
	}
	return s, nil
}

// EphemeralSigner is a Signer with a key made for this process only, for
// the embedded single-process `regiment run`, whose Soldiers verify with its
// PublicKey.
func EphemeralSigner() (*Signer, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, fmt.Errorf("create a signing key: %w", err)
	}
	seed, err := kp.Seed()
	if err != nil {
		return nil, fmt.Errorf("create a signing key: %w", err)
	}
	return NewSigner(seed)
}

// PublicKey is the signer's public nkey, "U...".
func (s *Signer) PublicKey() string { return s.pub }

// Sign returns d with Signer and Sig set.
func (s *Signer) Sign(d wire.Directive) (wire.Directive, error) {
	var err error
	if d.Signer, d.Sig, err = s.sign("directive", d.SignedBytes()); err != nil {
		return wire.Directive{}, err
	}
	return d, nil
}

// sign is the signer's public key and its signature of b, base64, for
// what it signs ("directive", "override").
func (s *Signer) sign(what string, b []byte) (signer, sig string, err error) {
	raw, err := s.kp.Sign(b)
	if err != nil {
		return "", "", fmt.Errorf("sign %s: %w", what, err)
	}
	return s.pub, base64.StdEncoding.EncodeToString(raw), nil
}

// Verifier checks directive signatures against the public keys it trusts:
// one, or two during a key rollover (the old and the new Commander key).
type Verifier struct {
	keys []nkeys.KeyPair
}

// NewVerifier trusts each public nkey in pubs. At least one is needed.
func NewVerifier(pubs []string) (*Verifier, error) { return newVerifier("directive keys", pubs) }

// NewOverrideVerifier is NewVerifier for the operator's keys, which sign
// overrides (nats { override_keys }).
func NewOverrideVerifier(pubs []string) (*Verifier, error) { return newVerifier("override keys", pubs) }

func newVerifier(what string, pubs []string) (*Verifier, error) {
	if len(pubs) == 0 {
		return nil, fmt.Errorf("%s: none given", what)
	}
	v := &Verifier{}
	for _, p := range pubs {
		kp, err := nkeys.FromPublicKey(p)
		if err != nil || strings.HasPrefix(p, "X") {
			return nil, fmt.Errorf("%s: %q is not a public nkey (\"U...\", as `regiment nats-config` prints)", what, wire.Clip(p, 80))
		}
		v.keys = append(v.keys, kp)
	}
	return v, nil
}

// Verify returns nil if d carries a signature of one of the trusted keys
// over its SignedBytes, else an error wrapping wire.ErrUnsigned or
// wire.ErrBadSignature. Every trusted key is tried: d.Signer is only a label.
func (v *Verifier) Verify(d wire.Directive) error {
	if d.Sig == "" {
		return fmt.Errorf("directive %d.%d: %w", d.Term, d.Seq, wire.ErrUnsigned)
	}
	sig, err := base64.StdEncoding.DecodeString(d.Sig)
	if err != nil {
		return fmt.Errorf("directive %d.%d: sig: %w", d.Term, d.Seq, wire.ErrBadSignature)
	}
	if !v.trusts(d.SignedBytes(), sig) {
		return fmt.Errorf("directive %d.%d signed by %q: %w", d.Term, d.Seq, wire.Clip(d.Signer, wire.MaxName), wire.ErrBadSignature)
	}
	return nil
}

// trusts reports whether sig is one of the trusted keys' signature of msg.
func (v *Verifier) trusts(msg, sig []byte) bool {
	for _, k := range v.keys {
		if k.Verify(msg, sig) == nil {
			return true
		}
	}
	return false
}

// SignOverride returns o with Signer and Sig set: the operator's CLI signs
// every override it sends (nats { override_signing_key_file }).
func (s *Signer) SignOverride(o wire.Override) (wire.Override, error) {
	var err error
	if o.Signer, o.Sig, err = s.sign("override", o.SignedBytes()); err != nil {
		return wire.Override{}, err
	}
	return o, nil
}

// VerifyOverride returns nil if o carries a signature of one of the trusted
// keys over its SignedBytes, else an error wrapping wire.ErrUnsigned or
// wire.ErrBadSignature.
func (v *Verifier) VerifyOverride(o wire.Override) error {
	if o.Sig == "" {
		return fmt.Errorf("override of %s: %w", o.Target(), wire.ErrUnsigned)
	}
	sig, err := base64.StdEncoding.DecodeString(o.Sig)
	if err != nil || !v.trusts(o.SignedBytes(), sig) {
		return fmt.Errorf("override of %s signed by %q: %w", o.Target(), wire.Clip(o.Signer, wire.MaxName), wire.ErrBadSignature)
	}
	return nil
}
