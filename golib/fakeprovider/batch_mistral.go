package fakeprovider

// Mistral's batch jobs API (under /mistral/): POST /v1/files (multipart, purpose "batch"), POST
// /v1/batch/jobs, GET /v1/batch/jobs[/{id}], POST /v1/batch/jobs/{id}/cancel, GET
// /v1/files/{id}/content. Files and result lines are those of OpenAI's API.

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
)

func init() {
	batchRoutes = append(batchRoutes,
		fileBatchRoutes("/mistral/v1", "/mistral/v1/batch/jobs", (*Server).mistralCreate, (*Server).mistralList, mistralBatches)...)
}

var mistralBatches = fakeBatchAPI{protocol: "mistral", authorized: (*Server).openAIAuthorized,
	notFound: func(w http.ResponseWriter, id string) {
		mistralBatchError(w, http.StatusNotFound, "Batch job "+id+" not found")
	},
	object: func(s *Server, _ *http.Request, fb *fakeBatch) map[string]any { return s.mistralJob(fb, nil) }}

func mistralBatchError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"object": "error", "message": msg, "type": "invalid_request_error", "param": nil, "code": nil})
}

func (s *Server) mistralCreate(w http.ResponseWriter, r *http.Request, _ []string) {
	if !s.openAIAuthorized(w, r) {
		return
	}
	var req struct {
		InputFiles []string          `json:"input_files"`
		Endpoint   string            `json:"endpoint"`
		Metadata   map[string]string `json:"metadata"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil || len(req.InputFiles) != 1 || req.Endpoint != "/v1/chat/completions" {
		mistralBatchError(w, http.StatusUnprocessableEntity, "input_files (one file) and endpoint \"/v1/chat/completions\" are required")
		return
	}
	content, ok := s.file(req.InputFiles[0])
	if !ok {
		mistralBatchError(w, http.StatusNotFound, "File "+req.InputFiles[0]+" not found")
		return
	}
	if s.refuseCreate() {
		mistralBatchError(w, http.StatusTooManyRequests, "Too many pending batch requests")
		return
	}
	lines, ok := fileLines(content, func(fileLine) bool { return true })
	if !ok {
		mistralBatchError(w, http.StatusUnprocessableEntity, "Every line of the input file needs a body")
		return
	}
	fb := s.addBatch("mistral", "6f1c2d3e-batch-", lines, r.Header, req.Metadata)
	writeJSON(w, http.StatusOK, s.mistralJob(fb, req.InputFiles))
}

func (s *Server) mistralJob(fb *fakeBatch, inputs []string) map[string]any {
	status := map[string]string{"in_progress": "RUNNING", "running": "RUNNING", "ended": "SUCCESS", "cancelled": "CANCELLED"}[fb.state]
	total, ok, failed := fb.counts()
	if inputs == nil {
		inputs = []string{}
	}
	obj := map[string]any{"id": fb.id, "object": "batch", "input_files": inputs, "metadata": fb.meta,
		"endpoint": "/v1/chat/completions", "model": nil, "output_file": nil, "error_file": nil, "errors": []any{},
		"status": status, "created_at": fb.created.Unix(), "total_requests": total, "completed_requests": ok + failed,
		"succeeded_requests": ok, "failed_requests": failed, "started_at": fb.created.Unix(), "completed_at": nil}
	if s.cfg.Load().BatchUnknownFields { // metadata values of any type, as Mistral's schema allows
		meta := map[string]any{"x_priority": 3}
		for k, v := range fb.meta {
			meta[k] = v
		}
		obj["metadata"] = meta
	}
	s.oddFields(obj)
	if status == "SUCCESS" || status == "CANCELLED" {
		out, errs := s.responseFiles(fb)
		if out != "" {
			obj["output_file"] = out
		}
		if errs != "" {
			obj["error_file"] = errs
		}
		obj["completed_at"] = fb.endsAt.Unix()
	}
	return obj
}

func (s *Server) mistralList(w http.ResponseWriter, r *http.Request, _ []string) {
	if !s.openAIAuthorized(w, r) {
		return
	}
	all := s.listBatches("mistral")
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	size, err := strconv.Atoi(r.URL.Query().Get("page_size"))
	if err != nil || size < 1 {
		size = 100
	}
	from, to := min(page*size, len(all)), min((page+1)*size, len(all))
	data := make([]map[string]any, 0, to-from)
	for _, fb := range all[from:to] {
		data = append(data, s.mistralJob(fb, nil))
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data, "total": len(all)})
}
