package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Recovery copies what can still be read of a damaged store into a new file, table by table in
// rowid order. SQLite's recovery extension is not compiled into the driver's amalgamation, and
// a table's b-tree still finds its rows by rowid around a damaged page: a read that meets the
// damage stops, and the next readable rowid is searched for (doubling the step past the failure,
// then halving back), so that a damaged leaf page loses only its rows. A damaged page higher in a
// table's tree (its root, or an interior page) hides every row below it, though their pages may
// be whole: when the tree lost rows, every page of the file is read for table leaves
// (recover_pages.go). The damaged file is opened read only and never written.

// TableRecovery is what recovery did with one table.
type TableRecovery struct {
	Table  string
	Copied int64
	// Lost is the rows of the damaged file that were not copied: counted in one of the table's
	// indexes when one can be read, else the rowids skipped (Exact false: at most that many).
	Lost  int64
	Exact bool
}

// Recover copies every readable row of every table of the store at from into a new store at to,
// which must not exist.
func Recover(from, to string) ([]TableRecovery, error) {
	src, err := filepath.Abs(from)
	if err != nil {
		return nil, storeError(from, "has no usable path", err)
	}
	dst, err := filepath.Abs(to)
	if err != nil {
		return nil, storeError(to, "has no usable path", err)
	}
	if fi, err := os.Stat(src); err != nil || fi.IsDir() {
		return nil, &Error{Class: "tabscreen_error_store", Message: fmt.Sprintf("the answer store %s to recover is not a file", src)}
	}
	if _, err := os.Stat(dst); err == nil {
		return nil, &Error{Class: "tabscreen_error_store", Message: fmt.Sprintf("the file %s to recover into exists already: name a new file", dst)}
	}
	in, err := openReadOnly(src)
	if err != nil {
		return nil, storeError(src, "cannot be opened", err)
	}
	defer in.Close()
	ctx := context.Background()
	// Cells that claim more room than their page has are refused instead of read as rows.
	if _, err := in.ExecContext(ctx, "PRAGMA cell_size_check = ON"); err != nil {
		return nil, checkFailed(src, err)
	}
	var version int
	if err := in.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return nil, checkFailed(src, err)
	}
	tables, indexes, err := schemaOf(ctx, in)
	if err != nil {
		return nil, &Error{Class: DamagedClass, Message: fmt.Sprintf("the answer store %s is damaged where it lists its tables (%s): nothing can be copied from it", src, describe(err))}
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return nil, storeError(dst, "cannot be created: its folder cannot be made", err)
	}
	out, err := sql.Open("sqlite3", fileDSN(dst, "_journal_mode=WAL&_busy_timeout=15000"))
	if err != nil {
		return nil, storeError(dst, "cannot be created", err)
	}
	out.SetMaxOpenConns(1)
	done := false
	defer func() {
		out.Close()
		if !done {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(dst + suffix)
			}
		}
	}()
	tx, err := out.BeginTx(ctx, nil)
	if err != nil {
		return nil, storeError(dst, "cannot be written", err)
	}
	defer tx.Rollback()
	var copies []*tableCopy
	damaged := false
	for _, t := range tables {
		if _, err := tx.ExecContext(ctx, t.sql); err != nil {
			return nil, storeError(dst, "cannot be written", err)
		}
		c, err := copyTable(ctx, in, tx, t.name)
		if err != nil {
			return nil, storeError(dst, "cannot be written", err)
		}
		defer c.insert.Close()
		copies = append(copies, c)
		damaged = damaged || c.skipped != 0 || !c.bounded
	}
	if damaged {
		if err := scanLeaves(src, copies); err != nil {
			return nil, storeError(dst, "cannot be written", err)
		}
	}
	summary := make([]TableRecovery, len(copies))
	for i, c := range copies {
		summary[i] = c.summary(indexes[c.r.Table])
	}
	for _, list := range indexes {
		for _, ix := range list {
			if ix.sql == "" {
				continue // a primary key's or UNIQUE's own index, made with its table
			}
			if _, err := tx.ExecContext(ctx, ix.sql); err != nil {
				return nil, storeError(dst, "cannot be written", err)
			}
		}
	}
	if err := reopenIncomplete(ctx, tx, tables); err != nil {
		return nil, storeError(dst, "cannot be written", err)
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", version)); err != nil {
		return nil, storeError(dst, "cannot be written", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, storeError(dst, "cannot be written", err)
	}
	done = true
	return summary, nil
}

