package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
)

const trustedKey = "trusted_projects"

func newTrustCmd() *cobra.Command {
	var list, revoke, asJSON bool
	cmd := &cobra.Command{
		Use:   "trust [DIR]",
		Short: "Let a project's own plugins (.exocortex/plugins) and prompt overrides (.exocortex/prompts) load",
		Long: `Plugins run with your rights. Exocortex loads the plugins in your own plugin
directory ($EXOCORTEX_HOME/plugins) and in the directories you configure, but a
project's plugins (.exocortex/plugins under the directory you start Exocortex in)
only once you have trusted that project: opening a cloned repository must not run
its code. The same holds for its prompt overrides (.exocortex/prompts), which
could rewrite the system prompt and the action boundary's messages: they load
only in a trusted project. Until then the session says which plugins it skipped
and how to trust the project.

trust records DIR (default: the current directory) under trusted_projects in
$EXOCORTEX_HOME/config.yaml, keeping the file's other settings and comments.
Trusting a directory trusts the projects under it too. It takes effect for the
next session. Review the plugins first: trust lists the ones it would let load.`,
		Example: `  exocortex trust                  # the current directory
  exocortex trust ~/src/myproject
  exocortex trust --list
  exocortex trust --revoke ~/src/myproject`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			cfg, err := config.Load(home)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if list {
				if len(args) > 0 {
					return errors.New("--list takes no directory")
				}
				if asJSON {
					enc := json.NewEncoder(out)
					enc.SetIndent("", "  ")
					return enc.Encode(struct {
						Trusted []string `json:"trusted_projects"`
					}{append([]string{}, cfg.TrustedProjects...)})
				}
				if len(cfg.TrustedProjects) == 0 {
					fmt.Fprintln(out, "no trusted projects")
				}
				for _, p := range cfg.TrustedProjects {
					fmt.Fprintln(out, p)
				}
				return nil
			}
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			project, err := projectDir(dir)
			if err != nil {
				return err
			}
			file := filepath.Join(home, config.FileName)
			if revoke {
				if !slices.Contains(cfg.TrustedProjects, project) {
					return fmt.Errorf("%s is not in %s of %s (see exocortex trust --list)", project, trustedKey, file)
				}
				if err := editTrusted(file, project, false); err != nil {
					return err
				}
				fmt.Fprintf(out, "%s is no longer trusted: its plugins do not load from the next session on\n", project)
				return nil
			}
			pluginDir := filepath.Join(project, ".exocortex", "plugins")
			if host.ProjectTrusted(project, cfg.TrustedProjects) {
				fmt.Fprintf(out, "%s is already trusted (%s in %s)\n", project, trustedKey, file)
				return nil
			}
			if err := editTrusted(file, project, true); err != nil {
				return err
			}
			fmt.Fprintf(out, "trusted %s (recorded in %s)\n", project, file)
			describeProjectPlugins(out, pluginDir)
			return nil
		},
	}
	cmd.Flags().BoolVar(&list, "list", false, "list the trusted projects")
	cmd.Flags().BoolVar(&revoke, "revoke", false, "stop trusting DIR")
	cmd.Flags().BoolVar(&asJSON, "json", false, "with --list: write JSON")
	return cmd
}

// projectDir resolves dir to the absolute, symlink-free directory recorded.
func projectDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("project %s: %w", dir, err)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("project %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("project %s is not a directory", dir)
	}
	return abs, nil
}

// describeProjectPlugins lists what trusting lets load.
func describeProjectPlugins(w io.Writer, pluginDir string) {
	res := discover.Scan([]discover.Dir{{Path: pluginDir, Source: discover.Project}})
	if len(res.Plugins) == 0 {
		fmt.Fprintf(w, "%s holds no plugins yet; the ones put there will load\n", pluginDir)
		return
	}
	fmt.Fprintf(w, "these plugins of %s load from the next session on:\n", pluginDir)
	for _, c := range res.Plugins {
		fmt.Fprintf(w, "  %s\t%s\n", c.Name, c.Path)
	}
}

// editTrusted adds project to (or removes it from) trusted_projects in the
// configuration file, editing the YAML tree so the file's other settings and its
// comments stay as they are. The result must load as a configuration before it
// replaces the file.
func editTrusted(file, project string, add bool) error {
	b, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading %s: %w", file, err)
	}
	var doc yaml.Node
	if len(bytes.TrimSpace(b)) > 0 {
		if err := yaml.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: the configuration is not a mapping of keys", file)
	}
	var seq *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == trustedKey {
			seq = root.Content[i+1]
		}
	}
	if seq == nil {
		seq = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		root.Content = append(root.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: trustedKey,
				HeadComment: "Projects whose .exocortex/plugins may load (exocortex trust)."},
			seq)
	}
	if seq.Kind != yaml.SequenceNode {
		seq.Kind, seq.Tag, seq.Value, seq.Content = yaml.SequenceNode, "!!seq", "", nil
	}
	if add {
		seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: project})
	} else {
		seq.Content = slices.DeleteFunc(seq.Content, func(n *yaml.Node) bool { return n.Value == project })
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return fmt.Errorf("writing %s: %w", file, err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", file, err)
	}
	// Refuse to write a file the configuration loader would refuse.
	check := yaml.NewDecoder(bytes.NewReader(out.Bytes()))
	check.KnownFields(true)
	var cfg config.Config
	if err := check.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("updating %s would make it invalid (%v); edit %s by hand", file, err, trustedKey)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(file), err)
	}
	return writeFileAtomic(file, out.Bytes())
}
