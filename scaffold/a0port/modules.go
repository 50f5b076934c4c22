package a0port

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Module is an Agent Zero module the compatibility layer provides to a ported
// tree: `plugins port` writes a shim at Shim (relative to the plugin's
// directory) re-exporting Impl, so the file's own import resolves, and the
// porting report (and `exocortex lint`) name the import "adapted" with Maps.
type Module struct {
	// Name is the module as Agent Zero files import it, e.g. "helpers.files".
	Name string
	// Impl is the module of the Python SDK serving it, e.g. "exocortex.a0.files".
	Impl string
	// Names are the names the shim re-exports from Impl; nil: all of its public ones.
	Names []string
	// Maps is what the module maps onto in Exocortex, for the report.
	Maps string
	// NoCounterpart are the module's functions that have none here, each with
	// what to do instead: the stand-in raises naming the function, and the
	// report (and lint) calls a file that calls one "needs a hand", at the line.
	NoCounterpart map[string]string
}

// Shim is the path of the module's shim in the ported plugin.
func (m Module) Shim() string { return strings.ReplaceAll(m.Name, ".", "/") + ".py" }

// Modules returns the Agent Zero modules the layer provides, sorted by name: the
// one list `plugins port` writes shims from and classifies imports by, and
// `exocortex lint` repeats the port's import findings by.
func Modules() []Module {
	return []Module{
		{Name: "agent", Impl: "exocortex.a0compat", Names: []string{"Agent", "LoopData", "AgentContext=Agent", "UserMessage", "AgentContextType"},
			Maps: "the layer's Agent and LoopData (agent data on typed state, loop data from the hook's request); UserMessage; AgentContextType (every context is the user's session: USER)"},
		{Name: "helpers.cache", Impl: "exocortex.a0.cache",
			Maps: "the in-process cache by area and key (has, add, get, remove, clear, trim_cache of entries unused for some seconds), in the plugin's process"},
		{Name: "helpers.defer", Impl: "exocortex.a0.defer",
			Maps: "DeferredTask runs its coroutine on a named event loop thread of the plugin process, with the starting call's agent"},
		{Name: "helpers.dirty_json", Impl: "exocortex.a0.dirty_json",
			Maps: "lenient JSON parsing (DirtyJson.parse_string, try_parse, parse, stringify) on the standard library"},
		{Name: "helpers.dotenv", Impl: "exocortex.a0.dotenv",
			Maps: "get_dotenv_value: the plugin process's environment, with the ported plugin's usr/.env under it; save_dotenv_value writes that file"},
		{Name: "helpers.errors", Impl: "exocortex.a0.errors",
			Maps: "format_error, error_text and the exception classes; raised out of a file, the host reports the extension's error"},
		{Name: "helpers.extension", Impl: "exocortex.a0compat", Names: []string{"Extension", "extensible"},
			Maps: "the layer's Extension; @extensible returns the function as is"},
		{Name: "helpers.file_tree", Impl: "exocortex.a0.file_tree",
			Maps: "file_tree: a folder of the plugin's directory or the project drawn as a tree within Agent Zero's limits, .gitignore patterns read by the standard library (not pathspec)"},
		{Name: "helpers.files", Impl: "exocortex.a0.files",
			Maps: "files of the ported plugin's directory (Agent Zero's base directory) and the project, the two roots the manifest declares"},
		{Name: "helpers.guids", Impl: "exocortex.a0.guids", Maps: "generate_id: random ids"},
		{Name: "helpers.history", Impl: "exocortex.a0.history",
			Maps: "output_text of the history's messages (self.agent.history: the hook request's, read-only)",
			NoCounterpart: map[string]string{
				"deserialize_history": "the history is the core's: read it as self.agent.history",
				"output_langchain":    "the history is the core's: read it as self.agent.history (role/content dicts), or output_text",
			}},
		{Name: "helpers.localization", Impl: "exocortex.a0.localization",
			Maps: "Localization: the host's timezone (TZ, else the system's), time formatting from the host's clock; set_timezone for the plugin process only"},
		{Name: "helpers.log", Impl: "exocortex.a0.log",
			Maps: "Log and LogItem on the plugin's log"},
		{Name: "helpers.mcp_handler", Impl: "exocortex.a0.mcp_handler",
			Maps: "MCPConfig: no MCP servers of the plugin's own (the host's one tool catalogue is what the model gets), so its tools prompt is empty; MCPConfig.update raises"},
		{Name: "helpers.message_queue", Impl: "exocortex.a0.message_queue",
			Maps: "the chat's queue of user messages in the context's data, as Agent Zero keeps it (Exocortex's front ends queue input themselves, so it holds only what the tree adds; send_next and send_all_aggregated raise when it is not empty)",
			NoCounterpart: map[string]string{
				"send_message": "a queued message starts a new turn, which only the operator's front end does: give the text to the model as a prompt block",
			}},
		{Name: "helpers.notification", Impl: "exocortex.a0.notification",
			Maps: "NotificationManager.send_notification: the notice in the plugin's log, which the host shows the operator"},
		{Name: "helpers.persist_chat", Impl: "exocortex.a0.persist_chat",
			Maps: "the host saves the session as it changes (save_tmp_chat has nothing to do); a chat's folder is chats/<session id> in the plugin's directory",
			NoCounterpart: map[string]string{
				"load_tmp_chats":   "the host loads sessions itself (exocortex --resume NAME, exocortex -c): drop the call",
				"load_json_chats":  "Agent Zero chat JSON is not an Exocortex session: drop the call",
				"export_json_chat": "the session is the host's sessions/NAME.jsonl in the Exocortex home: read it there",
				"remove_chat":      "sessions are the operator's; remove_msg_files removes the plugin's files of the chat",
			}},
		{Name: "helpers.plugins", Impl: "exocortex.a0.plugins",
			Maps: "get_plugin_config(name) reads the ported plugin's config/<name>.json (the tree's default_config.yaml, its config.json over it)"},
		{Name: "helpers.print_style", Impl: "exocortex.a0.print_style",
			Maps: "PrintStyle prints to the plugin's log"},
		{Name: "helpers.projects", Impl: "exocortex.a0.projects",
			Maps:          "projects on Exocortex's project directory: none active until the context's project data names one; the project named after the directory is it (its .a0proj/project.json read as Agent Zero writes it)",
			NoCounterpart: projectsNoCounterpart()},
		{Name: "helpers.runtime", Impl: "exocortex.a0.runtime",
			Maps: "the plugin runs where its files are: not dockerized, call_development_function calls the function here, paths need no mapping"},
		{Name: "helpers.secrets", Impl: "exocortex.a0.secrets",
			Maps: "§§secret(NAME) placeholders from A0_SECRET_<NAME> in the environment and the plugin's secrets.env; values never logged"},
		{Name: "helpers.settings", Impl: "exocortex.a0.settings",
			Maps: "get_settings: a read-only view of the session's settings the host shows its plugins (models, context window: config.PluginSettings) under Agent Zero's names",
			NoCounterpart: map[string]string{
				"set_settings":       "settings are the operator's config.yaml: keep the plugin's own values with helpers.plugins.save_plugin_config or agent.set_data",
				"set_settings_delta": "settings are the operator's config.yaml: keep the plugin's own values with helpers.plugins.save_plugin_config or agent.set_data",
			}},
		{Name: "helpers.skills", Impl: "exocortex.a0.skills",
			Maps:          "skills: SKILL.md folders under the agent's skills/ roots (the plugin's and the project's); Exocortex has no skills_tool, so a listed skill is read with the file tools",
			NoCounterpart: map[string]string{"delete_skill": "a ported plugin does not delete skills: remove the folder by hand"}},
		{Name: "helpers.strings", Impl: "exocortex.a0.strings",
			Maps: "text helpers (sanitize, truncate, format_key) and §§include(path) replaced with the file's text through helpers.files"},
		{Name: "helpers.subagents", Impl: "exocortex.a0.subagents",
			Maps:          "get_paths: the ported plugin's (and the project's) directories; the running call's agent profile",
			NoCounterpart: subagentsNoCounterpart()},
		{Name: "helpers.tokens", Impl: "exocortex.a0.tokens",
			Maps: "count_tokens, approximate_tokens, trim_to_tokens by the host's own token estimate (the factor its context budget counts with, sent with every call)"},
		{Name: "helpers.tool", Impl: "exocortex.a0.tool",
			Maps: "Response, the tool result tool_execute_after hands over (its message onto the hook's response), and Tool for type hints (the host runs its own tools)"},
		{Name: "helpers.tool_policy", Impl: "exocortex.a0.tool_policy",
			Maps: "a tool is allowed when the host gives it to the model (the tools of the last request that listed them); filter_tool_prompts drops the prompts of the others"},
		{Name: "helpers.update_check", Impl: "exocortex.a0.update_check",
			Maps: "check_version: nothing new (no Agent Zero installation to update here; no server is asked)"},
		{Name: "initialize", Impl: "exocortex.a0.initialize",
			Maps:          "initialize_agent has no counterpart: the agent's configuration is the operator's",
			NoCounterpart: map[string]string{"initialize_agent": "the agent's configuration is the operator's (config.yaml, --profile): drop the call"}},
		{Name: "langchain_core.messages", Impl: "exocortex.a0.langchain_messages",
			Maps: "SystemMessage, HumanMessage, AIMessage, ToolMessage: messages carrying content and type, which a model's unified_call (the host's utility model) reads; the shim stands in for the package in the plugin (nothing else of langchain_core)"},
		{Name: "plugins._memory.helpers.memory", Impl: "exocortex.a0.memory",
			Maps: "Memory on Exocortex's memory store through the host's UseMemory service (memory_load, memory_save, memory_forget, memory_delete of memory-tools)"},
		{Name: "plugins._memory.tools.memory_load", Impl: "exocortex.a0.memory", Names: []string{"DEFAULT_THRESHOLD"},
			Maps: "memory_load's default threshold"},
		{Name: "plugins._model_config.helpers.model_config", Impl: "exocortex.a0.model_config",
			Maps:          "get_chat/utility/embedding_model_config: the session's models (the call's model, utility_model, the embedder) as Agent Zero's dicts; no vision model",
			NoCounterpart: modelConfigNoCounterpart()},
		{Name: "tools.skills_tool", Impl: "exocortex.a0.skills_tool", Names: []string{"DATA_NAME_LOADED_SKILLS"},
			Maps: "the agent data key of the skills the model loaded (Exocortex has no skills_tool: only the tree's own files set it)"},
	}
}

