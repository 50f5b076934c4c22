// Package datatools provides ECHOMEN's data tools: data_analyze runs a Python
// analysis script on a data file and returns what it prints; data_visualize runs
// a plotting script and returns "Visualization saved to: PATH" once the image is
// there.
//
// # How a script runs
//
// The script is written to a fresh scratch directory, which is also its working
// directory, and run as
//
//	python3 script.py INPUT_FILE_PATH [OUTPUT_IMAGE_PATH]
//
// with the same paths, absolute, in the environment variables INPUT_FILE_PATH and
// OUTPUT_IMAGE_PATH, and MPLBACKEND=Agg so that matplotlib draws without a
// display. Relative paths given to the tools start at tools.data.base_dir (the
// project directory by default). The script runs in its own process group; when
// tools.data.timeout passes (or the host's deadline for the call nears) the whole
// group is killed. Standard output is returned up to tools.data.output_limit bytes
// (the last ones, after a note saying how much there was); standard error is used
// for the error message when the script fails.
//
// A script that imports a module Python lacks fails with ModuleNotFoundError; the
// tool turns that into an error naming the module and how to install it (e.g.
// `apt-get install python3-pandas` or `pip install pandas`). A missing python3 is
// reported the same way.
//
// The script runs in the sandbox (package sandbox, docs/sandbox.md) like
// code_execution's shells: it writes only beneath the project directory, its
// scratch directory (so an output image outside them cannot be written), and
// everything it starts dies with it.
package datatools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/exocortex/exocortex/extensions/internal/toolargs"
	"github.com/exocortex/exocortex/extensions/internal/toolstream"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sandbox"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/toolsettings"
)

// Tool names.
const (
	AnalyzeName   = "data_analyze"
	VisualizeName = "data_visualize"
)

// Tools are the data tools.
type Tools struct {
	load func() (toolsettings.Data, error)
	// probe says, once per process, whether the sandbox works here.
	probe func() sandbox.Status
	// env is the environment the scripts start from (nil: this process's).
	env []string
}

// New returns the data tools; load gives their configuration on every call (the
// built-in plugins pass a once-loaded config).
func New(load func() (toolsettings.Data, error)) *Tools {
	return &Tools{load: load, probe: sync.OnceValue(func() sandbox.Status { return sandbox.Probe("") })}
}

// WithEnv makes the scripts start from env (KEY=VALUE lines) instead of this
// process's environment, and the sandbox's probe too: a plugin served inside
// the host passes the environment its process would have had (the host's
// less the secrets' variables). It returns d.
func (d *Tools) WithEnv(env []string) *Tools {
	d.env = slices.Clip(env)
	d.probe = sync.OnceValue(func() sandbox.Status { return sandbox.ProbeEnv("", env) })
	return d
}

// Fixed is a load function returning cfg.
func Fixed(cfg toolsettings.Data) func() (toolsettings.Data, error) {
	return func() (toolsettings.Data, error) { return cfg, nil }
}

type analyzeArgs struct {
	Input  toolargs.Text `json:"input_file_path"`
	Script toolargs.Text `json:"analysis_script"`
}

type visualizeArgs struct {
	Input  toolargs.Text `json:"input_file_path"`
	Script toolargs.Text `json:"visualization_script"`
	Output toolargs.Text `json:"output_image_path"`
}

