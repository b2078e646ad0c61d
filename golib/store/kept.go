package store

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"sync"
)

// Answers a run received but could not commit (the disk was full, the file failed) are kept
// until a later call on the same store writes them in, before it sends anything: in this
// process's memory, which lasts as long as the R session, and in a journal beside the store
// (JSON lines, appended and synced), which outlasts it when the disk takes it. The journal is
// often on the full disk too; memory then holds them alone.

// JournalPath is the journal of the store at path.
func JournalPath(path string) string { return path + ".journal" }

// keptAnswer is one line of the journal.
type keptAnswer struct {
	RunID  string `json:"run_id"`
	Answer Answer `json:"answer"`
}

var (
	// keptMu serialises the keeping and the writing back of every store of this process.
	keptMu sync.Mutex
	// keptInMemory holds the kept answers by the store's absolute path.
	keptInMemory = map[string][]keptAnswer{}
)

// keeper keeps the answers of one session that the store did not take.
type keeper struct {
	path, runID string
	// journalFailed: a write to the journal failed; this session keeps in memory only, so that a
	// torn line is never followed by another.
	journalFailed bool
	answers       int // answered jobs kept
}

// keep holds batch in memory and appends it to the journal.
func (k *keeper) keep(batch []Answer) {
	if len(batch) == 0 {
		return
	}
	keptMu.Lock()
	defer keptMu.Unlock()
	lines := make([]keptAnswer, len(batch))
	for i, a := range batch {
		a.Index = 0
		lines[i] = keptAnswer{RunID: k.runID, Answer: a}
		if a.Answered {
			k.answers++
		}
	}
	keptInMemory[k.path] = append(keptInMemory[k.path], lines...)
	if !k.journalFailed && appendJournal(JournalPath(k.path), lines) != nil {
		k.journalFailed = true
	}
}

// where says where the kept answers are: "journal" when the journal holds every one of them,
// else "memory" (this R session alone).
func (k *keeper) where() string {
	if k.journalFailed {
		return "memory"
	}
	return "journal"
}

// appendJournal writes lines at the end of the journal and syncs it. The file is opened for each
// write: another process may have written the journal into the store and removed it meanwhile.
// A write that fails is cut back, so that the journal never holds half a line.
func appendJournal(path string, lines []keptAnswer) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := range lines {
		if err := enc.Encode(&lines[i]); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if _, err = f.Write(buf.Bytes()); err == nil {
		err = f.Sync()
	}
	if err != nil {
		_ = f.Truncate(fi.Size())
		if fi.Size() == 0 {
			_ = os.Remove(path)
		}
	}
	return err
}

// readJournal reads the journal's lines; a line that cannot be read (cut by a crash) is skipped:
// what it held is in the memory of the process that wrote it, if anywhere.
func readJournal(path string) ([]keptAnswer, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []keptAnswer
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<30)
	for sc.Scan() {
		var k keptAnswer
		if json.Unmarshal(sc.Bytes(), &k) == nil && k.RunID != "" && k.Answer.Key != "" {
			out = append(out, k)
		}
	}
	return out, sc.Err()
}

// WriteKept writes into the store the answers kept from earlier calls (the journal's and this
// process's), then forgets them: every call on a store does so before it reads or sends anything.
// It returns how many answered jobs it wrote. If the store cannot take them yet, they stay kept
// and the error says so.
func (s *Store) WriteKept() (int, error) {
	keptMu.Lock()
	defer keptMu.Unlock()
	journal := JournalPath(s.Path)
	lines, err := readJournal(journal)
	if err != nil {
		return 0, storeError(s.Path, "cannot read its journal "+journal, err)
	}
	lines = append(lines, keptInMemory[s.Path]...)
	if len(lines) == 0 {
		return 0, nil
	}
	// The journal and memory hold the same answers when both could be written: one of each job.
	type job struct{ run, key string }
	last := make(map[job]int, len(lines))
	pending := 0
	for i, k := range lines {
		if _, dup := last[job{k.RunID, k.Answer.Key}]; !dup && k.Answer.Answered {
			pending++
		}
		last[job{k.RunID, k.Answer.Key}] = i
	}
	answers := 0
	err = s.inTransaction(func(tx *sql.Tx, w *rowWriter) error {
		// The answers of a run deleted meanwhile go with it.
		exists := map[string]bool{}
		for i, k := range lines {
			if last[job{k.RunID, k.Answer.Key}] != i {
				continue
			}
			found, seen := exists[k.RunID]
			if !seen {
				var n int
				if err := tx.QueryRow(`SELECT COUNT(*) FROM runs WHERE run_id = ?`, k.RunID).Scan(&n); err != nil {
					return err
				}
				found = n > 0
				exists[k.RunID] = found
			}
			if !found {
				continue
			}
			if k.Answer.Answered {
				answers++
			}
			if err := w.write(k.RunID, &k.Answer); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		what := fmt.Sprintf("%d answers", pending)
		if pending == 1 {
			what = "1 answer"
		}
		e := storeError(s.Path, fmt.Sprintf("cannot take the %s that an earlier call received and could not write "+
			"(kept in %s); nothing is sent until it can. Free space on its disk, then call again", what, keptPlace(s.Path, journal)), err)
		// Its own class: the hint for other store errors (use another file) would leave these answers behind.
		e.Class = "tabscreen_error_store_kept"
		return 0, e
	}
	delete(keptInMemory, s.Path)
	if err := os.Remove(journal); err != nil && !os.IsNotExist(err) {
		return answers, storeError(s.Path, "cannot remove its journal "+journal+" (its answers are in the store now; delete it)", err)
	}
	return answers, nil
}

// keptPlace words where the kept answers of the store at path are (keptMu held).
func keptPlace(path, journal string) string {
	if len(keptInMemory[path]) > 0 {
		return "this R session's memory"
	}
	return "the journal " + journal
}

// DropKept forgets what is kept for the store at path: a temporary store, removed with its result.
func DropKept(path string) {
	keptMu.Lock()
	defer keptMu.Unlock()
	delete(keptInMemory, path)
}
