package store

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const damagedAnswers = 2000

// storeWithAnswers writes a completed run of n answered jobs, each with bodies of about 1.6 KB,
// into a new store, closes it (its log merged into the file) and returns its path and run.
func storeWithAnswers(t *testing.T, n int) (string, string) {
	t.Helper()
	// A folder whose name a URI would misread: the check opens the file by one.
	path := filepath.Join(t.TempDir(), "my store #1 %20", "answers.sqlite")
	s := claim(t, path, RunSpec{Fingerprint: "fp", Provider: "a", Endpoint: "http://127.0.0.1/v1", Models: []string{"m"},
		Prompts: 1, Records: n, Jobs: n, Settings: []byte(`{}`)})
	for i := 1; i <= n; i++ {
		a := answer(int32(i), true)
		a.Request = []byte(fmt.Sprintf(`{"record":%d,"text":%q}`, i, strings.Repeat("family therapy ", 50)))
		a.Response = []byte(fmt.Sprintf(`{"record":%d,"reason":%q}`, i, strings.Repeat("because ", 100)))
		s.Save(a)
	}
	if err := s.Close(StatusCompleted); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() > 0 {
		t.Fatalf("the log was not merged into the file (%d bytes)", fi.Size())
	}
	return path, s.RunID
}

// damage overwrites pages pages of 4 KB in the middle of the file with random bytes; the header
// (page 1) is left as it was.
func damage(t *testing.T, path string, pages int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	total := int(fi.Size() / 4096)
	if total < 3*pages {
		t.Fatalf("the file has %d pages, too few to damage %d in the middle", total, pages)
	}
	junk := make([]byte, pages*4096)
	rand.New(rand.NewSource(22)).Read(junk)
	if _, err := f.WriteAt(junk, int64(total/2-pages/2)*4096); err != nil {
		t.Fatal(err)
	}
}

func fileHash(t *testing.T, path string) [sha256.Size]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func assertDamaged(t *testing.T, err error, path string) {
	t.Helper()
	var se *Error
	if !errors.As(err, &se) || se.Class != DamagedClass {
		t.Fatalf("got %v, want an error of class %s", err, DamagedClass)
	}
	abs, _ := filepath.Abs(path)
	for _, want := range []string{abs, "damaged", "screen_store_recover(", "move the file aside"} {
		if !strings.Contains(se.Message, want) {
			t.Errorf("the message does not say %q: %s", want, se.Message)
		}
	}
}

func TestADamagedStoreIsRefusedAtOpenAndNotWritten(t *testing.T) {
	// Damaged after this process wrote and closed it (the file it remembers as sound), and in a
	// file this process never opened.
	for _, seen := range []bool{true, false} {
		t.Run(fmt.Sprintf("opened before %v", seen), func(t *testing.T) {
			path, _ := storeWithAnswers(t, damagedAnswers)
			if !seen {
				abs, _ := filepath.Abs(path)
				distrust(abs)
			}
			damage(t, path, 40)
			before := fileHash(t, path)
			for _, open := range []func(string) (*Store, error){Open, OpenDurable} {
				st, err := open(path)
				if err == nil {
					st.Close()
					t.Fatal("a damaged store was opened")
				}
				assertDamaged(t, err, path)
			}
			if fileHash(t, path) != before {
				t.Fatal("the damaged file was written")
			}
		})
	}
}

func TestASoundStoreIsCheckedOnceAndOpens(t *testing.T) {
	path, run := storeWithAnswers(t, 50)
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.mustHaveRun(run); err != nil {
		t.Fatal(err)
	}
}

func TestRecoverCopiesEveryReadableAnswer(t *testing.T) {
	path, run := storeWithAnswers(t, damagedAnswers)
	pristine := filepath.Join(t.TempDir(), "pristine.sqlite")
	copyFile(t, path, pristine)
	damage(t, path, 40)
	before := fileHash(t, path)
	to := filepath.Join(t.TempDir(), "sub", "recovered.sqlite")

	summary, err := Recover(path, to)
	if err != nil {
		t.Fatal(err)
	}
	if fileHash(t, path) != before {
		t.Fatal("recovery wrote to the damaged file")
	}
	t.Logf("%+v", summary)
	got := map[string]TableRecovery{}
	for _, r := range summary {
		got[r.Table] = r
	}
	a := got["answers"]
	if a.Copied == 0 || a.Lost == 0 || a.Copied+a.Lost > damagedAnswers || (a.Exact && a.Copied+a.Lost != damagedAnswers) {
		t.Fatalf("answers: %+v of %d", a, damagedAnswers)
	}
	if r := got["runs"]; r.Copied != 1 || r.Lost != 0 {
		t.Fatalf("runs: %+v", r)
	}
	// 40 pages of about two answers each: far fewer are lost than the table holds.
	if a.Lost > 200 {
		t.Errorf("%d answers lost to 40 damaged pages", a.Lost)
	}

	// The new file is a sound store whose every answer is the one the file had before the damage.
	st, err := Open(to)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n := sameAnswers(t, st, pristine, run); n != a.Copied {
		t.Fatalf("the new file holds %d answers of the run, the summary says %d", n, a.Copied)
	}

	// The recovered store resumes the run (no longer complete) with the same call: the lost
	// answers are the jobs left to send.
	sess, err := st.Claim(RunSpec{Fingerprint: "fp", Jobs: damagedAnswers})
	if err != nil {
		t.Fatal(err)
	}
	if sess.RunID != run || !sess.Resumed || sess.Reused {
		t.Fatalf("claimed run %s (resumed %v, reused %v), want %s resumed", sess.RunID, sess.Resumed, sess.Reused, run)
	}
	if len(sess.stored) != int(a.Copied) {
		t.Fatalf("resumed with %d stored answers, want %d", len(sess.stored), a.Copied)
	}
	sess.release(StatusInterrupted)
}

