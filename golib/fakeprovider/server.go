package fakeprovider

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tabscreen/tabscreen/golib/guard"
)

// Server is a fake provider. Create it with New, serve it with Start (or use
// it as an http.Handler), stop it with Close.
type Server struct {
	protocols []protocol

	cfgMu sync.Mutex // serialises configuration changes
	cfg   atomic.Pointer[runtimeConfig]

	counters counters
	recent   recentRing
	buckets  headerBuckets
	// tokenWindow counts the tokens of a tpm limit counted in periods (TPMWindow; TPMSecond's headers).
	tokenWindow tokenWindow
	// secondBucket enforces a tpm limit over seconds (TPMSecond).
	secondBucket secondBucket

	cache   promptCache
	batches batchState

	occMu sync.Mutex
	occ   map[uint64]uint64 // answers given so far per user text

	seq        atomic.Uint64
	inFlight   atomic.Int64 // protocol requests being handled
	active     atomic.Int64 // admitted past the concurrency limit
	connsOpen  atomic.Int64
	connsTotal atomic.Int64
	// apiConns holds the connections that carried an API request; apiConnsOpen counts them.
	apiConns     sync.Map
	apiConnsOpen atomic.Int64

	started  time.Time
	stopping chan struct{}
	stopOnce sync.Once
	httpSrv  *http.Server
	done     chan struct{} // closed when Serve returns
}

// runtimeConfig is a Config with what the request path derives from it.
type runtimeConfig struct {
	Config
	limiter       *slidingLimiter
	faultKind     []string
	faultCum      []float64
	invalidKeys   map[string]bool
	failFirst     *atomic.Int64 // remaining scripted faults
	flexLeft      *atomic.Int64 // remaining flex "resource unavailable" answers
	failFirstKind string
	failMatching  []*matchRule
}

type matchRule struct {
	FailMatching
	used atomic.Int64
}

// New returns a server with configuration cfg (use DefaultConfig() as a base).
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	protocols, err := newProtocols()
	if err != nil {
		return nil, err
	}
	if len(protocols) > maxProtocols {
		return nil, errors.New("fakeprovider: more protocols than maxProtocols")
	}
	s := &Server{
		protocols: protocols,
		occ:       map[uint64]uint64{},
		started:   time.Now(),
		stopping:  make(chan struct{}),
		done:      make(chan struct{}),
	}
	s.cfg.Store(s.compile(cfg, nil, nil))
	return s, nil
}

// compile derives a runtimeConfig. State that must survive a change (the
// rate limiter's history, scripted-fault counters) is taken from old unless
// the setting changed or is named in patched.
func (s *Server) compile(c Config, old *runtimeConfig, patched map[string]bool) *runtimeConfig {
	rc := &runtimeConfig{Config: c, invalidKeys: map[string]bool{}}
	if old != nil && old.RPM == c.RPM {
		rc.limiter = old.limiter
	} else {
		rc.limiter = newRPMLimiter(c.RPM)
	}
	acc := 0.0
	for _, k := range faultKinds { // fixed order: reproducible draws
		if p := c.Faults[k]; p > 0 {
			acc += p
			rc.faultKind = append(rc.faultKind, k)
			rc.faultCum = append(rc.faultCum, acc)
		}
	}
	for _, k := range c.InvalidKeys {
		rc.invalidKeys[k] = true
	}
	if old != nil && !patched["fail_first_n"] {
		rc.failFirst, rc.failFirstKind = old.failFirst, old.failFirstKind
	} else if c.FailFirstN != nil && c.FailFirstN.N > 0 {
		rc.failFirst = new(atomic.Int64)
		rc.failFirst.Store(int64(c.FailFirstN.N))
		rc.failFirstKind = c.FailFirstN.Kind
	}
	if old != nil && !patched["flex_unavailable_n"] {
		rc.flexLeft = old.flexLeft
	} else {
		rc.flexLeft = new(atomic.Int64)
		rc.flexLeft.Store(int64(c.FlexUnavailableN))
	}
	if old != nil && !patched["fail_matching"] {
		rc.failMatching = old.failMatching
	} else {
		for _, m := range c.FailMatching {
			rc.failMatching = append(rc.failMatching, &matchRule{FailMatching: m})
		}
	}
	return rc
}

// Config returns the configuration in force.
func (s *Server) Config() Config { return s.cfg.Load().Config }

