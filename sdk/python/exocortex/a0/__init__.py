"""Stand-ins for the Agent Zero (v1.7) helper modules that real extension files
import, served to a ported tree by `exocortex plugins port` through shim modules
(helpers/<module>.py, plugins/_memory/...), each mapped onto what Exocortex has:

  helpers.files        files of the ported plugin's directory and the project
                       (the two roots the layer declares in the manifest)
  helpers.print_style  PrintStyle: the plugin's log
  helpers.log          Log / LogItem: the plugin's log (context.log)
  helpers.errors       format_error, error_text, RepairableException,
                       HandledException, InterventionException
  helpers.dirty_json   DirtyJson, try_parse, parse, stringify: lenient JSON
                       (standard library only)
  helpers.defer        DeferredTask, THREAD_BACKGROUND: coroutines on a named
                       event loop thread
  helpers.secrets      get_secrets_manager: secrets from the environment and the
                       plugin's secrets.env, never logged
  helpers.plugins      get_plugin_config: the plugin's own config/<name>.json
  plugins._memory      Memory: Exocortex's memory store, through the host's
                       UseMemory service (the memory tools)
  helpers.tokens       count_tokens, approximate_tokens, trim_to_tokens: the
                       host's own token estimate (sent with every call)
  helpers.settings     get_settings: the session's settings, read-only
  helpers.localization Localization: the host's timezone and clock
  helpers.persist_chat the host's session persistence; a chat's folder in
                       the plugin's directory
  helpers.subagents    get_paths: the plugin's directories; the call's profile
  helpers.tool_policy  the tools the host gives the model
  plugins._model_config  model_config: the session's models
  helpers.projects     projects on the host's project directory (none active
                       until the context's "project" data names one)
  helpers.runtime      the plugin runs where its files are (not dockerized)
  helpers.file_tree    a folder drawn as a tree, .gitignore patterns
  helpers.strings      text helpers, §§include(path) placeholders
  helpers.tool         Response and Tool
  helpers.message_queue  the chat's queue in the context's data
  helpers.skills       SKILL.md folders under the agent's skills/ roots
  helpers.mcp_handler  no MCP servers of the plugin's own
  helpers.notification notices in the plugin's log
  helpers.guids        random ids
  helpers.update_check check_version: nothing new (no server is asked)
  initialize           initialize_agent raises (the configuration is the operator's)
  agent types          UserMessage, AgentContextType (agent_types)
The Agent's calls with no counterpart (hist_add_*, handle_intervention, the
model getters) raise naming themselves (_agent_calls); a guard file at a gate
that does not load is served as one failing at every call (_unloaded).
Functions with no counterpart raise an error naming the call and what to do
(_host reads what the host tells the plugin: settings, token estimate, tools).

and the Agent's call_utility_model (exocortex.a0.utility) onto the host's utility
model (Host.CallUtilityModel).

The module list scaffold/a0port.Modules is the one the port and lint use; each of
its entries names the module here that serves it."""
