// Package stats holds the statistics the other packages share: order
// statistics by nearest rank (Percentile, Kth, NearKth, and a sorted window
// kept by InsertSorted and DeleteSorted), the median and Pearson's
// correlation.
//
// Invariants: order statistics follow cmp.Compare's order (NaNs first,
// zeros of both signs equal) and return the value sorting would put at the
// rank, bit for bit; Percentile and Kth reorder their input, and nothing
// here allocates except Median's caller-owned sort. Pearson is undefined
// (ok false) with fewer than 3 pairs, series of unequal length, or a series
// with no spread.
//
// Concurrency: functions are pure; a NearKth belongs to one caller.
//
// It imports the standard library only, and must stay a leaf: the cores
// (soldier) and the offline tools (calibrate, train) both import it.
package stats