func projectsNoCounterpart() map[string]string {
	const fix = "the project is the directory Exocortex runs in, chosen by the operator: drop the call"
	out := map[string]string{}
	for _, f := range []string{"create_project", "clone_git_project", "update_project", "delete_project", "save_project_header",
		"activate_project", "deactivate_project", "reactivate_project_in_chats", "deactivate_project_in_chats",
		"save_project_variables", "save_project_subagents", "save_project_secrets", "create_project_meta_folders"} {
		out[f] = fix
	}
	return out
}

func subagentsNoCounterpart() map[string]string {
	const fix = "agent profiles are the host's (--profile; a subordinate's through RunSubordinate): drop the call, or read the running profile with subagents.get_current_profile()"
	out := map[string]string{}
	for _, f := range []string{"get_agents_list", "get_agents_dict", "get_available_agents_dict", "get_all_agents_list", "load_agent_data", "save_agent_data", "delete_agent_data"} {
		out[f] = fix
	}
	return out
}

func modelConfigNoCounterpart() map[string]string {
	const build = "the host makes the model calls: ask it for a utility-model answer, or watch the main model's calls at chat_model_call_before/after"
	const presets = "Exocortex has no model presets: the operator sets model, utility_model and embed_model in config.yaml"
	return map[string]string{
		"build_chat_model": build, "build_utility_model": build, "build_vision_model": build, "build_embedding_model": build,
		"get_presets": presets, "save_presets": presets, "get_preset_by_name": presets,
	}
}

