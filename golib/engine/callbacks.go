package engine

import (
	"context"
	"net/http"
	"sync"
)

// Callback is a request for R to evaluate one of the user's policy functions. Go never calls R:
// a worker posts the request and waits, and R's poll loop evaluates it on its main thread.
type Callback struct {
	ID       int64               `json:"id"`
	Kind     string              `json:"kind"` // is_transient, after or backoff
	Status   int                 `json:"status,omitempty"`
	Headers  map[string][]string `json:"headers,omitempty"`
	Body     string              `json:"body,omitempty"`
	Attempts int                 `json:"attempts,omitempty"`
	reply    chan CallbackReply
}

// CallbackReply is R's answer. Value is a logical for is_transient and seconds (or null) for
// after and backoff; Error is set when the user's function failed.
type CallbackReply struct {
	ID    int64    `json:"id"`
	Value *float64 `json:"value"`
	Error string   `json:"error"`
}

type callbackQueue struct {
	mu      sync.Mutex
	nextID  int64
	pending map[int64]*Callback
	fresh   []*Callback
}

func newCallbackQueue() *callbackQueue {
	return &callbackQueue{pending: make(map[int64]*Callback)}
}

// ask posts a callback and waits for R's reply or the end of the run.
func (q *callbackQueue) ask(ctx context.Context, c *Callback) (CallbackReply, error) {
	c.reply = make(chan CallbackReply, 1)
	q.mu.Lock()
	q.nextID++
	c.ID = q.nextID
	q.pending[c.ID] = c
	q.fresh = append(q.fresh, c)
	q.mu.Unlock()
	select {
	case r := <-c.reply:
		return r, nil
	case <-ctx.Done():
		q.mu.Lock()
		delete(q.pending, c.ID)
		q.mu.Unlock()
		return CallbackReply{}, context.Cause(ctx)
	}
}

// take hands the callbacks not yet shown to R.
func (q *callbackQueue) take() []*Callback {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.fresh
	q.fresh = nil
	return out
}

// waiting reports whether a callback is waiting to be shown to R.
func (q *callbackQueue) waiting() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.fresh) > 0
}

func (q *callbackQueue) answer(replies []CallbackReply) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, r := range replies {
		if c, ok := q.pending[r.ID]; ok {
			delete(q.pending, r.ID)
			c.reply <- r
		}
	}
}

func headerMap(h http.Header) map[string][]string {
	m := make(map[string][]string, len(h))
	for k, v := range h {
		m[k] = v
	}
	return m
}
