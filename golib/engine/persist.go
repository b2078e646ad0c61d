package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash"
	"os"
	"unsafe"

	"github.com/tabscreen/tabscreen/golib/guard"
	"github.com/tabscreen/tabscreen/golib/provider"
	"github.com/tabscreen/tabscreen/golib/screen"
	"github.com/tabscreen/tabscreen/golib/store"
)

// StoreOptions say where the run's answers are kept (ARCHITECTURE.md, "The answer store").
type StoreOptions struct {
	Path  string `json:"path"`
	Reuse bool   `json:"reuse"`
	// RunID and Fingerprint name the run to continue (screen_errors(): its records are a subset,
	// so the fingerprint cannot be recomputed from them).
	RunID       string `json:"run_id"`
	Fingerprint string `json:"fingerprint"`
	// RecordIndex maps this call's records to their positions in the run (screen_errors()).
	RecordIndex []int32 `json:"record_index"`
	// Temporary: the store only carries this call's answers to its result (the user keeps no
	// store); Release removes the file.
	Temporary bool `json:"temporary"`
}

// StoreInfo tells R which run of which store the call wrote into.
type StoreInfo struct {
	Path        string `json:"path"`
	RunID       string `json:"run_id"`
	Fingerprint string `json:"fingerprint"`
	Resumed     bool   `json:"resumed"`
	Reused      bool   `json:"reused"` // the run continued had completed (reuse)
	Previous    string `json:"previous,omitempty"`
	Stored      int    `json:"stored"`
	Total       int    `json:"total"`
	// Written: answers an earlier call received but could not store, written in by this call
	// before it sent anything.
	Written int `json:"written"`
	// Kept: answers this call received that the store did not take (it failed), kept where
	// KeptIn says ("journal" beside the store, or "memory" of this R session) for the next call.
	Kept   int    `json:"kept"`
	KeptIn string `json:"kept_in,omitempty"`
}

