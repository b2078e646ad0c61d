package fakeprovider

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// counters are updated on the request path with atomics only (the two
// windows take a short lock).
type counters struct {
	total              atomic.Int64 // requests to a protocol endpoint
	status             [600]atomic.Int64
	faults             [16]atomic.Int64 // indexed as faultKinds
	valid              atomic.Int64
	invalid            atomic.Int64
	unauthorized       atomic.Int64
	refusedRate        atomic.Int64
	refusedConcurrency atomic.Int64
	refusedTokens      atomic.Int64
	tokens             atomic.Int64 // tokens counted against the token budget
	clientGone         atomic.Int64 // client went away while the fake was waiting
	answered           atomic.Int64 // 200 with a well-formed tool call
	notFound           atomic.Int64 // requests to no known endpoint
	maxInFlight        atomic.Int64
	window             windowMax
	lastBody           atomic.Pointer[[]byte]
	bodies             bodyCounts
	// firstAt and lastAt are the arrival times (unix nanoseconds) of the first and the latest
	// request, so a client's achieved rate can be measured where the provider sees it.
	firstAt, lastAt atomic.Int64
	// proto holds the counts of each protocol, indexed as Server.protocols.
	proto [maxProtocols]protoCounters
}

const maxProtocols = 4

// protoCounters are the counts of one protocol's endpoint.
type protoCounters struct {
	total, valid, invalid, unauthorized, answered atomic.Int64
	status                                        [600]atomic.Int64
}

func (p *protoCounters) reset() {
	for _, a := range []*atomic.Int64{&p.total, &p.valid, &p.invalid, &p.unauthorized, &p.answered} {
		a.Store(0)
	}
	for i := range p.status {
		p.status[i].Store(0)
	}
}

func (c *counters) noteArrival(t time.Time) {
	ns := t.UnixNano()
	c.firstAt.CompareAndSwap(0, ns)
	for {
		old := c.lastAt.Load()
		if old >= ns || c.lastAt.CompareAndSwap(old, ns) {
			return
		}
	}
}

func (c *counters) reset(inFlight int64) {
	c.total.Store(0)
	for i := range c.status {
		c.status[i].Store(0)
	}
	for i := range c.faults {
		c.faults[i].Store(0)
	}
	for _, a := range []*atomic.Int64{&c.valid, &c.invalid, &c.unauthorized, &c.refusedRate,
		&c.refusedConcurrency, &c.refusedTokens, &c.tokens, &c.clientGone, &c.answered, &c.notFound, &c.firstAt, &c.lastAt} {
		a.Store(0)
	}
	for i := range c.proto {
		c.proto[i].reset()
	}
	c.maxInFlight.Store(inFlight)
	c.window.reset()
	c.lastBody.Store(nil)
	c.bodies.reset()
}

func (c *counters) noteInFlight(n int64) {
	for {
		m := c.maxInFlight.Load()
		if n <= m || c.maxInFlight.CompareAndSwap(m, n) {
			return
		}
	}
}

