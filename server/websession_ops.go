package server

import "github.com/exocortex/exocortex/server/openapi"

// SignInOps describes SignInRoutes for the OpenAPI document.
func SignInOps() []openapi.Op {
	return []openapi.Op{
		{Method: "POST", Pattern: "/api/v1/auth/login", Body: LoginRequest{}, Reply: SignedIn{},
			Description: "Sets the HttpOnly, SameSite=Strict cookie " + SessionCookie + ", which then stands for the key; send csrf as " + CSRFHeader + " on every state-changing request. 401 for a key that matches none."},
		{Method: "GET", Pattern: "/api/v1/auth/session", Reply: SignedIn{}, Description: "401 when the browser is not signed in (or its session ended)."},
		{Method: "POST", Pattern: "/api/v1/auth/logout", Reply: map[string]bool{}, Description: "Ends the web session: its cookie is refused from now on."},
	}
}
