package secrets

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// Placeholder is what the model sees and writes for the secret name.
func Placeholder(name string) string { return "§§secret(" + name + ")" }

// placeholderRE finds §§secret(NAME) placeholders.
var placeholderRE = regexp.MustCompile(`§§secret\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// AnyName in a tool's uses_secrets lets it receive every secret (the shell,
// code execution and HTTP tools).
const AnyName = "*"

// UnknownError is a placeholder naming no configured secret. It names the
// known secrets so the model can correct the call, never a value.
type UnknownError struct {
	Name  string
	Known []string
}

func (e *UnknownError) Error() string {
	known := "none are configured (config.yaml secrets:)"
	if len(e.Known) > 0 {
		known = "the known secrets are " + strings.Join(e.Known, ", ")
	}
	return Placeholder(e.Name) + " names no secret: " + known
}

// UndeclaredError is a placeholder for a secret the tool did not declare in
// its uses_secrets: the tool is refused the value.
type UndeclaredError struct {
	Name, Tool string
	Declared   []string
}

func (e *UndeclaredError) Error() string {
	return "the tool " + e.Tool + " may not receive " + Placeholder(e.Name) + ": it declares uses_secrets " + "[" + strings.Join(e.Declared, ", ") + "]"
}

// Placeholders lists the secret names text refers to, in order of appearance.
func Placeholders(text string) []string {
	if !strings.Contains(text, "§§secret(") {
		return nil
	}
	var names []string
	for _, m := range placeholderRE.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	return names
}

// SubstituteJSON puts the values of the secrets named by placeholders in a
// tool's JSON arguments, JSON-escaped so the arguments stay valid. tool and
// declared are the tool's name and its uses_secrets. A tool that declares
// nothing gets the arguments back unchanged (it sees placeholders); a name no
// secret has is an *UnknownError, and a name the tool did not declare an
// *UndeclaredError. changed reports whether a value went in.
func (s *Store) SubstituteJSON(args, tool string, declared []string) (out string, changed bool, err error) {
	names := Placeholders(args)
	if len(names) == 0 {
		return args, false, nil
	}
	for _, n := range names {
		if _, ok := s.values[n]; s == nil || !ok {
			return "", false, &UnknownError{Name: n, Known: s.Names()}
		}
	}
	if len(declared) == 0 {
		return args, false, nil
	}
	for _, n := range names {
		if !slices.Contains(declared, AnyName) && !slices.Contains(declared, n) {
			return "", false, &UndeclaredError{Name: n, Tool: tool, Declared: declared}
		}
	}
	out = placeholderRE.ReplaceAllStringFunc(args, func(p string) string {
		b, _ := json.Marshal(s.values[placeholderRE.FindStringSubmatch(p)[1]])
		return string(b[1 : len(b)-1])
	})
	return out, true, nil
}

// Substitute puts the values of the secrets named by placeholders in text
// (a header's or an environment variable's value of an MCP server's
// configuration), as they are; a name no secret has is an *UnknownError.
func (s *Store) Substitute(text string) (string, error) {
	names := Placeholders(text)
	for _, n := range names {
		if _, ok := s.values[n]; s == nil || !ok {
			return "", &UnknownError{Name: n, Known: s.Names()}
		}
	}
	if len(names) == 0 {
		return text, nil
	}
	return placeholderRE.ReplaceAllStringFunc(text, func(p string) string {
		return s.values[placeholderRE.FindStringSubmatch(p)[1]]
	}), nil
}
