// Package review serves the page of screen_review(): a reviewer decides the records of a screening
// one at a time in the browser, and every click is committed to the answer store (synchronous =
// FULL) before the page is told it is saved. The server runs in a child R process that R starts
// and that does nothing but wait in TsReviewServe, so it answers while the user's R session is busy
// and no goroutine ever calls into R. The page and its script are embedded; the records come from
// a JSON file that R writes and the server hands to the page unread, apart from the keys it needs
// to file decisions.
package review

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tabscreen/tabscreen/golib/guard"
	"github.com/tabscreen/tabscreen/golib/lifeline"
	"github.com/tabscreen/tabscreen/golib/store"
)

//go:embed page
var page embed.FS

// Limits on what a request may carry: a note is a sentence or a paragraph, not a document.
const (
	maxBody     = 64 << 10
	maxNote     = 10000
	maxReviewer = 100
	maxID       = 100
)

// item is what the server reads of a record of the page file; the rest is the page's.
type item struct {
	StudyID  string   `json:"studyid"`
	Group    string   `json:"group"`
	PromptID *int64   `json:"promptid"`
	Model    *string  `json:"model"`
	TopP     *float64 `json:"top_p"`
	Queues   []string `json:"queues"`
}

type key struct{ studyid, group string }

// Server is the review app of one run.
type Server struct {
	store  *store.Store
	runID  string
	page   json.RawMessage
	items  map[key]store.ReviewItem
	token  string
	finish chan struct{}
	once   sync.Once
}

// NewServer checks the page file's records and makes the app. The store must have its review
// tables (EnsureReview).
func NewServer(st *store.Store, runID string, pageJSON []byte, token string) (*Server, error) {
	var doc struct {
		Items []item `json:"items"`
	}
	if err := json.Unmarshal(pageJSON, &doc); err != nil {
		return nil, fmt.Errorf("the review's records are not valid JSON: %w", err)
	}
	items := make(map[key]store.ReviewItem, len(doc.Items))
	for i, it := range doc.Items {
		if it.StudyID == "" {
			return nil, fmt.Errorf("record %d of the review has no study id", i+1)
		}
		k := key{it.StudyID, it.Group}
		if _, dup := items[k]; dup {
			return nil, fmt.Errorf("study id %q appears twice for the same prompt and model", it.StudyID)
		}
		ri := store.ReviewItem{StudyID: it.StudyID, Group: it.Group}
		if it.PromptID != nil {
			ri.PromptID.Int64, ri.PromptID.Valid = *it.PromptID, true
		}
		if it.Model != nil {
			ri.Model.String, ri.Model.Valid = *it.Model, true
		}
		if it.TopP != nil {
			ri.TopP.Float64, ri.TopP.Valid = *it.TopP, true
		}
		for _, q := range it.Queues {
			ri.Audit = ri.Audit || q == "audit"
		}
		items[k] = ri
	}
	return &Server{store: st, runID: runID, page: pageJSON, items: items, token: token, finish: make(chan struct{})}, nil
}

// Finished is closed when the reviewer presses Finish.
func (s *Server) Finished() <-chan struct{} { return s.finish }

func (s *Server) item(studyid, group string) (store.ReviewItem, bool) {
	it, ok := s.items[key{studyid, group}]
	return it, ok
}

// Handler serves the page and the API. The API asks for the run's token in a header: the page
// has it from its URL, another web page in the same browser or another user of the machine has not.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", s.static)
	mux.HandleFunc("/api/state", s.api(http.MethodGet, s.state))
	mux.HandleFunc("/api/decide", s.api(http.MethodPost, s.decide))
	mux.HandleFunc("/api/undo", s.api(http.MethodPost, s.undo))
	mux.HandleFunc("/api/finish", s.api(http.MethodPost, s.done))
	return mux
}

// The page loads nothing from elsewhere and runs no inline script: even a title that slipped
// past the page's escaping could not run code.
const contentPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'"

func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

