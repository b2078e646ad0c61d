package engine

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-resty/resty/v2"

	"github.com/tabscreen/tabscreen/golib/provider"
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

// post sends one request body and reads the whole response. Resty is told not to read the body:
// its reading grew a buffer from 512 bytes, and it copied the request body twice (into a pooled
// buffer, then out of it); here the body goes in as a reader over the caller's bytes and comes
// back in one buffer of the response's Content-Length. What the caller gets is what resty's own
// reading gave: the status, the headers and the body, or the error of the exchange or of the
// reading.
func post(ctx context.Context, client *resty.Client, req provider.Request) (status int, header http.Header, body []byte, err error) {
	resp, err := client.R().SetContext(ctx).SetDoNotParseResponse(true).SetHeaderMultiValues(req.Header).
		SetBody(bytes.NewReader(req.Body)).Post(req.URL)
	if err != nil {
		return 0, nil, nil, err
	}
	raw := resp.RawResponse
	defer raw.Body.Close()
	var r io.Reader = raw.Body
	// As resty: a gzip body that the transport did not decompress itself (it does when it asked
	// for gzip; a caller's own Accept-Encoding leaves it to us).
	if strings.EqualFold(raw.Header.Get("Content-Encoding"), "gzip") && raw.ContentLength != 0 {
		if _, ok := r.(*gzip.Reader); !ok {
			zr, err := gzip.NewReader(r)
			if err != nil {
				return 0, nil, nil, err
			}
			defer zr.Close()
			r = zr
		}
	}
	if body, err = readAll(r, raw.ContentLength); err != nil {
		return 0, nil, nil, err
	}
	return raw.StatusCode, raw.Header, body, nil
}

// readAll is io.ReadAll starting from the size the response announced (plus one byte for the
// read that meets the end), so that a body is read into one allocation.
func readAll(r io.Reader, size int64) ([]byte, error) {
	n := 512
	if size > 0 && size < 1<<24 {
		n = int(size) + 1
	}
	b := make([]byte, 0, n)
	for {
		m, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}