// AgentCall is a method of Agent Zero's Agent that the layer's Agent provides:
// a call of it in a ported file is "adapted" in the porting report, with Maps.
type AgentCall struct {
	// Name is the method, e.g. "call_utility_model".
	Name string
	// Maps is what the call maps onto in Exocortex, for the report.
	Maps string
}

// AgentCalls returns the Agent methods beyond get_data/set_data, read_prompt and
// the log that the layer provides to a ported tree, sorted by name; the
// modules are Modules.
func AgentCalls() []AgentCall {
	return []AgentCall{
		{Name: "call_utility_model",
			Maps: "the host's utility model (Host.CallUtilityModel; util_model_call_before/after fire around it; the callback gets the text as it streams; the port declares uses_utility_model)"},
	}
}

// crossExtRE is an import of another extension file of the tree, Agent Zero's
// plugin layout: plugins.<plugin>.extensions.python.<hook>.<file>; the layer
// serves it from the ported copy (a0compat's import finder).
var crossExtRE = regexp.MustCompile(`^(?:(?:usr\.)?plugins\.\w+\.)?extensions\.python\.(\w+(?:\.\w+)*)\.(\w+)$`)

// crossExt returns the folder (under extensions/python/) and file of an
// import of another extension file of the tree: a hook folder's, or a
// _functions point's.
func crossExt(name string) (folder, file string, ok bool) {
	m := crossExtRE.FindStringSubmatch(name)
	if m == nil {
		return "", "", false
	}
	return strings.ReplaceAll(m[1], ".", "/"), m[2] + ".py", true
}

