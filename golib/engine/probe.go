package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tabscreen/tabscreen/golib/provider"
)

// ProbeError is a probe the provider answered with an error, classed as the run would class it
// (a refused key, an exhausted quota), else tabscreen_error_http; or one that got no answer
// (tabscreen_error_endpoint, Status 0), as a run that cannot reach its endpoint.
type ProbeError struct {
	Class, Message string
	Status         int
}

func (e *ProbeError) Error() string { return e.Message }

// Probe sends a provider's smallest request to a model and reads the rate-limit headers of the
// answer (rate_limits_per_minute()), through the adapter and the run's HTTP client: the request of
// a call, with the probe's body; a refusal classed as a run would class it.
func Probe(ctx context.Context, d provider.Descriptor, apiURL string, m provider.PolicyModel, apiKey string) (provider.RateInfo, error) {
	model := m.Name
	adapter, err := d.New(provider.Settings{URL: apiURL, Role: "user", APIKey: apiKey})
	if err != nil {
		return provider.RateInfo{}, err
	}
	req, err := adapter.Request(&provider.Call{Model: &provider.Model{Name: model, ForcedTool: true}})
	if err != nil {
		return provider.RateInfo{}, err
	}
	body, err := d.Probe(m)
	if err != nil {
		return provider.RateInfo{}, err
	}
	if req.Body, err = json.Marshal(body); err != nil {
		return provider.RateInfo{}, err
	}
	client, transport := newClient(60*time.Second, 1)
	defer transport.CloseIdleConnections()
	resp, err := client.R().SetContext(ctx).SetHeaderMultiValues(req.Header).SetBody(req.Body).Post(req.URL)
	if err != nil {
		return provider.RateInfo{}, &ProbeError{Class: "tabscreen_error_endpoint",
			Message: fmt.Sprintf("Could not reach %s: %s", req.URL, errorText(err))}
	}
	now := time.Now()
	if status := resp.StatusCode(); status != 200 {
		f := adapter.Classify(provider.Response{Status: status, Header: resp.Header(), Body: resp.Body()}, now)
		class := "tabscreen_error_http"
		if f.Verdict == provider.StopRun {
			class = f.Class
		}
		return provider.RateInfo{}, &ProbeError{Class: class, Status: status,
			Message: fmt.Sprintf("The request for model %q failed with HTTP status %d: %s", model, status, f.Message)}
	}
	return adapter.RateState(resp.Header(), now).Info, nil
}
