package screen

// Usage is the billed token count of one request.
type Usage struct {
	Prompt, Cached, Completion int64
}

// Add accumulates another request's usage (a re-asked answer is billed too).
func (u *Usage) Add(v Usage) {
	u.Prompt += v.Prompt
	u.Cached += v.Cached
	u.Completion += v.Completion
}

// Prices are USD per million tokens. CachedIn is used for cached input when known, else In.
type Prices struct {
	In, CachedIn, Out          float64
	HasIn, HasCachedIn, HasOut bool
}

// Cost prices a usage exactly, without rounding, so that cheap models are not priced at zero.
// ok is false when a needed price is unknown.
func (p Prices) Cost(u Usage) (in, out float64, ok bool) {
	if !p.HasIn || !p.HasOut {
		return 0, 0, false
	}
	cachedRate := p.In
	if p.HasCachedIn {
		cachedRate = p.CachedIn
	}
	cached := u.Cached
	if cached > u.Prompt {
		cached = u.Prompt
	}
	in = (float64(u.Prompt-cached)*p.In + float64(cached)*cachedRate) / 1e6
	out = float64(u.Completion) * p.Out / 1e6
	return in, out, true
}
