package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/exocortex/exocortex/server/route"
)

// Messages of the authentication errors, as Agent Zero's API words them.
const (
	MsgKeyRequired = "API key required"
	MsgKeyInvalid  = "Invalid API key"
)

// guard wraps a route's handler in the server's checks.
func (s *Server) guard(rt route.Route, errs ErrorWriter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
		caller, ok := s.authenticate(w, r, rt, errs)
		if !ok {
			return
		}
		if !s.allow(w, caller, errs) {
			return
		}
		ctx := route.WithCaller(r.Context(), caller)
		if rt.Stream {
			rt.Handler.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
		defer cancel()
		tw := &trackingWriter{ResponseWriter: w}
		rt.Handler.ServeHTTP(tw, r.WithContext(ctx))
		if !tw.wrote && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			errs(w, http.StatusGatewayTimeout, route.Problem{Code: route.CodeTimeout, Message: fmt.Sprintf("the request took longer than serve.request_timeout (%s)", s.opts.RequestTimeout)})
		}
	})
}

// authenticate finds the caller of r, or answers 401/403 and reports false.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, rt route.Route, errs ErrorWriter) (route.Caller, bool) {
	if len(s.opts.Keys) == 0 {
		return route.Caller{Key: "local", Role: route.Admin}, true
	}
	sent, err := presentedKey(r)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		errs(w, http.StatusRequestEntityTooLarge, route.Problem{Code: route.CodeBodyTooLarge,
			Message: fmt.Sprintf("the body is over %d bytes (serve.max_body_bytes); send less, or raise the limit", tooBig.Limit)})
		return route.Caller{}, false
	}
	if sent == "" {
		if c, found, status, p := s.cookieCaller(r); found {
			if status != 0 {
				if rt.Role == route.Public {
					return route.Caller{Role: route.Public}, true
				}
				errs(w, status, p)
				return route.Caller{}, false
			}
			if !c.Role.Allows(rt.Role) {
				errs(w, http.StatusForbidden, route.Problem{Code: route.CodeForbidden,
					Message: fmt.Sprintf("%s %s needs the %s role; key %q has the %s role", r.Method, rt.Pattern, rt.Role, c.Key, c.Role)})
				return route.Caller{}, false
			}
			return c, true
		}
		if rt.Role == route.Public {
			return route.Caller{Role: route.Public}, true
		}
		errs(w, http.StatusUnauthorized, route.Problem{Code: route.CodeUnauthenticated, Message: MsgKeyRequired})
		return route.Caller{}, false
	}
	k, found := s.match(sent)
	if !found {
		if rt.Role == route.Public {
			return route.Caller{Role: route.Public}, true
		}
		s.log.Warn("serve: a request with an unknown API key", "path", r.URL.Path, "remote", r.RemoteAddr)
		errs(w, http.StatusUnauthorized, route.Problem{Code: route.CodeUnauthenticated, Message: MsgKeyInvalid})
		return route.Caller{}, false
	}
	c := route.Caller{Key: k.Name, Role: k.Role}
	if !c.Role.Allows(rt.Role) {
		errs(w, http.StatusForbidden, route.Problem{Code: route.CodeForbidden,
			Message: fmt.Sprintf("%s %s needs the %s role; key %q has the %s role", r.Method, rt.Pattern, rt.Role, k.Name, k.Role)})
		return route.Caller{}, false
	}
	return c, true
}

// match compares sent with every key in constant time (over their SHA-256,
// so that the lengths do not differ), without stopping at the first match.
func (s *Server) match(sent string) (Key, bool) {
	h := sha256.Sum256([]byte(sent))
	var found Key
	ok := 0
	for i, k := range s.opts.Keys {
		eq := subtle.ConstantTimeCompare(h[:], s.keyHashes[i][:])
		if eq == 1 && ok == 0 {
			found = k
		}
		ok |= eq
	}
	return found, ok == 1
}

// presentedKey is the key the request carries: X-API-KEY, a bearer token,
// or api_key in a JSON body (Agent Zero's clients). The body is read within
// the size limit and put back for the handler.
func presentedKey(r *http.Request) (string, error) {
	if k := strings.TrimSpace(r.Header.Get("X-API-KEY")); k != "" {
		return k, nil
	}
	if a := r.Header.Get("Authorization"); a != "" {
		if scheme, tok, ok := strings.Cut(a, " "); ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(tok), nil
		}
	}
	if r.Body == nil || r.Method == http.MethodGet {
		return "", nil
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return "", nil
	}
	b, err := io.ReadAll(r.Body)
	// The handler reads the same bytes, and the same error past the limit.
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), errReader{err}), r.Body}
	if err != nil {
		return "", err
	}
	var body struct {
		APIKey string `json:"api_key"`
	}
	if json.Unmarshal(b, &body) != nil {
		return "", nil
	}
	return body.APIKey, nil
}

// errReader returns err (io.EOF when nil).
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err == nil {
		return 0, io.EOF
	}
	return 0, e.err
}

// allow takes a token from the caller's bucket, or answers 429.
func (s *Server) allow(w http.ResponseWriter, c route.Caller, errs ErrorWriter) bool {
	name := c.Key
	if name == "" {
		name = "(public)"
	}
	s.mu.Lock()
	l := s.limiters[name]
	if l == nil {
		l = rate.NewLimiter(rate.Limit(s.opts.Rate), s.opts.Burst)
		s.limiters[name] = l
	}
	s.mu.Unlock()
	if l.Allow() {
		return true
	}
	res := l.Reserve()
	if d := res.Delay(); d > 0 {
		res.Cancel()
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(max(d, time.Second).Seconds()))))
		errs(w, http.StatusTooManyRequests, route.Problem{Code: route.CodeRateLimited,
			Message: fmt.Sprintf("key %q is over its rate limit (serve.rate_per_second %g, serve.rate_burst %d); retry after %s", name, s.opts.Rate, s.opts.Burst, d.Round(time.Millisecond))})
		return false
	}
	return true
}

// trackingWriter records whether the handler answered.
type trackingWriter struct {
	http.ResponseWriter
	wrote bool
}

func (t *trackingWriter) WriteHeader(code int) { t.wrote = true; t.ResponseWriter.WriteHeader(code) }
func (t *trackingWriter) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
