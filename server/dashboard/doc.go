// Package dashboard is the operator's web dashboard that `exocortex serve`
// answers at /: one page (assets/index.html) and its ES modules, compiled
// into the binary with embed, so it works offline, with no CDN and no Node
// at run time. Each asset is gzipped once when the server starts and sent
// compressed to a browser that accepts it, with an ETag.
//
// # The contract between the shell and its views
//
// The shell (assets/app.js) routes on the URL's hash: #/NAME/ARG/... loads
// the ES module assets/views/NAME.js and calls its export
//
//	export function render(root, ctx) { ...; return cleanup /* optional */ }
//
// with root an empty element the view owns until the route changes (then the
// returned cleanup runs, and every ctx.onCleanup function) and ctx:
//
//	ctx.api(path, opts)      fetch with the sign-in cookie and the CSRF header;
//	                         opts.method, opts.body (an object is sent as JSON,
//	                         FormData as is); resolves to the JSON answer (null
//	                         for none) and throws an ApiError (status, code,
//	                         message: the server's own words) otherwise
//	ctx.sse(path, onEvent, opts)
//	                         server-sent events over fetch (so POST, a body and
//	                         the CSRF header work): onEvent({event, data, id}),
//	                         data parsed as JSON when it is; a GET stream
//	                         reconnects with Last-Event-ID; returns {close()}
//	ctx.args                 the route's parts after NAME (#/memory/ID → [ID])
//	ctx.role, ctx.key        the signed-in key's role ("admin" or "agent") and name
//	ctx.admin                ctx.role === "admin"
//	ctx.navigate(hash)       go to another route
//	ctx.h(tag, attrs, ...children)  a DOM element (text children are escaped)
//	ctx.md(text)             Markdown as a sanitised DocumentFragment, code highlighted
//	ctx.toast(text, kind)    a passing message (kind "error" for a failure)
//	ctx.css(path)            load the stylesheet assets/PATH once (views/NAME.css)
//	ctx.onCleanup(fn)        run fn when the view is left
//
// Views never build HTML from strings holding data (ctx.h and ctx.md escape);
// the page's Content-Security-Policy allows scripts from the page's own origin
// only. Views whose route needs the admin role are listed in app.js's nav with
// admin: true and hidden from an agent key (the server refuses their writes
// anyway).
//
// # Signing in
//
// The sign-in form posts one API key to POST /api/v1/auth/login (the server
// package's web sessions): the answer sets an HttpOnly, SameSite=Strict
// cookie that the server's authentication accepts for every /api/v1 route,
// and returns the CSRF token the shell sends as X-CSRF-Token on every
// state-changing request. With no key configured (loopback only) every
// local caller is the admin "local" and there is nothing to sign in to.
package dashboard
