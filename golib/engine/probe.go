package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tabscreen/tabscreen/golib/provider"
)

// ProbeError is a probe the provider answered with an error: classed as the run would class it
// (a refused key, an exhausted quota), else tabscreen_error_http.
type ProbeError struct {
	Class, Message string
	Status         int
}

func (e *ProbeError) Error() string { return e.Message }

// Probe sends a provider's smallest request to a model and reads the rate-limit headers of the
// answer (rate_limits_per_minute()), through the adapter and the run's HTTP client.
func Probe(ctx context.Context, d provider.Descriptor, apiURL, model string, rules *provider.ModelRule, apiKey string) (provider.RateInfo, error) {
	adapter, err := d.New(provider.Settings{URL: apiURL, Role: "user"})
	if err != nil {
		return provider.RateInfo{}, err
	}
	body, err := json.Marshal(d.Probe(model, rules))
	if err != nil {
		return provider.RateInfo{}, err
	}
	client, transport := newClient(60*time.Second, 1)
	defer transport.CloseIdleConnections()
	req := client.R().SetContext(ctx).SetBody(body)
	for k, v := range adapter.Headers(apiKey) {
		req.SetHeader(k, v[0])
	}
	resp, err := req.Post(adapter.Endpoint())
	if err != nil {
		return provider.RateInfo{}, &ProbeError{Class: "tabscreen_error_http",
			Message: fmt.Sprintf("Could not reach %s: %s", adapter.Endpoint(), errorText(err))}
	}
	status, h, b := resp.StatusCode(), resp.Header(), resp.Body()
	if status != 200 {
		message := fmt.Sprintf("The request for model %q failed with HTTP status %d: %s", model, status, adapter.ErrorMessage(status, b))
		if stop, ok := adapter.Stop(status, h, b); ok {
			return provider.RateInfo{}, &ProbeError{Class: stop.Class, Message: message, Status: status}
		}
		return provider.RateInfo{}, &ProbeError{Class: "tabscreen_error_http", Message: message, Status: status}
	}
	return d.Rate.Read(h), nil
}
