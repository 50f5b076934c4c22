// Package websearch provides web_search: a web search through a configured
// provider, rate limited, returning titles, addresses and snippets.
//
// # Providers
//
//   - searxng: a SearXNG instance, usually self-hosted (tools.web_search.url, or
//     EXOCORTEX_SEARCH_URL). The tool asks GET URL/search?q=QUERY&format=json
//     &safesearch=1 and reads results[].title, .url and .content. The instance must
//     allow the json format (search.formats in its settings.yml; otherwise it
//     answers 403, which the tool explains). An api_key, when set, is sent as a
//     bearer token for instances behind an authenticating proxy.
//   - tavily: the Tavily search API (tools.web_search.api_key, or
//     EXOCORTEX_SEARCH_API_KEY; tools.web_search.url replaces
//     https://api.tavily.com). The tool sends POST URL/search with the key as
//     "Authorization: Bearer KEY" and the body {"query": ..., "max_results": N},
//     and reads results[].title, .url and .content (and answer, when given).
//
// With neither a URL nor a key the tool answers with an error naming the settings
// and environment variables to set; tools.web_search.provider chooses explicitly.
//
// # Rate limit
//
// Requests pass a token bucket (Limiter): tools.web_search.rate per second
// sustained (default 1), tools.web_search.burst at once (default 1). A call that
// finds the bucket empty waits for its turn rather than failing, within the
// call's deadline; the wait is mentioned in the result.
package websearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/exocortex/exocortex/extensions/internal/toolargs"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/toolsettings"
)

// ToolName is the tool's name.
const ToolName = "web_search"

// TavilyURL is the default address of the Tavily API.
const TavilyURL = "https://api.tavily.com"

// maxResults bounds max_results.
const maxResults = 20

// maxBody bounds the provider's answer read.
const maxBody = 4 << 20

// Result is one search hit.
type Result struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Content string `json:"content"`
}

// Searcher runs searches. Its methods are safe for concurrent use.
type Searcher struct {
	load   func() (toolsettings.WebSearch, error)
	client *http.Client
	clock  Clock

	// hostKey: ask the host for the API key when the settings carry none
	// (HostKey).
	hostKey bool

	mu      sync.Mutex
	limiter *Limiter
	shape   [2]float64 // the rate and burst limiter was made with
}

// New returns a Searcher; load gives the configuration on every call (the
// built-in plugins pass a once-loaded config). A nil clock is the system clock.
func New(load func() (toolsettings.WebSearch, error), clock Clock) *Searcher {
	if clock == nil {
		clock = SystemClock{}
	}
	return &Searcher{load: load, client: &http.Client{}, clock: clock}
}

// HostKey makes s ask the host for the API key on each call
// (sdk.Call.SettingSecret of toolsettings.APIKeySetting) when the settings
// carry none, as the settings the host sends never do: the key is a secret.
// The plugin serving the tool declares the key in sdk.Plugin.SettingSecrets.
func (s *Searcher) HostKey() *Searcher {
	s.hostKey = true
	return s
}

// Fixed is a load function returning cfg.
func Fixed(cfg toolsettings.WebSearch) func() (toolsettings.WebSearch, error) {
	return func() (toolsettings.WebSearch, error) { return cfg, nil }
}

// limiterFor returns the limiter for the configured rate and burst.
func (s *Searcher) limiterFor(cfg toolsettings.WebSearch) *Limiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	shape := [2]float64{cfg.Rate, float64(cfg.Burst)}
	if s.limiter == nil || s.shape != shape {
		s.limiter, s.shape = NewLimiter(cfg.Rate, cfg.Burst, s.clock), shape
	}
	return s.limiter
}

type args struct {
	Query      toolargs.Text `json:"query"`
	MaxResults toolargs.Int  `json:"max_results"`
}

