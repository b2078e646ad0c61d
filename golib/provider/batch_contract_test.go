package provider

// The contract of every batch API, over golden fixtures (testdata/<protocol>/batch.json): the line
// a request becomes, the requests of upload, create, get, cancel, list and results, and what each
// batch object, list page and result file means. A provider with a batch API and no fixtures, or
// fixtures without the cases below, fails. `go test -run BatchContract -update` rewrites the
// expectations.

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type batchFixture struct {
	URL      string          `json:"url"`
	Body     json.RawMessage `json:"request_body"`
	Batches  []batchCase     `json:"batches"`
	Lists    []batchCase     `json:"lists"`
	Results  []batchCase     `json:"results"`
	Requests json.RawMessage `json:"requests"`
}

type batchCase struct {
	Name   string          `json:"name"`
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body"`
	Text   string          `json:"text,omitempty"` // a result file's text (JSONL)
	Want   json.RawMessage `json:"want"`
}

// batchCasesNeeded are the cases every batch API's fixtures must hold. "odd lines" are the shapes
// of a result line the documents allow or files were seen to hold: numeric and string error codes,
// status_code 0, fields the parser does not know, nulls, and lines that are not JSON.
var batchCasesNeeded = map[string][]string{
	"batches": {"in progress", "completed", "expired", "cancelled", "refused", "error"},
	"lists":   {"page with more", "last page"},
	"results": {"answers", "failures and expiries", "odd lines"},
}

func shownCall(c HTTPCall) map[string]any {
	h := map[string]string{}
	for k, v := range c.Header {
		if k == "Content-Type" && strings.HasPrefix(v[0], "multipart/") {
			h[k] = "multipart/form-data"
			continue
		}
		h[k] = strings.ReplaceAll(strings.Join(v, ", "), contractKey, "<key>")
	}
	out := map[string]any{"method": c.Method, "url": c.URL, "header": h}
	if ct := c.Header.Get("Content-Type"); strings.HasPrefix(ct, "multipart/") {
		_, params, _ := mime.ParseMediaType(ct)
		r := multipart.NewReader(bytes.NewReader(c.Body), params["boundary"])
		form := map[string]string{}
		for {
			p, err := r.NextPart()
			if err != nil {
				break
			}
			b, _ := io.ReadAll(p)
			name := p.FormName()
			if p.FileName() != "" {
				name += " (" + p.FileName() + ")"
			}
			form[name] = string(b)
		}
		out["form"] = form
	} else if c.Body != nil {
		out["body"] = json.RawMessage(c.Body)
	}
	return out
}

func TestBatchContract(t *testing.T) {
	for _, d := range All() {
		if d.Batch == nil {
			continue
		}
		t.Run(d.Protocol, func(t *testing.T) {
			path := filepath.Join("testdata", d.Protocol, "batch.json")
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("provider %s has a batch API and no batch fixtures: %v", d.Letter, err)
			}
			var f batchFixture
			if err := json.Unmarshal(raw, &f); err != nil {
				t.Fatal(err)
			}
			have := map[string]map[string]bool{"batches": {}, "lists": {}, "results": {}}
			api := d.Batch(Settings{URL: f.URL, APIKey: contractKey})
			line, err := api.Line("j7", Request{Body: f.Body})
			if err != nil {
				t.Fatal(err)
			}
			lines := [][]byte{line, line}
			upload, hasUpload := api.Upload(lines, "tabscreen-tag")
			info := BatchInfo{ID: "batch-1", Results: []string{"file-out", "file-err"}}
			reqs := map[string]any{"line": json.RawMessage(line), "create": shownCall(api.Create("file-in", lines, "tabscreen-tag")),
				"get": shownCall(api.Get("batch-1")), "cancel": shownCall(api.Cancel("batch-1")),
				"list": shownCall(api.List("")), "list after": shownCall(api.List("batch-0"))}
			if hasUpload {
				reqs["upload"] = shownCall(upload)
			}
			var results []any
			for _, c := range api.Results(info) {
				results = append(results, shownCall(c))
			}
			reqs["results"] = results
			got, _ := json.MarshalIndent(reqs, "", "  ")
			check := func(name string, want *json.RawMessage, v any) {
				b, _ := json.Marshal(v)
				if *update {
					*want = b
					return
				}
				if !jsonEqual(*want, b) {
					t.Errorf("%s:\n got %s\nwant %s", name, b, *want)
				}
			}
			check("requests", &f.Requests, json.RawMessage(got))
			for i := range f.Batches {
				c := &f.Batches[i]
				have["batches"][c.Name] = true
				bi, err := api.ParseBatch(Response{Status: c.Status, Body: c.Body})
				check("batch "+c.Name, &c.Want, map[string]any{"info": bi, "error": errText(err)})
			}
			for i := range f.Lists {
				c := &f.Lists[i]
				have["lists"][c.Name] = true
				infos, next, err := api.ParseList(Response{Status: c.Status, Body: c.Body}, "")
				check("list "+c.Name, &c.Want, map[string]any{"batches": infos, "next": next, "error": errText(err)})
			}
			for i := range f.Results {
				c := &f.Results[i]
				have["results"][c.Name] = true
				ls := api.ParseResults([]byte(c.Text))
				shown := make([]map[string]any, len(ls))
				for k, l := range ls {
					shown[k] = map[string]any{"custom_id": l.CustomID, "kind": l.Kind, "status": l.Status,
						"body": string(l.Body), "message": l.Message}
				}
				check("results "+c.Name, &c.Want, map[string]any{"lines": shown})
			}
			for group, names := range batchCasesNeeded {
				for _, n := range names {
					if !have[group][n] {
						t.Errorf("%s: the %s fixtures miss the case %q", path, group, n)
					}
				}
			}
			if *update {
				b, _ := json.MarshalIndent(f, "", "  ")
				if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