// reopenIncomplete marks a completed run that lost answers as incomplete, so that the same call
// resumes it and sends only the jobs lost. An adaptive run's settled jobs were never answers: they
// count as its answers do (allAnswered).
func reopenIncomplete(ctx context.Context, tx *sql.Tx, tables []schemaItem) error {
	have := map[string]bool{}
	for _, t := range tables {
		have[t.name] = true
	}
	if !have["runs"] || !have["answers"] {
		return nil
	}
	settled := "0"
	if have["settled_jobs"] {
		settled = "coalesce((SELECT s.settled FROM settled_jobs s WHERE s.run_id = runs.run_id), 0)"
	}
	_, err := tx.ExecContext(ctx, `UPDATE runs SET status = ? WHERE status = ? AND jobs > `+settled+` +
		(SELECT count(*) FROM answers a WHERE a.run_id = runs.run_id AND a.answered = 1)`, StatusIncomplete, StatusCompleted)
	return err
}

type schemaItem struct{ name, sql string }

// schemaOf lists the file's tables (in the order they were made) and each table's indexes.
func schemaOf(ctx context.Context, db *sql.DB) ([]schemaItem, map[string][]schemaItem, error) {
	rows, err := db.QueryContext(ctx, `SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master
		WHERE type IN ('table', 'index') AND tbl_name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY rowid`)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var tables []schemaItem
	indexes := map[string][]schemaItem{}
	for rows.Next() {
		var kind, name, table, text string
		if err := rows.Scan(&kind, &name, &table, &text); err != nil {
			return nil, nil, err
		}
		if kind == "table" {
			tables = append(tables, schemaItem{name, text})
		} else {
			indexes[table] = append(indexes[table], schemaItem{name, text})
		}
	}
	return tables, indexes, rows.Err()
}

// tableCopy reads one table of the damaged file and inserts its rows into the new one.
type tableCopy struct {
	ctx    context.Context
	in     *sql.DB
	read   string // the row at or after a rowid, or every row from it on
	insert *sql.Stmt
	width  int // columns read, the rowid first
	alias  int // the column that is the rowid under another name (not inserted twice), or -1
	r      TableRecovery
	// skipped counts the rowids passed over in the tree; bounded is false when its end could not
	// be read; found, the rows the scan of the file's leaves added.
	skipped int64
	bounded bool
	found   int64
}

// copyTable copies the rows the table's tree still reaches.
func copyTable(ctx context.Context, in *sql.DB, tx *sql.Tx, table string) (*tableCopy, error) {
	cols, alias, err := columnsOf(ctx, in, table)
	if err != nil {
		return nil, err
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = quote(c)
	}
	target := quoted
	if alias < 0 {
		target = append([]string{"rowid"}, quoted...)
	}
	insert, err := tx.PrepareContext(ctx, fmt.Sprintf("INSERT OR IGNORE INTO %s (%s) VALUES (%s)", quote(table),
		strings.Join(target, ", "), strings.TrimSuffix(strings.Repeat("?, ", len(target)), ", ")))
	if err != nil {
		return nil, err
	}
	c := &tableCopy{ctx: ctx, in: in, insert: insert, width: len(cols) + 1, alias: alias, r: TableRecovery{Table: table}, bounded: true,
		read: fmt.Sprintf("SELECT rowid, %s FROM %s WHERE rowid >= ? ORDER BY rowid", strings.Join(quoted, ", "), quote(table))}
	pos := int64(math.MinInt64)
	for {
		last, copied, err := c.copyFrom(pos)
		c.r.Copied += copied
		if err == nil {
			break
		}
		var we writeError
		if errors.As(err, &we) {
			insert.Close()
			return nil, we.err
		}
		// The rows from bad on could not be read: copy again from the next rowid that can be.
		bad := pos
		if last != nil {
			bad = *last + 1
		}
		next, ok := c.nextReadable(bad)
		if !ok {
			c.bounded = false
			break
		}
		c.skipped += next - bad
		pos = next
	}
	return c, nil
}

// summary counts what was copied and what was lost: in one of the table's indexes if one can
// be read, else the rowids skipped less the rows the leaf scan found (at most that many lost).
func (c *tableCopy) summary(indexes []schemaItem) TableRecovery {
	r := c.r
	r.Copied += c.found
	switch n, ok := indexCount(c.ctx, c.in, r.Table, indexes); {
	case ok:
		r.Lost, r.Exact = max(0, n-r.Copied), true
	case c.bounded:
		r.Lost = max(0, c.skipped-c.found)
	default:
		r.Lost = -1
	}
	return r
}

