package review

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tabscreen/tabscreen/golib/store"
)

const hostile = `<img src=x onerror="alert(1)"><script>alert(2)</script>`

var pageJSON = `{"meta": {"title": "t"}, "items": [
  {"studyid": "1", "group": "1/m/1", "promptid": 1, "model": "m", "top_p": 1, "queues": ["check", "all"], "title": "` +
	strings.ReplaceAll(hostile, `"`, `\"`) + `"},
  {"studyid": "2", "group": "1/m/1", "promptid": 1, "model": "m", "top_p": 1, "queues": ["audit", "all"], "audit_rank": 1}
]}`

func newTestServer(t *testing.T) (*Server, *httptest.Server) {
	t.Helper()
	st, err := store.OpenDurable(filepath.Join(t.TempDir(), "r.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.EnsureReview(); err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(st, "run", []byte(pageJSON), "secret")
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return srv, hs
}

func call(t *testing.T, hs *httptest.Server, method, path, token, ctype, body string) (int, map[string]any, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("X-Tabscreen-Token", token)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := map[string]any{}
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out, resp.Header
}

func TestAPI(t *testing.T) {
	const js = "application/json"
	cases := []struct {
		name, method, path, token, ctype, body string
		status                                 int
		errorHas                               string
	}{
		{"no token", "GET", "/api/state", "", "", "", 403, "token"},
		{"wrong token", "GET", "/api/state", "guess", "", "", 403, "token"},
		{"state", "GET", "/api/state", "secret", "", "", 200, ""},
		{"decide by GET", "GET", "/api/decide", "secret", "", "", 405, "POST"},
		{"decide as a form", "POST", "/api/decide", "secret", "application/x-www-form-urlencoded", "a=1", 415, "JSON"},
		{"not JSON", "POST", "/api/decide", "secret", js, "{", 400, "JSON"},
		{"unknown record", "POST", "/api/decide", "secret", js, `{"studyid":"9","group":"1/m/1","reviewer":"ann","decision":"Include"}`, 400, "no record"},
		{"not a decision", "POST", "/api/decide", "secret", js, `{"studyid":"1","group":"1/m/1","reviewer":"ann","decision":"yes"}`, 400, "not a decision"},
		{"no reviewer", "POST", "/api/decide", "secret", js, `{"studyid":"1","group":"1/m/1","reviewer":"  ","decision":"Include"}`, 400, "reviewer"},
		{"id on two lines", "POST", "/api/decide", "secret", js, `{"id":"a\nb","studyid":"1","group":"1/m/1","reviewer":"ann","decision":"Include"}`, 400, "id"},
		{"long id", "POST", "/api/decide", "secret", js, `{"id":"` + strings.Repeat("x", maxID+1) + `","studyid":"1","group":"1/m/1","reviewer":"ann","decision":"Include"}`, 400, "id"},
		{"long note", "POST", "/api/decide", "secret", js, `{"studyid":"1","group":"1/m/1","reviewer":"ann","decision":"Include","note":"` + strings.Repeat("x", maxNote+1) + `"}`, 400, "note"},
		{"too large", "POST", "/api/decide", "secret", js, `{"note":"` + strings.Repeat("x", maxBody) + `"}`, 413, "large"},
		{"decide", "POST", "/api/decide", "secret", js, `{"studyid":"1","group":"1/m/1","reviewer":"ann","decision":"Include","seconds":3.5,"queue":"check"}`, 200, ""},
		{"undo", "POST", "/api/undo", "secret", js, `{"reviewer":"ann"}`, 200, ""},
		{"unknown path", "GET", "/api/nothing", "secret", "", "", 404, ""},
	}
	_, hs := newTestServer(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, out, h := call(t, hs, c.method, c.path, c.token, c.ctype, c.body)
			if status != c.status {
				t.Fatalf("status %d, want %d (%v)", status, c.status, out)
			}
			if c.errorHas != "" && !strings.Contains(out["error"].(string), c.errorHas) {
				t.Fatalf("error %q lacks %q", out["error"], c.errorHas)
			}
			if status != 404 && h.Get("Content-Security-Policy") != contentPolicy {
				t.Fatalf("no content security policy: %v", h)
			}
		})
	}
}

