package fakeprovider

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const maxBodyBytes = 32 << 20

// serveChat handles one request to a protocol's chat endpoint:
// body -> auth -> rate limit -> concurrency limit -> validation ->
// fault choice -> latency -> answer or fault.
func (s *Server) serveChat(w http.ResponseWriter, r *http.Request, p protocol, pi int) {
	now := time.Now()
	seq := s.seq.Add(1)
	c := &s.counters
	pc := &c.proto[pi] // the same counts, for this protocol alone
	c.total.Add(1)
	pc.total.Add(1)
	c.noteArrival(now)
	c.window.add(now)
	c.noteInFlight(s.inFlight.Add(1))
	defer s.inFlight.Add(-1)

	rc := s.cfg.Load()
	reqID := randomID("req_", 32, hash(uint64(rc.Seed), saltID, seq))
	w.Header().Set(requestIDHeader(p), reqID)
	// Rate-limit headers on every response; the answer and the limits' own
	// refusals overwrite them with what they took.
	p.setRateHeaders(w.Header(), s.snapshot(rc, now, 0, 0))

	status, fault := 0, ""
	faultCounted := false
	var body []byte
	defer func() {
		if status > 0 && status < len(c.status) {
			c.status[status].Add(1)
			pc.status[status].Add(1)
		}
		if fault != "" && !faultCounted {
			c.faults[faultIndex(fault)].Add(1)
		}
		if rc.KeepRequests > 0 {
			s.recent.add(rc.KeepRequests, recentRequest{Seq: seq, Method: r.Method, Path: r.URL.Path,
				Status: status, Fault: fault, at: now, header: r.Header, body: body})
		}
	}()
	fail := func(f *failure) {
		status = failureStatus(f.kind)
		p.writeFailure(w, f)
	}

	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		fail(&failure{kind: failMethod, message: "Invalid URL (" + r.Method + " " + r.URL.Path + ")"})
		return
	}
	// The body is read before anything is refused, so that every request
	// shows in last_body and /_fake/requests, and a refusal leaves the
	// connection reusable (net/http closes one whose body was left unread
	// after "Expect: 100-continue").
	var err error
	body, err = readBody(http.MaxBytesReader(w, r.Body, maxBodyBytes), r.ContentLength)
	if err != nil {
		c.invalid.Add(1)
		pc.invalid.Add(1)
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			fail(&failure{kind: failTooLarge, message: "Request too large."})
		} else {
			fail(&failure{kind: failInvalidRequest, message: "Could not read the request body: " + err.Error()})
		}
		return
	}
	c.lastBody.Store(&body)
	var bodyKey [32]byte
	if rc.CountBodies {
		bodyKey = c.bodies.sent(body)
	}
	key := p.apiKey(r)
	if key == "" {
		c.unauthorized.Add(1)
		pc.unauthorized.Add(1)
		fail(&failure{kind: failMissingKey})
		return
	}
	if rc.invalidKeys[key] {
		c.unauthorized.Add(1)
		pc.unauthorized.Add(1)
		fail(&failure{kind: failInvalidKey, key: key})
		return
	}
	if rc.limiter != nil {
		if ok, retry := rc.limiter.admit(now); !ok {
			c.refusedRate.Add(1)
			p.setRateHeaders(w.Header(), s.snapshot(rc, now, 0, 0))
			fail(&failure{kind: failRateLimit, retryAfter: retry, hasRetry: true, limit: int64(rc.RPM)})
			return
		}
	}
	if rc.MaxConcurrency > 0 {
		n := s.active.Add(1)
		defer s.active.Add(-1)
		if n > int64(rc.MaxConcurrency) {
			c.refusedConcurrency.Add(1)
			fail(&failure{kind: failConcurrency, hasRetry: true,
				retryAfter: time.Duration(rc.RetryAfterMS) * time.Millisecond, limit: int64(rc.MaxConcurrency)})
			return
		}
	}
	if !isJSONContentType(r.Header.Get("Content-Type")) {
		c.invalid.Add(1)
		pc.invalid.Add(1)
		fail(&failure{kind: failInvalidRequest, message: "Invalid Content-Type header (" +
			r.Header.Get("Content-Type") + "), expected application/json."})
		return
	}
	req, f := p.parse(r, body, rc)
	if f != nil {
		c.invalid.Add(1)
		pc.invalid.Add(1)
		fail(f)
		return
	}
	// The request's prompt tokens are taken from the token budget when it is admitted, its
	// completion when it is answered; with a tpm limit, a budget short of the prompt refuses it.
	prompt := promptTokens(req)
	if rc.TPM > 0 {
		ok, wait, used := s.admitTokens(rc, time.Now(), int64(prompt))
		if !ok {
			c.refusedTokens.Add(1)
			p.setRateHeaders(w.Header(), s.snapshot(rc, time.Now(), 0, 0))
			fail(&failure{kind: failRateLimit, retryAfter: wait, hasRetry: true, limit: rc.TPM, tokens: true,
				used: used, requested: int64(prompt), model: req.model})
			return
		}
	} else {
		s.buckets.take(time.Now(), s.requestLimit(rc), s.tokenLimit(rc), 0, prompt)
	}
	c.tokens.Add(int64(prompt))
	c.valid.Add(1)
	pc.valid.Add(1)
	if req.flex && rc.flexLeft != nil && rc.flexLeft.Add(-1) >= 0 {
		fail(&failure{kind: failFlexUnavailable})
		return
	}
	req.cacheRead, req.cacheWrite = s.cache.lookup(req.cache, req.cacheExplicit, now)

	fault = protocolFault(p, s.pickFault(rc, req, seq))
	ctx := r.Context()
	if fault == FaultHang {
		select {
		case <-ctx.Done():
			c.clientGone.Add(1)
			return
		case <-s.stopping:
			panic(http.ErrAbortHandler) // close the connection, no response
		}
	}
	if d := latency(rc, seq); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			c.clientGone.Add(1)
			return
		case <-s.stopping:
			t.Stop()
			panic(http.ErrAbortHandler)
		}
	}
	retry := time.Duration(rc.RetryAfterMS) * time.Millisecond
	switch fault {
	case FaultDrop:
		// Counted before the connection closes: the client learns of the drop at once and may
		// read the counters before this handler returns.
		c.faults[faultIndex(fault)].Add(1)
		faultCounted = true
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = conn.Close()
			return
		}
		panic(http.ErrAbortHandler) // not hijackable (HTTP/2): abort the stream
	case FaultRateLimit:
		p.setRateHeaders(w.Header(), s.snapshot(rc, now, 1, 0))
		fail(&failure{kind: failRateLimit, retryAfter: retry, hasRetry: true, limit: s.requestLimit(rc)})
		return
	case FaultQuota:
		fail(&failure{kind: failQuota})
		return
	case Fault500:
		fail(&failure{kind: failServer})
		return
	case Fault502:
		fail(&failure{kind: failBadGateway})
		return
	case Fault503:
		fail(&failure{kind: failUnavailable})
		return
	case Fault504:
		fail(&failure{kind: failTimeout})
		return
	case Fault529:
		fail(&failure{kind: failOverloaded, retryAfter: retry, hasRetry: true})
		return
	}

	a := s.buildAnswer(rc, req, seq, fault, now)
	p.setRateHeaders(w.Header(), s.snapshot(rc, time.Now(), 1, a.completionTokens))
	c.tokens.Add(int64(a.completionTokens))
	status = http.StatusOK
	if fault == "" && req.tool != nil {
		c.answered.Add(1)
		pc.answered.Add(1)
		if rc.CountBodies {
			c.bodies.answered(bodyKey)
		}
	}
	p.writeAnswer(w, req, a)
}

