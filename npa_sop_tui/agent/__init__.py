"""What an agent may call: the tool registry, schemas, path confinement, MCP server, workflows.

Owns: the registry of tools and their JSON schemas (`registry`, `soperator_tools`,
`fleet_tools`, `job_tools`), the rule that confines every path an agent names to its root
(`confinement`), the Model Context Protocol server (`mcp_server`) and workflow files
(`workflow`, `workflow_states`). A front door above the SDK: it may import the SDK, the
lifecycle, status, fleet and the home, never the TUI, the screens or the CLI.
"""
