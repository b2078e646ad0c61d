package provider

// Batch APIs: what differs between the providers' asynchronous batch endpoints, behind one small
// interface of pure functions (build a request, read a response). The shared pipeline
// (golib/batch) does the I/O, the waits and the bookkeeping.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// BatchLimits are the most lines and bytes one batch may hold.
type BatchLimits struct {
	MaxLines int
	MaxBytes int64
}

// HTTPCall is one request of a batch API.
type HTTPCall struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
}

// BatchInfo is a provider's batch as its API describes it.
type BatchInfo struct {
	ID    string
	Tag   string // our client tag, from the batch's metadata
	State string // the provider's word
	// Ended: no line will change any more (completed, expired, cancelled, failed).
	Ended bool
	// Refused: the provider ended the batch without running it (e.g. OpenAI's enqueued-token
	// limit); its lines are submitted again later.
	Refused           bool
	Total, Done, Fail int
	// Created is when the provider created it (zero when its API does not say).
	Created time.Time
	// Results are the files (or URLs) its line results are read from.
	Results []string
}

// LineKind is what became of one line.
type LineKind uint8

const (
	// LineResponse: the provider answered the line with an HTTP status and body (200 or an error).
	LineResponse LineKind = iota + 1
	// LineFailed: the line failed without a response (OpenAI's status_code 0, an errored result).
	LineFailed
	// LineExpired: the batch ended before the line ran (or it was cancelled).
	LineExpired
)

// BatchLine is one line of a batch's results.
type BatchLine struct {
	CustomID string
	Kind     LineKind
	Status   int
	Body     []byte
	Message  string
}

// BatchAPI is a provider's batch protocol. Every method is pure: no I/O, no clock.
type BatchAPI interface {
	Limits() BatchLimits
	// Line is one request of a batch in the provider's line format (a JSONL line or an element).
	Line(customID string, req Request) ([]byte, error)
	// Upload is the request that uploads the lines as a file, or false when the batch is created
	// with its lines inline.
	Upload(lines [][]byte, tag string) (HTTPCall, bool)
	// ParseUpload reads the uploaded file's id.
	ParseUpload(r Response) (string, error)
	// Create creates a batch of the uploaded file (or of the lines), tagged with tag.
	Create(fileID string, lines [][]byte, tag string) HTTPCall
	// ParseBatch reads a batch (create, get and cancel answer with one).
	ParseBatch(r Response) (BatchInfo, error)
	Get(id string) HTTPCall
	Cancel(id string) HTTPCall
	// List asks for a page of the account's batches after the cursor ("" for the first page).
	List(after string) HTTPCall
	// ParseList reads the page asked for with cursor after, and the cursor of the next one ("" at
	// the end).
	ParseList(r Response, after string) ([]BatchInfo, string, error)
	// Results are the requests that fetch an ended batch's line results.
	Results(b BatchInfo) []HTTPCall
	// ParseResults reads the line results of one of them, each line on its own: a line it cannot
	// read is a failed line with the reason (and its custom id when its text still names one).
	ParseResults(body []byte) []BatchLine
}

// ClientTagKey is the metadata key of the client tag a batch is found again by.
const ClientTagKey = "tabscreen_tag"

// batchMetadata is a batch's metadata: values of any type (Mistral's may be), of which the client
// tag is a string.
type batchMetadata map[string]any

func (m batchMetadata) tag() string {
	s, _ := m[ClientTagKey].(string)
	return s
}

// HTTPError is an error response of a batch API call; its status goes to R with the error.
type HTTPError struct {
	What   string
	Status int
	Body   string
}

func (e *HTTPError) Error() string { return fmt.Sprintf("%s: HTTP %d: %s", e.What, e.Status, e.Body) }

// BatchError reads an error response of a batch API call.
func BatchError(what string, r Response) error {
	return &HTTPError{What: what, Status: r.Status, Body: snippet(r.Body)}
}

// multipartFile is the body of a file upload: the form's fields, then the file.
func multipartFile(url string, header http.Header, fields map[string]string, filename string, content []byte) HTTPCall {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		_ = w.WriteField(k, fields[k])
	}
	part, _ := w.CreateFormFile("file", filename)
	_, _ = part.Write(content)
	_ = w.Close()
	h := header.Clone()
	h.Set("Content-Type", w.FormDataContentType())
	return HTTPCall{Method: http.MethodPost, URL: url, Header: h, Body: buf.Bytes()}
}

// jsonl joins lines into a JSONL file.
func jsonl(lines [][]byte) []byte {
	return append(bytes.Join(lines, []byte("\n")), '\n')
}