// Analyze is data_analyze.
func (d *Tools) Analyze() sdk.Tool {
	return sdk.Tool{
		Name:        AnalyzeName,
		Description: "Run a Python script that reads a data file (CSV, JSON, ...) and prints the result of an analysis; returns what it prints.",
		Parameters: `{"type":"object","properties":{` +
			`"input_file_path":{"type":"string","description":"The data file; the script gets its absolute path as sys.argv[1] and in INPUT_FILE_PATH."},` +
			`"analysis_script":{"type":"string","description":"The full Python script. It must read the input file and print the result to standard output."}},` +
			`"required":["input_file_path","analysis_script"]}`,
		PromptFile: "agent.system.tool.data_analyze.md",
		Run: func(ctx context.Context, c *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
			var a analyzeArgs
			if err := toolargs.Decode(AnalyzeName, raw, &a); err != nil {
				return nil, err
			}
			cfg, err := d.config(AnalyzeName)
			if err != nil {
				return nil, err
			}
			out, err := d.runScript(ctx, c, AnalyzeName, cfg, string(a.Script), string(a.Input), "")
			if err != nil {
				return &exocortexv1.ToolResult{Content: out}, err
			}
			if strings.TrimSpace(out) == "" {
				return nil, fmt.Errorf("%s: the script ran but printed nothing: print the result (e.g. print(df.describe())) to standard output", AnalyzeName)
			}
			return &exocortexv1.ToolResult{Content: out}, nil
		},
	}
}

// Visualize is data_visualize.
func (d *Tools) Visualize() sdk.Tool {
	return sdk.Tool{
		Name:        VisualizeName,
		Description: "Run a Python script that reads a data file and saves a chart image (e.g. with matplotlib); returns the image's path.",
		Parameters: `{"type":"object","properties":{` +
			`"input_file_path":{"type":"string","description":"The data file; the script gets its absolute path as sys.argv[1] and in INPUT_FILE_PATH."},` +
			`"visualization_script":{"type":"string","description":"The full Python script. It must read the input file and save the image to the output path."},` +
			`"output_image_path":{"type":"string","description":"Where the image goes, e.g. charts/sales.png; the script gets its absolute path as sys.argv[2] and in OUTPUT_IMAGE_PATH."}},` +
			`"required":["input_file_path","visualization_script","output_image_path"]}`,
		PromptFile: "agent.system.tool.data_visualize.md",
		Run: func(ctx context.Context, c *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
			var a visualizeArgs
			if err := toolargs.Decode(VisualizeName, raw, &a); err != nil {
				return nil, err
			}
			cfg, err := d.config(VisualizeName)
			if err != nil {
				return nil, err
			}
			if strings.TrimSpace(string(a.Output)) == "" {
				return nil, fmt.Errorf(`%s: "output_image_path" is empty: say where the image goes (e.g. "charts/plot.png")`, VisualizeName)
			}
			output := absUnder(cfg.BaseDir, string(a.Output))
			if err := os.MkdirAll(filepath.Dir(output), 0o755); err != nil {
				return nil, fmt.Errorf("%s: creating the directory of %s: %w", VisualizeName, output, err)
			}
			before, _ := os.Stat(output)
			out, err := d.runScript(ctx, c, VisualizeName, cfg, string(a.Script), string(a.Input), output)
			if err != nil {
				return &exocortexv1.ToolResult{Content: out}, err
			}
			after, serr := os.Stat(output)
			switch {
			case serr != nil:
				return &exocortexv1.ToolResult{Content: out}, fmt.Errorf("%s: the script finished but %s does not exist: save the figure there (e.g. plt.savefig(sys.argv[2]))", VisualizeName, output)
			case after.IsDir():
				return nil, fmt.Errorf("%s: %s is a directory; give a file name such as chart.png", VisualizeName, output)
			case after.Size() == 0:
				return &exocortexv1.ToolResult{Content: out}, fmt.Errorf("%s: the script left %s empty", VisualizeName, output)
			case before != nil && before.ModTime().Equal(after.ModTime()) && before.Size() == after.Size():
				return &exocortexv1.ToolResult{Content: out}, fmt.Errorf("%s: the script finished but did not write %s (the file there is unchanged): save the figure to sys.argv[2]", VisualizeName, output)
			}
			return &exocortexv1.ToolResult{Content: "Visualization saved to: " + output}, nil
		},
	}
}

