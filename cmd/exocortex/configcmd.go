package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/config"
)

// configFlags are the agent flags that override a configuration key, so
// `exocortex config --model X` shows what `exocortex --model X` would use.
var configFlags = []struct{ flag, key string }{
	{"model", "model"}, {"provider", "provider"}, {"approval", "approval"},
	{"num-ctx", "num_ctx"}, {"max-iterations", "max_iterations"},
}

func newConfigCmd() *cobra.Command {
	var (
		f      agentFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "config",
		Short: "The effective configuration and where each value came from; check it; list every key",
		Long: `config prints every setting's effective value and where it came from: the
file with its line ($EXOCORTEX_HOME/config.yaml, default ~/.exocortex/config.yaml),
an environment variable, a flag (the same flags as a session: --model,
--provider, --approval, --num-ctx, --max-iterations) or the default. A secret is
shown as "(set)".

  config check   every problem of the file and the environment at once, each with
                 its file and line (or variable), key and a "did you mean"
  config keys    every key with its type, default, rule, environment variable
                 and meaning (from the declarations in the config package)

The file is YAML indented with spaces. Durations are written 10s, 2m or 1h30m;
every duration and count follows its key's rule (config keys says which).`,
		Example: `  exocortex config
  exocortex config --model qwen3:14b --json
  exocortex config check
  exocortex config keys | grep timeout`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, ps, err := inspectConfig()
			if err != nil {
				return err
			}
			a := &app{cfg: l.Config}
			if err := f.apply(a); err != nil {
				return err
			}
			l.Config = a.cfg
			for _, c := range configFlags {
				if cmd.Flags().Changed(c.flag) {
					l.SetFlag(c.key, "--"+c.flag)
				}
			}
			settings := l.Settings(cwd())
			if asJSON {
				if err := printJSON(cmd.OutOrStdout(), struct {
					File     string           `json:"file"`
					Settings []config.Setting `json:"settings"`
					Problems []config.Problem `json:"problems"`
				}{l.Path, settings, nonNil(ps)}); err != nil {
					return err
				}
			} else {
				printSettings(cmd.OutOrStdout(), settings)
			}
			return problemsExit(cmd.ErrOrStderr(), ps, asJSON)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "show the configuration with this model (as the flag of a session would set it)")
	fl.StringVar(&f.provider, "provider", "", "show the configuration with this provider")
	fl.StringVar(&f.approval, "approval", "", "show the configuration with this approval mode")
	fl.IntVar(&f.numCtx, "num-ctx", 0, "show the configuration with this context window")
	fl.IntVar(&f.maxIterations, "max-iterations", 0, "show the configuration with this iteration limit")
	fl.BoolVar(&asJSON, "json", false, "write JSON: the file, every setting with its origin, and the problems")
	cmd.AddCommand(newConfigCheckCmd(), newConfigKeysCmd())
	return cmd
}

func newConfigCheckCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Every problem of config.yaml and the environment at once (exit 1 when there is one)",
		Long: `check reads config.yaml and the environment variables as a session would and
reports every problem at once, each with the file and line (or the variable),
the key, what is wrong and, for a misspelled key or value, the one probably
meant. It exits 1 when there is a problem, 0 when there is none.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, ps, err := inspectConfig()
			if err != nil {
				return err
			}
			if asJSON {
				if err := printJSON(cmd.OutOrStdout(), struct {
					File     string           `json:"file"`
					OK       bool             `json:"ok"`
					Problems []config.Problem `json:"problems"`
				}{l.Path, len(ps) == 0, nonNil(ps)}); err != nil {
					return err
				}
			} else if len(ps) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: no problems\n", describeFile(l.Path))
			}
			return problemsExit(cmd.ErrOrStderr(), ps, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "write JSON: the file, ok, and the problems")
	return cmd
}

func newConfigKeysCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Every configuration key with its type, default, rule and meaning",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			keys := config.Keys()
			if asJSON {
				return printJSON(cmd.OutOrStdout(), keys)
			}
			w := cmd.OutOrStdout()
			for _, k := range keys {
				fmt.Fprintf(w, "%s (%s)", k.Key, k.Type)
				if k.Default != "" {
					fmt.Fprintf(w, ", default %s", k.Default)
				}
				if k.Env != "" {
					fmt.Fprintf(w, ", $%s", k.Env)
				}
				fmt.Fprintln(w)
				if k.Rule != "" {
					fmt.Fprintf(w, "    %s\n", k.Rule)
				}
				if len(k.Allowed) > 0 {
					fmt.Fprintf(w, "    one of: %s\n", strings.Join(k.Allowed, ", "))
				}
				fmt.Fprintf(w, "    %s\n", k.Doc)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "write JSON: a list of {key, type, default, env, rule, allowed, doc, secret}")
	return cmd
}

// inspectConfig reads the configuration as a session would, without
// refusing it: the problems are returned for the command to show.
func inspectConfig() (*config.Loaded, config.Problems, error) {
	home, err := config.Home()
	if err != nil {
		return nil, nil, err
	}
	l, ps := config.Inspect(home, os.Getenv)
	return l, ps, nil
}

// problemsExit prints the problems (unless they went out as JSON) and
// makes the command exit 1 when there are any.
func problemsExit(w io.Writer, ps config.Problems, asJSON bool) error {
	if len(ps) == 0 {
		return nil
	}
	if !asJSON {
		for _, p := range ps {
			fmt.Fprintln(w, p.Error())
		}
	}
	return &exitError{1, fmt.Errorf("%d configuration problem(s); `exocortex config keys` lists every key", len(ps))}
}

func printSettings(w io.Writer, settings []config.Setting) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tFROM")
	for _, s := range settings {
		v := s.Value
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Key, v, s.Origin)
	}
	tw.Flush()
}

func describeFile(path string) string {
	if _, err := os.Stat(path); err != nil {
		return path + " (no file: the defaults and the environment)"
	}
	return path
}

func nonNil(ps config.Problems) []config.Problem {
	if ps == nil {
		return []config.Problem{}
	}
	return ps
}