// Tool is the web_search tool.
func (s *Searcher) Tool() sdk.Tool {
	return sdk.Tool{
		Name:        ToolName,
		Description: "Search the web; returns titles, addresses and snippets of the top results.",
		Parameters: `{"type":"object","properties":{` +
			`"query":{"type":"string","description":"What to search for, as you would type it into a search engine."},` +
			`"max_results":{"type":"integer","minimum":1,"maximum":20,"description":"How many results (default 5)."}},` +
			`"required":["query"]}`,
		PromptFile: "agent.system.tool.web_search.md",
		Run: func(ctx context.Context, c *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
			var a args
			if err := toolargs.Decode(ToolName, raw, &a); err != nil {
				return nil, err
			}
			q := strings.TrimSpace(string(a.Query))
			if q == "" {
				return nil, fmt.Errorf(`%s: "query" is empty: say what to search for`, ToolName)
			}
			n := 0
			if a.MaxResults.Set {
				n = a.MaxResults.V
			}
			out, err := s.search(ctx, c, q, n)
			if err != nil {
				return nil, err
			}
			return &exocortexv1.ToolResult{Content: out}, nil
		},
	}
}

// unconfigured explains how to configure a provider.
func unconfigured(what string) error {
	return fmt.Errorf("%s: %s. Set tools.web_search.url in %s to a SearXNG instance (with the json format enabled), "+
		"or tools.web_search.api_key to a Tavily API key; or the environment variables %s / %s",
		ToolName, what, "$EXOCORTEX_HOME/config.yaml", toolsettings.EnvSearchURL, toolsettings.EnvSearchKey)
}

// Search runs one rate-limited search and renders the results for the model. n
// is the number of results (0: the configured default).
func (s *Searcher) Search(ctx context.Context, query string, n int) (string, error) {
	return s.search(ctx, nil, query, n)
}

// search is Search for the tool call c (nil: none, and no key from the host).
func (s *Searcher) search(ctx context.Context, c *sdk.Call, query string, n int) (string, error) {
	cfg, err := s.load()
	if err != nil {
		return "", fmt.Errorf("%s: loading the configuration: %w", ToolName, err)
	}
	// The key is asked for only when a provider is configured (the host
	// chose tavily from a key it holds, or the operator named one).
	if cfg.APIKey == "" && cfg.Provider != "" && s.hostKey && c != nil {
		if cfg.APIKey, err = c.SettingSecret(ctx, toolsettings.APIKeySetting); err != nil {
			return "", fmt.Errorf("%s: asking the host for the API key: %w", ToolName, err)
		}
	}
	cfg = cfg.WithDefaults()
	if n <= 0 {
		n = cfg.MaxResults
	}
	n = min(n, maxResults)
	var do func(context.Context, *http.Client, toolsettings.WebSearch, string, int) ([]Result, string, error)
	switch cfg.Provider {
	case "":
		return "", unconfigured("no search provider is configured")
	case toolsettings.SearchSearXNG:
		if cfg.URL == "" {
			return "", unconfigured("provider searxng needs the instance's address")
		}
		do = searxng
	case toolsettings.SearchTavily:
		if cfg.APIKey == "" {
			return "", unconfigured("provider tavily needs an API key")
		}
		do = tavily
	default:
		return "", fmt.Errorf("%s: unknown provider %q in tools.web_search.provider: use %q or %q", ToolName, cfg.Provider, toolsettings.SearchSearXNG, toolsettings.SearchTavily)
	}
	waited, err := s.limiterFor(cfg).Wait(ctx)
	if err != nil {
		return "", fmt.Errorf("%s: gave up waiting for the rate limit (%g requests/s): %w", ToolName, cfg.Rate, err)
	}
	rctx, cancel := context.WithTimeout(ctx, time.Duration(cfg.Timeout))
	defer cancel()
	results, answer, err := do(rctx, s.client, cfg, query, n)
	if err != nil {
		return "", fmt.Errorf("%s: %w", ToolName, err)
	}
	if len(results) > n {
		results = results[:n]
	}
	var b strings.Builder
	if len(results) == 0 && answer == "" {
		fmt.Fprintf(&b, "No results for %q.", query)
	} else {
		fmt.Fprintf(&b, "Results for %q (%s):\n", query, cfg.Provider)
		if answer != "" {
			fmt.Fprintf(&b, "\nAnswer: %s\n", oneLine(answer, 600))
		}
		for i, r := range results {
			fmt.Fprintf(&b, "\n%d. %s\n   %s\n", i+1, oneLine(r.Title, 200), r.URL)
			if c := oneLine(r.Content, 400); c != "" {
				fmt.Fprintf(&b, "   %s\n", c)
			}
		}
	}
	if waited > 0 {
		fmt.Fprintf(&b, "\n[waited %s for the search rate limit]", waited.Round(time.Millisecond))
	}
	return strings.ToValidUTF8(strings.TrimRight(b.String(), "\n"), "\uFFFD"), nil
}

