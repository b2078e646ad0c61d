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
	hs := batchFake(t, `{"batches": true, "batch_fail": 0.1, "batch_fail_zero": 0.1, "batch_expire": 0.1, "batch_vanish": 0.1}`)
	srv := hs.Config.Handler.(*Server)
	submit := func() map[string]any { return openAIBatchSubmit(t, hs.URL, 200) }
	b := submit()
	if b["status"] != "completed" || b["metadata"].(map[string]any)["tabscreen_tag"] != "t1" {
		t.Fatalf("batch %v", b)
	}
	read := func(id any) []map[string]any {
		var out []map[string]any
		for _, l := range openAIBatchFile(t, hs.URL, id) {
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

// batchFake is a fake with the configuration patch, served until the test ends.
func batchFake(t *testing.T, patch string) *httptest.Server {
	t.Helper()
	srv, _ := New(DefaultConfig())
	if _, err := srv.UpdateConfig([]byte(patch), false); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hs
}

// openAIBatchUpload uploads a batch file of n lines; it returns the file's id.
func openAIBatchUpload(t *testing.T, url string, n int) string {
	t.Helper()
	var lines bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&lines, `{"custom_id":"j%d","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o","messages":[{"role":"user","content":"Record %d"}]}}`+"\n", i, i)
	}
	var form bytes.Buffer
	w := multipart.NewWriter(&form)
	_ = w.WriteField("purpose", "batch")
	f, _ := w.CreateFormFile("file", "b.jsonl")
	_, _ = f.Write(lines.Bytes())
	_ = w.Close()
	var file struct{ ID string }
	_ = json.Unmarshal(batchCall(t, "POST", url+"/v1/files", &form, w.FormDataContentType()), &file)
	return file.ID
}

// openAIBatchCreate is the create call of a batch of the file.
func openAIBatchCreate(url, fileID string) (*http.Response, error) {
	req, _ := http.NewRequest("POST", url+"/v1/batches", strings.NewReader(
		`{"input_file_id":"`+fileID+`","endpoint":"/v1/chat/completions","completion_window":"24h","metadata":{"tabscreen_tag":"t1"}}`))
	req.Header.Set("Authorization", "Bearer sk-fake-batch-test")
	req.Header.Set("Content-Type", "application/json")
	return http.DefaultClient.Do(req)
}

// openAIBatchSubmit submits a batch of n lines and reads it back (ended, as batch_delay_ms is 0).
func openAIBatchSubmit(t *testing.T, url string, n int) map[string]any {
	t.Helper()
	resp, err := openAIBatchCreate(url, openAIBatchUpload(t, url, n))
	if err != nil {
		t.Fatal(err)
	}
	var b map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&b)
	_ = resp.Body.Close()
	_ = json.Unmarshal(batchCall(t, "GET", url+"/v1/batches/"+b["id"].(string), nil, ""), &b)
	return b
}

// openAIBatchFile is the lines of a result file.
func openAIBatchFile(t *testing.T, url string, id any) [][]byte {
	t.Helper()
	return bytes.Split(bytes.TrimSpace(batchCall(t, "GET", url+"/v1/files/"+id.(string)+"/content", nil, "")), []byte("\n"))
}

// The variants of a result line the client must read: a numeric error code beside a 500 response
// (in the error file), a line cut in the middle (in the output file), fields no client knows.
func TestBatchFilesHoldOddLines(t *testing.T) {
	hs := batchFake(t, `{"batches": true, "batch_fail_numeric": 0.2, "batch_garbled": 0.2, "batch_unknown_fields": true}`)
	srv := hs.Config.Handler.(*Server)
	b := openAIBatchSubmit(t, hs.URL, 100)
	if _, ok := b["x_fake_unknown"]; !ok {
		t.Fatalf("the batch object has no unknown field: %v", b)
	}
	numeric, garbled, unknown := 0, 0, 0
	for _, id := range []any{b["output_file_id"], b["error_file_id"]} {
		for _, l := range openAIBatchFile(t, hs.URL, id) {
			var v map[string]any
			if json.Unmarshal(l, &v) != nil {
				garbled++
				continue
			}
			if e, ok := v["error"].(map[string]any); ok && e["code"] == 500.0 && v["response"].(map[string]any)["status_code"] == 500.0 {
				numeric++
			}
			if _, ok := v["x_fake_unknown"]; ok {
				unknown++
			}
		}
	}
	st := srv.Stats().Batch
	if numeric == 0 || garbled == 0 || int64(numeric) != st.LinesFailed || int64(garbled) != st.LinesGarbled ||
		unknown != 100-garbled || st.LinesAnswered != int64(100-numeric-garbled) {
		t.Fatalf("numeric %d, garbled %d, with unknown fields %d, stats %+v", numeric, garbled, unknown, st)
	}
}

// batch_create_fail_always refuses every create with a 429 and counts each.
func TestBatchCreateFailAlways(t *testing.T) {
	hs := batchFake(t, `{"batches": true, "batch_create_fail_always": true}`)
	srv := hs.Config.Handler.(*Server)
	file := openAIBatchUpload(t, hs.URL, 3)
	for i := 0; i < 3; i++ {
		resp, err := openAIBatchCreate(hs.URL, file)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("create %d: status %d", i, resp.StatusCode)
		}
	}
	if st := srv.Stats().Batch; st.CreateRefused != 3 || st.Created != 0 || st.FilesUploaded != 1 {
		t.Fatalf("stats %+v", st)
	}
}
