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
//   - version == Version.
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
// Version is the version of the whole contract, carried by every message.
// Because decoding rejects unknown fields, any change to any message's field
// set, a field's meaning, unit or range is incompatible and bumps Version.
// Readers accept exactly one version; a payload with another version fails
// with a *FieldError on "version" before strict decoding, so mixed-version
// traffic is counted as such rather than as malformed. Roll out a new version
// readers first, keeping both decoders for one release.
//
// # Concurrency
//
// Messages are plain values. Intake is not safe for concurrent use; a Soldier
// owns one.
//
// Package wire imports only the standard library: every binary links it, and it
// must not pull the bus, the store or Kubernetes into the cores.
package wire