// Stats is the JSON document served by GET /_fake/stats.
type Stats struct {
	RequestsTotal      int64            `json:"requests_total"`
	ByStatus           map[string]int64 `json:"by_status"`
	ByFault            map[string]int64 `json:"by_fault"`
	Valid              int64            `json:"valid"`
	Invalid            int64            `json:"invalid"`
	Unauthorized       int64            `json:"unauthorized"`
	RefusedRate        int64            `json:"refused_rate"`
	RefusedConcurrency int64            `json:"refused_concurrency"`
	RefusedTokens      int64            `json:"refused_tokens"`
	// RefusedByCause counts the 429s by cause: "requests" (the rpm limit), "tokens" (the tpm
	// limit), "concurrency" (max_concurrency) and "injected" (fault "429").
	RefusedByCause map[string]int64 `json:"refused_by_cause"`
	// TokensCounted are the tokens the token budget counted (prompts of admitted requests,
	// completions of answers).
	TokensCounted       int64           `json:"tokens_counted"`
	ClientGone          int64           `json:"client_gone"`
	Answered            int64           `json:"answered"`
	NotFound            int64           `json:"not_found"`
	MaxRequests1s       int64           `json:"max_requests_1s"`
	MaxInFlight         int64           `json:"max_in_flight"`
	InFlight            int64           `json:"in_flight"`
	OpenConnections     int64           `json:"open_connections"`
	OpenAPIConnections  int64           `json:"open_api_connections"`
	FirstRequestUnix    float64         `json:"first_request_unix"`
	LastRequestUnix     float64         `json:"last_request_unix"`
	ConnectionsTotal    int64           `json:"connections_total"`
	FailFirstNRemaining int64           `json:"fail_first_n_remaining"`
	LastBody            json.RawMessage `json:"last_body"`
	UptimeSeconds       float64         `json:"uptime_seconds"`
	// ByProtocol splits the request counts by protocol ("openai",
	// "anthropic", "mistral"); every protocol is listed.
	ByProtocol map[string]ProtocolStats `json:"by_protocol"`
	// Batch counts what the batch APIs received and did.
	Batch BatchStats `json:"batch"`
	// Bodies are the counts by request body, with count_bodies.
	Bodies *BodyStats `json:"bodies"`
}

// ProtocolStats are the counts of one protocol's endpoint.
type ProtocolStats struct {
	RequestsTotal int64            `json:"requests_total"`
	ByStatus      map[string]int64 `json:"by_status"`
	Valid         int64            `json:"valid"`
	Invalid       int64            `json:"invalid"`
	Unauthorized  int64            `json:"unauthorized"`
	Answered      int64            `json:"answered"`
}

func (s *Server) stats() Stats {
	c := &s.counters
	st := Stats{Batch: s.batchStats(),
		RequestsTotal:      c.total.Load(),
		ByStatus:           map[string]int64{},
		ByFault:            map[string]int64{},
		Valid:              c.valid.Load(),
		Invalid:            c.invalid.Load(),
		Unauthorized:       c.unauthorized.Load(),
		RefusedRate:        c.refusedRate.Load(),
		RefusedConcurrency: c.refusedConcurrency.Load(),
		RefusedTokens:      c.refusedTokens.Load(),
		RefusedByCause: map[string]int64{"requests": c.refusedRate.Load(), "tokens": c.refusedTokens.Load(),
			"concurrency": c.refusedConcurrency.Load(), "injected": c.faults[faultIndex(FaultRateLimit)].Load()},
		TokensCounted:      c.tokens.Load(),
		ClientGone:         c.clientGone.Load(),
		Answered:           c.answered.Load(),
		NotFound:           c.notFound.Load(),
		MaxRequests1s:      int64(c.window.get()),
		MaxInFlight:        c.maxInFlight.Load(),
		InFlight:           s.inFlight.Load(),
		OpenConnections:    s.connsOpen.Load(),
		OpenAPIConnections: s.apiConnsOpen.Load(),
		FirstRequestUnix:   float64(s.counters.firstAt.Load()) / 1e9,
		LastRequestUnix:    float64(s.counters.lastAt.Load()) / 1e9,
		ConnectionsTotal:   s.connsTotal.Load(),
		LastBody:           json.RawMessage("null"),
		UptimeSeconds:      time.Since(s.started).Seconds(),
	}
	for i := range c.status {
		if n := c.status[i].Load(); n > 0 {
			st.ByStatus[strconv.Itoa(i)] = n
		}
	}
	for i, k := range faultKinds {
		if n := c.faults[i].Load(); n > 0 {
			st.ByFault[k] = n
		}
	}
	st.ByProtocol = make(map[string]ProtocolStats, len(s.protocols))
	for i, p := range s.protocols {
		pc := &c.proto[i]
		ps := ProtocolStats{RequestsTotal: pc.total.Load(), ByStatus: map[string]int64{},
			Valid: pc.valid.Load(), Invalid: pc.invalid.Load(), Unauthorized: pc.unauthorized.Load(),
			Answered: pc.answered.Load()}
		for code := range pc.status {
			if n := pc.status[code].Load(); n > 0 {
				ps.ByStatus[strconv.Itoa(code)] = n
			}
		}
		st.ByProtocol[p.name()] = ps
	}
	if rc := s.cfg.Load(); rc.failFirst != nil {
		st.FailFirstNRemaining = max(0, rc.failFirst.Load())
	}
	if b := c.lastBody.Load(); b != nil {
		st.LastBody = rawOrString(*b)
	}
	if s.cfg.Load().CountBodies {
		b := c.bodies.stats()
		st.Bodies = &b
	}
	return st
}