func TestRecoverRefusesAnExistingFile(t *testing.T) {
	path, _ := storeWithAnswers(t, 5)
	to := filepath.Join(t.TempDir(), "there.sqlite")
	os.WriteFile(to, []byte("mine"), 0o600)
	_, err := Recover(path, to)
	var se *Error
	if !errors.As(err, &se) || !strings.Contains(se.Message, "exists already") {
		t.Fatalf("got %v", err)
	}
	if b, _ := os.ReadFile(to); string(b) != "mine" {
		t.Fatal("the existing file was changed")
	}
}

// tableInteriorPages lists the pages of the file that are interior pages of a table's tree (the
// pages above its leaves).
func tableInteriorPages(t *testing.T, path string) []uint32 {
	t.Helper()
	p, err := openPages(path)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	buf := make([]byte, p.size)
	var found []uint32
	for n := uint32(2); n <= p.pages; n++ {
		if p.page(n, buf) == nil && buf[0] == 0x05 && !p.freeList[n] {
			found = append(found, n)
		}
	}
	return found
}

func TestRecoverFindsTheLeavesBelowADamagedTree(t *testing.T) {
	path, run := storeWithAnswers(t, damagedAnswers)
	pristine := filepath.Join(t.TempDir(), "pristine.sqlite")
	copyFile(t, path, pristine)
	interior := tableInteriorPages(t, path)
	if len(interior) < 2 {
		t.Fatalf("the answers' tree has %d interior pages", len(interior))
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	junk := make([]byte, 4096)
	rand.New(rand.NewSource(5)).Read(junk)
	for _, n := range interior {
		f.WriteAt(junk, int64(n-1)*4096)
	}
	f.Close()
	if _, err := Open(path); err == nil {
		t.Fatal("a damaged store was opened")
	}

	to := filepath.Join(t.TempDir(), "recovered.sqlite")
	summary, err := Recover(path, to)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d interior pages damaged: %+v", len(interior), summary)
	for _, r := range summary {
		if r.Table == "answers" && (r.Copied != damagedAnswers || r.Lost != 0 || !r.Exact) {
			t.Fatalf("answers: %+v, want all %d copied (their leaves are whole)", r, damagedAnswers)
		}
	}
	st, err := Open(to)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n := sameAnswers(t, st, pristine, run); n != damagedAnswers {
		t.Fatalf("the new file holds %d answers of the run", n)
	}
}

// sameAnswers checks that every answer of the run in st is the one of the same rowid in the
// file at pristine, and that st passes SQLite's integrity check; it returns how many there are.
func sameAnswers(t *testing.T, st *Store, pristine, run string) int64 {
	t.Helper()
	orig, err := sql.Open("sqlite3", pristine)
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	rows, err := st.db.Query(`SELECT rowid, job_key, request_body, response_body FROM answers WHERE run_id = ?`, run)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var n int64
	for rows.Next() {
		var id int64
		var key string
		var req, resp []byte
		if err := rows.Scan(&id, &key, &req, &resp); err != nil {
			t.Fatal(err)
		}
		var wantKey string
		var wantReq, wantResp []byte
		if err := orig.QueryRow(`SELECT job_key, request_body, response_body FROM answers WHERE rowid = ?`, id).Scan(&wantKey, &wantReq, &wantResp); err != nil {
			t.Fatal(err)
		}
		if key != wantKey || !bytes.Equal(req, wantReq) || !bytes.Equal(resp, wantResp) {
			t.Fatalf("row %d differs from the original", id)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var ok string
	if err := st.db.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("the recovered file: %v %s", err, ok)
	}
	return n
}

func TestLeafRowsGoToTheTableOfTheirShape(t *testing.T) {
	tables := map[string]int{"runs": 15, "answers": 33, "attempts": 8, "batches": 11, "review_events": 11}
	var copies []*tableCopy
	for name, cols := range tables {
		copies = append(copies, &tableCopy{width: cols + 1, r: TableRecovery{Table: name}})
	}
	for _, tc := range []struct {
		fields int
		want   string
	}{
		{33, "answers"},
		{30, "answers"}, // written at schema 1, before three columns were added
		{15, "runs"},
		{8, "attempts"},
		{11, ""}, // two tables have 11 columns
		{34, ""}, // more fields than any table has columns
	} {
		got := ""
		if c := tableFor(copies, tc.fields); c != nil {
			got = c.r.Table
		}
		if got != tc.want {
			t.Errorf("%d fields: %q, want %q", tc.fields, got, tc.want)
		}
	}
	if !schemaRow(leafRow{fields: []any{"table", "runs", "runs", int64(2), "CREATE TABLE runs (x)"}}) ||
		schemaRow(leafRow{fields: []any{"r1", int64(7), int64(50), "2026", "2026"}}) {
		t.Error("the list of tables is not told from a table's rows")
	}
}
