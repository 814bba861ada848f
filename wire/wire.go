package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
	"unicode/utf8"
)

// The contract's version, carried by every message as "version" (the major)
// and "minor" (absent when 0). See the package doc's Versioning.
const (
	// Version is the major version: a reader accepts only its own.
	Version = 1
	// Minor is the newest minor version this build reads; it reads Minor-1
	// too, so that daemons of two adjacent releases interoperate.
	Minor = 1
	// WriteMinor is the minor version this build's daemons stamp on what
	// they send: Minor-1 in the release that raises Minor, so the release
	// before it (reading at most Minor-1) reads everything a new daemon
	// sends during a rolling upgrade; Minor from the release after.
	WriteMinor = 0
)

// ContractVersion describes the contract this build speaks, for --version:
// "1.1 (reads 1.0-1.1, writes 1.0)".
func ContractVersion() string {
	return fmt.Sprintf("%d.%d (reads %d.%d-%d.%d, writes %d.%d)", Version, Minor, Version, Minor-1, Version, Minor, Version, WriteMinor)
}

// versionProblem is what is wrong with a message's (major, minor) version,
// "" when this build reads it.
func versionProblem(major, minor int) (field, problem string) {
	switch {
	case major != Version:
		return "version", fmt.Sprintf("%d not supported (this build reads %d.%d-%d.%d)", major, Version, Minor-1, Version, Minor)
	case minor < Minor-1 || minor > Minor:
		return "minor", fmt.Sprintf("%d.%d not supported (this build reads %d.%d-%d.%d)", major, minor, Version, Minor-1, Version, Minor)
	}
	return "", ""
}

// IsVersion reports whether err is a message of a contract version this
// build does not read (a *FieldError on "version" or "minor"): the sign of
// a daemon two releases apart, counted apart from invalid messages.
func IsVersion(err error) bool {
	var fe *FieldError
	return errors.As(err, &fe) && (fe.Field == "version" || fe.Field == "minor")
}

// Limits of the contract.
const (
	MaxPayload   = 64 << 10       // largest encoded message, bytes
	MaxName      = 64             // longest cluster, domain or app name, and policy or operator, bytes
	MaxReason    = 512            // longest reason, bytes
	MaxDomains   = 256            // most shares in an Allocation
	MaxTTL       = 24 * time.Hour // longest directive TTL
	SumTolerance = 1e-6           // |sum(shares) + reserve - 1| allowed in an Allocation
)

// Errors callers branch on or count. Decode errors wrap exactly one of them.
var (
	// ErrTooLarge: the payload exceeds MaxPayload; it was not parsed.
	ErrTooLarge = errors.New("payload too large")
	// ErrMalformed: not one JSON object of the message's fields and types.
	ErrMalformed = errors.New("malformed payload")
	// ErrInvalid: a field breaks a rule of the contract (see FieldError).
	ErrInvalid = errors.New("invalid message")
	// ErrUnsigned: a directive carries no signature where one is required.
	ErrUnsigned = errors.New("unsigned directive")
	// ErrBadSignature: a directive's signature is not one of a trusted key's
	// over its SignedBytes.
	ErrBadSignature = errors.New("bad directive signature")
)

// FieldError says which rule a message broke. It wraps ErrInvalid.
type FieldError struct {
	Message string // "directive", "allocation", "report" or "override"
	Field   string // the JSON field name, e.g. "share" or "shares[payment]"
	Problem string // e.g. "1.3 out of range [0,1]"
}

func (e *FieldError) Error() string { return e.Message + ": " + e.Field + " " + e.Problem }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// Duration is a time.Duration that encodes as a Go duration string ("3m0s").
type Duration time.Duration

