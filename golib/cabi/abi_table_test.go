package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// The C ABI table of ARCHITECTURE.md is the map a reader trusts: it must list exactly the exports
// of the header cgo generates, each with the header's arguments in order. The header is built
// here as src/Makevars builds it, so the check follows the code, not a stale copy in src/.
func TestArchitectureABITable(t *testing.T) {
	header := buildHeader(t)
	got := tableExports(t, filepath.Join("..", "..", "ARCHITECTURE.md"))
	want := headerExports(t, header)
	if len(want) == 0 {
		t.Fatalf("no Ts* export found in %s", header)
	}
	for name, args := range want {
		table, ok := got[name]
		if !ok {
			t.Errorf("ARCHITECTURE.md's C ABI table lacks %s(%s)", name, strings.Join(args, ", "))
			continue
		}
		if strings.Join(table, ", ") != strings.Join(args, ", ") {
			t.Errorf("%s: the table gives %d argument(s) (%s), the header %d (%s)", name,
				len(table), strings.Join(table, ", "), len(args), strings.Join(args, ", "))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("ARCHITECTURE.md's C ABI table lists %s, which libtabscreen.h does not export", name)
		}
	}
}

// buildHeader builds the core into a temporary folder and returns the path of its header.
func buildHeader(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	cmd := exec.Command(goBin, "build", "-buildmode=c-shared", "-o", filepath.Join(dir, "libtabscreen.so"), ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the core's header: %v\n%s", err, out)
	}
	return filepath.Join(dir, "libtabscreen.h")
}

var headerDecl = regexp.MustCompile(`^extern\s+[^()]*?\b(Ts\w+)\((.*)\);\s*$`)

// headerExports reads each Ts* declaration of the header: its name and its parameters' names.
func headerExports(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := headerDecl.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		var names []string
		if params := strings.TrimSpace(m[2]); params != "" && params != "void" {
			for _, p := range strings.Split(params, ",") {
				fields := strings.Fields(strings.ReplaceAll(p, "*", " "))
				names = append(names, fields[len(fields)-1])
			}
		}
		out[m[1]] = names
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var tableRow = regexp.MustCompile("^\\|\\s*`(Ts\\w+)`\\s*\\|\\s*(?:`([^`]*)`)?\\s*\\|")

// tableExports reads the rows of the table in the section "## The C ABI": the export's name and
// the arguments of its second column.
func tableExports(t *testing.T, path string) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "## ") {
			in = strings.TrimSpace(line) == "## The C ABI"
			continue
		}
		if !in {
			continue
		}
		m := tableRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, dup := out[m[1]]; dup {
			t.Errorf("ARCHITECTURE.md's C ABI table lists %s twice", m[1])
		}
		var args []string
		for _, a := range strings.Split(m[2], ",") {
			if a = strings.TrimSpace(a); a != "" {
				args = append(args, a)
			}
		}
		out[m[1]] = args
	}
	if len(out) == 0 {
		t.Fatalf("%s has no C ABI table (section \"## The C ABI\", rows | `TsName` | `args` | ...)", path)
	}
	return out
}
