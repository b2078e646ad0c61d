package fakeprovider

// The batch APIs, in simulated time: a batch ends batch_delay_ms after it was created, and its
// lines are answered then, each through the protocol's own chat endpoint (so a line's answer is
// what a synchronous request would get). What differs between the protocols' batch wire formats
// is in batch_<protocol>.go; the files, batches and line fates are shared here.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// BatchStats count what the batch APIs received.
type BatchStats struct {
	Created        int64 `json:"created"`
	CreateRefused  int64 `json:"create_refused"`
	LinesReceived  int64 `json:"lines_received"`
	Cancelled      int64 `json:"cancelled"`
	FilesUploaded  int64 `json:"files_uploaded"`
	LinesFailed    int64 `json:"lines_failed"`
	LinesGarbled   int64 `json:"lines_garbled"`
	LinesExpired   int64 `json:"lines_expired"`
	LinesVanished  int64 `json:"lines_vanished"`
	LinesAnswered  int64 `json:"lines_answered"`
	ResultsFetched int64 `json:"results_fetched"`
}

type batchState struct {
	mu      sync.Mutex
	seq     int
	files   map[string][]byte
	batches map[string]*fakeBatch
	order   []string        // batch ids, oldest first
	seen    map[uint64]bool // lines answered or failed before: sent again, they are answered
	refused bool            // batch_create_fail_once has refused a create
	stats   BatchStats
}

// fakeBatch is one batch at the fake.
type fakeBatch struct {
	id, protocol, tag string
	created, endsAt   time.Time
	lines             []batchLine
	header            http.Header // of the create call: the lines run with its key
	state             string      // "in_progress", then "ended" or "cancelled"
	results           []lineResult
	outputFile        string
	errorFile         string
	meta              map[string]string
}

// batchLine is one request of a batch: its custom id and chat body.
type batchLine struct {
	customID string
	body     []byte
}

// lineFate is what the fake makes of a line.
type lineFate uint8

const (
	fateAnswer   lineFate = iota
	fateFail              // a 500 response
	fateFailZero          // no response (status_code 0)
	fateExpire
	fateVanish
	fateFailNumeric // a 500 response, and an error with a numeric code
	fateGarbled     // answered, and written cut in the middle (not JSON)
)

type lineResult struct {
	customID string
	fate     lineFate
	status   int
	body     []byte
}

func (b *batchState) init() {
	if b.files == nil {
		b.files, b.batches, b.seen = map[string][]byte{}, map[string]*fakeBatch{}, map[uint64]bool{}
	}
}

func (b *batchState) nextID(prefix string) string {
	b.seq++
	return fmt.Sprintf("%s%06d", prefix, b.seq)
}

// refuseCreate reports whether this create is the one batch_create_fail_once refuses.
func (s *Server) refuseCreate() bool {
	rc := s.cfg.Load()
	b := &s.batches
	b.mu.Lock()
	defer b.mu.Unlock()
	if rc.BatchCreateFailAlways || rc.BatchCreateFailOnce && !b.refused {
		b.refused = true
		b.stats.CreateRefused++
		return true
	}
	return false
}

// addBatch registers a new batch of lines.
func (s *Server) addBatch(protocol, prefix string, lines []batchLine, h http.Header, meta map[string]string) *fakeBatch {
	rc := s.cfg.Load()
	b := &s.batches
	b.mu.Lock()
	defer b.mu.Unlock()
	b.init()
	now := time.Now()
	fb := &fakeBatch{id: b.nextID(prefix), protocol: protocol, created: now, lines: lines, header: h.Clone(),
		endsAt: now.Add(time.Duration(rc.BatchDelayMS * float64(time.Millisecond))), state: "in_progress", meta: meta}
	b.batches[fb.id] = fb
	b.order = append(b.order, fb.id)
	b.stats.Created++
	b.stats.LinesReceived += int64(len(lines))
	return fb
}

// batch returns a batch, run to its end when its time has come.
func (s *Server) batch(id string) (*fakeBatch, bool) {
	b := &s.batches
	b.mu.Lock()
	fb, ok := b.batches[id]
	b.mu.Unlock()
	if !ok {
		return nil, false
	}
	s.advance(fb)
	return fb, true
}

