package toolsettings

import "time"

// WebSearch configures web_search. Without a URL or an API key the tool answers
// with an error saying what to set. APIKey is a secret: it is read from
// config.yaml (or EnvSearchKey) by the host and never sent in the settings;
// the plugin asks the host for it (sdk.Call.SettingSecret of APIKeySetting,
// declared in the plugin's SettingSecrets), see docs/secrets.md.
type WebSearch struct {
	// Provider is "searxng" or "tavily". Empty: searxng when URL is set, else
	// tavily when APIKey is set.
	Provider string `yaml:"provider" json:"provider" env:"EXOCORTEX_SEARCH_PROVIDER" allowed:"searxng,tavily"`
	// URL is the SearXNG instance (GET URL/search?q=...&format=json), or for
	// tavily a replacement of https://api.tavily.com.
	URL string `yaml:"url" json:"url" env:"EXOCORTEX_SEARCH_URL"`
	// APIKey is the provider's key (tavily: required; searxng: sent as a bearer
	// token when set, for instances behind a proxy).
	APIKey string `yaml:"api_key" json:"-" env:"EXOCORTEX_SEARCH_API_KEY" secret:"true" plugin:"true"`
	// Rate is the sustained requests per second (default 1); Burst how many may
	// go at once after a quiet spell (default 1).
	Rate  float64 `yaml:"rate" json:"rate" env:"EXOCORTEX_SEARCH_RATE" check:"nonnegative"`
	Burst int     `yaml:"burst" json:"burst" check:"nonnegative"`
	// MaxResults is the default number of results (default 5, at most 20).
	MaxResults int `yaml:"max_results" json:"max_results" check:"nonnegative"`
	// Timeout bounds one request (default 20s).
	Timeout Duration `yaml:"timeout" json:"timeout" check:"nonnegative"`
}

// APIKeySetting is the key of web_search's API key, the secret setting the
// plugin serving web_search asks the host for.
const APIKeySetting = "tools.web_search.api_key"

// Search providers.
const (
	SearchSearXNG = "searxng"
	SearchTavily  = "tavily"
)

// Environment variables that override tools.web_search (read by the host).
const (
	// EnvSearchProvider, EnvSearchURL and EnvSearchKey override
	// tools.web_search.provider, .url and .api_key.
	EnvSearchProvider = "EXOCORTEX_SEARCH_PROVIDER"
	EnvSearchURL      = "EXOCORTEX_SEARCH_URL"
	EnvSearchKey      = "EXOCORTEX_SEARCH_API_KEY"
	// EnvSearchRate overrides tools.web_search.rate (requests per second).
	EnvSearchRate = "EXOCORTEX_SEARCH_RATE"
)

// WithDefaults fills in web_search's defaults, choosing the provider from what is
// set when none is named.
func (w WebSearch) WithDefaults() WebSearch {
	if w.Provider == "" {
		switch {
		case w.URL != "":
			w.Provider = SearchSearXNG
		case w.APIKey != "":
			w.Provider = SearchTavily
		}
	}
	if w.Rate <= 0 {
		w.Rate = 1
	}
	if w.Burst <= 0 {
		w.Burst = 1
	}
	if w.MaxResults <= 0 {
		w.MaxResults = 5
	}
	if w.Timeout <= 0 {
		w.Timeout = Duration(20 * time.Second)
	}
	return w
}

// Recall configures the recall extensions (Agent Zero's memory recall settings).
type Recall struct {
	// Threshold is the least similarity a recalled memory needs: its BM25
	// score over the best, or with vectors the better of that and its cosine
	// similarity to the prompt (memory.MatchScore; default 0: the relevance
	// filter's relative floor alone decides).
	Threshold float64 `yaml:"threshold" json:"threshold" check:"nonnegative"`
	// Limit is how many memories the block holds (default 5).
	Limit int `yaml:"limit" json:"limit" check:"nonnegative"`
	// AreaLimits caps the memories of one area in the block, e.g.
	// {main: 5, solutions: 3, fragments: 2}; areas not named share Limit.
	AreaLimits map[string]int `yaml:"area_limits" json:"area_limits,omitempty" check:"nonnegative"`
	// BlockChars bounds the block within the prompt (default 2000).
	BlockChars int `yaml:"block_chars" json:"block_chars" check:"nonnegative"`
}
