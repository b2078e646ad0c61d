package fakeprovider

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestScriptedFaults(t *testing.T) {
	s, base := startServer(t, `{"retry_after_ms":250}`)
	url := base + "/v1/chat/completions"
	type check = faultCheck
	errorWith := func(status int, typ, code string, retry bool) check {
		return func(t *testing.T, r reply) {
			if r.err != nil || r.status != status {
				t.Fatalf("status %d err %v: %s", r.status, r.err, r.body)
			}
			validateAgainst(t, schemas(t).errorRes, r.body)
			e := r.errorOf(t)
			if e["type"] != typ {
				t.Errorf("type %v, want %s", e["type"], typ)
			}
			if code == "" && e["code"] != nil || code != "" && e["code"] != code {
				t.Errorf("code %v, want %q", e["code"], code)
			}
			if got := r.header.Get("Retry-After") != ""; got != retry {
				t.Errorf("Retry-After present %v, want %v", got, retry)
			}
			if retry && (r.header.Get("retry-after-ms") != "250" || r.header.Get("Retry-After") != "1") {
				t.Errorf("retry headers %q %q", r.header.Get("retry-after-ms"), r.header.Get("Retry-After"))
			}
		}
	}
	ok200 := func(f func(t *testing.T, r reply, msg map[string]any)) check {
		return func(t *testing.T, r reply) {
			if r.err != nil || r.status != 200 {
				t.Fatalf("status %d err %v: %s", r.status, r.err, r.body)
			}
			var m map[string]any
			if err := json.Unmarshal(r.body, &m); err != nil {
				f(t, r, nil)
				return
			}
			f(t, r, m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any))
		}
	}
	argsOf := func(msg map[string]any) string {
		return msg["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["arguments"].(string)
	}
	cases := map[string]check{
		FaultRateLimit: errorWith(429, "requests", "rate_limit_exceeded", true),
		FaultQuota:     errorWith(429, "insufficient_quota", "insufficient_quota", false),
		Fault500:       errorWith(500, "server_error", "", false),
		Fault503:       errorWith(503, "service_unavailable_error", "server_is_overloaded", false),
		Fault504:       errorWith(504, "server_error", "timeout", false),
		Fault502:       htmlBadGateway,
		FaultDrop:      dropped,
		FaultMalformed: ok200(func(t *testing.T, r reply, msg map[string]any) {
			if msg != nil || json.Valid(r.body) || len(r.body) < 20 {
				t.Errorf("malformed body is valid JSON: %s", r.body)
			}
		}),
		FaultNoTool: ok200(func(t *testing.T, r reply, msg map[string]any) {
			validateAgainst(t, schemas(t).response, r.body)
			if _, has := msg["tool_calls"]; has || msg["content"] == nil {
				t.Errorf("no_tool: %v", msg)
			}
		}),
		FaultBadArgs: ok200(func(t *testing.T, r reply, msg map[string]any) {
			validateAgainst(t, schemas(t).response, r.body)
			if a := argsOf(msg); json.Valid([]byte(a)) {
				t.Errorf("bad_args arguments are valid JSON: %s", a)
			}
		}),
		FaultBadEnum: ok200(func(t *testing.T, r reply, msg map[string]any) {
			var args map[string]any
			if err := json.Unmarshal([]byte(argsOf(msg)), &args); err != nil {
				t.Fatal(err)
			}
			if d := args["decision"]; d != "2" {
				t.Errorf("bad_enum decision %v", d)
			}
		}),
	}
	for kind, chk := range cases {
		t.Run(kind, func(t *testing.T) {
			configure(t, base, `{"fail_first_n":{"kind":"`+kind+`","n":2}}`)
			for i := 0; i < 2; i++ {
				chk(t, post(t, url, "k", chatBody("x", "")))
			}
			if r := post(t, url, "k", chatBody("x", "")); r.status != 200 {
				t.Errorf("third request: %d", r.status)
			}
		})
	}
	st := s.Stats()
	for kind := range cases {
		if st.ByFault[kind] != 2 {
			t.Errorf("by_fault[%s] = %d", kind, st.ByFault[kind])
		}
	}
}

