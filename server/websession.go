package server

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/exocortex/exocortex/server/route"
)

// The dashboard's sign-in: POST /api/v1/auth/login trades an API key for a
// web session, a random token kept by the server and sent back by the
// browser as the HttpOnly, SameSite=Strict cookie SessionCookie. The
// authentication accepts the cookie as it accepts the key it stands for,
// with one more check: a state-changing request (any method but GET, HEAD
// and OPTIONS) must carry the session's CSRF token as CSRFHeader (the
// login answer and GET /api/v1/auth/session give it to the page's script,
// which another site cannot read). Tokens live in memory: a restart signs
// everyone out, as does POST /api/v1/auth/logout for one session.
const (
	SessionCookie = "exocortex_session"
	CSRFHeader    = "X-CSRF-Token"
	// SessionLifetime is how long a web session lasts after its last use.
	SessionLifetime = 12 * time.Hour
	// maxWebSessions bounds the sessions kept; the least recently used goes first.
	maxWebSessions = 1024
)

// webSession is one signed-in browser.
type webSession struct {
	key  Key
	csrf string
	used time.Time
}

// webSessions are the signed-in browsers, by the SHA-256 of their token.
type webSessions struct {
	mu sync.Mutex
	m  map[string]*webSession
}

func tokenID(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (ws *webSessions) create(k Key, now time.Time) (token string, s *webSession) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.m == nil {
		ws.m = map[string]*webSession{}
	}
	for id, old := range ws.m {
		if now.Sub(old.used) > SessionLifetime {
			delete(ws.m, id)
		}
	}
	if len(ws.m) >= maxWebSessions {
		var oldest string
		for id, old := range ws.m {
			if oldest == "" || old.used.Before(ws.m[oldest].used) {
				oldest = id
			}
		}
		delete(ws.m, oldest)
	}
	token = randomToken()
	s = &webSession{key: k, csrf: randomToken(), used: now}
	ws.m[tokenID(token)] = s
	return token, s
}

// find returns the live session of token, refreshing its use.
func (ws *webSessions) find(token string, now time.Time) (*webSession, bool) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	s := ws.m[tokenID(token)]
	if s == nil {
		return nil, false
	}
	if now.Sub(s.used) > SessionLifetime {
		delete(ws.m, tokenID(token))
		return nil, false
	}
	s.used = now
	return s, true
}

func (ws *webSessions) remove(token string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	delete(ws.m, tokenID(token))
}

// sessionToken is the request's web-session cookie, "" when none.
func sessionToken(r *http.Request) string {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return ""
	}
	return c.Value
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// cookieCaller authenticates r by its session cookie: the caller, or a
// problem (status and message) when the cookie is stale or the CSRF token
// is missing or wrong. found is false when r has no cookie at all.
func (s *Server) cookieCaller(r *http.Request) (c route.Caller, found bool, status int, p route.Problem) {
	token := sessionToken(r)
	if token == "" {
		return route.Caller{}, false, 0, route.Problem{}
	}
	ws, ok := s.web.find(token, time.Now())
	if !ok {
		return route.Caller{}, true, http.StatusUnauthorized, route.Problem{Code: route.CodeUnauthenticated, Message: "your sign-in has ended (it expired, was signed out, or serve restarted): sign in again"}
	}
	if !safeMethod(r.Method) && subtle.ConstantTimeCompare([]byte(r.Header.Get(CSRFHeader)), []byte(ws.csrf)) != 1 {
		return route.Caller{}, true, http.StatusForbidden, route.Problem{Code: route.CodeForbidden,
			Message: fmt.Sprintf("%s %s from a signed-in browser needs the %s header the sign-in gave (a page of another site cannot send it)", r.Method, r.URL.Path, CSRFHeader)}
	}
	return route.Caller{Key: ws.key.Name, Role: ws.key.Role}, true, 0, route.Problem{}
}

// LoginRequest is POST /api/v1/auth/login's body.
type LoginRequest struct {
	// Key is an API key (serve.api_key or serve.agent_key).
	Key string `json:"key"`
}

// SignedIn is the answer of the sign-in routes: who the browser is.
type SignedIn struct {
	// Key names the API key (its setting, never the key itself).
	Key  string `json:"key"`
	Role string `json:"role"`
	// CSRF is the token to send as X-CSRF-Token on state-changing requests.
	CSRF string `json:"csrf,omitempty"`
	// Open says the server has no key: every local caller is an admin.
	Open bool `json:"open,omitempty"`
}

// SignInRoutes are the dashboard's sign-in routes:
//
//	POST /api/v1/auth/login    {key}  → SignedIn, and the session cookie
//	GET  /api/v1/auth/session         → SignedIn (401 when not signed in)
//	POST /api/v1/auth/logout          → ends the session and clears the cookie
func (s *Server) SignInRoutes() []route.Route {
	return []route.Route{
		{Method: "POST", Pattern: "/api/v1/auth/login", Role: route.Public, Summary: "sign a browser in with an API key (an HttpOnly session cookie)",
			Handler: http.HandlerFunc(s.login)},
		{Method: "GET", Pattern: "/api/v1/auth/session", Role: route.Agent, Summary: "who the signed-in browser is, and its CSRF token",
			Handler: http.HandlerFunc(s.whoami)},
		{Method: "POST", Pattern: "/api/v1/auth/logout", Role: route.Agent, Summary: "sign the browser out",
			Handler: http.HandlerFunc(s.logout)},
	}
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	var b LoginRequest
	if be := Decode(r, &b); be != nil {
		route.Error(w, be.Status, be.Problem)
		return
	}
	if len(s.opts.Keys) == 0 {
		route.JSON(w, http.StatusOK, SignedIn{Key: "local", Role: route.Admin.String(), Open: true})
		return
	}
	if b.Key == "" {
		route.Error(w, http.StatusBadRequest, route.Problem{Code: route.CodeMissingField, Field: "key", Message: "key is empty: paste serve.api_key or serve.agent_key"})
		return
	}
	k, ok := s.match(b.Key)
	if !ok {
		s.log.Warn("serve: a sign-in with an unknown API key", "remote", r.RemoteAddr)
		route.Error(w, http.StatusUnauthorized, route.Problem{Code: route.CodeUnauthenticated, Message: MsgKeyInvalid})
		return
	}
	token, ws := s.web.create(k, time.Now())
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, MaxAge: int(SessionLifetime / time.Second)})
	w.Header().Set("Cache-Control", "no-store")
	s.log.Info("serve: a browser signed in", "key", k.Name)
	route.JSON(w, http.StatusOK, SignedIn{Key: k.Name, Role: k.Role.String(), CSRF: ws.csrf})
}

func (s *Server) whoami(w http.ResponseWriter, r *http.Request) {
	c, _ := route.CallerFrom(r.Context())
	out := SignedIn{Key: c.Key, Role: c.Role.String(), Open: len(s.opts.Keys) == 0}
	if token := sessionToken(r); token != "" {
		if ws, ok := s.web.find(token, time.Now()); ok {
			out.CSRF = ws.csrf
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	route.JSON(w, http.StatusOK, out)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if token := sessionToken(r); token != "" {
		s.web.remove(token)
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: -1})
	route.JSON(w, http.StatusOK, map[string]bool{"signed_out": true})
}
