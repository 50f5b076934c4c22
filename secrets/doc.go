// Package secrets keeps the operator's credentials away from the model while
// the agent's tools still use them.
//
// The operator names each secret in config.yaml with where its value comes
// from (an environment variable, a file of mode 0600, the desktop keyring).
// The model only ever sees the placeholder §§secret(NAME) (Agent Zero's
// spelling): it writes the placeholder into a tool's arguments, and the host
// puts the value in at the moment the tool runs, in the request to that tool
// alone, and only for a tool that declares it (ToolSpec.uses_secrets).
//
// Everything else goes through one Masker, which replaces each value and its
// common encodings (JSON-escaped, URL-encoded, base64 in its four alphabets and
// at the three alignments a value can take inside a longer encoded text) by
// the placeholder. The host applies it at its choke points: every request and
// response between the host and a plugin (MaskProto), every model request
// (MaskProvider), every message before it enters the history or the session
// file, every event the observer gets (the terminal's transcript, run --json),
// and every log line (Writer). A text that arrives in pieces (a model's
// streamed reply, a tool's partial output) is masked as a Stream, which holds
// back a tail that may begin a secret's form until the next piece settles it,
// so a value split across two pieces is masked too. The masking is structural: a path out that does
// not pass one of those does not exist in the host.
//
// A value that cannot be masked safely is refused at start, naming the secret:
// one under MinLength characters (it would match ordinary text), a common
// word, or one found in the system prompt's own text.
package secrets