// add inserts a row the leaf scan found, with the fields SQLite stored (a row written before
// columns were added has fewer: the rest are NULL).
func (c *tableCopy) add(row leafRow) error {
	values := make([]any, c.width)
	values[0] = row.rowid
	copy(values[1:], row.fields)
	args := values
	if c.alias >= 0 {
		args = values[1:]
		args[c.alias] = row.rowid
	}
	res, err := c.insert.ExecContext(c.ctx, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		c.found++
	}
	return nil
}

// writeError is a failure to write the new file, which stops the recovery.
type writeError struct{ err error }

func (e writeError) Error() string { return e.err.Error() }

// copyFrom copies the rows from rowid pos on until the end or a read fails; it returns the last
// rowid copied (nil for none) and the rows copied.
func (c *tableCopy) copyFrom(pos int64) (*int64, int64, error) {
	var last *int64
	var copied int64
	rows, err := c.in.QueryContext(c.ctx, c.read, pos)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	values, ptrs := c.row()
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return last, copied, err
		}
		id, ok := values[0].(int64)
		if !ok || (last != nil && id <= *last) {
			continue // not a row: what a damaged page may hold
		}
		args := values
		if c.alias >= 0 {
			args = values[1:]
		}
		res, err := c.insert.ExecContext(c.ctx, args...)
		if err != nil {
			return last, copied, writeError{err}
		}
		if n, _ := res.RowsAffected(); n == 1 {
			copied++
		}
		last = &id
	}
	return last, copied, rows.Err()
}

// row is a buffer for one row read: its values, and the pointers Scan fills them through.
func (c *tableCopy) row() (values, ptrs []any) {
	values = make([]any, c.width)
	ptrs = make([]any, c.width)
	for i := range values {
		ptrs[i] = &values[i]
	}
	return values, ptrs
}

// readable reports whether the row at or after rowid pos (if any) can be read whole.
func (c *tableCopy) readable(pos int64) bool {
	rows, err := c.in.QueryContext(c.ctx, c.read+" LIMIT 1", pos)
	if err != nil {
		return false
	}
	defer rows.Close()
	_, ptrs := c.row()
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return false
		}
	}
	return rows.Err() == nil
}

// nextReadable finds the smallest rowid after bad from which the table can be read again: a
// step doubled until a read succeeds, then halved back to the edge of the damage.
func (c *tableCopy) nextReadable(bad int64) (int64, bool) {
	lo := bad // cannot be read from here
	var hi int64
	for step := int64(1); ; step *= 2 {
		if lo > math.MaxInt64-step {
			if !c.readable(math.MaxInt64) {
				return 0, false
			}
			hi = math.MaxInt64
			break
		}
		if c.readable(lo + step) {
			hi = lo + step
			break
		}
		if step > math.MaxInt64/2 {
			return 0, false
		}
		lo += step
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if c.readable(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

// columnsOf lists a table's columns, and which one is the rowid under another name (an INTEGER
// PRIMARY KEY; -1 for none).
func columnsOf(ctx context.Context, db *sql.DB, table string) ([]string, int, error) {
	rows, err := db.QueryContext(ctx, "SELECT name, upper(type), pk FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, -1, err
	}
	defer rows.Close()
	var cols []string
	keys, alias := 0, -1
	for rows.Next() {
		var name, kind string
		var pk int
		if err := rows.Scan(&name, &kind, &pk); err != nil {
			return nil, -1, err
		}
		if pk > 0 {
			keys++
			if kind == "INTEGER" {
				alias = len(cols)
			}
		}
		cols = append(cols, name)
	}
	if keys != 1 {
		alias = -1
	}
	return cols, alias, rows.Err()
}

// indexCount is the table's rows as the first of its indexes that can be read counts them.
func indexCount(ctx context.Context, db *sql.DB, table string, indexes []schemaItem) (int64, bool) {
	for _, ix := range indexes {
		var n int64
		if err := db.QueryRowContext(ctx, fmt.Sprintf("SELECT count(*) FROM %s INDEXED BY %s", quote(table), quote(ix.name))).Scan(&n); err == nil {
			return n, true
		}
	}
	return 0, false
}

func quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }
