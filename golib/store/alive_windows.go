//go:build windows

package store

import (
	"errors"

	"golang.org/x/sys/windows"
)

// processAlive reports whether a process with this pid is running on this machine. Windows keeps
// a process object (and its pid) while any handle to it is open, also after the process exited,
// so opening it is not enough: its exit code must still be STILL_ACTIVE. Access denied means the
// process exists but belongs to another user or a higher integrity level.
func processAlive(pid int) bool {
	if pid <= 0 || pid > 0xFFFFFFFF {
		return false
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_ACCESS_DENIED)
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return true // the process exists; its state is unknown, so do not take its run over
	}
	return code == stillActive
}

// stillActive is STILL_ACTIVE (STATUS_PENDING, 259), the exit code of a process that has not
// exited; golang.org/x/sys/windows names only the NTSTATUS.
const stillActive = uint32(windows.STATUS_PENDING)
