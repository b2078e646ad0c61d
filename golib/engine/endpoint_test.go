package engine

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tabscreen/tabscreen/golib/provider"
)

// closedPort is a local address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestAnEndpointThatCannotBeUsedStopsTheRunBeforeItsFirstAnswer(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>hello</html>"))
	}))
	defer page.Close()
	selfSigned := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	selfSigned.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	selfSigned.StartTLS()
	defer selfSigned.Close()
	notFound := newFake(t, func(int64, map[string]any) (int, map[string]string, string) {
		return 404, nil, `{"error": {"message": "Invalid URL (POST /v1)"}}`
	})
	cases := []struct {
		name, url, cause string
		requests         *atomic.Int64
	}{
		{"closed port", "http://" + closedPort(t) + "/v1/chat/completions", "connection was refused", nil},
		{"unknown host", "http://no-such-host.invalid/v1/chat/completions", "does not resolve", nil},
		{"404", notFound.srv.URL + "/v1", "HTTP 404", &notFound.requests},
		{"web page", page.URL, "web page", nil},
		{"https to an http server", strings.Replace(page.URL, "http://", "https://", 1), "does not speak TLS", nil},
		{"unknown certificate", selfSigned.URL, "TLS handshake failed", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := options(c.url, func(o *Options) {
				tries := 16
				o.MaxTries = &tries
				o.MaxActive = 2
			})
			r := runToEnd(t, o, 6)
			state, stop := r.State()
			if state != "stopped" || stop.Class != "tabscreen_error_endpoint" {
				t.Fatalf("state %q, stop %+v", state, stop)
			}
			if !strings.Contains(stop.Message, c.url) || !strings.Contains(stop.Message, c.cause) {
				t.Errorf("message %q does not name the URL and %q", stop.Message, c.cause)
			}
			if !strings.Contains(stop.Hint, "/v1/chat/completions") {
				t.Errorf("hint %q does not say the URL expected", stop.Hint)
			}
			// At most endpointTries attempts of a job; never max_tries.
			if c.requests != nil && c.requests.Load() > int64(6*endpointTries) {
				t.Errorf("%d requests before the stop", c.requests.Load())
			}
			if s := r.Summarise(); s.Answered != 0 || s.Failed != 6 || s.Unsent == 0 || s.Unsent >= 6 {
				t.Errorf("summary %+v", s)
			}
		})
	}
}

func TestAfterAFirstAnswerAWrongURLAnswerIsAnOrdinaryFailure(t *testing.T) {
	fk := newFake(t, func(n int64, _ map[string]any) (int, map[string]string, string) {
		if n == 1 {
			return 200, nil, toolReply("1")
		}
		return 404, nil, `{"error": {"message": "gone"}}`
	})
	r := runToEnd(t, options(fk.srv.URL, func(o *Options) { o.MaxActive = 1 }), 3)
	if state, stop := r.State(); state != "done" {
		t.Fatalf("state %q, stop %+v", state, stop)
	}
	if s := r.Summarise(); s.Answered != 1 || s.Failed != 2 || s.Unsent != 0 {
		t.Errorf("summary %+v", s)
	}
	if p := r.Poll(); p.Problem != "HTTP 404" {
		t.Errorf("problem %q", p.Problem)
	}
}

func TestProviderURLForms(t *testing.T) {
	for _, c := range []struct{ letter, want string }{{"a", "ending in /v1/chat/completions"}, {"b", "/v1/messages is added"}, {"c", "ending in /v1/chat/completions"}} {
		d, _ := provider.Lookup(c.letter)
		if got := d.URLForm(); !strings.Contains(got, c.want) {
			t.Errorf("%s: %q", c.letter, got)
		}
	}
}

func TestCommonestProblem(t *testing.T) {
	for _, tc := range []struct {
		added []string
		want  string
	}{
		{nil, ""},
		{[]string{"HTTP 500"}, "HTTP 500"},
		{[]string{"timeout", "HTTP 500", "timeout"}, "timeout"},
		{[]string{"timeout", "HTTP 500"}, "HTTP 500"}, // a tie goes to the first by name
		{[]string{"", "", "timeout"}, "timeout"},      // an empty cause is not counted
	} {
		var p problems
		for _, c := range tc.added {
			p.add(c)
		}
		if got := p.commonest(); got != tc.want {
			t.Errorf("after %q: commonest %q, want %q", tc.added, got, tc.want)
		}
	}
}