// LookupModule returns the module the layer provides for the Agent Zero module
// name, and whether it does. For an import of another extension file of the
// tree (plugins.<plugin>.extensions.python.<hook>.<file>), it answers with the
// ported copy when ported says the file was ported (hook/file.py).
func LookupModule(name string, ported func(hook, file string) bool) (Module, bool) {
	mods := Modules()
	if i, ok := slices.BinarySearchFunc(mods, name, func(m Module, n string) int { return strings.Compare(m.Name, n) }); ok {
		return mods[i], true
	}
	if folder, file, ok := crossExt(name); ok && ported != nil && ported(folder, file) {
		return Module{Name: name, Impl: "a0/extensions/python/" + folder + "/" + file,
			Maps: "the ported copy of the tree's " + folder + "/" + file}, true
	}
	return Module{}, false
}

// lookupImport is LookupModule for an import statement: `from X import names`
// of a module X the layer provides (missing: the names it lacks), or of a
// package X whose names are all modules the layer provides (`from
// plugins._memory.helpers import memory`). ok is false when the layer has
// neither.
func lookupImport(module string, names []string, ported func(hook, file string) bool) (maps []string, missing []string, ok bool) {
	if m, ok := LookupModule(module, ported); ok {
		return []string{m.Maps}, m.missing(names), true
	}
	if len(names) == 0 {
		return nil, nil, false
	}
	for _, n := range names {
		m, ok := LookupModule(module+"."+n, ported)
		if !ok {
			return nil, nil, false
		}
		maps = append(maps, m.Maps)
	}
	return maps, nil, true
}

// provided is the names the module's shim exports (nil: all of Impl's public ones).
func (m Module) provided() []string {
	var out []string
	for _, n := range m.Names {
		out = append(out, strings.SplitN(n, "=", 2)[0])
	}
	return out
}

// missing returns the names of an import the module does not provide.
func (m Module) missing(names []string) []string {
	if m.Names == nil {
		return nil
	}
	var out []string
	for _, n := range names {
		if n != "*" && !slices.Contains(m.provided(), n) {
			out = append(out, n)
		}
	}
	return out
}

// shimSource is the Python source of the module's shim.
func (m Module) shimSource() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\"\"\"Shim: Agent Zero's %s, served by %s (written by `exocortex plugins port`).\"\"\"\n", m.Name, m.Impl)
	if m.Names == nil {
		fmt.Fprintf(&b, "from %s import *  # noqa: F401,F403\n", m.Impl)
		return b.String()
	}
	var direct, alias []string
	for _, n := range m.Names {
		if k, v, ok := strings.Cut(n, "="); ok {
			alias = append(alias, k+" = "+v)
		} else {
			direct = append(direct, n)
		}
	}
	fmt.Fprintf(&b, "from %s import %s  # noqa: F401\n", m.Impl, strings.Join(direct, ", "))
	if len(alias) > 0 {
		b.WriteString("\n" + strings.Join(alias, "\n") + "\n")
	}
	return b.String()
}
