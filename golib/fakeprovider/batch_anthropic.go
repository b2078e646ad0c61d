package fakeprovider

// Anthropic's Message Batches API: POST /v1/messages/batches (requests inline), GET
// /v1/messages/batches[/{id}], POST /v1/messages/batches/{id}/cancel and GET
// /v1/messages/batches/{id}/results (JSONL: succeeded, errored, canceled, expired).

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

func init() {
	batchRoutes = append([]batchRoute{
		{http.MethodPost, "/v1/messages/batches", (*Server).anthropicCreate},
		{http.MethodGet, "/v1/messages/batches", (*Server).anthropicList},
		{http.MethodGet, "/v1/messages/batches/*", anthropicBatches.get},
		{http.MethodPost, "/v1/messages/batches/*/cancel", anthropicBatches.cancel},
		{http.MethodGet, "/v1/messages/batches/*/results", (*Server).anthropicResults},
	}, batchRoutes...)
}

var anthropicBatches = fakeBatchAPI{protocol: "anthropic", authorized: (*Server).anthropicAuthorized,
	notFound: func(w http.ResponseWriter, id string) {
		anthropicBatchError(w, http.StatusNotFound, "not_found_error", "Batch "+id+" not found")
	},
	object: (*Server).anthropicBatchObject}

func anthropicBatchError(w http.ResponseWriter, status int, kind, msg string) {
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]string{"type": kind, "message": msg}})
}

func (s *Server) anthropicAuthorized(w http.ResponseWriter, r *http.Request) bool {
	key := strings.TrimSpace(r.Header.Get("x-api-key"))
	if key == "" || s.cfg.Load().invalidKeys[key] {
		anthropicBatchError(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
		return false
	}
	if !anthropicVersions[r.Header.Get("anthropic-version")] {
		anthropicBatchError(w, http.StatusBadRequest, "invalid_request_error", "anthropic-version: header is required")
		return false
	}
	return true
}

func (s *Server) anthropicCreate(w http.ResponseWriter, r *http.Request, _ []string) {
	if !s.anthropicAuthorized(w, r) {
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Requests []struct {
			CustomID string          `json:"custom_id"`
			Params   json.RawMessage `json:"params"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Requests) == 0 || len(req.Requests) > 100000 {
		anthropicBatchError(w, http.StatusBadRequest, "invalid_request_error", "requests: 1 to 100,000 items are required")
		return
	}
	ids := map[string]bool{}
	lines := make([]batchLine, len(req.Requests))
	for i, q := range req.Requests {
		if !validCustomID(q.CustomID) || ids[q.CustomID] || len(q.Params) == 0 {
			anthropicBatchError(w, http.StatusBadRequest, "invalid_request_error",
				"requests."+strconv.Itoa(i)+".custom_id: must be unique and match ^[a-zA-Z0-9_-]{1,64}$")
			return
		}
		ids[q.CustomID] = true
		lines[i] = batchLine{customID: q.CustomID, body: q.Params}
	}
	if s.refuseCreate() {
		anthropicBatchError(w, http.StatusTooManyRequests, "rate_limit_error", "Number of batch requests exceeds your rate limit.")
		return
	}
	fb := s.addBatch("anthropic", "msgbatch_", lines, r.Header, nil)
	writeJSON(w, http.StatusOK, s.anthropicBatchObject(r, fb))
}

func validCustomID(id string) bool {
	if len(id) < 1 || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func (s *Server) anthropicBatchObject(r *http.Request, fb *fakeBatch) map[string]any {
	counts := map[string]int{"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
	status := "in_progress"
	switch fb.state {
	case "ended", "cancelled":
		status = "ended"
		for _, res := range fb.results {
			switch {
			case fb.state == "cancelled":
				counts["canceled"]++
			case res.answered() && res.status == http.StatusOK:
				counts["succeeded"]++
			case res.answered() || res.failed():
				counts["errored"]++
			case res.fate == fateExpire:
				counts["expired"]++
			}
		}
	default:
		counts["processing"] = len(fb.lines)
	}
	obj := map[string]any{"id": fb.id, "type": "message_batch", "processing_status": status, "request_counts": counts,
		"created_at": fb.created.UTC().Format(time.RFC3339Nano), "expires_at": fb.created.Add(24 * time.Hour).UTC().Format(time.RFC3339Nano),
		"ended_at": nil, "cancel_initiated_at": nil, "archived_at": nil, "results_url": nil}
	s.oddFields(obj)
	if status == "ended" {
		obj["ended_at"] = fb.endsAt.UTC().Format(time.RFC3339Nano)
		obj["results_url"] = "http://" + r.Host + strings.TrimSuffix(r.URL.Path[:strings.Index(r.URL.Path, "/v1/messages/batches")], "/") +
			"/v1/messages/batches/" + fb.id + "/results"
	}
	return obj
}

func (s *Server) anthropicList(w http.ResponseWriter, r *http.Request, _ []string) {
	if !s.anthropicAuthorized(w, r) {
		return
	}
	page, more := pageAfter(s.listBatches("anthropic"), r.URL.Query().Get("limit"), r.URL.Query().Get("after_id"))
	data := make([]map[string]any, len(page))
	for i, fb := range page {
		data[i] = s.anthropicBatchObject(r, fb)
	}
	out := map[string]any{"data": data, "has_more": more, "first_id": nil, "last_id": nil}
	if len(page) > 0 {
		out["first_id"], out["last_id"] = page[0].id, page[len(page)-1].id
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) anthropicResults(w http.ResponseWriter, r *http.Request, parts []string) {
	fb, ok := anthropicBatches.find(s, w, r, parts[0])
	if !ok {
		return
	}
	if s.cfg.Load().BatchResultsGone {
		anthropicBatchError(w, http.StatusNotFound, "not_found_error", "The results of batch "+fb.id+" were not found")
		return
	}
	if fb.state != "ended" && fb.state != "cancelled" {
		anthropicBatchError(w, http.StatusBadRequest, "invalid_request_error", "Batch "+fb.id+" has not ended")
		return
	}
	var buf bytes.Buffer
	for _, res := range fb.results {
		result := map[string]any{}
		switch {
		case fb.state == "cancelled":
			result["type"] = "canceled"
		case res.answered() && res.status == http.StatusOK:
			result["type"], result["message"] = "succeeded", json.RawMessage(res.body)
		case res.answered():
			result["type"], result["error"] = "errored", json.RawMessage(res.body)
		case res.fate == fateFailNumeric: // the inner error alone
			result["type"] = "errored"
			result["error"] = map[string]any{"type": "api_error", "message": "Internal server error"}
		case res.fate == fateFail || res.fate == fateFailZero:
			result["type"] = "errored"
			result["error"] = map[string]any{"type": "error", "error": map[string]string{"type": "api_error", "message": "Internal server error"}}
		case res.fate == fateExpire:
			result["type"] = "expired"
		default: // vanished
			continue
		}
		s.oddFields(result)
		buf.Write(s.resultLine(map[string]any{"custom_id": res.customID, "result": result}, res.fate))
	}
	s.noteResultsFetched()
	w.Header().Set("Content-Type", "application/binary")
	_, _ = w.Write(buf.Bytes())
}