var staticTypes = map[string]string{
	"/index.html": "text/html; charset=utf-8",
	"/app.js":     "text/javascript; charset=utf-8",
	"/app.css":    "text/css; charset=utf-8",
}

func (s *Server) static(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Path
	if name == "/" {
		name = "/index.html"
	}
	ctype, ok := staticTypes[name]
	if !ok || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		http.NotFound(w, r)
		return
	}
	body, err := page.ReadFile("page" + name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	securityHeaders(w.Header())
	w.Header().Set("Content-Type", ctype)
	_, _ = w.Write(body)
}

type apiError struct {
	status  int
	message string
}

func (e *apiError) Error() string { return e.message }

func badRequest(format string, args ...any) error {
	return &apiError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

func (s *Server) api(method string, h func(*http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w.Header())
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		status, out := http.StatusOK, any(nil)
		got := r.Header.Get("X-Tabscreen-Token")
		switch {
		case subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) != 1:
			status, out = http.StatusForbidden, errorBody("this page's token is not the app's: open the address screen_review() printed")
		case r.Method != method:
			status, out = http.StatusMethodNotAllowed, errorBody("use "+method)
		case method == http.MethodPost && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json"):
			status, out = http.StatusUnsupportedMediaType, errorBody("send JSON")
		default:
			var err error
			out, err = h(r)
			if err != nil {
				var ae *apiError
				if errors.As(err, &ae) {
					status = ae.status
				} else {
					status = http.StatusInternalServerError
				}
				out = errorBody(err.Error())
			}
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(out)
	}
}

func errorBody(message string) map[string]string { return map[string]string{"error": message} }

func (s *Server) state(r *http.Request) (any, error) {
	decisions, err := s.store.ReviewDecisions(s.runID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"run_id": s.runID, "store": s.store.Path, "page": s.page, "decisions": decisions}, nil
}

func readJSON(r *http.Request, v any) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return badRequest("the request could not be read: %v", err)
	}
	if len(body) > maxBody {
		return &apiError{http.StatusRequestEntityTooLarge, "the request is too large"}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return badRequest("the request is not valid JSON: %v", err)
	}
	return nil
}

func checkReviewer(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > maxReviewer || strings.ContainsAny(name, "\r\n\t") {
		return "", badRequest("the reviewer's name must be 1 to %d characters on one line", maxReviewer)
	}
	return name, nil
}

func (s *Server) decide(r *http.Request) (any, error) {
	var req store.Decision // decided_at, if sent, is the page's clock: the store sets its own
	if err := readJSON(r, &req); err != nil {
		return nil, err
	}
	reviewer, err := checkReviewer(req.Reviewer)
	if err != nil {
		return nil, err
	}
	it, ok := s.item(req.StudyID, req.Group)
	if !ok {
		return nil, badRequest("no record %q in this review", req.StudyID)
	}
	if !store.ValidDecision(req.Decision) {
		return nil, badRequest("%q is not a decision: Include, Exclude or Unsure", req.Decision)
	}
	if utf8.RuneCountInString(req.Note) > maxNote {
		return nil, badRequest("the note is longer than %d characters", maxNote)
	}
	if utf8.RuneCountInString(req.ID) > maxID || strings.ContainsAny(req.ID, "\r\n\t") {
		return nil, badRequest("the decision's id must be at most %d characters on one line", maxID)
	}
	if math.IsNaN(req.Seconds) || math.IsInf(req.Seconds, 0) || req.Seconds < 0 {
		req.Seconds = 0
	}
	req.Reviewer, req.Note, req.ID = reviewer, strings.TrimSpace(req.Note), strings.TrimSpace(req.ID)
	// A decision sent again (its id is stored) is answered with the reviewer's decision now, which
	// may be null: it was undone since.
	d, err := s.store.Decide(s.runID, it, req)
	if err != nil {
		return nil, err
	}
	return map[string]any{"decision": d}, nil
}