// resultLines reads a JSONL file of line results, each line on its own: one that is not a JSON
// object becomes a failed line (its custom id taken from its text when it still holds one), so
// that a line the parser cannot read never hides the lines around it.
func resultLines(body []byte, read func(f map[string]json.RawMessage) BatchLine) []BatchLine {
	var out []BatchLine
	for _, l := range bytes.Split(body, []byte("\n")) {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var f map[string]json.RawMessage
		if err := json.Unmarshal(l, &f); err != nil || f == nil {
			if _, notObject := err.(*json.UnmarshalTypeError); notObject || err == nil {
				err = errors.New("not a JSON object")
			}
			out = append(out, BatchLine{CustomID: salvageCustomID(l), Kind: LineFailed,
				Message: fmt.Sprintf("its result line could not be read (%v): %s", err, snippet(l))})
			continue
		}
		line := read(f)
		line.CustomID = jsonText(f["custom_id"])
		out = append(out, line)
	}
	return out
}

var customIDText = regexp.MustCompile(`"custom_id"\s*:\s*"([A-Za-z0-9_-]{1,64})"`)

// salvageCustomID is the custom id a broken result line still names ("" when none).
func salvageCustomID(l []byte) string {
	if m := customIDText.FindSubmatch(l); m != nil {
		return string(m[1])
	}
	return ""
}

// jsonObject is a JSON object's fields; nil for anything else (null, a string, a number), so that
// a field of an unexpected type reads as absent.
func jsonObject(raw json.RawMessage) map[string]json.RawMessage {
	var f map[string]json.RawMessage
	if json.Unmarshal(raw, &f) != nil {
		return nil
	}
	return f
}

// jsonText is a JSON string, or a number written as text; "" for anything else.
func jsonText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// jsonInt is a JSON number, or a string holding one, as an int (0 for anything else).
func jsonInt(raw json.RawMessage) int {
	f, err := strconv.ParseFloat(jsonText(raw), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1e9 {
		return 0
	}
	return int(f)
}

// joinText joins the non-empty parts with ": ".
func joinText(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, ": ")
}

// bearerHeader is the header of a batch API call authenticated with a bearer key.
func bearerHeader(key string) http.Header {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+key)
	h.Set("Accept", "application/json")
	return h
}

// jsonCall is a call with a JSON body (nil: none).
func jsonCall(method, url string, header http.Header, body any) HTTPCall {
	c := HTTPCall{Method: method, URL: url, Header: header}
	if body != nil {
		c.Body, _ = json.Marshal(body)
		c.Header = header.Clone()
		c.Header.Set("Content-Type", "application/json")
	}
	return c
}

// parseFileID reads the id of an uploaded file (OpenAI's and Mistral's file object).
func parseFileID(r Response) (string, error) {
	var f struct {
		ID string `json:"id"`
	}
	if r.Status != http.StatusOK {
		return "", BatchError("file upload", r)
	}
	if err := json.Unmarshal(r.Body, &f); err != nil || f.ID == "" {
		return "", fmt.Errorf("file upload answered without an id: %s", snippet(r.Body))
	}
	return f.ID, nil
}

// uploadBatchFile uploads the lines as a JSONL file with purpose "batch" (OpenAI's and Mistral's
// files API).
func uploadBatchFile(base string, header http.Header, lines [][]byte, tag string) HTTPCall {
	return multipartFile(base+"/files", header, map[string]string{"purpose": "batch"}, tag+".jsonl", jsonl(lines))
}

// fileContents are the requests that download files (OpenAI's and Mistral's files API).
func fileContents(base string, header http.Header, ids []string) []HTTPCall {
	out := make([]HTTPCall, len(ids))
	for i, f := range ids {
		out[i] = jsonCall(http.MethodGet, base+"/files/"+url.PathEscape(f)+"/content", header, nil)
	}
	return out
}

// responseLine reads a line of a result file that holds a response (status_code and body) or an
// error (OpenAI's output and error files, Mistral's). A line with a response holds its status and
// body; one without (status_code 0, or no response) failed, unless its error says it expired or
// was cancelled. Either error field (code, message) may be a string or a number.
func responseLine(f map[string]json.RawMessage) BatchLine {
	resp, e := jsonObject(f["response"]), jsonObject(f["error"])
	code := jsonText(e["code"])
	line := BatchLine{Kind: LineFailed, Message: joinText(code, jsonText(e["message"]))}
	if e == nil { // an error written as a bare string
		line.Message = jsonText(f["error"])
	}
	status := jsonInt(resp["status_code"])
	switch {
	case code == "batch_expired" || code == "batch_cancelled":
		line.Kind = LineExpired
	case status != 0:
		line.Kind, line.Status, line.Body = LineResponse, status, resp["body"]
	case line.Message == "":
		line.Message = "the line failed without a response (status_code 0)"
	}
	return line
}

