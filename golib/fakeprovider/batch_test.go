package fakeprovider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func batchCall(t *testing.T, method, url string, body io.Reader, contentType string) []byte {
	t.Helper()
	req, _ := http.NewRequest(method, url, body)
	req.Header.Set("Authorization", "Bearer sk-fake-batch-test")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	return b
}

// OpenAI's batch API: failed lines without a response are in the error file with status_code 0,
// vanished lines are in no file, and the request counts say neither; a line sent again is answered.
func TestOpenAIBatchFilesHoldEveryFate(t *testing.T) {
	srv, _ := New(DefaultConfig())
	if _, err := srv.UpdateConfig([]byte(`{"batches": true, "batch_fail": 0.1, "batch_fail_zero": 0.1, "batch_expire": 0.1, "batch_vanish": 0.1}`), false); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	submit := func() map[string]any {
		var lines bytes.Buffer
		for i := 0; i < 200; i++ {
			fmt.Fprintf(&lines, `{"custom_id":"j%d","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o","messages":[{"role":"user","content":"Record %d"}]}}`+"\n", i, i)
		}
		var form bytes.Buffer
		w := multipart.NewWriter(&form)
		_ = w.WriteField("purpose", "batch")
		f, _ := w.CreateFormFile("file", "b.jsonl")
		_, _ = f.Write(lines.Bytes())
		_ = w.Close()
		var file struct{ ID string }
		_ = json.Unmarshal(batchCall(t, "POST", hs.URL+"/v1/files", &form, w.FormDataContentType()), &file)
		var b map[string]any
		_ = json.Unmarshal(batchCall(t, "POST", hs.URL+"/v1/batches", strings.NewReader(
			`{"input_file_id":"`+file.ID+`","endpoint":"/v1/chat/completions","completion_window":"24h","metadata":{"tabscreen_tag":"t1"}}`), "application/json"), &b)
		_ = json.Unmarshal(batchCall(t, "GET", hs.URL+"/v1/batches/"+b["id"].(string), nil, ""), &b)
		return b
	}
	b := submit()
	if b["status"] != "completed" || b["metadata"].(map[string]any)["tabscreen_tag"] != "t1" {
		t.Fatalf("batch %v", b)
	}
	read := func(id any) []map[string]any {
		var out []map[string]any
		for _, l := range bytes.Split(bytes.TrimSpace(batchCall(t, "GET", hs.URL+"/v1/files/"+id.(string)+"/content", nil, "")), []byte("\n")) {
			var v map[string]any
			_ = json.Unmarshal(l, &v)
			out = append(out, v)
		}
		return out
	}
	out, errs := read(b["output_file_id"]), read(b["error_file_id"])
	st := srv.Stats().Batch
	zero, expired := 0, 0
	for _, l := range errs {
		if r, ok := l["response"].(map[string]any); ok && r["status_code"] == 0.0 {
			zero++
		}
		if e, ok := l["error"].(map[string]any); ok && e["code"] == "batch_expired" {
			expired++
		}
	}
	if zero == 0 || expired == 0 || int64(expired) != st.LinesExpired || len(out)+len(errs) != 200-int(st.LinesVanished) ||
		st.LinesVanished == 0 || st.LinesAnswered == 0 {
		t.Fatalf("output %d, error %d (status 0: %d, expired %d), stats %+v", len(out), len(errs), zero, expired, st)
	}
	counts := b["request_counts"].(map[string]any)
	if counts["total"] != 200.0 || counts["completed"].(float64)+counts["failed"].(float64) != float64(200-expired-int(st.LinesVanished)) {
		t.Fatalf("counts %v", counts)
	}
	again := submit()
	if c := again["request_counts"].(map[string]any); c["completed"] != 200.0 || again["error_file_id"] != nil {
		t.Fatalf("lines sent again: %v", again)
	}
	var list struct {
		Data    []map[string]any `json:"data"`
		HasMore bool             `json:"has_more"`
	}
	_ = json.Unmarshal(batchCall(t, "GET", hs.URL+"/v1/batches?limit=1", nil, ""), &list)
	if len(list.Data) != 1 || !list.HasMore || list.Data[0]["id"] != again["id"] {
		t.Fatalf("list %+v", list)
	}
}