// String is the Go duration string.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON encodes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON decodes a duration string; JSON null leaves d unchanged.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string like \"3m0s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// ValidName reports whether s may be a cluster, domain or app name: 1 to
// MaxName bytes of ASCII letters, digits, '_' and '-'. Such names are safe as
// NATS subject tokens and JetStream KV keys.
func ValidName(s string) bool {
	if len(s) == 0 || len(s) > MaxName {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// decode is the shared strict decoder: size limit, version peek, strict
// decoding of exactly one object. Validation is left to the caller.
func decode(msg string, b []byte, v any) error {
	if len(b) > MaxPayload {
		return fmt.Errorf("%s: %w: %d bytes, limit %d", msg, ErrTooLarge, len(b), MaxPayload)
	}
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return fmt.Errorf("%s: %w: not a JSON object", msg, ErrMalformed)
	}
	// Peek at the version leniently, so that a message of another version is
	// reported as such and not as an unknown field.
	var head struct {
		Version int `json:"version"`
		Minor   int `json:"minor"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return fmt.Errorf("%s: %w: %v", msg, ErrMalformed, err)
	}
	if field, problem := versionProblem(head.Version, head.Minor); field != "" {
		return &FieldError{msg, field, problem}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w: %v", msg, ErrMalformed, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%s: %w: trailing data after the object", msg, ErrMalformed)
	}
	return nil
}

// encode marshals a validated message and enforces MaxPayload.
func encode(msg string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%s: encode: %w", msg, err)
	}
	if len(b) > MaxPayload {
		return nil, fmt.Errorf("%s: %w: %d bytes, limit %d", msg, ErrTooLarge, len(b), MaxPayload)
	}
	return b, nil
}

// encodeValid validates m with check, then encodes it as one msg.
func encodeValid[M any](msg string, m M, check func(M) error) ([]byte, error) {
	if err := check(m); err != nil {
		return nil, err
	}
	return encode(msg, m)
}

// decodeValid decodes b as one msg, then validates it with check.
func decodeValid[M any](msg string, b []byte, check func(M) error) (M, error) {
	var m, zero M
	if err := decode(msg, b, &m); err != nil {
		return zero, err
	}
	if err := check(m); err != nil {
		return zero, err
	}
	return m, nil
}

// check validates a message without a domain lookup, as its Encode and
// Decode do.
func (a Allocation) check() error   { return a.Validate(nil) }
func (d Directive) check() error    { return d.Validate(nil) }
func (r DomainReport) check() error { return r.Validate(nil) }
func (o Override) check() error     { return o.Validate(nil) }

// checker records the first rule a message breaks.
type checker struct {
	msg string
	err *FieldError
}

func (c *checker) fail(field, format string, args ...any) {
	if c.err == nil {
		c.err = &FieldError{c.msg, field, fmt.Sprintf(format, args...)}
	}
}

func (c *checker) result() error {
	if c.err == nil {
		return nil
	}
	return c.err
}

func (c *checker) version(major, minor int) {
	if field, problem := versionProblem(major, minor); field != "" {
		c.fail(field, "%s", problem)
	}
}

func (c *checker) name(field, s string) {
	switch {
	case s == "":
		c.fail(field, "is empty")
	case !ValidName(s):
		c.fail(field, "%q is not a name (1-%d bytes of A-Z a-z 0-9 _ -)", truncate(s), MaxName)
	}
}

// domain checks a domain name, and that it is known when known is not nil.
func (c *checker) domain(field, s string, known func(string) bool) {
	c.name(field, s)
	if c.err == nil && known != nil && !known(s) {
		c.fail(field, "%q is not a known domain", s)
	}
}

func (c *checker) finite(field string, v float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		c.fail(field, "%g is not a finite number", v)
		return false
	}
	return true
}

// unit checks v in [0, 1].
func (c *checker) unit(field string, v float64) {
	if c.finite(field, v) && (v < 0 || v > 1) {
		c.fail(field, "%g out of range [0,1]", v)
	}
}

// nonNeg checks v in [0, +Inf).
func (c *checker) nonNeg(field string, v float64) {
	if c.finite(field, v) && v < 0 {
		c.fail(field, "%g is negative", v)
	}
}

func (c *checker) count(field string, n int) {
	if n < 0 {
		c.fail(field, "%d is negative", n)
	}
}

// time checks t is set and encodable (RFC 3339: years 1-9999, offsets under 24h).
func (c *checker) time(field string, t time.Time) {
	if t.IsZero() {
		c.fail(field, "is not set")
		return
	}
	if _, err := t.MarshalText(); err != nil {
		c.fail(field, "cannot be encoded: %v", err)
	}
}

// text checks free text: valid UTF-8 of at most max bytes; required when req.
func (c *checker) text(field, s string, max int, req bool) {
	switch {
	case req && s == "":
		c.fail(field, "is empty")
	case len(s) > max:
		c.fail(field, "is %d bytes, limit %d", len(s), max)
	case !utf8.ValidString(s):
		c.fail(field, "is not valid UTF-8")
	}
}

// truncate shortens s for an error message.
func truncate(s string) string {
	const n = 80
	if len(s) <= n {
		return s
	}
	return Clip(s, n) + "..."
}