// rawOrString returns b as raw JSON when it is valid JSON, else as a JSON string.
func rawOrString(b []byte) json.RawMessage {
	if json.Valid(b) {
		return json.RawMessage(b)
	}
	s, _ := json.Marshal(string(b))
	return s
}

// recentRequest is one entry of GET /_fake/requests. The request path
// stores the header and body as they are (header and body are not changed
// after the handler returns); redaction and JSON conversion happen when
// the list is read.
type recentRequest struct {
	Seq     uint64              `json:"seq"`
	Time    string              `json:"time"`
	Method  string              `json:"method"`
	Path    string              `json:"path"`
	Status  int                 `json:"status"` // 0: no response (hang, drop, client gone)
	Fault   string              `json:"fault,omitempty"`
	Headers map[string][]string `json:"headers"`
	Body    json.RawMessage     `json:"body"`

	at     time.Time
	header http.Header
	body   []byte
}

// export fills the JSON fields from the stored request.
func (e recentRequest) export() recentRequest {
	if !e.at.IsZero() {
		e.Time = e.at.UTC().Format(time.RFC3339Nano)
	}
	if e.header != nil {
		e.Headers = redactHeaders(e.header)
	}
	if e.Body == nil {
		e.Body = bodyJSON(e.body)
	}
	e.header, e.body = nil, nil
	return e
}

// recentRing keeps the last requests.
type recentRing struct {
	mu    sync.Mutex
	cap   int
	items []recentRequest // len <= cap; in arrival order from start (wrapping)
	start int
}

func (r *recentRing) add(capacity int, item recentRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if capacity <= 0 {
		r.cap, r.items, r.start = 0, nil, 0
		return
	}
	if capacity != r.cap { // (re)size, keeping the newest entries that fit
		old := r.listLocked(0)
		if len(old) > capacity-1 {
			old = old[len(old)-(capacity-1):]
		}
		r.cap, r.items, r.start = capacity, append(make([]recentRequest, 0, capacity), old...), 0
	}
	if len(r.items) < r.cap {
		r.items = append(r.items, item)
		return
	}
	r.items[r.start] = item
	r.start = (r.start + 1) % r.cap
}

// listLocked returns the last n entries (all when n <= 0), oldest first.
func (r *recentRing) listLocked(n int) []recentRequest {
	out := make([]recentRequest, 0, len(r.items))
	out = append(append(out, r.items[r.start:]...), r.items[:r.start]...)
	if n > 0 && len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

func (r *recentRing) list(n int) []recentRequest {
	r.mu.Lock()
	out := r.listLocked(n)
	r.mu.Unlock()
	for i := range out {
		out[i] = out[i].export()
	}
	return out
}

func (r *recentRing) reset() {
	r.mu.Lock()
	r.items, r.start = r.items[:0], 0
	r.mu.Unlock()
}

// redactHeaders copies h, replacing credentials by their length.
func redactHeaders(h http.Header) map[string][]string {
	out := make(map[string][]string, len(h))
	for k, vs := range h {
		switch strings.ToLower(k) {
		case "authorization", "x-api-key", "api-key", "cookie":
			red := make([]string, len(vs))
			for i, v := range vs {
				red[i] = "[redacted, " + strconv.Itoa(len(v)) + " characters]"
			}
			out[k] = red
		default:
			out[k] = append([]string(nil), vs...)
		}
	}
	return out
}
