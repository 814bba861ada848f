// Package wire is the contract between Regiment's binaries: the messages the
// Commander and the Soldiers exchange over the bus, their JSON encoding, their
// validation, and the rule a Soldier uses to accept a directive.
//
// # Messages
//
//   - Directive: Commander -> one Soldier, every Commander tick. The domain's
//     share of the contested pool, its budget in cores, urgency and headroom.
//   - Allocation: Commander -> observers, every tick. The whole split: one share
//     per domain plus the reserve.
//   - DomainReport: Soldier -> Commander, every Soldier tick. Domain aggregates
//     and budget utilisation.
//   - Override: operator -> Commander or Soldier. Pins a domain's share or an
//     app's replicas until a deadline (at most MaxOverride after it was
//     issued), or cancels such a pin early.
//   - OverrideAck: Commander or Soldier -> operator, the reply to an override
//     sent as a request: accepted or refused, and why.
//
// # Encoding
//
// JSON with snake_case field names, one message per payload. Times are RFC 3339
// with nanoseconds (encoding/json's time.Time form; UTC recommended). Durations
// are Go duration strings ("3m0s", see Duration). Floats are JSON numbers; NaN
// and infinities cannot be encoded and are rejected by Validate.
//
// Decoding is strict: a payload over MaxPayload bytes is rejected before it is
// parsed (ErrTooLarge); unknown fields, trailing data and type mismatches are
// rejected (ErrMalformed); a decoded message is then validated (ErrInvalid,
// with a *FieldError naming the message, the field and the rule).
//
// # Invariants (checked by Validate)
//
//   - version == Version, minor in [Minor-1, Minor] (see Versioning).
//   - cluster and domain names: 1-64 bytes of [A-Za-z0-9_-] (they become NATS
//     subject tokens and KV keys); a domain must be known when Validate is given
//     a lookup.
//   - shares, urgency, headroom, error rate: fractions in [0, 1].
//   - cores, rates, utilisations, latencies (seconds): finite and >= 0.
//   - pod counts and replicas: >= 0.
//   - Allocation: shares + reserve sum to 1 within SumTolerance (1e-6).
//   - Directive.TTL in (0, MaxTTL]; times non-zero and encodable (years 1-9999).
//   - Directive.Signer and Override.Signer, when set, are names; their Sig,
//     when set, is SigSize bytes in standard base64, an ed25519 signature of
//     SignedBytes (checked by package bus, which holds the keys).
//   - Override: exactly one of share, replicas and cancel; Until - IssuedAt in
//     (0, MaxOverride] for a pin, Until absent for a cancel.
//   - free text (policy, reason, by): valid UTF-8, bounded (MaxReason bytes for
//     reasons, MaxName for the rest).
//
// Term and Seq order directives: Seq increases by one per directive within a
// Commander term; a new Commander process (or leader) starts a higher Term, so
// a Seq restart is detectable. (Term, Seq) pairs compare lexicographically;
// Intake accepts only strictly newer pairs.
//
// # Versioning
//
// Every message carries the contract's version: "version", the major
// (Version), and "minor" (absent when 0). The rule:
//
//   - The major must equal Version. A change to a field's meaning, unit or
//     range, or a removed or renamed field, is a new major: daemons of two
//     majors do not interoperate, so a major needs a stop-the-world upgrade.
//   - A reader accepts minors Minor-1 and Minor. A minor may only add
//     fields, each optional ("omitempty"), its zero value meaning what the
//     previous minor did; so a message of minor Minor-1 decodes here with
//     the new fields zero, and encodes to the same bytes (its signature still
//     verifies: SignedBytes re-encodes the decoded message).
//   - Unknown fields are still refused (ErrMalformed), and a minor outside
//     the window is refused as a version (IsVersion) before strict
//     decoding. A reader never ignores a field: a signature covers only the
//     fields the verifier re-encodes, and an ignored field could change
//     what a message means to a newer reader.
//   - Writers stamp WriteMinor. The release that raises Minor still writes
//     Minor-1, which the release before it reads; the release after it
//     writes Minor. So the daemons of any two adjacent releases read each
//     other during a rolling upgrade, in both directions, in any order.
//
// This build reads 1.0 and 1.1 and writes 1.0: 1.1 adds the minor field
// itself, which release 1.0 (strict, no minor field) would refuse. Messages
// of a version this build does not read are counted with the reason
// RejectVersion. ContractVersion says all this for --version.
//
// # Concurrency
//
// Messages are plain values. Intake is not safe for concurrent use; a Soldier
// owns one.
//
// Package wire imports only the standard library: every binary links it, and it
// must not pull the bus, the store or Kubernetes into the cores.
package wire
