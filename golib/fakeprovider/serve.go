package fakeprovider

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/tabscreen/tabscreen/golib/lifeline"
)

// ServeOptions say where the fake listens and how it learns to stop. The developers' program
// cmd/tabscreen-fake and the core library's export TsFakeServe (which R's fake_provider_start()
// runs in a child R process, so that no second program is installed) both serve through Serve.
type ServeOptions struct {
	Host     string          `json:"host"`
	Port     int             `json:"port"`
	PortFile string          `json:"port_file"`
	Config   json.RawMessage `json:"config"`
	// Stdin, when not nil, is watched: its end (the parent process closed the pipe, or died)
	// stops the server, so that a fake never outlives the process that started it.
	Stdin io.Reader `json:"-"`
	// Started, when not nil, is told the address once the port file is written.
	Started func(net.Addr) `json:"-"`
}

// Serve runs a fake provider until ctx ends or Stdin closes.
func Serve(ctx context.Context, opts ServeOptions) error {
	cfg := DefaultConfig()
	if len(opts.Config) > 0 && string(opts.Config) != "null" {
		var err error
		if cfg, err = cfg.Merge(opts.Config); err != nil {
			return fmt.Errorf("config: %w", err)
		}
	}
	if opts.Host == "" {
		opts.Host = "127.0.0.1"
	}
	// Serve runs in a process of its own (the program, or TsFakeServe's child R process) whose live
	// heap is small, while each request allocates ~15 KB: at the default GOGC of 100 the collector
	// was a fifth of the fake's CPU at zero latency, taken from a client sharing the cores. A
	// GOGC set in the environment is left as it is.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(serveGCPercent)
	}
	srv, err := New(cfg)
	if err != nil {
		return err
	}
	addr, err := srv.Start(net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port)))
	if err != nil {
		return err
	}
	if opts.PortFile != "" {
		port := addr.(*net.TCPAddr).Port
		if err := writeAtomic(opts.PortFile, strconv.Itoa(port)+"\n"); err != nil {
			_ = srv.Close(time.Second)
			return err
		}
		defer os.Remove(opts.PortFile)
	}
	if opts.Started != nil {
		opts.Started(addr)
	}
	ctx, stop := lifeline.Until(ctx, opts.Stdin)
	defer stop()
	<-ctx.Done()
	return srv.Close(3 * time.Second)
}

// serveGCPercent is the GOGC of a process that serves the fake.
const serveGCPercent = 400

// writeAtomic writes the port so that a reader polling for the file never sees it half written.
func writeAtomic(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".port-*")
	if err != nil {
		return err
	}
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