func TestDecisionsReachTheStoreAndTheState(t *testing.T) {
	_, hs := newTestServer(t)
	for _, body := range []string{
		`{"studyid":"1","group":"1/m/1","reviewer":"ann","decision":"Exclude","note":"` + strings.ReplaceAll(hostile, `"`, `\"`) + `"}`,
		`{"studyid":"2","group":"1/m/1","reviewer":"ann","decision":"Include","seconds":4}`,
		`{"studyid":"2","group":"1/m/1","reviewer":"bob","decision":"Exclude"}`,
	} {
		if status, out, _ := call(t, hs, "POST", "/api/decide", "secret", "application/json", body); status != 200 {
			t.Fatalf("decide: %d %v", status, out)
		}
	}
	status, out, _ := call(t, hs, "GET", "/api/state", "secret", "", "")
	if status != 200 {
		t.Fatal(out)
	}
	ds := out["decisions"].([]any)
	if len(ds) != 3 {
		t.Fatalf("decisions: %v", ds)
	}
	first := ds[0].(map[string]any)
	if first["note"] != hostile || first["decision"] != "Exclude" {
		t.Fatalf("first decision: %v", first)
	}
	page := out["page"].(map[string]any)
	if title := page["items"].([]any)[0].(map[string]any)["title"]; title != hostile {
		t.Fatalf("the page's records changed on the way: %v", title)
	}
	status, out, _ = call(t, hs, "POST", "/api/undo", "secret", "application/json", `{"reviewer":"ann"}`)
	undone := out["undone"].(map[string]any)
	if status != 200 || undone["studyid"] != "2" || undone["now"] != nil {
		t.Fatalf("undo: %d %v", status, out)
	}
}

// A page sends a waiting decision again after a restart, from each tab that holds it: the app
// stores it once, answers every copy with the decision, and undo takes the decision back.
func TestResentDecisionIsStoredOnce(t *testing.T) {
	_, hs := newTestServer(t)
	const js = "application/json"
	first := `{"id":"d-1","studyid":"1","group":"1/m/1","reviewer":"ann","decision":"Include","queue":"check"}`
	for i := 0; i < 3; i++ {
		status, out, _ := call(t, hs, "POST", "/api/decide", "secret", js, first)
		d, _ := out["decision"].(map[string]any)
		if status != 200 || d == nil || d["decision"] != "Include" || d["studyid"] != "1" {
			t.Fatalf("send %d: %d %v", i+1, status, out)
		}
	}
	_, out, _ := call(t, hs, "GET", "/api/state", "secret", "", "")
	if ds := out["decisions"].([]any); len(ds) != 1 {
		t.Fatalf("decisions: %v", ds)
	}
	_, out, _ = call(t, hs, "POST", "/api/undo", "secret", js, `{"reviewer":"ann"}`)
	if u, _ := out["undone"].(map[string]any); u == nil || u["studyid"] != "1" || u["now"] != nil {
		t.Fatalf("undo after the resends should leave record 1 undecided: %v", out)
	}
	_, out, _ = call(t, hs, "POST", "/api/undo", "secret", js, `{"reviewer":"ann"}`)
	if out["undone"] != nil {
		t.Fatalf("a second undo found a copy of the decision: %v", out)
	}
	// A copy arriving after the undo does not bring the decision back.
	status, out, _ := call(t, hs, "POST", "/api/decide", "secret", js, first)
	if status != 200 || out["decision"] != nil {
		t.Fatalf("late copy: %d %v", status, out)
	}
	_, out, _ = call(t, hs, "GET", "/api/state", "secret", "", "")
	if ds := out["decisions"].([]any); len(ds) != 0 {
		t.Fatalf("decisions after the undo: %v", ds)
	}
}