func (s *Server) undo(r *http.Request) (any, error) {
	var req struct {
		Reviewer string `json:"reviewer"`
	}
	if err := readJSON(r, &req); err != nil {
		return nil, err
	}
	reviewer, err := checkReviewer(req.Reviewer)
	if err != nil {
		return nil, err
	}
	u, err := s.store.Undo(s.runID, reviewer, s.item)
	if err != nil {
		return nil, err
	}
	return map[string]any{"undone": u}, nil
}

func (s *Server) done(*http.Request) (any, error) {
	s.once.Do(func() { close(s.finish) })
	return map[string]any{"finished": true}, nil
}

// Options of Serve.
type Options struct {
	Store string `json:"store"`
	RunID string `json:"run_id"`
	// Page is the JSON file R wrote: {"meta": {...}, "items": [...]}.
	Page string `json:"page"`
	// Port to listen on; 0 takes the run's port of an earlier start when it is free, else any.
	Port     int    `json:"port"`
	PortFile string `json:"port_file"`
	// Stdin, when not nil, is watched: its end (R closed the pipe, or died) stops the server.
	Stdin io.Reader `json:"-"`
	// Started, when not nil, is told the page's address.
	Started func(url string) `json:"-"`
}

// Address is what the port file holds once the page is served.
type Address struct {
	Port  int    `json:"port"`
	Token string `json:"token"`
	URL   string `json:"url"`
}

// Serve opens the store, serves the run's page on 127.0.0.1 and returns when ctx ends, Stdin
// closes or the reviewer presses Finish.
func Serve(ctx context.Context, opts Options) error {
	if opts.RunID == "" {
		return errors.New("no run to review")
	}
	st, err := store.OpenDurable(opts.Store)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.EnsureReview(); err != nil {
		return err
	}
	pageJSON, err := os.ReadFile(opts.Page)
	if err != nil {
		return fmt.Errorf("the review's records cannot be read: %w", err)
	}
	stored, token, err := st.Access(opts.RunID)
	if err != nil {
		return err
	}
	srv, err := NewServer(st, opts.RunID, pageJSON, token)
	if err != nil {
		return err
	}
	ln, err := listen(opts.Port, stored)
	if err != nil {
		return err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if stored == 0 {
		if err := st.SetAccessPort(opts.RunID, port); err != nil {
			ln.Close()
			return err
		}
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	guard.Go(func(err error) { served <- err }, func() { served <- hs.Serve(ln) })
	addr := Address{Port: port, Token: token, URL: fmt.Sprintf("http://127.0.0.1:%d/?token=%s", port, token)}
	if opts.PortFile != "" {
		if err := writeAddress(opts.PortFile, addr); err != nil {
			_ = hs.Close()
			return err
		}
		defer os.Remove(opts.PortFile)
	}
	if opts.Started != nil {
		opts.Started(addr.URL)
	}
	ctx, stop := lifeline.Until(ctx, opts.Stdin)
	defer stop()
	select {
	case <-ctx.Done():
	case <-srv.Finished():
	case err := <-served:
		return err
	}
	// Let the answer to Finish (or a decision in flight) reach the page before the port closes.
	shutdown, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return hs.Shutdown(shutdown)
}

// listen takes the port asked for; else the run's earlier port, so that a page left open
// reconnects after a restart; else any free port.
func listen(asked, stored int) (net.Listener, error) {
	if asked > 0 {
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(asked))
		if err != nil {
			return nil, fmt.Errorf("port %d cannot be used: %w", asked, err)
		}
		return ln, nil
	}
	// The app killed a moment ago may still hold the port while it closes: wait a little for it
	// before taking another, which a tab left open would not find.
	for try := 0; stored > 0 && try < 15; try++ {
		if ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(stored)); err == nil {
			return ln, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return net.Listen("tcp", "127.0.0.1:0")
}

// writeAddress writes the port file whole or not at all, so that R polling for it never reads
// half of it.
func writeAddress(path string, addr Address) error {
	b, err := json.Marshal(addr)
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
