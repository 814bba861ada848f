// Package infile opens the files a user names (configs, scenarios, traces,
// checkpoints, keys and tokens) for reading, and only if they are regular
// files.
//
// A path may name anything: a FIFO, whose open blocks until a writer comes
// (for good, if none does, and past SIGTERM: a blocked open(2) cannot be
// cancelled), a device such as /dev/zero that never ends, or a directory.
// Open refuses all of these with the path and what the file is. It opens
// with O_NONBLOCK, so that opening a FIFO returns at once, and then checks
// the type of what it opened (fstat), so that no rename between a check
// and the open can slip a FIFO in. Symbolic links are followed: a link to a
// regular file is a regular file.
//
// Open bounds nothing; callers read through a limit (ReadFile, or their
// own streaming reader such as package trace's).
//
// Invariants: a *os.File returned by Open is a regular file open for
// reading; every error names the path. Functions here keep no state and are
// safe for concurrent use. Package infile imports only the standard library.
package infile
