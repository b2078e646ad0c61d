package store

import (
	"os"
	"os/exec"
	"testing"

	"golang.org/x/sys/windows"
)

// Windows keeps an exited process's object, and its pid, while any handle to it is open (here
// ours; elsewhere an antivirus's or a process monitor's): such a process is dead all the same.
func TestExitedProcessWithAnOpenHandleIsDead(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip("no path to this test binary:", err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	// cmd holds a handle until Wait, so the pid is still this process's when it is opened.
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(h)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if processAlive(pid) {
		t.Fatalf("the exited process %d is alive while a handle to it is open", pid)
	}
}