func (d *Tools) config(tool string) (toolsettings.Data, error) {
	cfg, err := d.load()
	if err != nil {
		return cfg, fmt.Errorf("%s: loading the configuration: %w", tool, err)
	}
	return cfg.WithDefaults(cfg.BaseDir), nil
}

// absUnder makes p absolute, starting at base when it is relative.
func absUnder(base, p string) string {
	p = strings.TrimSpace(p)
	if !filepath.IsAbs(p) && base != "" {
		p = filepath.Join(base, p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

// runScript runs script with python on input (and output for a plot), returning
// its standard output, cut to the limit. The error explains a failure. While
// the script runs, what it prints (standard output and error) is reported to
// the host as it comes, through c (package toolstream: tool_output_update).
func (d *Tools) runScript(ctx context.Context, c *sdk.Call, tool string, cfg toolsettings.Data, script, input, output string) (string, error) {
	probe := d.probe
	if strings.TrimSpace(script) == "" {
		return "", fmt.Errorf("%s: the script is empty: give the full Python script", tool)
	}
	if strings.TrimSpace(input) == "" {
		return "", fmt.Errorf(`%s: "input_file_path" is empty: name the data file`, tool)
	}
	python, err := exec.LookPath(cfg.Python)
	if err != nil {
		return "", fmt.Errorf("%s: %s is not installed or not on PATH: install Python 3 (e.g. `apt-get install python3`) or set tools.data.python in config.yaml", tool, cfg.Python)
	}
	in := absUnder(cfg.BaseDir, input)
	if _, err := os.Stat(in); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%s: the input file %s does not exist (relative paths start at %s)", tool, in, cfg.BaseDir)
		}
		return "", fmt.Errorf("%s: the input file: %w", tool, err)
	}
	if err := os.MkdirAll(cfg.Confine.ScratchDir, 0o700); err != nil {
		return "", fmt.Errorf("%s: creating the scratch directory %s: %w (set tools.sandbox.scratch_dir)", tool, cfg.Confine.ScratchDir, err)
	}
	scratch, err := os.MkdirTemp(cfg.Confine.ScratchDir, "data-")
	if err != nil {
		return "", fmt.Errorf("%s: creating a scratch directory: %w", tool, err)
	}
	defer os.RemoveAll(scratch)
	file := filepath.Join(scratch, "script.py")
	if err := os.WriteFile(file, []byte(script), 0o600); err != nil {
		return "", fmt.Errorf("%s: writing the script: %w", tool, err)
	}

	limit := time.Duration(cfg.Timeout)
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		limit = min(limit, left-min(left/10, 2*time.Second))
	}
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	argv := []string{file, in}
	if output != "" {
		argv = append(argv, output)
	}
	cmd := exec.CommandContext(rctx, python, argv...)
	cmd.Dir = scratch
	env := d.env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(slices.Clip(env), "INPUT_FILE_PATH="+in, "OUTPUT_IMAGE_PATH="+output, "MPLBACKEND=Agg",
		"PYTHONUNBUFFERED=1", "PYTHONDONTWRITEBYTECODE=1", "TMPDIR="+scratch, "MPLCONFIGDIR="+scratch)
	cmd.Stdin = nil
	stdout := &capped{limit: cfg.OutputLimit}
	stderr := &capped{limit: 4000}
	progress := toolstream.New(ctx, toolstream.Every, func(ctx context.Context, delta string) error {
		_, err := c.ReportOutput(ctx, delta)
		return err
	})
	// After the script has exited and its output is read (cmd.Run returns),
	// so every piece is reported before the result.
	defer progress.Close()
	cmd.Stdout, cmd.Stderr = io.MultiWriter(stdout, progress), io.MultiWriter(stderr, progress)
	inGroup(cmd)
	cmd.WaitDelay = time.Second
	confined := false
	if !cfg.Confine.Off {
		// The script writes only in the project (or base) directory and its
		// scratch directory. Where the sandbox is missing it runs unconfined:
		// the action boundary asked the operator for it (docs/sandbox.md).
		if st := probe(); st.Available {
			p := cfg.Confine.Policy
			p.WriteRoots = append(append([]string(nil), p.WriteRoots...), scratch)
			if err := sandbox.Wrap(cmd, p, ""); err != nil {
				return "", fmt.Errorf("%s: %w", tool, err)
			}
			confined = true
		}
	}
	if !confined {
		// Unconfined, a reaper keeps every process the script starts beneath it
		// (a setsid child included) and kills them all when the script ends or
		// its time is up, as the sandbox's PID namespace does. Linux only:
		// elsewhere the process group is all there is.
		if life, err := sandbox.Reap(cmd, ""); err == nil {
			defer life.Close()
			reaperOnly(cmd)
		}
	}
	err = cmd.Run()
	out := stdout.text()
	if err == nil {
		return out, nil
	}
	if rctx.Err() != nil {
		why := fmt.Sprintf("did not finish within %s", limit)
		if ctx.Err() != nil {
			why = "was cancelled"
		}
		return out, fmt.Errorf("%s: the script %s and was killed with every process it started%s", tool, why, tail(stderr.text()))
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return out, fmt.Errorf("%s: running %s: %w", tool, python, err)
	}
	if mod := missingModule(stderr.text()); mod != "" {
		apt, pip := packageFor(mod)
		return out, fmt.Errorf("%s: the script imports %s, which is not installed for %s. Install it (`apt-get install %s`, or `pip install %s`), or write the script with the standard library only (csv, json, statistics)",
			tool, mod, python, apt, pip)
	}
	return out, fmt.Errorf("%s: the script failed (%v)%s", tool, ee, tail(stderr.text()))
}

