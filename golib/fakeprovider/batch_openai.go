package fakeprovider

// OpenAI's Batch API: POST /v1/files (multipart, purpose "batch"), POST /v1/batches,
// GET /v1/batches[/{id}], POST /v1/batches/{id}/cancel, GET /v1/files/{id}/content. The output
// file holds the lines answered (any HTTP status), the error file the lines that failed without a
// response (status_code 0) or expired.

import (
	"encoding/json"
	"io"
	"net/http"
	"time"
)

func init() {
	batchRoutes = append(batchRoutes,
		fileBatchRoutes("/v1", "/v1/batches", (*Server).openAICreate, (*Server).openAIList, openAIBatches)...)
}

var openAIBatches = fakeBatchAPI{protocol: "openai", authorized: (*Server).openAIAuthorized,
	notFound: func(w http.ResponseWriter, id string) {
		openAIError(w, http.StatusNotFound, "not_found", "No batch found with id '"+id+"'.")
	},
	object: func(s *Server, _ *http.Request, fb *fakeBatch) map[string]any { return s.openAIBatchObject(fb, "") }}

func openAIError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error",
		"param": nil, "code": code}})
}

// openAIAuthorized refuses a call without a bearer key (or with one declared invalid).
func (s *Server) openAIAuthorized(w http.ResponseWriter, r *http.Request) bool {
	key := chatBase{}.apiKey(r)
	if key == "" || s.cfg.Load().invalidKeys[key] {
		openAIError(w, http.StatusUnauthorized, "invalid_api_key", "Incorrect API key provided.")
		return false
	}
	return true
}

func (s *Server) openAIUpload(w http.ResponseWriter, r *http.Request, _ []string) {
	if !s.openAIAuthorized(w, r) {
		return
	}
	if err := r.ParseMultipartForm(256 << 20); err != nil || r.FormValue("purpose") != "batch" {
		openAIError(w, http.StatusBadRequest, "invalid_request", "A multipart form with purpose=batch and a file is required.")
		return
	}
	f, hdr, err := r.FormFile("file")
	if err != nil {
		openAIError(w, http.StatusBadRequest, "invalid_request", "The file is missing.")
		return
	}
	content, _ := io.ReadAll(f)
	_ = f.Close()
	id := s.storeFile("file-", content, true)
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "object": "file", "bytes": len(content),
		"created_at": time.Now().Unix(), "filename": hdr.Filename, "purpose": "batch"})
}

func (s *Server) openAICreate(w http.ResponseWriter, r *http.Request, _ []string) {
	if !s.openAIAuthorized(w, r) {
		return
	}
	var req struct {
		InputFileID      string            `json:"input_file_id"`
		Endpoint         string            `json:"endpoint"`
		CompletionWindow string            `json:"completion_window"`
		Metadata         map[string]string `json:"metadata"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil || req.Endpoint != "/v1/chat/completions" || req.CompletionWindow != "24h" {
		openAIError(w, http.StatusBadRequest, "invalid_request",
			"input_file_id, endpoint \"/v1/chat/completions\" and completion_window \"24h\" are required.")
		return
	}
	content, ok := s.file(req.InputFileID)
	if !ok {
		openAIError(w, http.StatusNotFound, "not_found", "No such File object: "+req.InputFileID)
		return
	}
	if s.refuseCreate() {
		openAIError(w, http.StatusTooManyRequests, "token_limit_exceeded",
			"Enqueued token limit reached for this model. Wait for your batches to finish before creating more.")
		return
	}
	ids := map[string]bool{}
	lines, ok := fileLines(content, func(l fileLine) bool {
		ok := l.CustomID != "" && l.Method == "POST" && l.URL == req.Endpoint && !ids[l.CustomID]
		ids[l.CustomID] = true
		return ok
	})
	if !ok {
		openAIError(w, http.StatusBadRequest, "invalid_request", "The input file holds an invalid or duplicated line.")
		return
	}
	if len(lines) == 0 || len(lines) > 50000 {
		openAIError(w, http.StatusBadRequest, "invalid_request", "A batch holds 1 to 50,000 requests.")
		return
	}
	fb := s.addBatch("openai", "batch_", lines, r.Header, req.Metadata)
	writeJSON(w, http.StatusOK, s.openAIBatchObject(fb, req.InputFileID))
}

// openAIBatchObject writes a batch, making its output and error files once it has ended.
func (s *Server) openAIBatchObject(fb *fakeBatch, inputFile string) map[string]any {
	status := map[string]string{"in_progress": "in_progress", "running": "in_progress", "ended": "completed",
		"cancelled": "cancelled"}[fb.state]
	total, ok, failed := fb.counts()
	obj := map[string]any{"id": fb.id, "object": "batch", "endpoint": "/v1/chat/completions", "errors": nil,
		"input_file_id": inputFile, "completion_window": "24h", "status": status, "output_file_id": nil,
		"error_file_id": nil, "created_at": fb.created.Unix(), "metadata": fb.meta,
		"request_counts": map[string]int{"total": total, "completed": ok, "failed": failed}}
	s.oddFields(obj)
	if status == "completed" || status == "cancelled" {
		out, errs := s.responseFiles(fb)
		if out != "" {
			obj["output_file_id"] = out
		}
		if errs != "" {
			obj["error_file_id"] = errs
		}
	}
	return obj
}

func (s *Server) openAIList(w http.ResponseWriter, r *http.Request, _ []string) {
	if !s.openAIAuthorized(w, r) {
		return
	}
	page, more := pageAfter(s.listBatches("openai"), r.URL.Query().Get("limit"), r.URL.Query().Get("after"))
	data := make([]map[string]any, len(page))
	for i, fb := range page {
		data[i] = s.openAIBatchObject(fb, "")
	}
	out := map[string]any{"object": "list", "data": data, "has_more": more, "first_id": nil, "last_id": nil}
	if len(page) > 0 {
		out["first_id"], out["last_id"] = page[0].id, page[len(page)-1].id
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) openAIFileContent(w http.ResponseWriter, r *http.Request, parts []string) {
	if !s.openAIAuthorized(w, r) {
		return
	}
	gone := s.cfg.Load().BatchResultsGone
	content, ok := []byte(nil), false
	if !gone {
		content, ok = s.file(parts[0])
	}
	if !ok {
		openAIError(w, http.StatusNotFound, "not_found", "No such File object: "+parts[0])
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(content)
}