// The JSON the page gets never holds markup characters raw, so even a page that put it into
// HTML could not be made to run a title.
func TestStateEscapesMarkup(t *testing.T) {
	_, hs := newTestServer(t)
	req, _ := http.NewRequest("GET", hs.URL+"/api/state", nil)
	req.Header.Set("X-Tabscreen-Token", "secret")
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if strings.Contains(string(raw), "<script") || strings.Contains(string(raw), "<img") {
		t.Fatalf("raw markup in the state: %s", raw)
	}
}

func TestStaticFiles(t *testing.T) {
	cases := []struct {
		path, ctype string
		status      int
	}{
		{"/", "text/html; charset=utf-8", 200},
		{"/index.html", "text/html; charset=utf-8", 200},
		{"/app.js", "text/javascript; charset=utf-8", 200},
		{"/app.css", "text/css; charset=utf-8", 200},
		{"/../server.go", "", 404},
		{"/page/app.js", "", 404},
		{"/favicon.ico", "", 404},
	}
	_, hs := newTestServer(t)
	for _, c := range cases {
		resp, err := hs.Client().Get(hs.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status || (c.ctype != "" && resp.Header.Get("Content-Type") != c.ctype) {
			t.Errorf("%s: %d %q", c.path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
}

func TestNewServerChecksTheRecords(t *testing.T) {
	cases := map[string]string{
		"not JSON":       `{`,
		"no study id":    `{"items": [{"group": "g"}]}`,
		"a record twice": `{"items": [{"studyid": "1", "group": "g"}, {"studyid": "1", "group": "g"}]}`,
	}
	for name, doc := range cases {
		if _, err := NewServer(nil, "run", []byte(doc), "t"); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := NewServer(nil, "run", []byte(`{"items": [{"studyid": "1", "group": "a"}, {"studyid": "1", "group": "b"}]}`), "t"); err != nil {
		t.Errorf("one record under two prompts refused: %v", err)
	}
}

// Serve writes the address, keeps the run's port and token for the next start, and ends when the
// reviewer presses Finish or the parent closes stdin.
func TestServeKeepsPortAndToken(t *testing.T) {
	dir := t.TempDir()
	pageFile := filepath.Join(dir, "page.json")
	if err := os.WriteFile(pageFile, []byte(pageJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	start := func() (Address, *io.PipeWriter, chan error) {
		r, w := io.Pipe()
		portFile := filepath.Join(dir, "port")
		done := make(chan error, 1)
		started := make(chan struct{})
		go func() {
			done <- Serve(context.Background(), Options{Store: filepath.Join(dir, "s.sqlite"), RunID: "run", Page: pageFile,
				PortFile: portFile, Stdin: r, Started: func(string) { close(started) }})
		}()
		select {
		case <-started:
		case err := <-done:
			t.Fatalf("Serve ended: %v", err)
		}
		raw, err := os.ReadFile(portFile)
		if err != nil {
			t.Fatal(err)
		}
		var a Address
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatal(err)
		}
		return a, w, done
	}
	first, w, done := start()
	if first.Port == 0 || !strings.Contains(first.URL, first.Token) {
		t.Fatalf("address: %+v", first)
	}
	req, _ := http.NewRequest("POST", first.URL[:strings.Index(first.URL, "/?")]+"/api/finish", strings.NewReader("{}"))
	req.Header.Set("X-Tabscreen-Token", first.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := waitFor(done); err != nil {
		t.Fatal(err)
	}
	w.Close()

	second, w, done := start()
	if second.Port != first.Port || second.Token != first.Token {
		t.Fatalf("restart moved: %+v then %+v", first, second)
	}
	w.Close()
	if err := waitFor(done); err != nil {
		t.Fatal(err)
	}
}

func waitFor(done chan error) error {
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		return context.DeadlineExceeded
	}
}
