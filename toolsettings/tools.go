package toolsettings

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/exocortex/exocortex/sandbox"
)

// Duration is a time.Duration written as "10s" in YAML (config.Duration is
// this type), and as nanoseconds in the JSON the host sends.
type Duration time.Duration

// UnmarshalYAML reads "10s", "1m30s" or a number of seconds.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	if v, err := time.ParseDuration(s); err == nil {
		*d = Duration(v)
		return nil
	}
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		*d = Duration(secs * float64(time.Second))
		return nil
	}
	// A TypeError lets the decoder go on to the other keys, so every
	// problem of the file is found at once (config.Inspect names this one too).
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %q is not a duration (write e.g. 10s or 2m)", n.Line, s)}}
}

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// Sandbox configures the OS sandbox every process the agent's tools start runs
// in (code_execution's shells, the data tools' scripts, the operator's
// !commands): writes only beneath the project directory, the session's scratch
// directory and WritePaths; no reading of the secrets; network as set. See
// docs/sandbox.md.
//
//	tools:
//	  sandbox:
//	    write_paths: ["~/.cache/pip", "/srv/data"]
//	    secrets: ["~/.config/exocortex-keys"]
//	    network: off
type Sandbox struct {
	// WritePaths are more directories the sandboxed processes may write beneath
	// (relative to the project directory; ~ is the home directory).
	WritePaths []string `yaml:"write_paths"`
	// Secrets are more files and directories they may not read, beside ~/.ssh,
	// ~/.gnupg, ~/.aws, ~/.netrc, ... (sandbox.DefaultSecrets) and the
	// Exocortex config.yaml, which may hold API keys.
	Secrets []string `yaml:"secrets"`
	// Network is "on" (the default) or "off" (a network namespace with nothing in
	// it: no connection anywhere, localhost included).
	Network string `yaml:"network" allowed:"on,off"`
	// ScratchDir holds the per-session scratch directories (default
	// $TMPDIR/exocortex-scratch); each session may write only its own.
	ScratchDir string `yaml:"scratch_dir"`
	// UnsafeDisable turns the sandbox off: the agent's commands then run with all
	// the operator's rights. The approval mode (even yolo) never does this.
	UnsafeDisable bool `yaml:"UNSAFE_disable_sandbox"`
}

// Confinement is the sandbox as one tool applies it, derived from the
// tools.sandbox section (Confine; never read from the file).
type Confinement struct {
	// Policy is the sandbox policy; the session's own scratch directory is
	// added to its write roots when the session starts.
	Policy sandbox.Policy `json:"policy"`
	// ScratchDir is where the per-session scratch directories are made.
	ScratchDir string `json:"scratch_dir"`
	// Off is tools.sandbox.UNSAFE_disable_sandbox.
	Off bool `json:"off"`
}

// Confine resolves the sandbox settings s for the tools: paths absolute
// (relative ones against project), ~ expanded, the write roots project and
// roots, the secrets the defaults, hidden (e.g. the host's config.yaml) and
// s.Secrets.
func Confine(s Sandbox, project string, hidden []string, roots ...string) Confinement {
	userHome, _ := os.UserHomeDir()
	expand := func(p string) string {
		if p == "~" || strings.HasPrefix(p, "~/") {
			return filepath.Join(userHome, strings.TrimPrefix(p, "~"))
		}
		return Under(project, p)
	}
	scratch := s.ScratchDir
	if scratch == "" {
		scratch = filepath.Join(os.TempDir(), "exocortex-scratch")
	}
	scratch = expand(scratch)
	p := sandbox.Policy{Network: s.Network != "off"}
	for _, d := range append([]string{project}, roots...) {
		if d != "" && !slices.Contains(p.WriteRoots, d) {
			p.WriteRoots = append(p.WriteRoots, d)
		}
	}
	for _, d := range s.WritePaths {
		p.WriteRoots = append(p.WriteRoots, expand(d))
	}
	p.Secrets = append(sandbox.DefaultSecrets(userHome), hidden...)
	for _, f := range s.Secrets {
		p.Secrets = append(p.Secrets, expand(f))
	}
	return Confinement{Policy: p, ScratchDir: scratch, Off: s.UnsafeDisable}
}

