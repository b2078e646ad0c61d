package fakeprovider

import (
	"crypto/sha256"
	"sync"
)

// bodyCounts counts the requests of each distinct body (Config.CountBodies), so that a test can
// tell whether a client sent a request again after it had been answered: a job paid twice. Off by
// default: the benches' millions of requests need no map of them.
type bodyCounts struct {
	mu              sync.Mutex
	seen            map[[sha256.Size]byte]*bodyCount
	sentAfterAnswer int64
}

type bodyCount struct{ sent, answered int64 }

// BodyStats are the per-body counts of GET /_fake/stats (null unless count_bodies is set).
type BodyStats struct {
	Distinct int64 `json:"distinct"`  // distinct request bodies
	MaxSent  int64 `json:"max_sent"`  // the most requests one body had
	SentOnce int64 `json:"sent_once"` // bodies sent exactly once
	Answered int64 `json:"answered"`  // bodies answered at least once
	// AnsweredAgain: bodies answered more than once; SentAfterAnswer: requests whose body had
	// been answered before they arrived.
	AnsweredAgain   int64 `json:"answered_again"`
	SentAfterAnswer int64 `json:"sent_after_answer"`
}

// sent counts a request of body and returns its key for answered.
func (b *bodyCounts) sent(body []byte) [sha256.Size]byte {
	k := sha256.Sum256(body)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.seen == nil {
		b.seen = map[[sha256.Size]byte]*bodyCount{}
	}
	c := b.seen[k]
	if c == nil {
		c = &bodyCount{}
		b.seen[k] = c
	}
	c.sent++
	if c.answered > 0 {
		b.sentAfterAnswer++
	}
	return k
}

func (b *bodyCounts) answered(k [sha256.Size]byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c := b.seen[k]; c != nil {
		c.answered++
	}
}

func (b *bodyCounts) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seen, b.sentAfterAnswer = nil, 0
}

func (b *bodyCounts) stats() BodyStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := BodyStats{Distinct: int64(len(b.seen)), SentAfterAnswer: b.sentAfterAnswer}
	for _, c := range b.seen {
		st.MaxSent = max(st.MaxSent, c.sent)
		if c.sent == 1 {
			st.SentOnce++
		}
		if c.answered > 0 {
			st.Answered++
		}
		if c.answered > 1 {
			st.AnsweredAgain++
		}
	}
	return st
}
