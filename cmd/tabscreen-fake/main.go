// Command tabscreen-fake runs the fake LLM provider (package
// golib/fakeprovider) on 127.0.0.1 for tests, examples and demos.
//
//	tabscreen-fake --port 0 --port-file /tmp/port --rpm 600 --faults 500=0.05,hang=0.01
//
// It prints "listening on http://HOST:PORT" on stdout, writes the port to
// --port-file (atomically) if given, and serves until SIGINT/SIGTERM or, with
// --watch-stdin (the default), until its standard input closes, so that it
// never outlives the process that started it through a pipe. Run it with
// --watch-stdin=false from a shell where stdin is /dev/null.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"

	"github.com/tabscreen/tabscreen/golib/fakeprovider"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "tabscreen-fake:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("tabscreen-fake", flag.ContinueOnError)
	host := fs.String("host", "127.0.0.1", "address to bind")
	port := fs.Int("port", 0, "port to bind (0: a free port)")
	portFile := fs.String("port-file", "", "write the chosen port to this file")
	watchStdin := fs.Bool("watch-stdin", true, "exit when standard input closes")
	configJSON := fs.String("config", "", "configuration as a JSON object, or @FILE (keys as POST /_fake/config)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the serving to this file (developers)")

	// Single settings; each overrides the same key of --config when given.
	fs.Float64("latency-ms", 0, "fixed latency in milliseconds")
	fs.Float64("latency-median-ms", 0, "median of an added lognormal latency (ms)")
	fs.Float64("latency-sigma", 0, "sigma of the lognormal latency")
	fs.Float64("rpm", 0, "requests per minute, enforced as floor(rpm/60) in any 1 s window (0: none)")
	fs.Int("max-concurrency", 0, "requests served at once before 429 (0: no limit)")
	fs.String("faults", "", "fault probabilities, e.g. 500=0.05,429=0.02,hang=0.01")
	fs.String("fail-first-n", "", "KIND:N, the next N valid requests get fault KIND")
	fs.String("decisions", "", "enum value weights, e.g. 1=0.3,0=0.6,1.1=0.1")
	fs.Int64("seed", 0, "seed of every pseudo-random draw")
	fs.String("invalid-keys", "", "comma-separated API keys answered with 401")
	fs.Int("retry-after-ms", 1000, "Retry-After of injected 429s")
	fs.String("snapshot", "2026-09-22", "date suffix added to model names in answers")
	fs.Int64("tpm", 0, "tokens per minute enforced (0: none; headers then report a limit no client reaches)")
	fs.String("tpm-mode", "bucket", "how tpm counts: bucket (refilled continuously), window (any sliding minute), second (tpm/60 in any sliding second)")
	fs.Int("reasoning-tokens", 0, "reasoning tokens reported per answer")
	fs.Float64("cached-fraction", 0, "fraction of prompt tokens reported as cached")
	fs.Bool("allow-unknown-fields", false, "accept top-level request fields the spec does not define")
	fs.Int("keep-requests", 100, "how many recent requests /_fake/requests keeps")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: tabscreen-fake [flags]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}

	config := json.RawMessage("{}")
	if *configJSON != "" {
		text := *configJSON
		if strings.HasPrefix(text, "@") {
			b, err := os.ReadFile(text[1:])
			if err != nil {
				return err
			}
			text = string(b)
		}
		// Checked here so that a bad --config is reported as such, before the flags are merged.
		if _, err := fakeprovider.DefaultConfig().Merge([]byte(text)); err != nil {
			return fmt.Errorf("--config: %w", err)
		}
		config = json.RawMessage(text)
	}
	patch, err := flagPatch(fs)
	if err != nil {
		return err
	}
	if len(patch) > 0 {
		cfg, err := fakeprovider.DefaultConfig().Merge(config)
		if err != nil {
			return err
		}
		b, _ := json.Marshal(patch)
		if cfg, err = cfg.Merge(b); err != nil {
			return err
		}
		if config, err = json.Marshal(cfg); err != nil {
			return err
		}
	}

	// The signal handler is in place before anyone can learn the port: a SIGTERM sent as soon as
	// the port file appears must stop the server cleanly, not kill the process.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	opts := fakeprovider.ServeOptions{
		Host: *host, Port: *port, PortFile: *portFile, Config: config,
		Started: func(addr net.Addr) { fmt.Printf("listening on http://%s\n", addr) },
	}
	if *watchStdin {
		opts.Stdin = os.Stdin
	}
	return fakeprovider.Serve(ctx, opts)
}

// flagPatch turns the settings flags given on the command line into a
// configuration patch (JSON keys as in fakeprovider.Config).
func flagPatch(fs *flag.FlagSet) (map[string]any, error) {
	patch := map[string]any{}
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err != nil {
			return
		}
		key := strings.ReplaceAll(f.Name, "-", "_")
		v := f.Value.String()
		switch f.Name {
		case "host", "port", "port-file", "watch-stdin", "config", "cpuprofile":
			return
		case "faults", "decisions":
			m := map[string]float64{}
			for _, kv := range splitList(v) {
				k, val, ok := strings.Cut(kv, "=")
				x, perr := strconv.ParseFloat(val, 64)
				if !ok || perr != nil {
					err = fmt.Errorf("--%s: %q is not KEY=NUMBER", f.Name, kv)
					return
				}
				m[k] = x
			}
			patch[key] = m
		case "fail-first-n":
			k, n, ok := strings.Cut(v, ":")
			x, perr := strconv.Atoi(n)
			if !ok || perr != nil {
				err = fmt.Errorf("--fail-first-n: %q is not KIND:N", v)
				return
			}
			patch[key] = map[string]any{"kind": k, "n": x}
		case "invalid-keys":
			patch[key] = splitList(v)
		case "snapshot", "tpm-mode":
			patch[key] = v
		case "allow-unknown-fields":
			patch[key] = v == "true"
		default: // numbers
			patch[key] = json.Number(v)
		}
	})
	return patch, err
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}
