package fakeprovider

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

func TestProtocolsEndpointGivesEachChatPath(t *testing.T) {
	srv, base := startServer(t, "")
	var paths map[string]string
	getJSON(t, base+"/_fake/protocols", &paths)
	if len(paths) != len(srv.protocols) || paths["anthropic"] != "/v1/messages" ||
		paths["mistral"] != "/mistral/v1/chat/completions" || paths["openai"] != "/v1/chat/completions" {
		t.Fatalf("paths %v", paths)
	}
	// each path is routed to its own protocol
	for i, p := range srv.protocols {
		for j, q := range srv.protocols {
			if q.match(p.chatPath()) {
				if i != j {
					t.Errorf("%s's path %s goes to %s", p.name(), p.chatPath(), q.name())
				}
				break
			}
		}
	}
}

func TestConfigEndpoint(t *testing.T) {
	_, base := startServer(t, "")
	configure(t, base, `{"rpm":600,"faults":{"500":0.1},"invalid_keys":"bad","fail_matching":{"substring":"s","kind":"drop"}}`)
	var c Config
	getJSON(t, base+"/_fake/config", &c)
	if c.RPM != 600 || c.Faults["500"] != 0.1 || len(c.InvalidKeys) != 1 || c.InvalidKeys[0] != "bad" ||
		len(c.FailMatching) != 1 || c.RetryAfterMS != 1000 {
		t.Errorf("config %+v", c)
	}
	configure(t, base, `{"latency_ms":5}`) // other fields unchanged
	getJSON(t, base+"/_fake/config", &c)
	if c.RPM != 600 || c.LatencyMS != 5 {
		t.Errorf("config %+v", c)
	}
	resp, err := testClient.Post(base+"/_fake/config?replace=true", "application/json", strings.NewReader(`{"seed":3}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	getJSON(t, base+"/_fake/config", &c)
	if c.RPM != 0 || c.Seed != 3 || c.LatencyMS != 0 {
		t.Errorf("after replace %+v", c)
	}
	for _, bad := range []string{`{"nope":1}`, `{"faults":{"501":0.1}}`, `{"faults":{"500":0.7,"503":0.7}}`,
		`{"rpm":-1}`, `{"fail_first_n":{"kind":"500","n":1,"x":2}}`, `[1]`, `{"latency_ms":"fast"}`} {
		resp, err := testClient.Post(base+"/_fake/config", "application/json", strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b), "error") {
			t.Errorf("%s: %d %s", bad, resp.StatusCode, b)
		}
	}
}

func TestStatsResetAndRequests(t *testing.T) {
	s, base := startServer(t, `{"keep_requests":3}`)
	url := base + "/v1/chat/completions"
	key := "sk-secret-value-123456"
	for i := 0; i < 4; i++ {
		post(t, url, key, chatBody("record "+string(rune('a'+i)), ""))
	}
	post(t, url, key, `{"model":"m","messages":[]}`)
	st := stats(t, base)
	if st.RequestsTotal != 5 || st.Valid != 4 || st.Invalid != 1 || st.ByStatus["200"] != 4 ||
		st.ByStatus["400"] != 1 || st.Answered != 4 {
		t.Errorf("stats %+v", st)
	}
	var last map[string]any
	if err := json.Unmarshal(st.LastBody, &last); err != nil || last["model"] != "m" {
		t.Errorf("last body %s", st.LastBody)
	}
	var recent []recentRequest
	getJSON(t, base+"/_fake/requests", &recent)
	if len(recent) != 3 || recent[2].Status != 400 || recent[0].Seq != 3 {
		t.Fatalf("recent %+v", recent)
	}
	raw, _ := json.Marshal(recent)
	if strings.Contains(string(raw), "secret") {
		t.Errorf("API key in /_fake/requests: %s", raw)
	}
	if got := recent[0].Headers["Authorization"]; len(got) != 1 || !strings.Contains(got[0], "29 characters") {
		t.Errorf("authorization %v", got)
	}
	getJSON(t, base+"/_fake/requests?n=1", &recent)
	if len(recent) != 1 {
		t.Errorf("n=1 gave %d", len(recent))
	}
	resp, err := testClient.Post(base+"/_fake/reset", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	st = s.Stats()
	if st.RequestsTotal != 0 || len(st.ByStatus) != 0 || st.MaxRequests1s != 0 || string(st.LastBody) != "null" {
		t.Errorf("after reset %+v", st)
	}
}

func TestConnectionCounts(t *testing.T) {
	s, base := startServer(t, "")
	tr := &http.Transport{MaxIdleConnsPerHost: 10}
	c := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			postWith(c, base+"/v1/chat/completions", "k", chatBody("x", ""))
		}()
	}
	wg.Wait()
	if st := s.Stats(); st.OpenConnections < 1 || st.OpenAPIConnections < 1 || st.ConnectionsTotal < 1 {
		t.Errorf("stats %+v", st)
	}
	tr.CloseIdleConnections()
	waitFor(t, func() bool { st := s.Stats(); return st.OpenConnections == 0 && st.OpenAPIConnections == 0 })
}

func TestHealth(t *testing.T) {
	_, base := startServer(t, "")
	resp, err := testClient.Get(base + "/_fake/health")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "ok\n" {
		t.Errorf("%d %q", resp.StatusCode, b)
	}
}

func TestRecentRing(t *testing.T) {
	var r recentRing
	for i := 1; i <= 5; i++ {
		r.add(3, recentRequest{Seq: uint64(i)})
	}
	seqs := func() (out []uint64) {
		for _, e := range r.list(0) {
			out = append(out, e.Seq)
		}
		return
	}
	if got := seqs(); len(got) != 3 || got[0] != 3 || got[2] != 5 {
		t.Errorf("%v", got)
	}
	r.add(2, recentRequest{Seq: 6}) // shrink keeps the newest
	if got := seqs(); len(got) != 2 || got[0] != 5 || got[1] != 6 {
		t.Errorf("%v", got)
	}
	r.add(4, recentRequest{Seq: 7}) // grow
	r.add(4, recentRequest{Seq: 8})
	if got := seqs(); len(got) != 4 || got[0] != 5 || got[3] != 8 {
		t.Errorf("%v", got)
	}
}

func TestMergeKeepsScriptState(t *testing.T) {
	s, base := startServer(t, `{"fail_first_n":{"kind":"500","n":3}}`)
	url := base + "/v1/chat/completions"
	post(t, url, "k", chatBody("x", ""))
	configure(t, base, `{"latency_ms":1}`) // does not re-arm fail_first_n
	if got := s.Stats().FailFirstNRemaining; got != 2 {
		t.Errorf("remaining %d", got)
	}
	configure(t, base, `{"fail_first_n":{"kind":"500","n":3}}`) // re-arms
	if got := s.Stats().FailFirstNRemaining; got != 3 {
		t.Errorf("remaining %d", got)
	}
}

// With count_bodies the stats tell a body sent again after its answer from one sent once.
func TestBodyCounts(t *testing.T) {
	_, base := startServer(t, `{"count_bodies":true,"fail_first_n":{"kind":"500","n":1}}`)
	url := base + "/v1/chat/completions"
	a, b := chatBody("record a", ""), chatBody("record b", "")
	post(t, url, "sk-k", a) // 500: not answered
	post(t, url, "sk-k", a) // answered
	post(t, url, "sk-k", b) // answered
	post(t, url, "sk-k", b) // sent again after its answer
	st := stats(t, base)
	want := BodyStats{Distinct: 2, MaxSent: 2, SentOnce: 0, Answered: 2, AnsweredAgain: 1, SentAfterAnswer: 1}
	if st.Bodies == nil || *st.Bodies != want {
		t.Fatalf("bodies %+v, want %+v", st.Bodies, want)
	}
	configure(t, base, `{"count_bodies":false}`)
	if st := stats(t, base); st.Bodies != nil {
		t.Fatalf("bodies without count_bodies: %+v", st.Bodies)
	}
}
