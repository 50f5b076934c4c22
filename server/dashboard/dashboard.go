package dashboard

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/exocortex/exocortex/server/openapi"
	"github.com/exocortex/exocortex/server/route"
)

//go:embed assets
var assets embed.FS

// CSP is the Content-Security-Policy of every dashboard answer: scripts,
// styles, images and connections from the page's own origin only.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

// file is one asset, ready to send.
type file struct {
	ctype     string
	raw, gz   []byte
	etag      string
	immutable bool
}

// Dashboard serves the embedded assets.
type Dashboard struct {
	files map[string]*file // by path under assets/, "index.html" for /
}

// New reads and gzips every embedded asset.
func New() (*Dashboard, error) {
	d := &Dashboard{files: map[string]*file{}}
	err := fs.WalkDir(assets, "assets", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		raw, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "assets/")
		ctype := mime.TypeByExtension(path.Ext(name))
		switch path.Ext(name) {
		case ".js", ".mjs":
			ctype = "text/javascript; charset=utf-8"
		case ".md":
			ctype = "text/markdown; charset=utf-8"
		}
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(raw)
		if err := zw.Close(); err != nil {
			return fmt.Errorf("dashboard: compressing %s: %w", name, err)
		}
		sum := sha256.Sum256(raw)
		d.files[name] = &file{ctype: ctype, raw: raw, gz: buf.Bytes(), etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("dashboard: reading the embedded assets: %w", err)
	}
	if d.files["index.html"] == nil {
		return nil, fmt.Errorf("dashboard: the embedded assets have no index.html")
	}
	return d, nil
}

// Weight is what the first load transfers: the gzipped bytes of the page and
// of the assets it names up front (app.js, app.css, the libraries and the
// chat view), and the same uncompressed.
func (d *Dashboard) Weight() (gz, raw int) {
	for name, f := range d.files {
		if FirstLoad(name) {
			gz += len(f.gz)
			raw += len(f.raw)
		}
	}
	return gz, raw
}

// FirstLoad reports whether the asset name is fetched by the first load of /
// (which opens the chat view).
func FirstLoad(name string) bool {
	switch {
	case name == "index.html", name == "app.js", name == "app.css", name == "views/chat.js", name == "views/chat.css", name == "views/approval.js":
		return true
	case strings.HasPrefix(name, "lib/") && !strings.HasSuffix(name, ".txt") && !strings.HasSuffix(name, "LICENSE"):
		return true
	}
	return false
}

// Routes are the page at / and its assets under /assets/, both public (the
// page holds no data: every view asks /api/v1 with the signed-in cookie).
func (d *Dashboard) Routes() []route.Route {
	return []route.Route{
		{Method: "GET", Pattern: "/{$}", Role: route.Public, Summary: "the operator's dashboard (a page; sign in with an API key)",
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { d.serve(w, r, "index.html") })},
		{Method: "GET", Pattern: "/assets/{path...}", Role: route.Public, Summary: "the dashboard's scripts and styles",
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { d.serve(w, r, r.PathValue("path")) })},
	}
}

func (d *Dashboard) serve(w http.ResponseWriter, r *http.Request, name string) {
	f := d.files[name]
	if f == nil {
		route.Error(w, http.StatusNotFound, route.Problem{Code: route.CodeNotFound, Message: fmt.Sprintf("the dashboard has no asset %q", name)})
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.ctype)
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	// Assets change with the binary: revalidate each load (a 304 is tiny).
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", f.etag)
	h.Set("Vary", "Accept-Encoding")
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, f.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := f.raw
	if acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = f.gz
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(enc) != "gzip" {
			continue
		}
		q, ok := strings.CutPrefix(strings.TrimSpace(params), "q=")
		if !ok {
			return true
		}
		v, err := strconv.ParseFloat(q, 64)
		return err == nil && v > 0
	}
	return false
}

// Ops describes Routes for the OpenAPI document.
func Ops() []openapi.Op {
	return []openapi.Op{
		{Method: "GET", Pattern: "/{$}", Description: "An HTML page (text/html), the same for every caller; it signs in with POST /api/v1/auth/login."},
		{Method: "GET", Pattern: "/assets/{path...}", Description: "The page's ES modules and styles, gzipped when accepted, with an ETag."},
	}
}