// CodeExecution configures code_execution.
type CodeExecution struct {
	// Timeout bounds one call; the command's processes are killed when it passes
	// (default 60s). Keep it below timeouts.tool: the host kills the whole plugin
	// at that deadline, and the tool shortens its own timeout to fit inside it.
	Timeout Duration `yaml:"timeout" json:"timeout" check:"nonnegative"`
	// OutputLimit is how many bytes of output the model sees; longer output is cut
	// to its last OutputLimit bytes, with a note saying so (default 10000).
	OutputLimit int `yaml:"output_limit" json:"output_limit" check:"nonnegative"`
	// WorkDir is where a new session's shell starts (default the project
	// directory).
	WorkDir string `yaml:"work_dir" json:"work_dir"`
	// Shell, Python and Node are the programs behind the runtimes terminal,
	// python and nodejs (default bash, python3, node).
	Shell  string `yaml:"shell" json:"shell"`
	Python string `yaml:"python" json:"python"`
	Node   string `yaml:"node" json:"node"`
	// MaxSessions bounds the live shells of the plugin; starting one more stops
	// the least recently used (default 8).
	MaxSessions int `yaml:"max_sessions" json:"max_sessions" check:"nonnegative"`
	// Confine is the sandbox its shells run in (from tools.sandbox).
	Confine Confinement `yaml:"-" json:"confine"`
}

// Data configures data_analyze and data_visualize.
type Data struct {
	// Python is the interpreter that runs the scripts (default python3).
	Python string `yaml:"python" json:"python"`
	// Timeout bounds one script (default 60s).
	Timeout Duration `yaml:"timeout" json:"timeout" check:"nonnegative"`
	// OutputLimit bounds the standard output returned (default 10000 bytes).
	OutputLimit int `yaml:"output_limit" json:"output_limit" check:"nonnegative"`
	// BaseDir is where relative input and output paths start (default the project
	// directory).
	BaseDir string `yaml:"base_dir" json:"base_dir"`
	// Confine is the sandbox the scripts run in (from tools.sandbox).
	Confine Confinement `yaml:"-" json:"confine"`
}

// WithDefaults fills in code_execution's defaults; a relative work directory
// starts at project.
func (c CodeExecution) WithDefaults(project string) CodeExecution {
	if c.Timeout <= 0 {
		c.Timeout = Duration(60 * time.Second)
	}
	if c.OutputLimit <= 0 {
		c.OutputLimit = 10000
	}
	if c.WorkDir == "" {
		c.WorkDir = project
	}
	c.WorkDir = Under(project, c.WorkDir)
	if c.Shell == "" {
		c.Shell = "bash"
	}
	if c.Python == "" {
		c.Python = "python3"
	}
	if c.Node == "" {
		c.Node = "node"
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = 8
	}
	if c.Confine.ScratchDir == "" {
		// Not derived from a whole tools section (an embedder, a test): the
		// default sandbox around the project and the work directory.
		off := c.Confine.Off
		c.Confine = Confine(Sandbox{}, project, nil, c.WorkDir)
		c.Confine.Off = off
	}
	return c
}

// WithDefaults fills in the data tools' defaults.
func (d Data) WithDefaults(project string) Data {
	if d.Python == "" {
		d.Python = "python3"
	}
	if d.Timeout <= 0 {
		d.Timeout = Duration(60 * time.Second)
	}
	if d.OutputLimit <= 0 {
		d.OutputLimit = 10000
	}
	if d.BaseDir == "" {
		d.BaseDir = project
	}
	d.BaseDir = Under(project, d.BaseDir)
	if d.Confine.ScratchDir == "" {
		off := d.Confine.Off
		d.Confine = Confine(Sandbox{}, project, nil, d.BaseDir)
		d.Confine.Off = off
	}
	return d
}
