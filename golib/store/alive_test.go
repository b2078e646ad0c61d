package store

import (
	"os"
	"os/exec"
	"testing"
)

// processAlive decides whether a running store row belongs to a live process of this machine
// (alive_unix.go, alive_windows.go).
func TestProcessAlive(t *testing.T) {
	if !processAlive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	for _, pid := range []int{0, -1} {
		if processAlive(pid) {
			t.Fatalf("pid %d is alive", pid)
		}
	}
	child := exitedChild(t)
	if processAlive(child) {
		t.Fatalf("the exited child %d is alive", child)
	}
}

// exitedChild runs this test binary with no test to run and returns its pid once it has exited.
func exitedChild(t *testing.T) int {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skip("no path to this test binary:", err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}
