package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/server/route"
)

// browser is an HTTP client with a cookie jar, as a browser signs in.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
	csrf string
}

func newBrowser(t *testing.T, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: base, c: &http.Client{Jar: jar}}
}

func (b *browser) do(method, path, body string, csrf bool) (int, map[string]any, *http.Response) {
	b.t.Helper()
	req, err := http.NewRequest(method, b.base+path, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if csrf {
		req.Header.Set(CSRFHeader, b.csrf)
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(res.Body)
	_ = json.Unmarshal(buf.Bytes(), &out)
	return res.StatusCode, out, res
}

func TestWebSessions(t *testing.T) {
	write := route.Route{Method: "POST", Pattern: "/write", Role: route.Admin, Summary: "w", Handler: whoami}
	read := route.Route{Method: "GET", Pattern: "/read", Role: route.Agent, Summary: "r", Handler: whoami}
	s, err := New(t.Context(), Options{Addr: "127.0.0.1:0", Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Mount(append(s.SignInRoutes(), write, read)...); err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(t.Context()) }()

	for _, tc := range []struct {
		name, key string
		login     int
		role      string
		write     int // POST /write with the CSRF token
	}{
		{name: "admin key", key: "admin-secret", login: 200, role: "admin", write: 200},
		{name: "agent key", key: "agent-secret", login: 200, role: "agent", write: 403},
		{name: "wrong key", key: "nope", login: 401},
		{name: "empty key", key: "", login: 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBrowser(t, s.URL())
			body, _ := json.Marshal(LoginRequest{Key: tc.key})
			status, out, res := b.do("POST", "/api/v1/auth/login", string(body), false)
			if status != tc.login {
				t.Fatalf("login: %d %v, want %d", status, out, tc.login)
			}
			if status != 200 {
				if st, _, _ := b.do("GET", "/read", "", false); st != 401 {
					t.Errorf("a refused sign-in still reads: %d", st)
				}
				return
			}
			var cookie *http.Cookie
			for _, c := range res.Cookies() {
				if c.Name == SessionCookie {
					cookie = c
				}
			}
			if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Value == tc.key || strings.Contains(cookie.Value, tc.key) {
				t.Fatalf("the session cookie: %+v", cookie)
			}
			if out["role"] != tc.role || out["csrf"] == "" {
				t.Fatalf("login answer %v", out)
			}
			b.csrf = out["csrf"].(string)
			if st, who, _ := b.do("GET", "/read", "", false); st != 200 || who["role"] != tc.role {
				t.Errorf("reading with the cookie: %d %v", st, who)
			}
			if st, who, _ := b.do("GET", "/api/v1/auth/session", "", false); st != 200 || who["csrf"] != b.csrf {
				t.Errorf("the session: %d %v", st, who)
			}
			// A state-changing request without the CSRF token is refused, whatever the role.
			if st, p, _ := b.do("POST", "/write", "{}", false); st != 403 || !strings.Contains(p["error"].(map[string]any)["message"].(string), CSRFHeader) {
				t.Errorf("a write without %s: %d %v", CSRFHeader, st, p)
			}
			b.csrf = "wrong"
			if st, _, _ := b.do("POST", "/write", "{}", true); st != 403 {
				t.Errorf("a write with a wrong token: %d", st)
			}
			b.csrf = out["csrf"].(string)
			if st, _, _ := b.do("POST", "/write", "{}", true); st != tc.write {
				t.Errorf("a write with the token: %d, want %d", st, tc.write)
			}
			if st, _, _ := b.do("POST", "/api/v1/auth/logout", "", true); st != 200 {
				t.Fatalf("logout: %d", st)
			}
			// Signed out: the old cookie is refused even when sent again by hand.
			req, _ := http.NewRequest("GET", s.URL()+"/read", nil)
			req.AddCookie(&http.Cookie{Name: SessionCookie, Value: cookie.Value})
			res2, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res2.Body.Close()
			if res2.StatusCode != 401 {
				t.Errorf("the signed-out cookie reads: %d", res2.StatusCode)
			}
		})
	}
}

func TestWebSessionsOpenServer(t *testing.T) {
	s, err := New(t.Context(), Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Mount(s.SignInRoutes()...); err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(t.Context()) }()
	b := newBrowser(t, s.URL())
	st, out, _ := b.do("POST", "/api/v1/auth/login", `{"key": ""}`, false)
	if st != 200 || out["open"] != true || out["role"] != "admin" {
		t.Fatalf("login with no key configured: %d %v", st, out)
	}
	if st, out, _ := b.do("GET", "/api/v1/auth/session", "", false); st != 200 || out["key"] != "local" {
		t.Fatalf("the session with no key configured: %d %v", st, out)
	}
}
