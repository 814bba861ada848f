// Package bus carries Regiment's messages (package wire) over NATS: the
// subject layout, connecting with credentials and endless reconnects, an
// embedded nats-server for single-binary runs and tests, and a JetStream
// key-value bucket that keeps each domain's last directive so that a restarted
// Soldier resumes at once instead of waiting a Commander tick.
//
// # Subjects
//
//	regiment.<cluster>.directive.<domain>   Commander -> Soldier      wire.Directive
//	regiment.<cluster>.report.<domain>      Soldier -> Commander      wire.DomainReport
//	regiment.<cluster>.allocation           Commander -> observers    wire.Allocation
//	regiment.<cluster>.override.<domain>    operator -> both          wire.Override
//
// Cluster and domain are single subject tokens: 1-64 bytes of
// [A-Za-z0-9_-] (wire.ValidName), so no spaces, dots or wildcards. The
// directive bucket is "regiment_<cluster>_directives", one key per domain,
// history 1, file storage. The override bucket is
// "regiment_<cluster>_overrides": the pins in force, keyed "<domain>" (share)
// or "<domain>.<app>" (replicas), written by whoever accepted the pin
// (StoreOverride), entries dropped after wire.MaxOverride. Both buckets
// are kept on ConnectOptions.Replicas servers (1 to 5; default 1), set when
// EnsureBuckets creates or updates them.
//
// Overrides may be sent as requests (RequestOverride): the Commander answers
// share pins and their cancels, the domain's Soldier answers replica pins and
// theirs (ServeOverrides), each with a wire.OverrideAck.
//
// # Guarantees and caveats
//
// Live messages use core NATS: at most once, in order per publisher. A
// message published while a subscriber is disconnected is lost to it; the
// directive bucket covers the one message that matters after a restart
// (LastDirective). Every message is validated before it is published and
// after it is received; a message that fails is handed to the subscriber's
// handler as an error (wrapping wire.ErrTooLarge, wire.ErrMalformed or
// wire.ErrInvalid; wire.ErrUnsigned or wire.ErrBadSignature for a directive
// on a Conn with DirectiveKeys) with a zero value, so the subscriber can
// count it and keep its last good state. A received message must also name
// the connection's cluster and the domain of its subject (ErrWrongDomain).
//
// A message is taken for what it is, never for where it was delivered: a
// subscription takes only messages whose subject is one it names (token by
// token) and whose reply is empty, or a request's inbox on an override
// subject. Anything else reaches the handler as an error wrapping
// ErrMisrouted: in particular a stored value that a JetStream push consumer
// (which anyone allowed to create one may aim at any delivery subject)
// delivers under its stream subject "$KV.<bucket>.<key>" with a "$JS.ACK"
// reply, the forgery route of issue 34.
//
// A Conn reconnects forever: exponential backoff from ReconnectWait to
// MaxReconnectWait plus up to ReconnectJitter of random delay. Subscriptions
// are restored on reconnect. Directives and reports are not published while
// reconnecting (they would arrive stale: PublishDirective fails at once,
// PublishReport drops and counts the report); other publishes are buffered
// by the client (up to its reconnect buffer) and sent on reconnect.
//
// # Security
//
// ConnectOptions authenticate with a token, a token file, an nkey seed file
// or a JWT .creds file (one of them; Token wins, so a flag beats the config)
// and may require TLS (CA, client certificate, server name); SetAuth copies
// the config's nats block. Files are read at Connect, so a missing one fails
// there, naming it. Permissions is the per-role model (one user per role:
// the Commander alone publishes directives and writes the directive bucket,
// a Soldier hears, reads and reports only its own domain, the operator sends
// overrides) and WriteServerConfig renders it as a nats-server config, one
// nkey user per role; each role connects with its own InboxPrefix. The
// server drops what a role may not do and reports it asynchronously: Denied
// counts those reports. JetStream access is the exact API subjects each
// role's key-value calls need for its own buckets and keys: only the
// Commander creates or updates a stream (EnsureBuckets), no role deletes,
// purges or gets by a body-given subject. A Signer (the Commander's) signs
// every directive PublishDirective sends; a Verifier built from
// DirectiveKeys (a Soldier's) refuses directives no trusted key signed.
// Likewise an OverrideSigner (the operator's) signs every override sent, and
// a Conn with OverrideKeys (the Commander's, a Soldier's) refuses live and
// stored overrides no trusted key signed. Soldiers create no JetStream
// consumer: they find their own pins with stream info. Reports are not
// signed: a report is taken only on regiment.<cluster>.report.<domain>,
// which only that domain's Soldier may publish, naming that domain. The
// embedded server runs without authentication unless given a Token.
//
// # Concurrency
//
// A Conn is safe for concurrent use. Each subscription calls its handler from
// one goroutine, one message at a time; a slow handler delays that
// subscription only (and eventually makes it a slow consumer, logged).
//
// Package bus is an I/O shell: cores import wire, never bus.
package bus
