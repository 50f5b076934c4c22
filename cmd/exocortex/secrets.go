package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/secrets"
)

func newSecretsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secrets",
		Short: "The secrets the agent's tools may use and the model never sees",
		Long: `Secrets are credentials named in $EXOCORTEX_HOME/config.yaml under secrets:,
each with where its value comes from:

  secrets:
    DEPLOY_TOKEN: {env: DEPLOY_TOKEN}              # an environment variable
    DB_PASSWORD: {file: ~/.config/exocortex/db}    # a file of mode 0600
    GITHUB: {keyring: github}                      # the desktop keyring

The model sees only the placeholder §§secret(NAME) and writes it into tool
arguments; the host puts the value in when a tool that declares it runs (the
shell and code execution tools take any), and masks every value, and its
base64, URL and JSON encodings, out of everything the model, the history, the
session file, the logs and run --json get. See docs/secrets.md.`,
	}
	cmd.AddCommand(newSecretsListCmd())
	return cmd
}

// secretRow is one secret as secrets list shows it: never its value.
type secretRow struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	Kind   string `json:"kind"`
	// OK says the value was read and can be masked; Error says why not.
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

func newSecretsListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the configured secrets: names and sources, never values",
		Long: `list shows each secret of config.yaml with its source and whether its value can
be read and masked (a file must be mode 0600; a value must have 8 characters or
more and not be a common word). Values are never shown.`,
		Example: `  exocortex secrets list
  exocortex secrets list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			cfg, err := config.Load(home)
			if err != nil {
				return err
			}
			rows := secretRows(cfg.Secrets)
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					Secrets []secretRow `json:"secrets"`
				}{rows})
			}
			if len(rows) == 0 {
				fmt.Fprintln(out, "no secrets configured (add them under secrets: in "+filepath.Join(home, config.FileName)+")")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSOURCE\tSTATE")
			for _, r := range rows {
				state := "ok"
				if !r.OK {
					state = r.Error
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, r.Source, state)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "write JSON")
	return cmd
}

// secretRows reads each secret on its own, so one that fails does not hide
// the state of the others.
func secretRows(cfg secrets.Config) []secretRow {
	rows := []secretRow{}
	opts := secretLoadOptions()
	all, _ := secrets.Load(cfg, opts)
	for _, name := range slices.Sorted(maps.Keys(cfg)) {
		src := cfg[name]
		r := secretRow{Name: name, Source: src.String(), Kind: src.Kind(), OK: true}
		if all == nil {
			if _, err := secrets.Load(secrets.Config{name: src}, opts); err != nil {
				r.OK, r.Error = false, err.Error()
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// secretLoadOptions read values from this process's environment, the user's
// home for ~, and the desktop keyring.
func secretLoadOptions() secrets.LoadOptions {
	home, _ := os.UserHomeDir()
	return secrets.LoadOptions{Home: home, Keyring: secrets.SystemKeyring}
}

// loadSecrets reads the configured secrets for an agent session and points
// the log's masking at them. A secret that cannot be read or masked stops
// the start, naming it.
func (a *app) loadSecrets() (*secrets.Store, error) {
	if a.secretsLoaded {
		return a.secrets, nil
	}
	opts := secretLoadOptions()
	// config.yaml's secret settings (web_search's API key): masked as the
	// secrets are, and handed only to a plugin that declares one.
	opts.Settings, opts.SettingsEnv = a.cfg.SecretSettings(), a.cfg.SecretSettingsEnv()
	s, err := secrets.Load(a.cfg.Secrets, opts)
	if err != nil {
		return nil, fmt.Errorf("the secrets in %s: %w", filepath.Join(a.home, config.FileName), err)
	}
	a.secrets, a.secretsLoaded = s, true
	if a.logMask != nil {
		a.logMask.SetMasker(s.Masker())
	}
	return s, nil
}
