package arrowio

import (
	"sync"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// batchAllocator lends the buffers of one record batch to the next: encoding a large table batch
// by batch otherwise leaves every batch's copy as garbage until the next collection, which with a
// large live heap around it (a run's questions) is hundreds of megabytes later.
type batchAllocator struct {
	mu   sync.Mutex
	free [][]byte
}

var _ memory.Allocator = (*batchAllocator)(nil)

func (a *batchAllocator) Allocate(size int) []byte {
	a.mu.Lock()
	for i, b := range a.free {
		// Reused only when it is not much larger, so that small buffers do not pin large ones.
		if cap(b) >= size && cap(b) <= 2*size+64 {
			a.free = append(a.free[:i], a.free[i+1:]...)
			a.mu.Unlock()
			b = b[:size]
			clear(b) // arrow-go expects new memory to be zero (bitmaps, padding)
			return b
		}
	}
	a.mu.Unlock()
	return make([]byte, size)
}

func (a *batchAllocator) Reallocate(size int, b []byte) []byte {
	if cap(b) >= size {
		old := len(b)
		b = b[:size]
		if size > old {
			clear(b[old:])
		}
		return b
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

func (a *batchAllocator) Free(b []byte) {
	if cap(b) == 0 {
		return
	}
	a.mu.Lock()
	a.free = append(a.free, b[:0])
	a.mu.Unlock()
}
