package engine

import (
	"net"
	"net/http"
	"time"

	"github.com/go-resty/resty/v2"
)

// newClient is the one HTTP client of the library: every screening request and every probe goes
// through it. The engine owns retries, so the client makes one attempt per call.
func newClient(timeout time.Duration, active int) (*resty.Client, *http.Transport) {
	transport := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        active,
		MaxIdleConnsPerHost: active,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 15 * time.Second,
		ForceAttemptHTTP2:   true,
	}
	client := resty.New().SetTransport(transport).SetTimeout(timeout).SetRetryCount(0)
	return client, transport
}