// batchCollection is a batch API's collection of batches (OpenAI's /v1/batches, Anthropic's
// /v1/messages/batches, Mistral's /v1/batch/jobs): a batch is its URL plus its id, and is cancelled
// by POSTing to /cancel below it. Each provider's batch API embeds one.
type batchCollection struct {
	coll   string
	header http.Header
}

func (c batchCollection) Get(id string) HTTPCall {
	return jsonCall(http.MethodGet, c.coll+"/"+url.PathEscape(id), c.header, nil)
}

func (c batchCollection) Cancel(id string) HTTPCall {
	return jsonCall(http.MethodPost, c.coll+"/"+url.PathEscape(id)+"/cancel", c.header, nil)
}

// list asks for a page of the collection.
func (c batchCollection) list(q url.Values) HTTPCall {
	return jsonCall(http.MethodGet, c.coll+"?"+q.Encode(), c.header, nil)
}

// batchObject is a provider's batch as its API writes it.
type batchObject interface{ info() BatchInfo }

// parseBatchObject reads one batch (the answer of create, get and cancel).
func parseBatchObject[T batchObject](r Response) (BatchInfo, error) {
	var b T
	if r.Status != http.StatusOK {
		return BatchInfo{}, BatchError("batch request", r)
	}
	if err := json.Unmarshal(r.Body, &b); err != nil || b.info().ID == "" {
		return BatchInfo{}, fmt.Errorf("batch response without an id: %s", snippet(r.Body))
	}
	return b.info(), nil
}

// parseBatchPage reads a page of batches into page (whose Data field holds them) and returns them.
func parseBatchPage[T batchObject](r Response, data *[]T, page any) ([]BatchInfo, error) {
	if r.Status != http.StatusOK {
		return nil, BatchError("listing batches", r)
	}
	if err := json.Unmarshal(r.Body, page); err != nil {
		return nil, fmt.Errorf("batch list: %v", err)
	}
	out := make([]BatchInfo, len(*data))
	for i, b := range *data {
		out[i] = b.info()
	}
	return out, nil
}

// cursorPage is a page of a list paged by the last id (OpenAI, Anthropic).
type cursorPage[T batchObject] struct {
	Data    []T    `json:"data"`
	HasMore bool   `json:"has_more"`
	LastID  string `json:"last_id"`
}

// parseCursorPage reads a cursorPage: its batches, and the cursor of the next page.
func parseCursorPage[T batchObject](r Response) ([]BatchInfo, string, error) {
	var page cursorPage[T]
	out, err := parseBatchPage(r, &page.Data, &page)
	if err != nil || !page.HasMore {
		return out, "", err
	}
	return out, page.LastID, nil
}

// presentIDs are the ids given (a batch's output and error files, either of which may be absent).
func presentIDs(ids ...*string) []string {
	var out []string
	for _, id := range ids {
		if id != nil && *id != "" {
			out = append(out, *id)
		}
	}
	return out
}

// fileBatches is what the batch APIs of the chat-completions providers (OpenAI, Mistral) share:
// the lines uploaded as a JSONL file (POST {base}/files, purpose "batch"), a batch's output and
// error files (GET {base}/files/{id}/content) in one line format (responseLines), and their limits
// (OpenAI's: 50,000 requests and 200 MB per file; Mistral takes more per file, but no more is
// needed).
type fileBatches struct {
	batchCollection
	base string // https://api.openai.com/v1
}

// newFileBatches is the file API under the chat endpoint's /v1, with the collection of batches
// at coll below it.
func newFileBatches(s Settings, coll string) fileBatches {
	base := strings.TrimSuffix(strings.TrimRight(s.URL, "/"), "/chat/completions")
	return fileBatches{batchCollection{base + coll, bearerHeader(s.APIKey)}, base}
}

func (f fileBatches) Limits() BatchLimits { return BatchLimits{MaxLines: 50000, MaxBytes: 200 << 20} }

func (f fileBatches) Upload(lines [][]byte, tag string) (HTTPCall, bool) {
	return uploadBatchFile(f.base, f.header, lines, tag), true
}

func (f fileBatches) ParseUpload(r Response) (string, error) { return parseFileID(r) }

func (f fileBatches) Results(b BatchInfo) []HTTPCall {
	return fileContents(f.base, f.header, b.Results)
}

func (f fileBatches) ParseResults(body []byte) []BatchLine { return resultLines(body, responseLine) }