func TestFailMatching(t *testing.T) {
	_, base := startServer(t, `{"fail_matching":{"substring":"POISON","kind":"500"}}`)
	url := base + "/v1/chat/completions"
	for i := 0; i < 3; i++ {
		if r := post(t, url, "k", chatBody("Title: POISON pill", "")); r.status != 500 {
			t.Fatalf("matching record: %d", r.status)
		}
		if r := post(t, url, "k", chatBody("Title: healthy", "")); r.status != 200 {
			t.Fatalf("other record: %d", r.status)
		}
	}
	configure(t, base, `{"fail_matching":[]}`)
	if r := post(t, url, "k", chatBody("Title: POISON pill", "")); r.status != 200 {
		t.Fatalf("after reconfiguring: %d", r.status)
	}
	// n: only the first n matches fail
	configure(t, base, `{"fail_matching":[{"substring":"POISON","kind":"503","n":2}]}`)
	var got []int
	for i := 0; i < 4; i++ {
		got = append(got, post(t, url, "k", chatBody("POISON", "")).status)
	}
	if want := []int{503, 503, 200, 200}; !equalInts(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRandomFaults(t *testing.T) {
	s, base := startServer(t, `{"faults":{"500":0.3,"no_tool":0.2},"seed":7}`)
	url := base + "/v1/chat/completions"
	n := 400
	count := map[int]int{}
	for i := 0; i < n; i++ {
		count[post(t, url, "k", chatBody("x", "")).status]++
	}
	st := s.Stats()
	if f := float64(count[500]) / float64(n); f < 0.2 || f > 0.4 {
		t.Errorf("500 share %.2f", f)
	}
	if f := float64(st.ByFault["no_tool"]) / float64(n); f < 0.12 || f > 0.28 {
		t.Errorf("no_tool share %.2f", f)
	}
	if st.Answered+st.ByFault["no_tool"]+st.ByFault["500"] != int64(n) {
		t.Errorf("stats %+v", st)
	}
	configure(t, base, `{"faults":{"500":1}}`)
	if r := post(t, url, "k", chatBody("x", "")); r.status != 500 {
		t.Errorf("p = 1: %d", r.status)
	}
	configure(t, base, `{"faults":[]}`) // jsonlite's empty named list
	if r := post(t, url, "k", chatBody("x", "")); r.status != 200 {
		t.Errorf("no faults: %d", r.status)
	}
}

func TestHangDoesNotLeak(t *testing.T) {
	s, base := startServer(t, `{"faults":{"hang":1}}`)
	url := base + "/v1/chat/completions"
	before := runtime.NumGoroutine()
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			c := &http.Client{Timeout: 200 * time.Millisecond, Transport: tr}
			if r := postWith(c, url, "k", chatBody("x", "")); r.err == nil {
				t.Errorf("hang answered %d", r.status)
			}
		}()
	}
	wg.Wait()
	waitFor(t, func() bool { st := s.Stats(); return st.InFlight == 0 && st.OpenConnections == 0 })
	waitFor(t, func() bool { return runtime.NumGoroutine() <= before+2 })
	st := s.Stats()
	if st.ClientGone != 20 || st.ByFault["hang"] != 20 || st.MaxInFlight != 20 {
		t.Errorf("stats %+v", st)
	}
}

func TestCloseReleasesHang(t *testing.T) {
	s, err := New(mustMerge(t, `{"faults":{"hang":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan reply)
	go func() {
		done <- postWith(&http.Client{}, "http://"+addr.String()+"/v1/chat/completions", "k", chatBody("x", ""))
	}()
	waitFor(t, func() bool { return s.Stats().InFlight == 1 })
	start := time.Now()
	if err := s.Close(5 * time.Second); err != nil {
		t.Errorf("close: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("close took %v", d)
	}
	if r := <-done; r.err == nil {
		t.Errorf("hanging request got a response %d", r.status)
	}
}

func TestDropClosesConnection(t *testing.T) {
	s, base := startServer(t, `{"faults":{"drop":1}}`)
	u := strings.TrimPrefix(base, "http://")
	conn, err := net.Dial("tcp", u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := chatBody("x", "")
	_, _ = io.WriteString(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n"+
		"Content-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(conn)
	if err != nil || len(b) != 0 {
		t.Errorf("read %q, %v; want EOF and nothing", b, err)
	}
	waitFor(t, func() bool { return s.Stats().OpenConnections == 0 })
}

func TestLatency(t *testing.T) {
	_, base := startServer(t, `{"latency_ms":80}`)
	start := time.Now()
	if r := post(t, base+"/v1/chat/completions", "k", chatBody("x", "")); r.status != 200 {
		t.Fatal(r.status)
	}
	if d := time.Since(start); d < 80*time.Millisecond {
		t.Errorf("answered after %v", d)
	}
	// a client that gives up during the latency is counted, nothing leaks
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/chat/completions", strings.NewReader(chatBody("x", "")))
	req.Header.Set("Authorization", "Bearer k")
	req.Header.Set("Content-Type", "application/json")
	if _, err := http.DefaultClient.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v", err)
	}
	waitFor(t, func() bool { return stats(t, base).ClientGone == 1 })
}

func TestLognormalLatency(t *testing.T) {
	rc := &runtimeConfig{Config: Config{LatencyMedianMS: 100, LatencySigma: 0.5, Seed: 3}}
	below, n := 0, 20000
	for i := 0; i < n; i++ {
		if latency(rc, uint64(i)) < 100*time.Millisecond {
			below++
		}
	}
	if f := float64(below) / float64(n); f < 0.48 || f > 0.52 {
		t.Errorf("share below the median %.3f", f)
	}
}

func mustMerge(t *testing.T, patch string) Config {
	t.Helper()
	c, err := DefaultConfig().Merge([]byte(patch))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