// oneLine collapses white space and shortens s to about n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndexByte(s[:n], ' ')
	if cut < n/2 {
		cut = n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
	}
	return s[:cut] + " ..."
}

// fetch sends req and reads a JSON answer into dst, explaining HTTP failures.
func fetch(client *http.Client, req *http.Request, provider string, explain func(status int) string, dst any) error {
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%s at %s did not answer in time (tools.web_search.timeout)", provider, req.URL.Host)
		}
		return fmt.Errorf("%s at %s: %w", provider, req.URL.Host, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return fmt.Errorf("%s at %s: reading the answer: %w", provider, req.URL.Host, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg := fmt.Sprintf("%s at %s answered %s", provider, req.URL.Host, resp.Status)
		if resp.StatusCode == http.StatusTooManyRequests {
			msg += ": it is limiting the request rate; wait before searching again, or lower tools.web_search.rate"
		} else if why := explain(resp.StatusCode); why != "" {
			msg += ": " + why
		}
		if snippet := oneLine(string(body), 200); snippet != "" {
			msg += fmt.Sprintf(" (%s)", snippet)
		}
		return errors.New(msg)
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return fmt.Errorf("%s at %s answered something that is not its JSON (%v): %.120q", provider, req.URL.Host, err, body)
	}
	return nil
}

// searxng queries a SearXNG instance's JSON API.
func searxng(ctx context.Context, client *http.Client, cfg toolsettings.WebSearch, query string, _ int) ([]Result, string, error) {
	base, err := url.Parse(strings.TrimRight(cfg.URL, "/") + "/search")
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") {
		return nil, "", fmt.Errorf("tools.web_search.url %q is not an http(s) address", cfg.URL)
	}
	v := url.Values{"q": {query}, "format": {"json"}, "safesearch": {"1"}}
	base.RawQuery = v.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base.String(), nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", "application/json")
	if cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	var out struct {
		Results []Result `json:"results"`
		Answers []any    `json:"answers"`
	}
	err = fetch(client, req, "SearXNG", func(status int) string {
		if status == http.StatusForbidden {
			return "the instance does not allow format=json; add json to search.formats in its settings.yml"
		}
		return ""
	}, &out)
	if err != nil {
		return nil, "", err
	}
	answer := ""
	if len(out.Answers) > 0 {
		if s, ok := out.Answers[0].(string); ok {
			answer = s
		} else if m, ok := out.Answers[0].(map[string]any); ok {
			answer, _ = m["answer"].(string)
		}
	}
	return out.Results, answer, nil
}

// tavily queries the Tavily search API.
func tavily(ctx context.Context, client *http.Client, cfg toolsettings.WebSearch, query string, n int) ([]Result, string, error) {
	base := cfg.URL
	if base == "" {
		base = TavilyURL
	}
	u, err := url.Parse(strings.TrimRight(base, "/") + "/search")
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, "", fmt.Errorf("tools.web_search.url %q is not an http(s) address", base)
	}
	body, _ := json.Marshal(map[string]any{"query": query, "max_results": n})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+cfg.APIKey)
	var out struct {
		Answer  string   `json:"answer"`
		Results []Result `json:"results"`
	}
	err = fetch(client, req, "Tavily", func(status int) string {
		if status == http.StatusUnauthorized || status == http.StatusForbidden {
			return "the API key was refused; check tools.web_search.api_key or " + toolsettings.EnvSearchKey
		}
		return ""
	}, &out)
	if err != nil {
		return nil, "", err
	}
	return out.Results, out.Answer, nil
}
