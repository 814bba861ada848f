//go:build !unix

package infile

// nonBlock is 0 where there are no FIFOs to block on.
const nonBlock = 0
