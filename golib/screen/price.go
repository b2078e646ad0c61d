package screen

// Usage is the billed token count of one request. Prompt counts every input token; Cached (cache
// reads) and CacheWrite (cache writes, provider B) are parts of it with prices of their own.
type Usage struct {
	Prompt, Cached, CacheWrite, Completion int64
}

// Add accumulates another request's usage (a re-asked answer is billed too).
func (u *Usage) Add(v Usage) {
	u.Prompt += v.Prompt
	u.Cached += v.Cached
	u.CacheWrite += v.CacheWrite
	u.Completion += v.Completion
}

// Prices are USD per million tokens. CachedIn and CacheWrite are used for cache reads and writes
// when known, else In.
type Prices struct {
	In, CachedIn, CacheWrite, Out             float64
	HasIn, HasCachedIn, HasCacheWrite, HasOut bool
}

// ModelPrices are a model's prices as R sends them (USD per million tokens; null: unknown), in the
// run options and in the estimate's request.
type ModelPrices struct {
	PriceIn         *float64 `json:"price_in"`
	PriceCachedIn   *float64 `json:"price_cached_in"`
	PriceCacheWrite *float64 `json:"price_cache_write"`
	PriceOut        *float64 `json:"price_out"`
	// The prices of a batch line (model_prizes' batch columns); null: half the standard prices.
	PriceBatchIn       *float64 `json:"price_batch_in"`
	PriceBatchCachedIn *float64 `json:"price_batch_cached_in"`
	PriceBatchOut      *float64 `json:"price_batch_out"`
}

// Prices are the model's prices of a request, or of a batch line when batch.
func (m ModelPrices) Prices(batch bool) Prices {
	p := PricesOf(m.PriceIn, m.PriceCachedIn, m.PriceCacheWrite, m.PriceOut)
	if batch {
		p = BatchPrices(p, m.PriceBatchIn, m.PriceBatchCachedIn, m.PriceBatchOut)
	}
	return p
}

// PricesOf are the prices given as nullable numbers (the run options', the estimate's): nil is
// unknown.
func PricesOf(in, cachedIn, cacheWrite, out *float64) Prices {
	var p Prices
	setPrice(&p.In, &p.HasIn, in)
	setPrice(&p.CachedIn, &p.HasCachedIn, cachedIn)
	setPrice(&p.CacheWrite, &p.HasCacheWrite, cacheWrite)
	setPrice(&p.Out, &p.HasOut, out)
	return p
}

// setPrice sets a price when one is given.
func setPrice(price *float64, has *bool, given *float64) {
	if given != nil {
		*price, *has = *given, true
	}
}

// cacheRates are the prices of cache reads and writes: their own when known, else the input price.
func (p Prices) cacheRates() (read, write float64) {
	read, write = p.In, p.In
	if p.HasCachedIn {
		read = p.CachedIn
	}
	if p.HasCacheWrite {
		write = p.CacheWrite
	}
	return read, write
}

// CacheSaving is what the cache saved on a usage: its cache reads and writes at the input price,
// less what they cost at their own prices (a write costs more than input, so alone it saves less
// than nothing). ok is false when the input price is unknown.
func (p Prices) CacheSaving(u Usage) (saving float64, ok bool) {
	if !p.HasIn {
		return 0, false
	}
	plain := Prices{In: p.In, Out: p.Out, HasIn: true, HasOut: true}
	cached, _, _ := p.withOut().Cost(Usage{Prompt: u.Prompt, Cached: u.Cached, CacheWrite: u.CacheWrite})
	uncached, _, _ := plain.Cost(Usage{Prompt: u.Prompt})
	return uncached - cached, true
}

// withOut is p with an output price, so that Cost prices the input of a usage whatever Out is.
func (p Prices) withOut() Prices {
	p.HasOut = true
	return p
}

// Cost prices a usage exactly, without rounding, so that cheap models are not priced at zero.
// ok is false when a needed price is unknown.
func (p Prices) Cost(u Usage) (in, out float64, ok bool) {
	if !p.HasIn || !p.HasOut {
		return 0, 0, false
	}
	cachedRate, writeRate := p.cacheRates()
	cached := min(u.Cached, u.Prompt)
	written := min(u.CacheWrite, u.Prompt-cached)
	fresh := u.Prompt - cached - written
	in = (float64(fresh)*p.In + float64(cached)*cachedRate + float64(written)*writeRate) / 1e6
	out = float64(u.Completion) * p.Out / 1e6
	return in, out, true
}