// advance runs an in-progress batch whose time has come: every line through the chat endpoint.
func (s *Server) advance(fb *fakeBatch) {
	b := &s.batches
	b.mu.Lock()
	if fb.state != "in_progress" || time.Now().Before(fb.endsAt) {
		b.mu.Unlock()
		return
	}
	fb.state = "running"
	b.mu.Unlock()
	rc := s.cfg.Load()
	results := make([]lineResult, len(fb.lines))
	for i, l := range fb.lines {
		key := hashString(fb.protocol + "\x00" + l.customID + "\x00" + string(l.body))
		b.mu.Lock()
		again := b.seen[key]
		b.seen[key] = true
		b.mu.Unlock()
		fate := fateAnswer
		if !again {
			fate = drawFate(rc, key)
		}
		r := lineResult{customID: l.customID, fate: fate}
		switch fate {
		case fateAnswer, fateGarbled:
			r.status, r.body = s.runLine(fb, l.body)
		case fateFail, fateFailNumeric:
			r.status = http.StatusInternalServerError
		}
		results[i] = r
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range results {
		switch r.fate {
		case fateAnswer:
			b.stats.LinesAnswered++
		case fateFail, fateFailZero, fateFailNumeric:
			b.stats.LinesFailed++
		case fateGarbled:
			b.stats.LinesGarbled++
		case fateExpire:
			b.stats.LinesExpired++
		case fateVanish:
			b.stats.LinesVanished++
		}
	}
	fb.results, fb.state = results, "ended"
}

func drawFate(rc *runtimeConfig, key uint64) lineFate {
	u := float64(hash(uint64(rc.Seed), key, 0xba7c)%1_000_000) / 1_000_000
	acc := 0.0
	for _, f := range []struct {
		p    float64
		fate lineFate
	}{{rc.BatchFail, fateFail}, {rc.BatchFailZero, fateFailZero}, {rc.BatchExpire, fateExpire}, {rc.BatchVanish, fateVanish},
		{rc.BatchFailNumeric, fateFailNumeric}, {rc.BatchGarbled, fateGarbled}} {
		acc += f.p
		if u < acc {
			return f.fate
		}
	}
	return fateAnswer
}

// runLine sends one line's body to the protocol's chat endpoint, with the batch's key.
func (s *Server) runLine(fb *fakeBatch, body []byte) (int, []byte) {
	for i, p := range s.protocols {
		if p.name() != fb.protocol {
			continue
		}
		req := httptest.NewRequest(http.MethodPost, p.chatPath(), bytes.NewReader(body))
		req.Header = fb.header.Clone()
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.serveChat(rec, req, p, i)
		return rec.Code, rec.Body.Bytes()
	}
	return http.StatusInternalServerError, []byte(`{"error":{"message":"unknown protocol"}}`)
}

// cancelBatch cancels a batch that has not ended: its lines are not run.
func (s *Server) cancelBatch(fb *fakeBatch) {
	b := &s.batches
	b.mu.Lock()
	defer b.mu.Unlock()
	if fb.state != "in_progress" {
		return
	}
	fb.state = "cancelled"
	b.stats.Cancelled++
	for _, l := range fb.lines {
		fb.results = append(fb.results, lineResult{customID: l.customID, fate: fateExpire})
	}
}

// listBatches lists a protocol's batches, newest first.
func (s *Server) listBatches(protocol string) []*fakeBatch {
	b := &s.batches
	b.mu.Lock()
	var out []*fakeBatch
	for i := len(b.order) - 1; i >= 0; i-- {
		if fb := b.batches[b.order[i]]; fb.protocol == protocol {
			out = append(out, fb)
		}
	}
	b.mu.Unlock()
	for _, fb := range out {
		s.advance(fb)
	}
	return out
}

// storeFile keeps an uploaded or produced file.
func (s *Server) storeFile(prefix string, content []byte, uploaded bool) string {
	b := &s.batches
	b.mu.Lock()
	defer b.mu.Unlock()
	b.init()
	id := b.nextID(prefix)
	b.files[id] = content
	if uploaded {
		b.stats.FilesUploaded++
	}
	return id
}

func (s *Server) file(id string) ([]byte, bool) {
	b := &s.batches
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.files[id]
	if ok {
		b.stats.ResultsFetched++
	}
	return f, ok
}

func (s *Server) batchStats() BatchStats {
	b := &s.batches
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stats
}

// counts are a batch's request counts: total, succeeded, failed (expired and vanished lines are
// counted as neither, as OpenAI does).
func (fb *fakeBatch) counts() (total, ok, failed int) {
	for _, r := range fb.results {
		switch {
		case r.answered() && r.status == http.StatusOK:
			ok++
		case r.answered() || r.failed():
			failed++
		}
	}
	return len(fb.lines), ok, failed
}

// answered: the line ran and has a response (written whole or not).
func (r lineResult) answered() bool { return r.fate == fateAnswer || r.fate == fateGarbled }

// failed: the line failed at the provider.
func (r lineResult) failed() bool {
	return r.fate == fateFail || r.fate == fateFailZero || r.fate == fateFailNumeric
}

// resultLine is a result line's JSON, with the fields no client knows when the fake adds them, cut
// in the middle when its fate says so.
func (s *Server) resultLine(line map[string]any, fate lineFate) []byte {
	s.oddFields(line)
	enc, _ := json.Marshal(line)
	if fate == fateGarbled {
		enc = enc[:len(enc)/2]
	}
	return append(enc, '\n')
}

// oddFields adds fields no client knows, one of them null, to a result line or batch object when
// batch_unknown_fields is set.
func (s *Server) oddFields(obj map[string]any) {
	if s.cfg.Load().BatchUnknownFields {
		obj["x_fake_unknown"] = map[string]any{"note": "a field no client knows", "values": []any{1, nil, "two"}}
		obj["x_fake_null"] = nil
	}
}

// serveBatch routes the batch APIs; false when the path is not one of theirs.
func (s *Server) serveBatch(w http.ResponseWriter, r *http.Request) bool {
	if !s.cfg.Load().Batches {
		return false
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	for _, route := range batchRoutes {
		if parts, ok := route.match(r.Method, path); ok {
			route.serve(s, w, r, parts)
			return true
		}
	}
	return false
}

// batchRoute is one endpoint: a method and a path pattern whose "*" segments are handed over.
type batchRoute struct {
	method, pattern string
	serve           func(s *Server, w http.ResponseWriter, r *http.Request, parts []string)
}

// fileBatchRoutes are the routes of a batch API whose lines are uploaded as a file (OpenAI, and
// Mistral's file mode): the files under base, the batches at jobs.
func fileBatchRoutes(base, jobs string, create, list func(*Server, http.ResponseWriter, *http.Request, []string),
	api fakeBatchAPI) []batchRoute {
	return []batchRoute{
		{http.MethodPost, base + "/files", (*Server).openAIUpload},
		{http.MethodGet, base + "/files/*/content", (*Server).openAIFileContent},
		{http.MethodPost, jobs, create},
		{http.MethodGet, jobs, list},
		{http.MethodGet, jobs + "/*", api.get},
		{http.MethodPost, jobs + "/*/cancel", api.cancel},
	}
}

// match matches the end of the path against the pattern.
func (b batchRoute) match(method, path string) ([]string, bool) {
	if method != b.method {
		return nil, false
	}
	pat := strings.Split(strings.Trim(b.pattern, "/"), "/")
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if len(segs) < len(pat) {
		return nil, false
	}
	segs = segs[len(segs)-len(pat):]
	var parts []string
	for i, p := range pat {
		switch {
		case p == "*":
			parts = append(parts, segs[i])
		case p != segs[i]:
			return nil, false
		}
	}
	// A Mistral path is under /mistral/, the others are not.
	if strings.HasPrefix(path, "/mistral/") != strings.HasPrefix(b.pattern, "/mistral/") {
		return nil, false
	}
	return parts, true
}

var batchRoutes []batchRoute

func (s *Server) noteResultsFetched() {
	b := &s.batches
	b.mu.Lock()
	b.stats.ResultsFetched++
	b.mu.Unlock()
}

// pageAfter is a page of batches (newest first) after the one with id after.
func pageAfter(all []*fakeBatch, limitText, after string) ([]*fakeBatch, bool) {
	limit, err := strconv.Atoi(limitText)
	if err != nil || limit < 1 || limit > 100 {
		limit = 20
	}
	start := 0
	if after != "" {
		for i, fb := range all {
			if fb.id == after {
				start = i + 1
			}
		}
	}
	end := min(start+limit, len(all))
	return all[start:end], end < len(all)
}

// responseFiles writes (once) the batch's output and error files in the line format OpenAI and
// Mistral share: a response (status_code and body), or an error.
func (s *Server) responseFiles(fb *fakeBatch) (string, string) {
	b := &s.batches
	b.mu.Lock()
	done := fb.outputFile != "" || fb.errorFile != ""
	out, errs := fb.outputFile, fb.errorFile
	b.mu.Unlock()
	if done {
		return out, errs
	}
	var ob, eb bytes.Buffer
	for i, r := range fb.results {
		line := map[string]any{"id": "batch_req_" + strconv.Itoa(i), "custom_id": r.customID, "response": nil, "error": nil}
		switch r.fate {
		case fateAnswer, fateFail, fateGarbled, fateFailNumeric:
			body := json.RawMessage(r.body)
			if len(r.body) == 0 {
				body = json.RawMessage(`{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`)
			}
			resp := map[string]any{"status_code": r.status, "request_id": "req_" + strconv.Itoa(i), "body": body}
			s.oddFields(resp)
			line["response"] = resp
			if r.fate == fateFailNumeric {
				line["error"] = map[string]any{"message": "Internal server error", "code": 500}
			}
		case fateFailZero:
			line["response"] = map[string]any{"status_code": 0, "request_id": "", "body": map[string]any{}}
			line["error"] = map[string]string{"code": "server_error", "message": "The request could not be processed."}
		case fateExpire:
			line["error"] = map[string]string{"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}
		case fateVanish:
			continue
		}
		enc := s.resultLine(line, r.fate)
		if r.fate == fateAnswer || r.fate == fateFail || r.fate == fateGarbled {
			ob.Write(enc)
		} else {
			eb.Write(enc)
		}
	}
	if ob.Len() > 0 {
		out = s.storeFile("file-", ob.Bytes(), false)
	}
	if eb.Len() > 0 {
		errs = s.storeFile("file-", eb.Bytes(), false)
	}
	b.mu.Lock()
	if fb.outputFile == "" && fb.errorFile == "" {
		fb.outputFile, fb.errorFile = out, errs
	}
	out, errs = fb.outputFile, fb.errorFile
	b.mu.Unlock()
	return out, errs
}

// fakeBatchAPI is what the get and cancel endpoints of a protocol's batch API need: its
// authentication, its 404, and how it writes a batch.
type fakeBatchAPI struct {
	protocol   string
	authorized func(s *Server, w http.ResponseWriter, r *http.Request) bool
	notFound   func(w http.ResponseWriter, id string)
	object     func(s *Server, r *http.Request, fb *fakeBatch) map[string]any
}

// find returns the protocol's batch with the id, or writes the refusal.
func (a fakeBatchAPI) find(s *Server, w http.ResponseWriter, r *http.Request, id string) (*fakeBatch, bool) {
	if !a.authorized(s, w, r) {
		return nil, false
	}
	fb, ok := s.batch(id)
	if !ok || fb.protocol != a.protocol {
		a.notFound(w, id)
		return nil, false
	}
	return fb, true
}

func (a fakeBatchAPI) get(s *Server, w http.ResponseWriter, r *http.Request, parts []string) {
	if fb, ok := a.find(s, w, r, parts[0]); ok {
		writeJSON(w, http.StatusOK, a.object(s, r, fb))
	}
}

func (a fakeBatchAPI) cancel(s *Server, w http.ResponseWriter, r *http.Request, parts []string) {
	if fb, ok := a.find(s, w, r, parts[0]); ok {
		s.cancelBatch(fb)
		writeJSON(w, http.StatusOK, a.object(s, r, fb))
	}
}

// fileLine is one line of an uploaded batch file (OpenAI's; Mistral's has no method and url).
type fileLine struct {
	CustomID string          `json:"custom_id"`
	Method   string          `json:"method"`
	URL      string          `json:"url"`
	Body     json.RawMessage `json:"body"`
}

// fileLines reads the lines of an uploaded JSONL file; false when a line is not JSON, has no body,
// or is refused by valid.
func fileLines(content []byte, valid func(fileLine) bool) ([]batchLine, bool) {
	var lines []batchLine
	sc := bufio.NewScanner(bytes.NewReader(content))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var l fileLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || len(l.Body) == 0 || !valid(l) {
			return nil, false
		}
		lines = append(lines, batchLine{customID: l.CustomID, body: l.Body})
	}
	return lines, sc.Err() == nil
}
