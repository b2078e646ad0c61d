// Command cabi is the C ABI of tabscreen's Go core, built with -buildmode=c-shared. Exports take
// C scalars and (pointer, length) buffers, never R objects; every buffer they return is allocated
// with C malloc and freed by the caller with TsFree; errors come back as JSON values, never as
// panics or signals. No goroutine here ever calls into R.
package main

func main() {}
