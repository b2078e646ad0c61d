package main

import (
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the program: re-executed with this variable
// set, it runs main().
func TestMain(m *testing.M) {
	if os.Getenv("TABSCREEN_FAKE_TEST_AS_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	port  string
	done  chan error

	portFile string
}

func startChild(t *testing.T, args ...string) *child {
	t.Helper()
	portFile := filepath.Join(t.TempDir(), "port")
	cmd := exec.Command(os.Args[0], append([]string{"--port", "0", "--port-file", portFile}, args...)...)
	cmd.Env = append(os.Environ(), "TABSCREEN_FAKE_TEST_AS_MAIN=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-c.done
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(portFile); err == nil && strings.HasSuffix(string(b), "\n") {
			c.port = strings.TrimSpace(string(b))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no port file; stderr: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.portFile = portFile
	return c
}

func (c *child) waitExit(t *testing.T) {
	t.Helper()
	select {
	case err := <-c.done:
		c.done <- err
		if err != nil {
			t.Errorf("exit: %v", err)
		}
		if _, err := os.Stat(c.portFile); err == nil {
			t.Error("port file left behind")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not exit")
	}
}

func (c *child) config(t *testing.T) map[string]any {
	t.Helper()
	resp, err := http.Get("http://127.0.0.1:" + c.port + "/_fake/config")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestExitsWhenStdinCloses(t *testing.T) {
	c := startChild(t, "--rpm", "120", "--faults", "500=0.25,hang=0.5", "--invalid-keys", "a,b",
		"--fail-first-n", "503:2", "--config", `{"latency_ms":3,"seed":9}`, "--seed", "4")
	cfg := c.config(t)
	if cfg["rpm"] != 120.0 || cfg["latency_ms"] != 3.0 || cfg["seed"] != 4.0 ||
		cfg["faults"].(map[string]any)["hang"] != 0.5 || len(cfg["invalid_keys"].([]any)) != 2 ||
		cfg["fail_first_n"].(map[string]any)["n"] != 2.0 {
		t.Errorf("config %v", cfg)
	}
	c.stdin.Close()
	c.waitExit(t)
}

func TestExitsOnSIGTERM(t *testing.T) {
	c := startChild(t)
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	c.waitExit(t)
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--faults", "500"}, {"--faults", "999=0.1"}, {"--fail-first-n", "500"},
		{"--config", "{"}, {"extra"}} {
		if err := run(args); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestFlagPatch(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("decisions", "", "")
	fs.Bool("allow-unknown-fields", false, "")
	fs.Float64("latency-sigma", 0, "")
	if err := fs.Parse([]string{"--decisions", "1=0.3, 0=0.7", "--allow-unknown-fields", "--latency-sigma", "0.5"}); err != nil {
		t.Fatal(err)
	}
	p, err := flagPatch(fs)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(p)
	if want := `{"allow_unknown_fields":true,"decisions":{"0":0.7,"1":0.3},"latency_sigma":0.5}`; string(b) != want {
		t.Errorf("got %s want %s", b, want)
	}
}
