// Package arrowio converts between Arrow IPC streams and a small
// column-oriented table type used by the rest of the Go code.
//
// Only the four column types of the tabscreen contract are supported:
// utf8 (Str), int32 (I32), float64 (F64) and bool (Bool). Any column may
// hold nulls; Valid is nil when every value is valid.
package arrowio

import "fmt"

// Kind is the type of a column.
type Kind uint8

// The supported column kinds.
const (
	KindInvalid Kind = iota
	KindUtf8
	KindInt32
	KindFloat64
	KindBool
)

// String returns the Arrow name of the kind.
func (k Kind) String() string {
	switch k {
	case KindUtf8:
		return "utf8"
	case KindInt32:
		return "int32"
	case KindFloat64:
		return "float64"
	case KindBool:
		return "bool"
	}
	return fmt.Sprintf("invalid(%d)", uint8(k))
}

// Column is one named column. Exactly the slice matching Kind is used.
// Valid is nil when all values are valid; otherwise Valid[i] is false for
// a null. The value slot of a null is the zero value.
type Column struct {
	Name  string
	Kind  Kind
	Str   []string
	I32   []int32
	F64   []float64
	Bool  []bool
	Valid []bool

	// view is the stream that View read the column's strings from, in place (adjacentStrings).
	view []byte
}

// Len returns the number of values in the column.
func (c *Column) Len() int {
	switch c.Kind {
	case KindUtf8:
		return len(c.Str)
	case KindInt32:
		return len(c.I32)
	case KindFloat64:
		return len(c.F64)
	case KindBool:
		return len(c.Bool)
	}
	return 0
}

// IsNull reports whether value i is null.
func (c *Column) IsNull(i int) bool {
	return c.Valid != nil && !c.Valid[i]
}

// NullCount returns the number of nulls.
func (c *Column) NullCount() int {
	n := 0
	for _, v := range c.Valid {
		if !v {
			n++
		}
	}
	return n
}

// Table is a set of equally long columns.
type Table struct {
	NumRows int
	Columns []Column
}

// NewTable returns an empty table with numRows rows; add columns with the
// Add* methods.
func NewTable(numRows int) *Table {
	return &Table{NumRows: numRows}
}

// Col returns the first column called name.
func (t *Table) Col(name string) (*Column, bool) {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i], true
		}
	}
	return nil, false
}

// AddStr appends a utf8 column; valid may be nil (all valid).
func (t *Table) AddStr(name string, v []string, valid []bool) *Table {
	t.Columns = append(t.Columns, Column{Name: name, Kind: KindUtf8, Str: v, Valid: valid})
	return t
}

// AddI32 appends an int32 column; valid may be nil (all valid).
func (t *Table) AddI32(name string, v []int32, valid []bool) *Table {
	t.Columns = append(t.Columns, Column{Name: name, Kind: KindInt32, I32: v, Valid: valid})
	return t
}

// AddF64 appends a float64 column; valid may be nil (all valid).
func (t *Table) AddF64(name string, v []float64, valid []bool) *Table {
	t.Columns = append(t.Columns, Column{Name: name, Kind: KindFloat64, F64: v, Valid: valid})
	return t
}

// AddBool appends a bool column; valid may be nil (all valid).
func (t *Table) AddBool(name string, v []bool, valid []bool) *Table {
	t.Columns = append(t.Columns, Column{Name: name, Kind: KindBool, Bool: v, Valid: valid})
	return t
}

// Validate checks that every column has a supported kind and NumRows
// values, and that Valid is nil or NumRows long.
func (t *Table) Validate() error {
	if t == nil {
		return fmt.Errorf("arrowio: nil table")
	}
	if t.NumRows < 0 {
		return fmt.Errorf("arrowio: negative row count %d", t.NumRows)
	}
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.Kind < KindUtf8 || c.Kind > KindBool {
			return fmt.Errorf("arrowio: column %q has invalid kind %d", c.Name, uint8(c.Kind))
		}
		if n := c.Len(); n != t.NumRows {
			return fmt.Errorf("arrowio: column %q has %d values, table has %d rows", c.Name, n, t.NumRows)
		}
		if c.Valid != nil && len(c.Valid) != t.NumRows {
			return fmt.Errorf("arrowio: column %q has %d validity flags, table has %d rows", c.Name, len(c.Valid), t.NumRows)
		}
	}
	return nil
}