// unlimited is the limit the fake reports when it enforces none: one that no client reaches,
// since a client follows the limits a provider reports (the zero-latency benches would otherwise
// measure a made-up allowance).
const unlimited = 1_000_000_000

// requestLimit is the requests-per-minute limit reported in headers.
func (s *Server) requestLimit(rc *runtimeConfig) int64 {
	if rc.RPM > 0 {
		return int64(math.Round(rc.RPM))
	}
	return unlimited
}

// tokenLimit is the tokens-per-minute limit reported in headers: the enforced
// tpm, else unlimited.
func (s *Server) tokenLimit(rc *runtimeConfig) int64 {
	if rc.TPM > 0 {
		return rc.TPM
	}
	return unlimited
}

// admitTokens takes a request's prompt tokens from the tpm limit, counted as rc.TPMMode says;
// when they do not fit it takes nothing and says how long until they would, with the tokens the
// limit counted.
func (s *Server) admitTokens(rc *runtimeConfig, now time.Time, prompt int64) (bool, time.Duration, int64) {
	switch rc.TPMMode {
	case TPMWindow:
		return s.tokenWindow.admit(now, prompt, time.Minute, rc.TPM)
	case TPMSecond:
		ok, wait, used := s.secondBucket.admit(now, prompt, rc.TPM)
		if ok {
			s.tokenWindow.count(now, prompt)
		}
		return ok, wait, used
	}
	ok, wait, have := s.buckets.admitTokens(now, s.requestLimit(rc), rc.TPM, int(prompt))
	return ok, wait, rc.TPM - have
}

// snapshot takes reqs requests and tokens tokens from the budgets the headers report, and
// reads what remains; with a tpm limit counted in periods, the tokens remaining are the limit
// less the tokens counted in the last minute.
func (s *Server) snapshot(rc *runtimeConfig, now time.Time, reqs, tokens int) rateSnapshot {
	snap := s.buckets.take(now, s.requestLimit(rc), s.tokenLimit(rc), reqs, tokens)
	if rc.TPM > 0 && (rc.TPMMode == TPMWindow || rc.TPMMode == TPMSecond) {
		if tokens > 0 {
			s.tokenWindow.count(now, int64(tokens))
			if rc.TPMMode == TPMSecond {
				s.secondBucket.take(now, int64(tokens), rc.TPM)
			}
		}
		snap.remainingTokens = max(0, rc.TPM-s.tokenWindow.minute(now))
	}
	return snap
}

// promptTokens is how many prompt tokens the fake counts for a request.
func promptTokens(req *chatRequest) int { return req.promptSize/4 + 3*req.messages + 3 }

// pickFault returns the fault for a valid request, "" for none: scripted
// faults first (fail_matching, then fail_first_n), then random ones.
func (s *Server) pickFault(rc *runtimeConfig, req *chatRequest, seq uint64) string {
	for _, m := range rc.failMatching {
		if strings.Contains(req.userText, m.Substring) && (m.N == 0 || m.used.Add(1) <= int64(m.N)) {
			return m.Kind
		}
	}
	if rc.failFirst != nil && rc.failFirst.Add(-1) >= 0 {
		return rc.failFirstKind
	}
	if len(rc.faultCum) > 0 {
		u := unit(hash(uint64(rc.Seed), saltFault, seq))
		for i, cum := range rc.faultCum {
			if u < cum {
				return rc.faultKind[i]
			}
		}
	}
	return ""
}

// latency draws the delay of one request.
func latency(rc *runtimeConfig, seq uint64) time.Duration {
	ms := rc.LatencyMS
	if rc.LatencyMedianMS > 0 {
		z := normal(hash(uint64(rc.Seed), saltLatency1, seq), hash(uint64(rc.Seed), saltLatency2, seq))
		ms += rc.LatencyMedianMS * math.Exp(rc.LatencySigma*z)
	}
	return time.Duration(ms * float64(time.Millisecond))
}

var datedSuffix = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}$`)

// buildAnswer derives the answer of a valid request (fault is "" or a
// 200-status fault). The tool arguments depend on the configured seed, the
// user text and either the request's own seed or how many answers that user
// text had before, so repeated requests for a record can differ while a run
// stays reproducible. With a tendency the decision also depends on the record's
// p_r, and the answers are counted per text and model.
func (s *Server) buildAnswer(rc *runtimeConfig, req *chatRequest, seq uint64, fault string,
	now time.Time) *answer {
	textHash := hashString(req.userText) // a record's text is long: hashed once
	if rc.Tendency.on {
		// Each model's answers to a text are counted apart, so that a run asking several models
		// at once gives each the same answers whatever order its requests arrive in.
		textHash = hash(textHash, hashString(req.model))
	}
	occ := s.occurrence(textHash)
	base := hash(uint64(rc.Seed), textHash, occ, 0)
	if req.seed != nil {
		base = hash(uint64(rc.Seed), textHash, uint64(*req.seed), 1)
	}
	model := req.model
	if rc.Snapshot != "" && !datedSuffix.MatchString(model) {
		model += "-" + rc.Snapshot
	}
	a := &answer{
		id:      randomID("", 29, hash(uint64(rc.Seed), saltID, seq, 1)),
		created: now.Unix(),
		model:   model,
		fault:   fault,
	}
	var lean *leaning
	if rc.Tendency.on && req.tool != nil {
		lean = rc.Tendency.leaningOf(rc.Seed, req.model, req.userText)
	}
	n := max(req.choices, 1)
	completion := 0
	for i := 0; i < n; i++ {
		if req.tool == nil || fault == FaultNoTool {
			a.text = "I cannot classify this record with the information given."
			completion += len(a.text)/4 + 1
			continue
		}
		args := fillArgsLeaning(req.tool.schema, hash(base, uint64(i)), rc.Decisions, lean)
		if fault == FaultBadEnum {
			breakEnum(args, req.tool.schema)
		}
		b, err := json.Marshal(args)
		if err != nil {
			b = []byte("{}")
		}
		if fault == FaultBadArgs {
			b = b[:len(b)/2+1]
			if json.Valid(b) { // "{}" cut is "{}"
				b = append(b[:len(b)-1], ',')
			}
		}
		a.args = append(a.args, string(b))
		a.callIDs = append(a.callIDs, randomID("call_", 24, hash(uint64(rc.Seed), saltID, seq, 2, uint64(i))))
		completion += len(b)/4 + 8
	}
	a.promptTokens = promptTokens(req)
	a.cachedTokens = int(float64(a.promptTokens) * rc.CachedFraction)
	if rc.CachedFraction == 0 && len(req.cache) > 0 {
		a.cachedTokens = min(req.cacheRead, a.promptTokens)
		a.cacheWriteTokens = min(req.cacheWrite, a.promptTokens-a.cachedTokens)
		s.cache.store(req.cache, time.Now())
	}
	a.reasoningTokens = rc.ReasoningTokens * n
	a.completionTokens = completion + a.reasoningTokens
	return a
}

// readBody reads a body as io.ReadAll does, into a buffer of the declared length when there is one
// (io.ReadAll starts small and copies the body as it grows).
func readBody(r io.Reader, length int64) ([]byte, error) {
	if length <= 0 || length > maxBodyBytes {
		return io.ReadAll(r)
	}
	var buf bytes.Buffer
	buf.Grow(int(length) + bytes.MinRead) // room to read the end of the body without growing
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}

func isJSONContentType(ct string) bool {
	ct = strings.ToLower(strings.TrimSpace(ct))
	return ct == "application/json" || strings.HasPrefix(ct, "application/json;") ||
		strings.HasPrefix(ct, "application/json ")
}

func failureStatus(k failureKind) int {
	switch k {
	case failInvalidRequest:
		return http.StatusBadRequest
	case failMissingKey, failInvalidKey:
		return http.StatusUnauthorized
	case failNotFound:
		return http.StatusNotFound
	case failMethod:
		return http.StatusMethodNotAllowed
	case failTooLarge:
		return http.StatusRequestEntityTooLarge
	case failRateLimit, failConcurrency, failQuota, failFlexUnavailable:
		return http.StatusTooManyRequests
	case failServer:
		return http.StatusInternalServerError
	case failBadGateway:
		return http.StatusBadGateway
	case failUnavailable:
		return http.StatusServiceUnavailable
	case failTimeout:
		return http.StatusGatewayTimeout
	case failValidation:
		return http.StatusUnprocessableEntity
	case failOverloaded:
		return 529
	}
	return http.StatusInternalServerError
}

func bodyJSON(b []byte) json.RawMessage {
	if b == nil {
		return json.RawMessage("null")
	}
	return rawOrString(b)
}

// readChatMessages reads the messages of a chat-style body (OpenAI, Mistral): how many, the size of
// the prompt with the tools, and the users' text that decides the answer.
func readChatMessages(req *chatRequest, body map[string]any) {
	msgs, _ := body["messages"].([]any)
	req.messages = len(msgs)
	var user strings.Builder
	users := 0
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		text := contentText(mm["content"])
		req.promptSize += len(text)
		if mm["role"] == "user" {
			if users++; users == 1 {
				req.userText = text // the usual single user message: its text, not a copy
				continue
			}
			if users == 2 {
				user.WriteString(req.userText)
			}
			if user.Len() > 0 {
				user.WriteByte('\n')
			}
			user.WriteString(text)
		}
	}
	if users > 1 {
		req.userText = user.String()
	}
	req.promptSize += textSize(body["tools"])
}

// writeAnswer writes a 200 answer b, cut in half when the malformed fault applies, with the
// protocol's own extra headers (keys from canonicalKeys, and their values).
func writeAnswer(w http.ResponseWriter, b []byte, fault string, keys []string, values ...string) {
	if fault == FaultMalformed {
		b = b[:len(b)/2]
	}
	h := w.Header()
	setHeaders(h, answerKeys, "application/json", strconv.Itoa(len(b)))
	if len(keys) > 0 {
		setHeaders(h, keys, values...)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

var answerKeys = canonicalKeys("Content-Type", "Content-Length")

// writeBadGateway writes what the edge in front of a provider's API returns for a 502: HTML, not
// the protocol's JSON.
func writeBadGateway(w http.ResponseWriter, status int) {
	h := w.Header()
	h.Set("Content-Type", "text/html")
	h.Set("Content-Length", strconv.Itoa(len(badGatewayHTML)))
	w.WriteHeader(status)
	_, _ = w.Write([]byte(badGatewayHTML))
}