// fingerprint hashes everything that decides what a run asks: the options (provider, endpoint,
// models and their settings, prompts, tools, sampling, reps, seed) and every record's text. The
// settings that only pace, retry or price the requests are cleared first, since they do not
// change the answers; the key is not among the options, so it never reaches the store.
func fingerprint(o *Options, recs Records) string {
	decisive := *o
	decisive.RPM, decisive.TPM, decisive.MaxTries, decisive.MaxSeconds = nil, nil, nil, nil
	decisive.Callbacks, decisive.MaxActive, decisive.Timeout = CallbackOptions{}, 0, 0
	decisive.Jobs, decisive.Store, decisive.Result = nil, nil, nil
	if o.Batch != nil {
		decisive.Batch = &BatchOptions{}
	}
	decisive.Models = make([]ModelOptions, len(o.Models))
	for i, m := range o.Models {
		m.RPM, m.ModelPrices = 0, screen.ModelPrices{}
		decisive.Models[i] = m
	}
	h := sha256.New()
	head, _ := json.Marshal(struct {
		Version int      `json:"version"`
		Options *Options `json:"options"`
	}{1, &decisive})
	h.Write(head)
	for i := range recs.Titles {
		hashField(h, recs.Titles[i], recs.TitleValid == nil || recs.TitleValid[i])
		hashField(h, recs.Abstracts[i], recs.AbstractValid == nil || recs.AbstractValid[i])
		if recs.StudyIDs != nil {
			hashField(h, recs.StudyIDs[i], true)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// hashField writes a length-prefixed value, so that no two record lists hash alike by shifting
// text from one field to the next.
func hashField(h hash.Hash, s string, valid bool) {
	var n [9]byte
	if valid {
		n[0] = 1
	}
	binary.LittleEndian.PutUint64(n[1:], uint64(len(s)))
	h.Write(n[:])
	// The text itself, not a copy of it: a large screening's records would be copied once more.
	h.Write(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// openStore claims the run in the store and fills in the jobs it already answered, before any
// request is sent.
func (r *Run) openStore(recs Records, given map[jobID]*JobKey) error {
	so := r.opts.Store
	if so == nil || so.Path == "" {
		return nil
	}
	if so.RecordIndex != nil && len(so.RecordIndex) != r.records {
		return &store.Error{Class: "tabscreen_error_internal", Message: "store record_index must have one value per record"}
	}
	fp := so.Fingerprint
	if so.RunID == "" {
		fp = fingerprint(r.opts, recs)
	}
	st, err := store.Open(so.Path)
	if err != nil {
		return err
	}
	models := make([]string, len(r.opts.Models))
	for i, m := range r.opts.Models {
		models[i] = m.Name
	}
	session, err := st.Claim(store.RunSpec{
		Fingerprint: fp, Provider: r.opts.Provider, Endpoint: r.descriptor.Endpoint(r.opts.APIURL), Models: models,
		Prompts: len(r.opts.Prompts), Records: r.records, Jobs: len(r.jobs), Settings: r.storedSettings(),
		RunID: so.RunID, Reuse: so.Reuse,
	})
	if err != nil {
		st.Close()
		return err
	}
	r.session = session
	r.studyIDs = recs.StudyIDs
	r.storeInfo = &StoreInfo{Path: st.Path, RunID: session.RunID, Fingerprint: fp, Resumed: session.Resumed,
		Reused: session.Reused, Previous: session.Previous, Total: len(r.jobs), Written: session.Written}
	for i, j := range r.jobs {
		key := r.storeKey(j)
		if a, ok := session.Stored(key); ok {
			r.results[i] = result{ok: true, done: true, stored: true, carried: packUsage(a.Billed), runTime: a.RunTime,
				at: a.ReceivedAt.UnixNano(), attempts: a.Attempts}
			r.answered.Add(1)
			r.done.Add(1)
			r.storeInfo.Stored++
			continue
		}
		r.results[i].carried = packUsage(storedOrGiven(session.StoredFailedUsage(key), given[keyOf(r.opts, j)]))
	}
	r.knownFromStore(session)
	session.DropStored()
	// A failed store sends no further request; the replies in flight are awaited and kept
	// (store.Session keeps what it cannot write).
	session.Start(func(err error) {
		class := "tabscreen_error_store"
		var se *store.Error
		var pe *guard.PanicError
		switch {
		case errors.As(err, &pe):
			class = "tabscreen_error_internal"
		case errors.As(err, &se):
			class = se.Class
		}
		r.stopDispatch(provider.Stop{Class: class, Message: err.Error()})
	}, r.committed)
	return nil
}

// knownFromStore counts, for adaptive repetitions, the answers the store holds of each group,
// also those of its jobs that this call does not re-send (screen_errors()).
func (r *Run) knownFromStore(session *store.Session) {
	a := r.adapt
	if a == nil {
		return
	}
	for i, j := range r.jobs {
		g := a.group[i]
		if i > 0 && a.group[i-1] == g {
			continue
		}
		for n := int32(1); n <= a.reps[g]; n++ {
			j.n = n
			if stored, ok := session.Stored(r.storeKey(j)); ok {
				a.known(g, stored.Decision.Binary)
			}
		}
	}
}

// committed drops from memory what the store now holds of these jobs.
func (r *Run) committed(indices []int) {
	for _, i := range indices {
		r.results[i].stored, r.results[i].payload = true, nil
	}
}

// storedOrGiven is what a failed job was billed before this call. A resumed call knows it from the
// store alone. screen_errors() gives the tokens of the job's row in the result it repairs, whose
// price_data covers exactly those: they win, so that the repaired result's tokens still add up to
// its price; the store's count is kept when it agrees, for its split into cached tokens.
func storedOrGiven(stored screen.Usage, k *JobKey) screen.Usage {
	given, ok := givenUsage(k)
	if !ok || (stored.Prompt == given.Prompt && stored.Completion == given.Completion) {
		return stored
	}
	return given
}

// storedSettings is what the runs table keeps of the options: all of them (the key is not among
// them) but the per-job list of screen_errors() and the store's own settings.
func (r *Run) storedSettings() []byte {
	o := *r.opts
	o.Jobs, o.Store, o.Result = nil, nil, nil
	b, _ := json.Marshal(o)
	return b
}

// recordInRun is a record's 1-based position in the run: in the user's data, also when a call
// re-sends some records only (screen_errors(), whose record_index maps them).
func (r *Run) recordInRun(record int32) int32 {
	if r.opts.Store != nil && r.opts.Store.RecordIndex != nil {
		return r.opts.Store.RecordIndex[record]
	}
	return record + 1
}

func (r *Run) storeKey(j job) string {
	topP, hasTopP := 0.0, j.topP >= 0
	if hasTopP {
		topP = r.opts.TopP[j.topP]
	}
	return store.JobKey(r.recordInRun(j.record), j.prompt+1, r.opts.Models[j.model].Name, topP, hasTopP, j.n)
}

// persist queues a finished job for the store. Jobs never sent are not stored: they have nothing
// to keep, and a resumed run sends them.
func (r *Run) persist(i int, request []byte, last attempt, log []store.Attempt) {
	if r.session == nil {
		return
	}
	res := &r.results[i]
	if res.attempts == 0 {
		return
	}
	j := r.jobs[i]
	a := store.Answer{Index: i, Key: r.storeKey(j), Record: r.recordInRun(j.record), PromptID: j.prompt + 1,
		Model: r.opts.Models[j.model].Name, N: j.n, Answered: res.ok, Decision: res.decision, Usage: res.usage,
		Billed: res.spent(), Submodel: res.submodel, HTTPStatus: last.status, Attempts: res.attempts,
		RunTime: res.runTime, Took: last.took.Seconds(), ReceivedAt: res.date(), Request: request, Response: last.body, Log: log}
	if !res.ok {
		a.Error = res.reason
	}
	if r.studyIDs != nil {
		a.StudyID = r.studyIDs[j.record]
	}
	if j.topP >= 0 {
		a.TopP, a.HasTopP = r.opts.TopP[j.topP], true
	}
	if in, out, ok := r.prices[j.model].Cost(res.spent()); ok {
		a.Price, a.HasPrice = in+out, true
	}
	r.session.Save(a)
}

// closeStore commits what is queued and records how the run ended.
func (r *Run) closeStore() {
	if r.session == nil {
		return
	}
	status := store.StatusCompleted
	switch state, _ := r.State(); {
	case state == "cancelled":
		status = store.StatusInterrupted
	case state == "stopped":
		status = store.StatusStopped
	case r.failed.Load() > 0:
		status = store.StatusIncomplete
	}
	if r.adapt != nil {
		r.session.Settled(int(r.adapt.settledJobs()), r.opts.Jobs == nil)
	}
	err := r.session.Close(status)
	if r.storeInfo.Kept, r.storeInfo.KeptIn = r.session.Kept(); r.storeInfo.Kept == 0 {
		r.storeInfo.KeptIn = ""
	}
	if err != nil {
		r.stopRun(provider.Stop{Class: "tabscreen_error_store", Message: err.Error()})
	}
}

// StoreInfo is nil when the run keeps no store of the user's.
func (r *Run) StoreInfo() *StoreInfo {
	if r.opts.Store != nil && r.opts.Store.Temporary {
		return nil
	}
	return r.storeInfo
}

// ForgetQuestions drops the questions, and the reworded fields that are slices of them, once they
// are handed over: the largest thing a run holds.
func (r *Run) ForgetQuestions() { r.questions, r.reworded = nil, reworded{} }

// Forget drops what a finished run holds (its questions, jobs and results) once its result has
// been handed over, so that the memory is returned before R builds its result.
func (r *Run) Forget() {
	r.questions, r.jobs, r.results, r.studyIDs, r.reworded = nil, nil, nil, nil, reworded{}
}

// Release removes a temporary store, once the result tables have been read from it.
func (r *Run) Release() error {
	if r.storeInfo == nil || !r.opts.Store.Temporary {
		return nil
	}
	store.DropKept(r.storeInfo.Path)
	var first error
	for _, suffix := range []string{"", "-wal", "-shm", ".journal"} {
		if err := os.Remove(r.storeInfo.Path + suffix); err != nil && !os.IsNotExist(err) && first == nil {
			first = err
		}
	}
	return first
}
