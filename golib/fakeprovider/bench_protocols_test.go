package fakeprovider

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The request bodies of the benchmarks below are what the engine sends for one record (a
// ~2,200-character abstract, the built-in tool forced by tool_choice) with each provider's default
// model, captured from a run against the fake (testdata/bench); each request gets its own title,
// so that the fake sees distinct records as in a screening.

type benchProtocol struct {
	name, path string
	headers    map[string]string
}

var benchProtocols = []benchProtocol{
	{"openai", "/v1/chat/completions", map[string]string{"Authorization": "Bearer sk-bench"}},
	{"anthropic", "/v1/messages", map[string]string{"x-api-key": "sk-bench", "anthropic-version": "2023-06-01"}},
	{"mistral", "/mistral/v1/chat/completions", map[string]string{"Authorization": "Bearer sk-bench"}},
}

var benchTitle = regexp.MustCompile(`Title \d+`)

// benchBodies returns n distinct request bodies of a protocol.
func benchBodies(tb testing.TB, proto string, n int) [][]byte {
	tb.Helper()
	tmpl, err := os.ReadFile("testdata/bench/" + proto + ".json")
	if err != nil {
		tb.Fatal(err)
	}
	out := make([][]byte, n)
	for i := range out {
		out[i] = benchTitle.ReplaceAll(tmpl, []byte(fmt.Sprintf("Title %d", i+1)))
	}
	return out
}

func (p benchProtocol) request(url string, body []byte) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range p.headers {
		req.Header.Set(k, v)
	}
	return req
}

// BenchmarkChat measures the server's own work per valid request of each protocol (reading,
// validation, answer, counters), without the network, one request at a time. cpu-ns/op is the
// process's CPU time per request (the garbage collector's included), which a busy machine
// changes less than ns/op.
func BenchmarkChat(b *testing.B) {
	for _, p := range benchProtocols {
		b.Run(p.name, func(b *testing.B) {
			s, err := New(DefaultConfig())
			if err != nil {
				b.Fatal(err)
			}
			bodies := benchBodies(b, p.name, 1000)
			w := &benchWriter{h: http.Header{}}
			b.ReportAllocs()
			b.SetBytes(int64(len(bodies[0])))
			cpu := startCPU(selfCPU)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				req := p.request("http://fake"+p.path, bodies[i%len(bodies)])
				w.reset()
				s.ServeHTTP(w, req)
				if w.code != 200 {
					b.Fatalf("status %d: %s", w.code, w.body)
				}
			}
			b.StopTimer()
			cpu.report(b, "cpu-ns/op")
		})
	}
}

// benchWriter is a reusable http.ResponseWriter, so that the benchmark counts the server's
// allocations and not a recorder's.
type benchWriter struct {
	h    http.Header
	code int
	body []byte
}

func (w *benchWriter) Header() http.Header { return w.h }
func (w *benchWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *benchWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.body = append(w.body, b...)
	return len(b), nil
}
func (w *benchWriter) reset() {
	clear(w.h)
	w.code, w.body = 0, w.body[:0]
}

// BenchmarkLoopback sends the same requests through net/http over loopback with keep-alive, from
// 8 connections: the server's and the client's costs together (-cpuprofile splits them). With
// TABSCREEN_FAKE_URL set (e.g. http://127.0.0.1:PORT) it drives that fake instead of one in this
// process, and with TABSCREEN_FAKE_PID (that fake's process id) it reports the fake's CPU time per
// request as fake-cpu-ns/op (Linux).
func BenchmarkLoopback(b *testing.B) {
	for _, p := range benchProtocols {
		b.Run(p.name, func(b *testing.B) {
			base := os.Getenv("TABSCREEN_FAKE_URL")
			if base == "" {
				_, base = startServer(b, "")
			}
			url := base + p.path
			bodies := benchBodies(b, p.name, 1000)
			const clients = 8
			tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr}
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ReportAllocs()
			var fake *cpuMeter
			if pid := os.Getenv("TABSCREEN_FAKE_PID"); pid != "" && os.Getenv("TABSCREEN_FAKE_URL") != "" {
				fake = startCPU(func() (time.Duration, bool) { return processCPU(pid) })
			}
			self := startCPU(selfCPU)
			b.ResetTimer()
			for i := 0; i < clients; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := next.Add(1)
						if i > int64(b.N) {
							return
						}
						resp, err := c.Do(p.request(url, bodies[i%int64(len(bodies))]))
						if err != nil {
							b.Error(err)
							return
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != 200 {
							b.Errorf("status %d", resp.StatusCode)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			self.report(b, "cpu-ns/op")
			if fake != nil {
				fake.report(b, "fake-cpu-ns/op")
			}
		})
	}
}

// cpuMeter measures CPU time from a start.
type cpuMeter struct {
	read  func() (time.Duration, bool)
	start time.Duration
	ok    bool
}

func startCPU(read func() (time.Duration, bool)) *cpuMeter {
	m := &cpuMeter{read: read}
	m.start, m.ok = read()
	return m
}

// report adds the CPU time per iteration since the start as a metric (none where it cannot be read).
func (m *cpuMeter) report(b *testing.B, unit string) {
	end, ok := m.read()
	if m.ok && ok && b.N > 0 {
		b.ReportMetric(float64(end-m.start)/float64(b.N), unit)
	}
}