// UpdateConfig applies a JSON object of settings (see Config.Merge). With
// replace, unnamed settings return to their defaults.
func (s *Server) UpdateConfig(patch []byte, replace bool) (Config, error) {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	old := s.cfg.Load()
	base := old.Config
	if replace {
		base = DefaultConfig()
	}
	c, err := base.Merge(patch)
	if err != nil {
		return old.Config, err
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(patch, &keys)
	patched := map[string]bool{}
	for k := range keys {
		patched[k] = true
	}
	if replace {
		patched["fail_first_n"], patched["fail_matching"] = true, true
	}
	s.cfg.Store(s.compile(c, old, patched))
	return c, nil
}

// Stats returns the counters.
func (s *Server) Stats() Stats { return s.stats() }

// Reset zeroes the counters, forgets the recent requests and how many
// answers each record had. The configuration is kept.
func (s *Server) Reset() {
	s.counters.reset(s.inFlight.Load())
	s.recent.reset()
	s.occMu.Lock()
	s.occ = map[uint64]uint64{}
	s.occMu.Unlock()
}

// occurrence returns how many answers were given before for the text of hash k (hashString of
// it), and counts one more.
func (s *Server) occurrence(k uint64) uint64 {
	s.occMu.Lock()
	n := s.occ[k]
	s.occ[k] = n + 1
	s.occMu.Unlock()
	return n
}

// Start listens on addr ("127.0.0.1:0" for a free port) and serves in the
// background. It returns the address listened on.
func (s *Server) Start(addr string) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s.httpSrv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnState:         s.connState,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, c)
		},
	}
	go func() {
		defer close(s.done)
		// The fake runs inside an R process too (TsFakeServe): a panic ends serving, which the
		// owner sees through done, not the process.
		defer guard.Recover(func(error) {})
		_ = s.httpSrv.Serve(ln)
	}()
	return ln.Addr(), nil
}

type connKey struct{}

func (s *Server) connState(c net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		s.connsOpen.Add(1)
		s.connsTotal.Add(1)
	case http.StateHijacked, http.StateClosed:
		s.connsOpen.Add(-1)
		if _, wasAPI := s.apiConns.LoadAndDelete(c); wasAPI {
			s.apiConnsOpen.Add(-1)
		}
	}
}

// markAPIConn counts the connection of an API request, so that a client's leftover connections
// can be told apart from the ones a test opens to read the counters.
func (s *Server) markAPIConn(r *http.Request) {
	c, ok := r.Context().Value(connKey{}).(net.Conn)
	if !ok {
		return
	}
	if _, seen := s.apiConns.LoadOrStore(c, true); !seen {
		s.apiConnsOpen.Add(1)
	}
}

// Close stops the server: hanging requests are released (their connections
// closed without a response), then it waits up to timeout for the others.
func (s *Server) Close(timeout time.Duration) error {
	s.stopOnce.Do(func() { close(s.stopping) })
	if s.httpSrv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := s.httpSrv.Shutdown(ctx)
	if err != nil {
		err = s.httpSrv.Close()
	}
	<-s.done
	return err
}

// ServeHTTP routes a request: /_fake/ control endpoints, else the first
// protocol whose endpoint matches the path.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/_fake/") {
		s.serveControl(w, r)
		return
	}
	s.markAPIConn(r)
	if s.serveBatch(w, r) {
		return
	}
	for i, p := range s.protocols {
		if p.match(r.URL.Path) {
			s.serveChat(w, r, p, i)
			return
		}
	}
	s.counters.notFound.Add(1)
	p := s.notFoundProtocol(r.URL.Path)
	w.Header().Set(requestIDHeader(p), randomID("req_", 32, hash(saltID, uint64(time.Now().UnixNano()))))
	p.writeFailure(w, &failure{kind: failNotFound, message: "Invalid URL (" + r.Method + " " + r.URL.Path + ")"})
}

// notFoundProtocol is the protocol that words a 404 for path: one that owns
// the path, else the last in match order (the fallback protocol).
func (s *Server) notFoundProtocol(path string) protocol {
	for _, p := range s.protocols {
		if o, ok := p.(pathOwner); ok && o.owns(path) {
			return p
		}
	}
	return s.protocols[len(s.protocols)-1]
}

func (s *Server) serveControl(w http.ResponseWriter, r *http.Request) {
	route := r.Method + " " + strings.TrimSuffix(r.URL.Path, "/")
	switch route {
	case "GET /_fake/health":
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "ok\n")
	case "GET /_fake/stats":
		writeJSON(w, http.StatusOK, s.stats())
	case "POST /_fake/reset":
		s.Reset()
		writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	case "GET /_fake/config":
		writeJSON(w, http.StatusOK, s.Config())
	case "POST /_fake/config":
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		replace := r.URL.Query().Get("replace")
		c, err := s.UpdateConfig(body, replace == "1" || replace == "true")
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, c)
	case "GET /_fake/protocols":
		paths := make(map[string]string, len(s.protocols))
		for _, p := range s.protocols {
			paths[p.name()] = p.chatPath()
		}
		writeJSON(w, http.StatusOK, paths)
	case "GET /_fake/requests":
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		writeJSON(w, http.StatusOK, s.recent.list(n))
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "unknown control endpoint " + route})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"encoding failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
