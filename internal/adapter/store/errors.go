package store

import "errors"

// Sentinel errors, for callers that branch on them with errors.Is.
var (
	// ErrLocked means another process holds the file (a running Commander or
	// Soldier) and the lock was not released within Options.Timeout.
	ErrLocked = errors.New("store is locked by another process")

	// ErrNotFound means the episode does not exist.
	ErrNotFound = errors.New("episode not found")

	// ErrClosed means the Appender was closed.
	ErrClosed = errors.New("closed")
)
