package engine

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tabscreen/tabscreen/golib/provider"
)

// Until a run has had one answer from its endpoint, an attempt that shows the endpoint cannot be
// used (nothing listens there, the host does not resolve, TLS fails, the server has no such path)
// is tried a few times in quick succession and then stops the run: with the retry rules of a
// working endpoint (16 tries, back-off to a minute) a wrong URL held the user for minutes with
// nothing said. After the first answer the ordinary rules apply, since an endpoint that has
// answered is the right one and its failures are likely to pass.
const (
	endpointTries = 3
	endpointWait  = 250 * time.Millisecond
)

// endpointProblem says how attempt a shows that the endpoint cannot be used, if it does: a short
// cause (for the progress line) and the cause in words.
func endpointProblem(a attempt) (short, cause string, ok bool) {
	if a.err != nil {
		return unreachable(a.err)
	}
	if c, ok := provider.WrongURL(provider.Response{Status: a.status, Header: a.headers, Body: a.body}); ok {
		return fmt.Sprintf("HTTP %d", a.status), c, true
	}
	return "", "", false
}

// unreachable classes a transport error that means the endpoint cannot be reached at all. A
// timeout is not one: a slow server is retried as usual.
func unreachable(err error) (short, cause string, ok bool) {
	var dns *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var record tls.RecordHeaderError
	switch {
	case errors.As(err, &dns) && !dns.IsTimeout:
		return "unknown host", fmt.Sprintf("the host name %q does not resolve (unknown host)", dns.Name), true
	case errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, wsaConnRefused):
		return "connection refused", "the connection was refused: nothing listens at that address and port", true
	case errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &invalid):
		return "TLS failure", "the TLS handshake failed: " + tlsText(err), true
	case errors.As(err, &record), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return "TLS failure", "the server does not speak TLS there (an https URL for an http server?)", true
	case strings.Contains(err.Error(), "tls: "):
		return "TLS failure", "the TLS handshake failed: " + tlsText(err), true
	}
	return "", "", false
}

// wsaConnRefused is Windows' "connection refused" (WSAECONNREFUSED), which its syscall package
// does not map to ECONNREFUSED.
const wsaConnRefused = syscall.Errno(10061)

// tlsText is the TLS part of a transport error's text.
func tlsText(err error) string {
	s := err.Error()
	if i := strings.Index(s, "tls: "); i >= 0 {
		return s[i:]
	}
	if i := strings.Index(s, "x509: "); i >= 0 {
		return s[i:]
	}
	return s
}

// endpointAttempts is how many attempts a job makes at an endpoint that has not answered yet:
// endpointTries, within max_tries (one without retries, spec 7.3).
func (r *Run) endpointAttempts() int {
	o := r.opts
	switch {
	case o.MaxTries == nil && o.MaxSeconds == nil:
		return 1
	case o.MaxTries != nil:
		return min(endpointTries, *o.MaxTries)
	}
	return endpointTries
}

// stopEndpoint stops the run because its endpoint cannot be used, naming the URL, the cause and
// the likely fix.
func (r *Run) stopEndpoint(cause string, a attempt) {
	endpoint := r.descriptor.Endpoint(r.opts.APIURL)
	fix := "Check `api_url`."
	if a.err != nil {
		fix = "Is the server running, and is `api_url` right?"
		if u, err := url.Parse(endpoint); err == nil && u.Host != "" {
			fix = fmt.Sprintf("Is the server running at %s, and is `api_url` right?", u.Host)
		}
	}
	label := r.descriptor.Label
	if label == "" {
		label = "This provider"
	}
	r.stopRun(provider.Stop{
		Class:   "tabscreen_error_endpoint",
		Message: fmt.Sprintf("the endpoint %s cannot be used: %s.", endpoint, cause),
		Hint:    fmt.Sprintf("%s %s expects %s.", fix, label, r.descriptor.URLForm()),
		Status:  a.status,
	})
}

// problems counts the causes of failed attempts, for the progress line: the commonest is shown.
type problems struct {
	mu     sync.Mutex
	counts map[string]int64
}

func (p *problems) add(cause string) {
	if cause == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.counts == nil {
		p.counts = map[string]int64{}
	}
	p.counts[cause]++
}

// commonest is the cause counted most often ("" when none), ties broken by name.
func (p *problems) commonest() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	best := ""
	for c, n := range p.counts {
		if n > p.counts[best] || (n == p.counts[best] && c < best) {
			best = c
		}
	}
	return best
}

// attemptCause is the short cause of a failed attempt.
func attemptCause(a attempt, f provider.Failure) string {
	if a.err != nil {
		if short, _, ok := unreachable(a.err); ok {
			return short
		}
		var ne net.Error
		if errors.As(a.err, &ne) && ne.Timeout() {
			return "timeout"
		}
		return "network error"
	}
	if a.status >= 200 && a.status < 300 {
		if f.Verdict == provider.Reask {
			return "no usable answer"
		}
		return "unusable answer"
	}
	return fmt.Sprintf("HTTP %d", a.status)
}