// tail formats the end of standard error for an error message.
func tail(stderr string) string {
	stderr = strings.TrimSpace(stderr)
	if stderr == "" {
		return ""
	}
	return ":\n" + stderr
}

var moduleRE = regexp.MustCompile(`ModuleNotFoundError: No module named '([^']+)'`)

// missingModule returns the top-level module a ModuleNotFoundError names.
func missingModule(stderr string) string {
	m := moduleRE.FindStringSubmatch(stderr)
	if m == nil {
		return ""
	}
	top, _, _ := strings.Cut(m[1], ".")
	return top
}

// packageFor names the Debian package and the pip package of a module.
func packageFor(mod string) (apt, pip string) {
	known := map[string][2]string{
		"sklearn":  {"python3-sklearn", "scikit-learn"},
		"yaml":     {"python3-yaml", "pyyaml"},
		"PIL":      {"python3-pil", "pillow"},
		"bs4":      {"python3-bs4", "beautifulsoup4"},
		"cv2":      {"python3-opencv", "opencv-python"},
		"dateutil": {"python3-dateutil", "python-dateutil"},
	}
	if k, ok := known[mod]; ok {
		return k[0], k[1]
	}
	return "python3-" + strings.ToLower(mod), mod
}

// capped keeps the last limit bytes written and counts them all.
type capped struct {
	limit int
	buf   []byte
	total int64
}

func (c *capped) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	c.buf = append(c.buf, p...)
	if len(c.buf) > 2*c.limit+4096 {
		c.buf = append(c.buf[:0], c.buf[len(c.buf)-c.limit:]...)
	}
	return len(p), nil
}

// text is the kept output, with a note when some was cut.
func (c *capped) text() string {
	b := c.buf
	if len(b) <= c.limit && c.total == int64(len(b)) {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	if len(b) > c.limit {
		b = b[len(b)-c.limit:]
	}
	for len(b) > 0 && b[0]&0xC0 == 0x80 {
		b = b[1:]
	}
	return fmt.Sprintf("[output truncated: %s bytes, showing the last %s]\n%s", commas(c.total), commas(int64(c.limit)),
		strings.ToValidUTF8(string(bytes.TrimLeft(b, "\n")), "\uFFFD"))
}

// commas writes n with thousands separators.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
