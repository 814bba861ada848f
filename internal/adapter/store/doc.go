// Package store is Regiment's episode store and decision ledger: every control
// step of the Commander (one per tick, cluster-wide) and of each domain's
// Soldier (one per tick and domain) is recorded in a single bbolt file, for
// inspection ("regiment episodes"), replay and retraining.
//
// The store is generic: it knows episodes, steps and ledger entries, not the
// commander or soldier packages. A step is whatever a policy saw (Obs, in the
// order of its episode's ObsLayout), what it did (Action), which guard changed
// which output (Guards), how it was scored (Reward, one entry per term plus
// "total") and what happened (Outcome).
//
// # Schema
//
// Version 1. Values are JSON; keys that carry time are big-endian so that
// byte order is time order and a bbolt cursor walks them chronologically.
//
//	meta      "schema"                       -> decimal schema version ("1")
//	episodes  <episode id>                   -> Episode
//	steps     <episode id> (sub-bucket)
//	            <unix nanos BE8><seq BE8>    -> Step
//	ledger    <unix nanos BE8><counter BE8>  -> LedgerEntry
//	state     <key>                          -> opaque bytes (PutState)
//
// The state bucket keeps what a daemon must find again after a restart, one
// value per key, replaced whole by each PutState: a Soldier keeps its
// decision state under "soldier/<domain>" (soldier.Snapshot's versioned
// JSON). It is created by the first PutState.
//
// The ledger counter is the ledger bucket's bbolt sequence, so entries that
// share a timestamp keep their insertion order. A stored step omits its
// episode id (the sub-bucket name) and is otherwise byte-identical to
// encoding/json's output for Step; the Appender writes it with a
// hand-written encoder (codec.go) because reflection doubled its cost.
//
// # Invariants
//
//   - Every steps sub-bucket has an episodes entry with the same id; steps are
//     written only for episodes begun with BeginEpisode.
//   - Step.Obs has the length of its episode's ObsLayout (when the layout is
//     not empty); all recorded numbers are finite (NaN and ±Inf are rejected,
//     JSON cannot carry them).
//   - Times are wall-clock instants between 1970-01-01 and 2262-04-11 (the
//     range of int64 Unix nanoseconds); zero times are rejected. A step's key
//     is (At, Seq), so two steps of one episode with the same At and Seq
//     overwrite each other.
//   - Opening a file whose schema version is newer than this package's is an
//     error; an older one would be migrated in Open (none exists yet).
//
// # Concurrency
//
// A Store and an Appender are safe for concurrent use. bbolt allows one
// writer at a time and any number of readers; the Appender encodes steps in
// the caller's goroutine and writes each batch in one read-write transaction
// (one commit), which is what makes recording cheap.
//
// Only one process may open the file for writing: bbolt takes an exclusive
// flock. Read-only openers take a shared lock, so "regiment episodes" can read
// a file no daemon holds, and fails with ErrLocked (after Options.Timeout)
// while one does. The process holding the file can copy it while it writes:
// Snapshot writes a consistent copy (bbolt's hot backup, Tx.WriteTo in one
// read transaction) that Open reads; the daemons serve it over HTTP.
//
// # Damaged files
//
// Open checks a file before bbolt maps it (checkFile) and refuses, with an
// error wrapping ErrDamaged that names the file, the damage and what to do:
// an empty file, one not a whole number of pages or smaller than the four
// pages of a new bbolt file, one without a valid meta page, one shorter than
// its meta page's high water mark (truncated: bbolt would fault, an
// unrecoverable crash, on the first read past its end), or one with a
// reachable page, or an element of one, outside the file (pages.go reads
// every reachable page with ReadAt, because bbolt's check reads them through
// its map in a goroutine of its own, where a fault cannot be recovered).
// Reads and writes run with debug.SetPanicOnFault. It then runs bbolt's
// consistency check (Check) on every file it opens. Every transaction runs
// behind a recover that turns a panic bbolt raises on a page it cannot make
// sense of into an ErrDamaged error: no damaged file panics the process.
// bbolt does not checksum values, so bytes overwritten inside a value pass
// both checks and surface as a decode error where the value is read.
//
// Repair copies what is readable of a damaged file into a new one and
// reports what it skipped; it never writes to the damaged file.
//
// An Appender batch that cannot be written is lost: its error is a
// *WriteError carrying how many steps, and OnWrite reports every batch's
// outcome, so that a daemon counts and shows lost steps.
//
// # Caveats
//
//   - Open reads every page twice (the page walk, then bbolt's check): 45 ms
//     for 100,000 steps (34 MB), about 1.3 s per GB (BenchmarkOpen).
//   - Prune frees pages but never shrinks the file (bbolt reuses free pages);
//     compact a copy with "bbolt compact" to reclaim disk space.
//   - Steps buffered in an Appender are lost if the process dies before the
//     batch is written; Flush or Close the Appender before closing the Store.
//   - Stats and the exports decode every step they cover, so their cost
//     grows with the file; ExportCSV reads its selection twice (columns, then
//     rows).
//   - Queries and exports each run in one read transaction, a consistent
//     snapshot. A long one keeps the pages freed meanwhile from being reused
//     and can delay a writer that must grow the memory map; run big exports
//     against a stopped daemon's file (which the lock enforces anyway).
//
// Package store imports bbolt and the standard library only.
package store
